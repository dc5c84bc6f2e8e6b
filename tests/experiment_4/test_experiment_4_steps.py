"""Experiment 4 steps end to end on a random-init ResNet-18 at 64 px (and the sampler's --min-per-class)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

import experiment_1.run.setup as run_setup
from conftest import jpeg_bytes, write_shard
from experiment_1.data.shards import SampleDataset, list_items, load_sample_list, sample_list_json
from experiment_1.errors import PipelineError
from experiment_1.files import atomic_write_json, read_json
from experiment_1.mobius.transform import mobius_transform
from experiment_1.network.engines import evaluate_all_masks
from experiment_1.report.markdown import format_stat
from experiment_1.step_2_sample import main as sample_main
from experiment_4 import signatures_pass, step_1_signatures, step_2_overlap, step_3_plot
from paper.make_tables import main as tables_main

RANKINGS = ("vector", "scalar", "scalar_true")


def test_min_per_class_keeps_only_large_classes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data_dir = tmp_path / "data"
    write_shard(
        data_dir / "validation-00000-of-00001.parquet", [jpeg_bytes(i) for i in range(7)], [0, 0, 0, 1, 1, 2, 1]
    )
    output = tmp_path / "samples.json"
    flags = [
        "--data-dir",
        str(data_dir),
        "--pattern",
        "validation-*.parquet",
        "--mode",
        "per-class",
        "--per-class",
        "2",
        "--output",
        str(output),
    ]
    sample_main(flags + ["--min-per-class", "3"])
    document = read_json(output)
    assert sorted(sample["label"] for sample in document["samples"]) == [0, 0, 1, 1]
    assert document["min_per_class"] == 3 and document["num_classes"] == 2
    assert "kept the 2 of 3 classes with at least 3 images" in capsys.readouterr().out
    sample_main(flags)  # without the flag every class stays, and the file does not mention it
    document = read_json(output)
    assert (
        sorted(sample["label"] for sample in document["samples"]) == [0, 0, 1, 1, 2] and "min_per_class" not in document
    )
    with pytest.raises(PipelineError, match="no class has that many"):
        sample_main(flags + ["--min-per-class", "4"])
    with pytest.raises(PipelineError, match="--min-per-class"):
        sample_main(
            [
                "--data-dir",
                str(data_dir),
                "--pattern",
                "validation-*.parquet",
                "--mode",
                "uniform",
                "--min-per-class",
                "2",
                "--output",
                str(output),
            ]
        )


def per_class_list(data_dir: Path, path: Path) -> Path:
    """Two images of each of the three labels of ``tiny_shards``."""
    sample_main(
        [
            "--data-dir",
            str(data_dir),
            "--pattern",
            "validation-*.parquet",
            "--mode",
            "per-class",
            "--per-class",
            "2",
            "--seed",
            "0",
            "--output",
            str(path),
        ]
    )
    return path


def step_1_flags(data_dir: Path, sample_index: Path, output_dir: Path, *extra: str) -> list[str]:
    return [
        "--sample-index",
        str(sample_index),
        "--data-dir",
        str(data_dir),
        "--weights",
        "random",
        "--batch-size",
        "2",
        "--num-workers",
        "0",
        "--device",
        "cpu",
        "--seed",
        "0",
        "--output-dir",
        str(output_dir),
        *extra,
    ]


def load_signatures(path: Path) -> dict:
    return torch.load(path, weights_only=True)


def test_experiment_4_end_to_end(
    tiny_shards: Path, small_input: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample_index = per_class_list(tiny_shards, tmp_path / "samples.json")
    output_dir = tmp_path / "results"
    step_1_signatures.main(step_1_flags(tiny_shards, sample_index, output_dir))
    document = load_signatures(output_dir / "signatures.pt")
    assert document["store_k"] == document["num_subsets"] == 256 and document["config"]["store_k"] == 256
    assert document["ranked_vector"].dtype == torch.int16 and document["magnitude_vector"].dtype == torch.float32
    samples = load_sample_list(sample_index)
    assert document["samples"] == [{"source": s.source, "row": s.row, "label": s.label} for s in samples]

    # Oracle: the same model, the same batches, coefficients by the butterfly; magnitudes per ranking from numpy.
    model = run_setup.build_gated_stack("resnet18", "random", device="cpu", seed=0)
    dataset = SampleDataset(tiny_shards, samples, model.preprocess)
    batches = [torch.stack([dataset[index]["image"] for index in range(start, start + 2)]) for start in range(0, 6, 2)]
    logits = torch.cat([evaluate_all_masks(model, images) for images in batches])
    coefficients = mobius_transform(logits, dim=1, dtype=torch.float64).numpy()
    full = logits[:, -1].numpy()
    labels = np.array([s.label for s in samples])
    rows = np.arange(6)
    expected = {
        "vector": np.sqrt((coefficients**2).sum(axis=2)),
        "scalar": np.abs(coefficients[rows, :, full.argmax(1)]),
        "scalar_true": np.abs(coefficients[rows, :, labels]),
    }
    np.testing.assert_array_equal(document["full_logits"].numpy(), full)
    np.testing.assert_array_equal(document["predicted"].numpy(), full.argmax(1))
    np.testing.assert_array_equal(document["label"].numpy(), labels)
    for ranking in RANKINGS:
        ranked = document[f"ranked_{ranking}"].long().numpy()
        magnitude = document[f"magnitude_{ranking}"].numpy()
        assert (np.sort(ranked, axis=1) == np.arange(256)).all()  # every subset exactly once
        # Stored magnitudes are the oracle's at the stored subsets (float32 storage: rtol 1e-6) and never increase,
        # i.e. the order is by decreasing magnitude without depending on ulp-level near-ties.
        np.testing.assert_allclose(magnitude, np.take_along_axis(expected[ranking], ranked, 1), rtol=1e-6)
        assert (np.diff(np.take_along_axis(expected[ranking], ranked, 1), axis=1) <= 0).all()
    # The class control's rankings: the top 64 of |Δ_S h[c]| in every class coordinate of the sample list.
    classes = sorted(set(labels.tolist()))
    assert (
        document["class_coordinates"] == classes
        and document["class_store_k"] == 64
        and "class_store_k" not in document["config"]
    )
    assert document["ranked_class"].shape == (6, len(classes), 64) and document["ranked_class"].dtype == torch.int16
    for position, label in enumerate(classes):
        ranked = document["ranked_class"][:, position].long().numpy()
        magnitude = np.abs(coefficients[:, :, label])
        assert all(len(set(row)) == 64 for row in ranked.tolist())
        np.testing.assert_allclose(
            np.take_along_axis(magnitude, ranked, 1), -np.sort(-magnitude, axis=1)[:, :64], rtol=1e-12
        )

    # Resume: drop one finished batch and the output; the rerun recomputes only that batch and writes the same tensors.
    (output_dir / "partial" / signatures_pass.STAGE / "batch_000001.pt").unlink()
    (output_dir / "signatures.pt").unlink()
    step_1_signatures.main(step_1_flags(tiny_shards, sample_index, output_dir))
    resumed = load_signatures(output_dir / "signatures.pt")
    timing = read_json(output_dir / "timing.json")  # both processes: the first run's images and the recomputed batch
    assert (
        timing["last_call"]["images_evaluated"] == 2
        and timing["images_evaluated"] == len(samples) + 2
        and timing["passes"] == 2
    )
    for name, value in document.items():
        if torch.is_tensor(value):
            assert torch.equal(resumed[name], value), name

    # A smaller --store-K is a different run: refused in the same folder, fine in another one.
    with pytest.raises(PipelineError, match="different run"):
        step_1_signatures.main(step_1_flags(tiny_shards, sample_index, output_dir, "--store-K", "16"))
    step_1_signatures.main(step_1_flags(tiny_shards, sample_index, tmp_path / "small", "--store-K", "16"))
    small = load_signatures(tmp_path / "small" / "signatures.pt")
    assert torch.equal(small["ranked_scalar"], document["ranked_scalar"][:, :16])

    summary = check_overlap_and_report(output_dir / "signatures.pt", output_dir, nn_k=32)
    assert summary["rankings"]["vector"]["binary"]["true_label"]["pair_counts"] == {
        "same_class": 3,
        "different_class": 12,
    }
    # tables.md gets an Experiment 4 section from overlap.json alone.
    root = tmp_path / "repo"
    step_2_overlap.main(
        [
            "--signatures",
            str(output_dir / "signatures.pt"),
            "--output-dir",
            str(root / "experiment_4" / "results_tiny"),
            "--sweep-K",
            "8",
            "--num-permutations",
            "5",
        ]
    )
    tables_main(["--root", str(root), "--all-runs"])
    tables = (root / "tables.md").read_text()
    verdicts = read_json(root / "experiment_4" / "results_tiny" / "overlap.json")["verdicts"]
    assert "`experiment_4/results_tiny` — resnet18, `random`, N = 6, 3 classes" in tables and all(
        verdict["decision"] in tables for verdict in verdicts
    )
    # The original study's commands run as written: step 3's --signatures is accepted with a note (overlap.json holds what
    # step 3 reads); --max-pairs 45000 samples pairs, which on 6 images (15 pairs, 3 coordinates) is every pair: the same numbers.
    capsys.readouterr()
    step_2_overlap.main(
        [
            "--signatures",
            str(output_dir / "signatures.pt"),
            "--output-dir",
            str(root / "as_written"),
            "--sweep-K",
            "8",
            "--num-permutations",
            "5",
            "--max-pairs",
            "45000",
        ]
    )
    step_3_plot.main(
        ["--summary", str(root / "as_written" / "overlap.json"), "--signatures", str(output_dir / "signatures.pt")]
    )
    assert "is not read" in capsys.readouterr().err
    sampled, exact = (
        read_json(folder / "overlap.json") for folder in (root / "as_written", root / "experiment_4" / "results_tiny")
    )
    assert (
        sampled["settings"]["pair_sampling"]["per_image_ranking_pairs"]
        == sampled["settings"]["pair_sampling"]["all_pairs"]
        == 15
    )
    assert "pair_sampling" not in exact["settings"] and [v["decision"] for v in sampled["verdicts"]] == [
        v["decision"] for v in exact["verdicts"]
    ]
    for ranking in RANKINGS:
        for name, test in exact["rankings"][ranking]["binary"]["true_label"]["tests"].items():
            assert sampled["rankings"][ranking]["binary"]["true_label"]["tests"][name]["observed"] == pytest.approx(
                test["observed"]
            )
    with pytest.raises(PipelineError, match="--nn-K 32: must lie in 1 … 16"):
        step_2_overlap.main(["--signatures", str(tmp_path / "small" / "signatures.pt")])
    with pytest.raises(PipelineError, match="not found"):
        step_2_overlap.main(["--signatures", str(tmp_path / "nowhere.pt")])


def test_signatures_step_refuses_bad_input(tiny_shards: Path, tmp_path: Path) -> None:
    unlabelled = tmp_path / "test.json"
    sample_main(
        [
            "--data-dir",
            str(tiny_shards),
            "--pattern",
            "test-*.parquet",
            "--num-images",
            "2",
            "--output",
            str(unlabelled),
        ]
    )
    with pytest.raises(PipelineError, match="no label"):
        step_1_signatures.main(step_1_flags(tiny_shards, unlabelled, tmp_path / "out"))
    labelled = per_class_list(tiny_shards, tmp_path / "samples.json")
    with pytest.raises(PipelineError, match="--store-K 257"):
        step_1_signatures.main(step_1_flags(tiny_shards, labelled, tmp_path / "out", "--store-K", "257"))


def brute_force_overlap(
    sets: list[set], targets: list[int], excluded: int | None = None, labels: list[int] | None = None
) -> dict:
    """Jaccard by Python sets, leave-one-out 1-NN by a double loop (ties: lowest index) among the images whose
    label is not ``excluded``; the mean same-target Jaccard and the number of 1-NN hits and queries."""
    labels = targets if labels is None else labels
    members = [i for i in range(len(sets)) if labels[i] != excluded]
    jaccard = {(i, j): len(sets[i] & sets[j]) / len(sets[i] | sets[j]) for i in members for j in members}
    neighbours = {i: max((j for j in members if j != i), key=lambda j: (jaccard[i, j], -j)) for i in members}
    same = [jaccard[i, j] for i in members for j in members if i < j and targets[i] == targets[j]]
    return {
        "hits": sum(targets[neighbours[i]] == targets[i] for i in members),
        "queries": len(members),
        "same_class": np.mean(same),
    }


def core_share_by_counting(sets: list[set], k: int) -> float:
    membership = Counter(subset for found in sets for subset in found)
    core = set(sorted(membership, key=lambda subset: (-membership[subset], subset))[:k])
    return float(np.mean([len(found & core) / k for found in sets]))


def check_overlap_and_report(signatures: Path, output_dir: Path, nn_k: int) -> dict:
    """Step 2 twice (identical bytes), against brute force, then step 3; returns the summary."""
    flags = [
        "--signatures",
        str(signatures),
        "--output-dir",
        str(output_dir),
        "--nn-K",
        str(nn_k),
        "--sweep-K",
        "8",
        str(nn_k),
        "--num-permutations",
        "20",
        "--seed",
        "0",
    ]
    step_2_overlap.main(flags)
    first = (output_dir / "overlap.json").read_bytes()
    step_2_overlap.main(flags)
    assert (output_dir / "overlap.json").read_bytes() == first  # a rerun writes the same JSON
    summary = read_json(output_dir / "overlap.json")
    document = load_signatures(signatures)
    labels, predicted = document["label"].tolist(), document["predicted"].tolist()
    assert summary["num_classes"] == len(set(labels)) and summary["settings"]["p_value_floor"] == pytest.approx(1 / 21)
    assert summary["full_mask_top1_accuracy"]["mean"] == pytest.approx(
        np.mean([p == y for p, y in zip(predicted, labels)])
    )
    for ranking in RANKINGS:
        sets = [set(row[:nn_k].tolist()) for row in document[f"ranked_{ranking}"].long()]
        block = summary["rankings"][ranking]
        for target, values in (("true_label", labels), ("predicted_class", predicted)):
            expected = brute_force_overlap(sets, values)
            assert block["binary"][target]["tests"]["nn_accuracy"]["observed"] == pytest.approx(
                expected["hits"] / expected["queries"]
            )
            assert block["nn_sweep"][target]["mean"][1] == block["binary"][target]["tests"]["nn_accuracy"]["observed"]
        assert block["global_core"]["share"]["mean"] == pytest.approx(core_share_by_counting(sets, nn_k))
        assert block["binary"]["true_label"]["same_class_mean"] == pytest.approx(
            brute_force_overlap(sets, labels)["same_class"]
        )
    # The leak-free control: in every class coordinate, 1-NN among the images of the other classes, pooled.
    hits = queries = 0
    for position, label in enumerate(document["class_coordinates"]):
        expected = brute_force_overlap(
            [set(row[:nn_k].tolist()) for row in document["ranked_class"][:, position].long()], labels, excluded=label
        )
        hits, queries = hits + expected["hits"], queries + expected["queries"]
    control = summary["rankings"]["class_control"]["binary"]["true_label"]
    assert (
        control["tests"]["nn_accuracy"]["observed"] == pytest.approx(hits / queries)
        and "weighted" not in summary["rankings"]["class_control"]
    )
    assert [verdict["id"] for verdict in summary["verdicts"]][:3] == [
        "class_alignment.vector",
        "class_alignment.scalar",
        "class_alignment.class_control",
    ]
    step_3_plot.main(["--summary", str(output_dir / "overlap.json")])
    report = (output_dir / "REPORT.md").read_text()
    assert (
        format_stat({**control["nn_accuracy_ci"], "mean": control["tests"]["nn_accuracy"]["observed"]}, percent=True)
        in report
        and "Mann–Whitney" not in report
    )
    assert all(verdict["decision"] in report for verdict in summary["verdicts"])
    for name in ("jaccard_histograms", "nn_accuracy_vs_k", "global_core"):
        assert (output_dir / f"{name}.png").exists() and f"({name}.png)" in report
    return summary


def test_experiment_4_on_sample_1750(sample_1750_dir: Path, small_input: int, tmp_path: Path) -> None:
    """Two images of each of the three lowest labels that have six images in imagenet-1k/sample-1750 (random weights, 64 px)."""
    items = list_items(sample_1750_dir, "validation-*.parquet")
    counts = Counter(item.label for item in items)
    classes = sorted(label for label, number in counts.items() if number >= 6)[:3]
    samples = [item for label in classes for item in [item for item in items if item.label == label][:2]]
    sample_index = tmp_path / "samples.json"
    atomic_write_json(
        sample_index,
        sample_list_json(
            sorted(samples, key=lambda item: (item.source, item.row)), "validation-*.parquet", "per-class", 0, 2
        ),
    )
    output_dir = tmp_path / "results"
    step_1_signatures.main(step_1_flags(sample_1750_dir, sample_index, output_dir))
    summary = check_overlap_and_report(output_dir / "signatures.pt", output_dir, nn_k=16)
    assert summary["num_valid"] == 6 and summary["num_classes"] == 3
    assert summary["rankings"]["vector"]["binary"]["true_label"]["pair_counts"] == {
        "same_class": 3,
        "different_class": 12,
    }
