"""Experiment 3 steps end to end on a random-init ResNet-18 at 64 px (and on the committed sample shards of imagenet-1k/sample-1750), including resume."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

import experiment_1.run.setup as run_setup
import experiment_3.evaluation as evaluation
import experiment_3.step_1_evaluate as step_1_evaluate
from experiment_1.data.shards import SampleDataset, draw_sample, list_items, load_sample_list, sample_list_json
from experiment_1.errors import PipelineError
from experiment_1.files import atomic_write_json, read_json
from experiment_1.mobius.transform import mobius_transform
from experiment_1.network.engines import evaluate_all_masks
from experiment_1.report.markdown import format_stat
from experiment_1.report.verdicts import by_id
from experiment_3 import step_2_plot
from experiment_3.topk import CURVE_METRICS, SOURCES, control_permutations
from paper.committed_runs import allow_all_runs
from paper.make_tables import section_blocks
from paper.render_markdown import render_markdown
from paper.resummarize import main as resummarize_main

REPO = Path(__file__).resolve().parents[2]


def write_sample_list(data_dir: Path, path: Path, count: int = 3) -> Path:
    samples = draw_sample(list_items(data_dir, "test-*.parquet"), "uniform", count, 0, seed=0)
    atomic_write_json(path, sample_list_json(samples, "test-*.parquet", "uniform", 0, None))
    return path


def flags(data_dir: Path, sample_index: Path, output_dir: Path, limit: int = 2, batch_size: int = 2) -> list[str]:
    return [
        "--sample-index",
        str(sample_index),
        "--data-dir",
        str(data_dir),
        "--weights",
        "random",
        "--batch-size",
        str(batch_size),
        "--num-workers",
        "0",
        "--limit",
        str(limit),
        "--device",
        "cpu",
        "--seed",
        "0",
        "--num-random-seeds",
        "2",
        "--output-dir",
        str(output_dir),
    ]


def brute_force_curves(
    coefficients: np.ndarray, order: list[int], full: np.ndarray, ks: list[int]
) -> dict[str, list[float]]:
    """Γ_K, relative error and top-1 agreement of one image by explicit sums over the first K subsets of ``order``."""
    energies = (coefficients**2).sum(axis=1)
    out: dict[str, list[float]] = {"captured_energy": [], "relative_error": [], "top1_agreement": []}
    for k in ks:
        reconstruction = coefficients[order[:k]].sum(axis=0)
        out["captured_energy"].append(energies[order[:k]].sum() / energies.sum())
        out["relative_error"].append(np.linalg.norm(reconstruction - full) / np.linalg.norm(full))
        out["top1_agreement"].append(float(reconstruction.argmax() == full.argmax()))
    return out


def assert_magnitude_maximises_its_energy(arrays: dict[str, np.ndarray]) -> None:
    """The vector (scalar) top-K holds the K largest vector (scalar) energies: no control captures more, per image and K."""
    for ranking, metric in (("vector", "captured_energy"), ("scalar", "captured_scalar_energy")):
        best = arrays[f"{metric}_magnitude_{ranking}"]
        for source in SOURCES:
            assert (arrays[f"{metric}_{source}"] <= best + 1e-6).all(), (ranking, source)


def test_topk_step_matches_brute_force_and_reports(tiny_shards: Path, small_input: int, tmp_path: Path) -> None:
    sample_index = write_sample_list(tiny_shards, tmp_path / "samples.json")
    output = tmp_path / "repo" / "experiment_3" / "results_tiny"
    step_1_evaluate.main(flags(tiny_shards, sample_index, output))
    summary = read_json(output / "summary.json")
    arrays = dict(np.load(output / "per_image.npz"))
    ks = summary["ks"]
    assert (
        ks == [1, 2, 4, 8, 16, 32, 64, 128, 256]
        and summary["num_valid"] == 2
        and summary["config"]["input_size"] == small_input
    )
    assert "wall_seconds" not in json.dumps(summary)
    assert max(value.nbytes for value in arrays.values()) < 2 * 256 * 8  # compact: nothing of size (N, 2^L, C)

    # The curves against explicit subset sums of logits computed here independently (same engine and batch shape).
    model = run_setup.build_gated_stack("resnet18", "random", device="cpu", seed=0)
    dataset = SampleDataset(tiny_shards, load_sample_list(sample_index, 2), model.preprocess)
    logits = evaluate_all_masks(model, torch.stack([dataset[index]["image"] for index in range(2)]), mask_chunk=256)
    coefficients = mobius_transform(logits, dim=1, dtype=torch.float64).numpy()
    full = logits[:, -1].double().numpy()
    random = control_permutations("random", 8, seed=0, draw=1, sample_indices=[0, 1])
    for image in range(2):
        magnitude = sorted(range(256), key=lambda mask: (-np.linalg.norm(coefficients[image, mask]), mask))
        for source, draw, order in (("magnitude_vector", 0, magnitude), ("random", 1, random[image].tolist())):
            for metric, values in brute_force_curves(coefficients[image], order, full[image], ks).items():
                np.testing.assert_allclose(
                    arrays[f"{metric}_{source}"][image, draw],
                    values,
                    rtol=1e-5,
                    atol=1e-6,
                    err_msg=f"{source} {metric}",
                )
        energies = (coefficients[image] ** 2).sum(axis=1)
        assert arrays["k_eff_vector"][image] == pytest.approx(energies.sum() ** 2 / (energies**2).sum(), rel=1e-5)
        prefix = np.cumsum(energies[magnitude]) / energies.sum()
        assert arrays["k_mass_magnitude_vector"][image, 0].tolist() == [
            int(np.argmax(prefix >= 0.9)) + 1,
            int(np.argmax(prefix >= 0.99)) + 1,
        ]
        orders = [bin(mask).count("1") for mask in magnitude]
        np.testing.assert_array_equal(arrays["order_histogram_vector"][image, 4], np.bincount(orders[:16], minlength=9))
    assert_magnitude_maximises_its_energy(arrays)
    for source in SOURCES:  # K = 2^L is exact for every ranking and control
        assert (arrays[f"relative_error_{source}"][..., -1] < 1e-5).all() and (
            arrays[f"top1_agreement_{source}"][..., -1] == 1
        ).all()

    # Summary: means over images of the per-image draw means; ratios of means; thresholds on the mean curves.
    random_agreement = arrays["top1_agreement_random"].astype(np.float64).mean(axis=1).mean(axis=0)
    np.testing.assert_allclose(summary["sources"]["random"]["curves"]["top1_agreement"]["mean"], random_agreement)
    vector_gamma = arrays["captured_energy_magnitude_vector"][:, 0].astype(np.float64).mean(axis=0)
    np.testing.assert_allclose(
        summary["sources"]["magnitude_vector"]["curves"]["captured_energy"]["mean"], vector_gamma
    )
    random_gamma = arrays["captured_energy_random"].astype(np.float64).mean(axis=(0, 1))
    np.testing.assert_allclose(
        summary["improvement"]["vector"]["random"]["captured_energy"]["ratio"], vector_gamma / random_gamma
    )
    assert summary["sources"]["magnitude_vector"]["grid_k_reaching"]["captured_energy_0.9"] == next(
        k for k, value in zip(ks, vector_gamma) if value >= 0.9
    )
    assert summary["sources"]["random"]["draws"] == 2 and summary["sources"]["magnitude_scalar"]["draws"] == 1
    row = next(
        row
        for row in summary["beside_seed"]["rows"]
        if row["quantity"] == "captured_energy" and row["ranking"] == "vector"
    )
    assert (
        row["seed"] == 0.94 and row["at_seed_k"]["k"] == row["at_matching_fraction"]["k"] == 64
    )  # L = 8: the seed's own grid
    assert row["at_seed_k"]["value"]["mean"] == pytest.approx(vector_gamma[ks.index(64)])

    step_2_plot.main(["--summary", str(output / "summary.json")])
    report = (output / "REPORT.md").read_text()
    for name in ("topk_curves.png", "topk_orders.png", "topk_curves.pdf"):
        assert (output / name).stat().st_size > 0
    gamma_64 = row["at_seed_k"]["value"]
    assert format_stat(gamma_64, percent=True) in report and "## Verdict" in report and "random-init" in report
    decision = "holds" if gamma_64["ci_low"] > 0.94 else "fails" if gamma_64["ci_high"] < 0.94 else "cannot tell"
    gamma_verdict = by_id(summary["verdicts"])["captured_energy.vector"]
    assert gamma_verdict["decision"] == decision and gamma_verdict["effect"]["ci_low"] == gamma_64["ci_low"]
    assert (
        f"vector ranking: Γ_K on its own (vector) energy is as high as the original study reports: **{decision}**"
        in report.split("## Verdict")[1]
    )
    allow_all_runs(tmp_path / "repo")
    tables = render_markdown(section_blocks("experiment_3", tmp_path / "repo"))
    assert (
        "`experiment_3/results_tiny` — resnet18, `random`, N = 2" in tables
        and f"K = 64: {format_stat(gamma_64, percent=True)}" in tables
    )


class CountingMetrics:
    """Wraps ``topk_metrics``, counting calls and raising on call ``fail_on`` (if given)."""

    def __init__(self, original, fail_on: int | None = None) -> None:
        self.original, self.fail_on, self.calls = original, fail_on, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls == self.fail_on:
            raise KeyboardInterrupt
        return self.original(*args, **kwargs)


def test_interrupted_run_resumes_to_identical_json(
    tiny_shards: Path, small_input: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sample_index = write_sample_list(tiny_shards, tmp_path / "samples.json")
    full_dir, resumed_dir = tmp_path / "full", tmp_path / "resumed"
    step_1_evaluate.main(flags(tiny_shards, sample_index, full_dir, batch_size=1) + ["--ks", "1", "16", "256"])
    failing = CountingMetrics(evaluation.topk_metrics, fail_on=2)
    monkeypatch.setattr(evaluation, "topk_metrics", failing)
    with pytest.raises(KeyboardInterrupt):
        step_1_evaluate.main(flags(tiny_shards, sample_index, resumed_dir, batch_size=1) + ["--ks", "1", "16", "256"])
    counting = CountingMetrics(failing.original)
    monkeypatch.setattr(evaluation, "topk_metrics", counting)
    step_1_evaluate.main(
        flags(tiny_shards, sample_index, resumed_dir, batch_size=1) + ["--ks", "256", "16", "1"]
    )  # same grid, any order
    assert counting.calls == 1  # only the missing batch
    assert (resumed_dir / "summary.json").read_text() == (full_dir / "summary.json").read_text()
    resumed = np.load(resumed_dir / "per_image.npz")
    for name, value in np.load(full_dir / "per_image.npz").items():
        np.testing.assert_array_equal(resumed[name], value, err_msg=name)
    with pytest.raises(PipelineError, match="different"):
        step_1_evaluate.main(flags(tiny_shards, sample_index, resumed_dir, batch_size=1) + ["--ks", "1", "256"])
    resummarize_main(
        ["--summary", str(resumed_dir / "summary.json")]
    )  # rebuilt from per_image.npz alone: every number, every verdict
    rebuilt = read_json(resumed_dir / "summary.json")
    assert rebuilt["config"].pop("summary_rebuilt_by").startswith("paper.resummarize at ") and rebuilt == read_json(
        full_dir / "summary.json"
    )


def test_naive_engine_gives_the_same_curves(tiny_shards: Path, small_input: int, tmp_path: Path) -> None:
    sample_index = write_sample_list(tiny_shards, tmp_path / "samples.json")
    tree_dir, naive_dir = tmp_path / "tree", tmp_path / "naive"
    extra = ["--ks", "8", "64", "256", "--num-random-seeds", "1"]
    step_1_evaluate.main(flags(tiny_shards, sample_index, tree_dir, limit=1) + extra)
    step_1_evaluate.main(
        flags(tiny_shards, sample_index, naive_dir, limit=1) + extra + ["--engine", "naive", "--mask-chunk", "64"]
    )
    tree, naive = np.load(tree_dir / "per_image.npz"), np.load(naive_dir / "per_image.npz")
    # The engines agree to float32 round-off, not bit for bit, so the curves agree to a tolerance far below any real difference.
    for metric in ("captured_energy", "relative_error"):
        for source in SOURCES:
            np.testing.assert_allclose(
                naive[f"{metric}_{source}"],
                tree[f"{metric}_{source}"],
                rtol=1e-3,
                atol=1e-5,
                err_msg=f"{metric} {source}",
            )
    np.testing.assert_allclose(naive["k_eff_vector"], tree["k_eff_vector"], rtol=1e-4)


def test_bad_flags_and_summaries_are_one_line_errors(
    tiny_shards: Path, small_input: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample_index = write_sample_list(tiny_shards, tmp_path / "samples.json")
    with pytest.raises(PipelineError, match="--ks 300 512: every K must be at most 2\\^L = 256"):
        step_1_evaluate.main(flags(tiny_shards, sample_index, tmp_path / "bad") + ["--ks", "4", "300", "512"])
    for flag in ("--ks", "--num-random-seeds"):
        with pytest.raises(SystemExit):
            step_1_evaluate.main(flags(tiny_shards, sample_index, tmp_path / "bad") + [flag, "0"])
        assert f"argument {flag}: 0 is not allowed" in capsys.readouterr().err
    with pytest.raises(PipelineError, match="not found"):
        step_2_plot.main(["--summary", str(tmp_path / "missing.json")])
    atomic_write_json(tmp_path / "other.json", {"experiment": 2})
    with pytest.raises(PipelineError, match="not the Experiment 3 summary of experiment_3.step_1_evaluate"):
        step_2_plot.main(["--summary", str(tmp_path / "other.json")])


def test_pretrained_efficientnet_on_sample_1750(sample_1750_dir: Path, small_input: int, tmp_path: Path) -> None:
    output = tmp_path / "sample_1750"
    step_1_evaluate.main(
        [
            "--sample-index",
            str(REPO / "experiment_1" / "sample_index_sample_test.json"),
            "--data-dir",
            str(sample_1750_dir),
            "--arch",
            "efficientnet_lite0",
            "--weights",
            "pretrained",
            "--batch-size",
            "2",
            "--mask-chunk",
            "512",
            "--num-workers",
            "0",
            "--limit",
            "2",
            "--device",
            "cpu",
            "--num-random-seeds",
            "1",
            "--ks",
            "1",
            "8",
            "64",
            "128",
            "512",
            "--output-dir",
            str(output),
        ]
    )
    summary, arrays = read_json(output / "summary.json"), dict(np.load(output / "per_image.npz"))
    assert summary["num_masks"] == 512 and summary["num_valid"] == 2
    assert_magnitude_maximises_its_energy(arrays)
    for metric in CURVE_METRICS:
        assert arrays[f"{metric}_order_matched_vector"].shape == (2, 1, 5)
    row = next(
        row
        for row in summary["beside_seed"]["rows"]
        if row["quantity"] == "captured_energy" and row["ranking"] == "vector"
    )
    assert row["at_seed_k"]["k"] == 64 and row["at_matching_fraction"]["k"] == 128  # L = 9: a quarter of 2^L is 128
    step_2_plot.main(["--summary", str(output / "summary.json")])
    verdicts = by_id(
        summary["verdicts"]
    )  # the matching K = 256 is not on this grid: top-1 agreement is read at the seed's K
    assert (
        verdicts["captured_energy.vector"]["parameters"]["k"] == 128
        and verdicts["top1_agreement_magnitude.vector"]["parameters"]["k"] == 128
    )
    assert "top-1 agreement, K = 128 of 512 (the original study's K)" in (output / "REPORT.md").read_text()
