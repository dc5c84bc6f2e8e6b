"""Experiment 5's three steps end to end on a random-init ResNet-18 at 64 px, including resume, and on imagenet-1k/sample-1750."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats as scipy_stats

import experiment_1.run.setup as run_setup
import experiment_5.evaluation as evaluation
import experiment_5.step_1_evaluate as step_1_evaluate
from experiment_1.data.shards import SampleDataset, draw_sample, list_items, load_sample_list, sample_list_json
from experiment_1.errors import PipelineError
from experiment_1.files import atomic_write_json, read_json
from experiment_1.mobius.transform import mobius_transform
from experiment_1.network.engines import evaluate_all_masks
from experiment_1.report.verdicts import (
    CANNOT_TELL,
    CONSTANT,
    FAILS,
    HOLDS,
    NON_FINITE,
    PARTLY_CONTRADICTED,
    SATURATED,
    by_id,
    holm,
)
from experiment_5 import step_2_analyze, step_3_plot
from experiment_5.association import quartile_groups
from experiment_5.complexity import complexity_measures
from experiment_5.difficulty import DIFFICULTY_SCORES, difficulty_scores
from experiment_5.formats import load_per_image
from experiment_5.formatting import difference_cell, rho_cell
from experiment_5.summary import analyze
from experiment_5.verdicts import verdicts
from paper.make_tables import main as tables_main

IMAGES, BATCH = 8, 4


def write_labelled_list(data_dir: Path, path: Path, pattern: str = "validation-*.parquet", per_class: int = 4) -> Path:
    samples = draw_sample(list_items(data_dir, pattern), "per-class", 0, per_class, seed=0)
    atomic_write_json(path, sample_list_json(samples, pattern, "per-class", 0, per_class))
    return path


def flags(data_dir: Path, sample_index: Path, output_dir: Path) -> list[str]:
    return [
        "--sample-index",
        str(sample_index),
        "--data-dir",
        str(data_dir),
        "--weights",
        "random",
        "--batch-size",
        str(BATCH),
        "--num-workers",
        "0",
        "--limit",
        str(IMAGES),
        "--device",
        "cpu",
        "--seed",
        "0",
        "--output-dir",
        str(output_dir),
    ]


def run_analysis(output_dir: Path) -> dict:
    step_2_analyze.main(["--per-image", str(output_dir / "per_image.pt"), "--num-resamples", "200"])
    return read_json(output_dir / "analysis.json")


def planted_record(count: int = 200, num_blocks: int = 4) -> dict:
    """A per_image.pt record with planted links: N_eff^v grows with the cross-entropy, C≤3 (vector) falls with it,
    κ (vector) is independent of it, K_τ^err (τ = 0.1) is 2^L on 95 % of images (saturated), K_τ^err (τ = 0.3)
    is 2^L everywhere (constant); the other measures are noise."""
    rng = np.random.default_rng(3)
    logits = torch.from_numpy(rng.normal(scale=3.0, size=(count, 10)))
    labels = torch.from_numpy(rng.integers(0, 10, size=count))
    arrays = {name: value for name, value in difficulty_scores(logits, labels).items()}
    difficulty = arrays["cross_entropy"].numpy()
    noise = lambda: torch.from_numpy(rng.normal(size=count))  # noqa: E731
    arrays.update(
        {name: noise() for name in ("kbar_vector", "kbar_scalar", "kappa_scalar", "c_le3_scalar", "full_logit_norm")}
    )
    arrays["kappa_vector"] = noise()
    arrays["n_eff_vector"] = torch.from_numpy(difficulty) + 0.3 * noise()
    arrays["c_le3_vector"] = -torch.from_numpy(difficulty) + 0.3 * noise()
    k_err = torch.full((count, 2), 2**num_blocks)
    k_err[: count // 20, 0] = torch.from_numpy(rng.integers(1, 2**num_blocks, size=count // 20))  # 5 % move
    arrays["k_err"] = k_err
    arrays["k_mass"] = torch.from_numpy(rng.integers(1, 2**num_blocks, size=(count, 1)))
    arrays.update(
        valid=torch.ones(count, dtype=torch.bool),
        index=torch.arange(count),
        label=labels,
        full_prediction=logits.argmax(1),
    )
    config = {"num_blocks": num_blocks, "taus": [0.1, 0.3], "etas": [0.9], "arch": "resnet18", "weights": "random"}
    return {
        "experiment": 5,
        "question": "?",
        "config": config,
        "num_images": count,
        "num_valid": count,
        "num_skipped_corrupt": 0,
        "sample_pool": {},
        "samples": [],
        "arrays": arrays,
    }


def test_analysis_verdicts_on_planted_data() -> None:
    analysis = analyze(planted_record(), "cross_entropy", seed=0, num_resamples=300)
    block = by_id(analysis["verdicts"])
    decision = {name.removesuffix(".hard_minus_easy"): entry["decision"] for name, entry in block.items()}
    # Effect present: the breadth claim holds; the order claim ("does not move") fails, and says which way it moved.
    assert (
        decision["n_eff_vector"] == HOLDS
        and "more subsets on hard images" in block["n_eff_vector.hard_minus_easy"]["notes"]
    )
    assert (
        decision["c_le3_vector"] == FAILS
        and "hard images sit at higher orders" in block["c_le3_vector.hard_minus_easy"]["notes"]
    )
    # Effect absent: no confirmation of "no change" without a margin — cannot tell, with the smallest detectable effect.
    kappa = block["kappa_vector.hard_minus_easy"]
    assert (
        decision["kappa_vector"] == CANNOT_TELL
        and kappa["seed"]["relation"] == "inside"
        and kappa["seed"]["minimal_detectable_effect"] > 0
    )
    # Saturated (2^L on 95 %) and constant measures are not judged, never called invariant.
    assert decision["k_err"] == SATURATED and decision["k_err_tau_0.3"] == CONSTANT
    assert analysis["saturation"]["k_err"] == {"decision": SATURATED, "value": 16.0, "share": 0.95, "at": "bound"}
    assert block["k_err.hard_minus_easy"]["test"] is None and block["k_err.partial"]["decision"] == SATURATED
    # Holm over the judged measures only, with the Mann–Whitney p of the primary score's quartiles.
    judged = [name for name in analysis["measures"] if analysis["saturation"][name] is None]
    expected = holm([analysis["quartiles"]["cross_entropy"]["measures"][name]["mann_whitney_p"] for name in judged])
    assert [block[f"{name}.hard_minus_easy"]["test"]["p_adjusted"] for name in judged] == pytest.approx(expected)
    assert {block[f"{name}.hard_minus_easy"]["test"]["family_size"] for name in judged} == {len(judged)}
    # The seed's claim as a whole, at the strength of its parts: one order measure moved while K_τ^err is saturated —
    # partly contradicted, not failed.
    assert block["seed_claim"]["decision"] == PARTLY_CONTRADICTED and any(
        "partly contradicted" in note for note in block["seed_claim"]["notes"]
    )
    # 1 − p(true) ranks the images exactly as the cross-entropy: the sensitivity table says so.
    agreement = analysis["score_agreement"]
    assert (
        agreement["spearman"]["cross_entropy"]["one_minus_p_true"] == pytest.approx(1.0)
        and agreement["shared_hard_quartile"]["one_minus_p_true"] == 1.0
    )
    assert analysis["at_all_subsets"] == {"k_err": 0.95, "k_err_tau_0.3": 1.0, "k_mass": 0.0}
    correctness = analysis["correctness"]
    assert (
        correctness["num_correct"] + correctness["num_incorrect"] == 200
        and correctness["measures"]["n_eff_vector"]["incorrect_minus_correct"]["mean"] > 0
    )


def test_a_non_finite_statistic_gives_no_verdict_and_keeps_its_place_in_the_holm_family() -> None:
    analysis = analyze(planted_record(), "cross_entropy", seed=0, num_resamples=200)
    analysis["quartiles"]["cross_entropy"]["measures"]["kappa_vector"]["mann_whitney_p"] = float("nan")
    block = by_id(verdicts(analysis))
    assert block["kappa_vector.hard_minus_easy"]["decision"] == NON_FINITE
    assert (
        block["n_eff_vector.hard_minus_easy"]["decision"] == HOLDS
        and block["n_eff_vector.hard_minus_easy"]["test"]["family_size"] == len(analysis["measures"]) - 2
    )  # k_err, k_err_tau_0.3 not judged
    assert block["seed_claim"]["decision"] == NON_FINITE


class CountingMeasures:
    """Wraps ``complexity_measures``, counting calls and raising on call ``fail_on`` (if given)."""

    def __init__(self, original, fail_on: int | None = None) -> None:
        self.original, self.fail_on, self.calls = original, fail_on, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls == self.fail_on:
            raise RuntimeError("simulated interruption")
        return self.original(*args, **kwargs)


def test_three_steps_end_to_end_with_resume(
    tiny_shards: Path, small_input: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sample_index = write_labelled_list(tiny_shards, tmp_path / "val.json")
    full_dir, resumed_dir = tmp_path / "results", tmp_path / "resumed"
    step_1_evaluate.main(flags(tiny_shards, sample_index, full_dir))
    record = load_per_image(full_dir / "per_image.pt")
    arrays = {name: value.numpy() for name, value in record["arrays"].items()}
    samples = load_sample_list(sample_index, IMAGES)
    assert record["num_valid"] == IMAGES and record["config"]["input_size"] == small_input
    assert record["samples"] == [{"source": s.source, "row": s.row, "label": s.label} for s in samples]
    np.testing.assert_array_equal(arrays["label"], [s.label for s in samples])
    assert record["sample_pool"] == {
        "pattern": "validation-*.parquet",
        "mode": "per-class",
        "per_class": 4,
        "list_size": 12,
        "labelled_images_matching_pattern": 12,
    }
    assert record["config"]["taus"] == [0.1, 0.05, 0.2, 0.3] and record["config"]["etas"] == [0.9, 0.5, 0.75, 0.95]
    # Nothing of size 2^L × C is kept: at most one small trailing dimension (the thresholds).
    assert all(value.ndim == 1 or (value.ndim == 2 and value.shape[1] == 4) for value in arrays.values())

    # The first batch recomputed here with the same engine on the same batch shape: every array bit-equal.
    model = run_setup.build_gated_stack("resnet18", "random", device="cpu", seed=0)
    dataset = SampleDataset(tiny_shards, samples, model.preprocess)
    images = torch.stack([dataset[index]["image"] for index in range(BATCH)])
    labels = torch.tensor([s.label for s in samples[:BATCH]])
    logits = evaluate_all_masks(model, images, mask_chunk=256)
    full = logits[:, -1]
    expected = {
        **difficulty_scores(full, labels),
        **complexity_measures(
            mobius_transform(logits, dim=1, dtype=torch.float64), full, [0.1, 0.05, 0.2, 0.3], [0.9, 0.5, 0.75, 0.95]
        ),
    }
    for name, value in expected.items():
        np.testing.assert_array_equal(arrays[name][:BATCH], value.numpy(), err_msg=name)
    np.testing.assert_array_equal(arrays["full_prediction"][:BATCH], full.argmax(1).numpy())

    analysis = run_analysis(full_dir)
    assert analysis["num_analysed"] == IMAGES and analysis["settings"]["primary_score"] == "cross_entropy"
    k_err = arrays["k_err"][:, 0].astype(float)
    entry = analysis["spearman"]["cross_entropy"]["k_err"]
    assert entry["rho"] == pytest.approx(scipy_stats.spearmanr(arrays["cross_entropy"], k_err).statistic, nan_ok=True)
    groups = quartile_groups(arrays["cross_entropy"])
    quartile = analysis["quartiles"]["cross_entropy"]["measures"]["k_err"]
    assert quartile["hard_minus_easy"]["mean"] == pytest.approx(k_err[groups[3]].mean() - k_err[groups[0]].mean())
    assert [stat["mean"] for stat in quartile["quartile_means"]] == pytest.approx(
        [k_err[group].mean() for group in groups]
    )
    difference = quartile["hard_minus_easy"]
    k_err_verdict = by_id(analysis["verdicts"])["k_err.hard_minus_easy"]
    assert k_err_verdict["effect"]["ci_low"] == difference["ci_low"] and k_err_verdict["decision"] != "invariant"
    assert analysis["published"]["resnet18"]["k_tau_err_hard_minus_easy"] == 2.8
    assert set(analysis["spearman"]) == set(DIFFICULTY_SCORES) and "k_err_tau_0.05" in analysis["measures"]

    step_3_plot.main(["--analysis", str(full_dir / "analysis.json"), "--per-image", str(full_dir / "per_image.pt")])
    report = (full_dir / "REPORT.md").read_text()
    for name in ("rho_heatmap", "quartile_bars", "strongest_pairs"):
        assert (full_dir / f"{name}.png").stat().st_size > 0 and f"({name}.png)" in report
    assert rho_cell(entry) in report and difference_cell(difference, "k_err") in report
    verdict_section = report.split("## Verdict")[1]
    assert (
        f"K_τ^err is larger on hard than on easy images (cross-entropy quartiles; Möbius basis): "
        f"**{k_err_verdict['decision']}**" in verdict_section
    )
    assert "Decision rules:" in verdict_section and "## Beside the original study" in report
    tables_root = tmp_path / "repo"
    (tables_root / "experiment_5" / "results_tiny").mkdir(parents=True)
    shutil.copy(full_dir / "analysis.json", tables_root / "experiment_5" / "results_tiny")
    tables_main(["--root", str(tables_root), "--all-runs"])
    tables = (tables_root / "tables.md").read_text()
    assert "`experiment_5/results_tiny` — resnet18, `random`, N = 8, difficulty = cross-entropy" in tables
    assert (
        f"| K_τ^err | {rho_cell(entry)} | {rho_cell(entry, 'partial_')} | {difference_cell(difference, 'k_err')} |"
        in tables
    )

    # Interrupt after the first batch, then resume: only the missing batch runs, and the JSON is identical.
    failing = CountingMeasures(evaluation.complexity_measures, fail_on=2)
    monkeypatch.setattr(evaluation, "complexity_measures", failing)
    with pytest.raises(RuntimeError, match="simulated interruption"):
        step_1_evaluate.main(flags(tiny_shards, sample_index, resumed_dir))
    counting = CountingMeasures(failing.original)
    monkeypatch.setattr(evaluation, "complexity_measures", counting)
    step_1_evaluate.main(flags(tiny_shards, sample_index, resumed_dir))
    timing = read_json(resumed_dir / "timing.json")
    assert (
        counting.calls == 1
        and timing["last_call"]["images_evaluated"] == BATCH
        and timing["images_evaluated"] == 2 * BATCH
    )
    resumed = load_per_image(resumed_dir / "per_image.pt")
    for name, value in arrays.items():
        np.testing.assert_array_equal(resumed["arrays"][name].numpy(), value, err_msg=name)
    run_analysis(resumed_dir)
    assert (resumed_dir / "analysis.json").read_text() == (full_dir / "analysis.json").read_text()

    with pytest.raises(PipelineError, match="--tau"):
        step_1_evaluate.main(flags(tiny_shards, sample_index, tmp_path / "bad") + ["--tau", "1.5"])
    with pytest.raises(PipelineError, match="not found"):
        step_2_analyze.main(["--per-image", str(tmp_path / "missing.pt")])
    with pytest.raises(PipelineError, match="not the Experiment 5 summary of experiment_5.step_2_analyze"):
        step_3_plot.main(["--analysis", str(full_dir / "timing.json"), "--per-image", str(full_dir / "per_image.pt")])


def test_unlabelled_images_are_refused(tiny_shards: Path, small_input: int, tmp_path: Path) -> None:
    samples = draw_sample(list_items(tiny_shards, "test-*.parquet"), "uniform", 2, 0, seed=0)
    sample_index = tmp_path / "test.json"
    atomic_write_json(sample_index, sample_list_json(samples, "test-*.parquet", "uniform", 0, None))
    with pytest.raises(PipelineError, match="no label"):
        step_1_evaluate.main(flags(tiny_shards, sample_index, tmp_path / "out"))


def test_steps_on_sample_1750(sample_1750_dir: Path, small_input: int, tmp_path: Path) -> None:
    sample_index = write_labelled_list(sample_1750_dir, tmp_path / "val.json", per_class=1)
    output_dir = tmp_path / "results"
    step_1_evaluate.main(flags(sample_1750_dir, sample_index, output_dir))
    record = load_per_image(output_dir / "per_image.pt")
    assert (
        record["sample_pool"]["labelled_images_matching_pattern"] == 1750 and record["sample_pool"]["list_size"] == 1000
    )
    labels = record["arrays"]["label"].numpy()
    assert ((labels >= 0) & (labels < 1000)).all() and record["num_valid"] == IMAGES
    analysis = run_analysis(output_dir)
    step_3_plot.main(["--analysis", str(output_dir / "analysis.json"), "--per-image", str(output_dir / "per_image.pt")])
    assert f"{IMAGES} analysed" in (output_dir / "REPORT.md").read_text() and analysis["num_analysed"] == IMAGES
