"""Experiment 5's three steps end to end on a random-init ResNet-18 at 64 px, including resume, and on imagenet-1k/sample-1750."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats as scipy_stats

import experiment_1.pipeline as pipeline
import experiment_5.step_1_evaluate as step_1_evaluate
from experiment_1.core import evaluate_all_masks
from experiment_1.data import SampleDataset, list_items
from experiment_1.errors import PipelineError
from experiment_1.io_utils import atomic_write_json, read_json
from paper.make_tables import main as tables_main
from experiment_1.mobius import mobius_transform
from experiment_1.sample_list import draw_sample, load_sample_list, sample_list_json
from experiment_5 import step_2_analyze, step_3_plot
from experiment_5.association import quartile_groups
from experiment_5.complexity import complexity_measures
from experiment_5.difficulty import DIFFICULTY_SCORES, difficulty_scores
from experiment_5.records import load_per_image

IMAGES, BATCH = 8, 4


def write_labelled_list(data_dir: Path, path: Path, pattern: str = "validation-*.parquet", per_class: int = 4) -> Path:
    samples = draw_sample(list_items(data_dir, pattern), "per-class", 0, per_class, seed=0)
    atomic_write_json(path, sample_list_json(samples, pattern, "per-class", 0, per_class))
    return path


def flags(data_dir: Path, sample_index: Path, output_dir: Path) -> list[str]:
    return ["--sample-index", str(sample_index), "--data-dir", str(data_dir), "--weights", "random", "--batch-size", str(BATCH),
            "--num-workers", "0", "--limit", str(IMAGES), "--device", "cpu", "--seed", "0", "--output-dir", str(output_dir)]


def run_analysis(output_dir: Path) -> dict:
    step_2_analyze.main(["--per-image", str(output_dir / "per_image.pt"), "--num-resamples", "200"])
    return read_json(output_dir / "analysis.json")


def planted_record(count: int = 200, num_blocks: int = 4) -> dict:
    """A per_image.pt record with planted links: N_eff^v grows with the cross-entropy, C≤3 (vector) falls with it,
    κ (vector) is independent of it, K_τ^err is 2^L everywhere; the other measures are noise."""
    rng = np.random.default_rng(3)
    logits = torch.from_numpy(rng.normal(scale=3.0, size=(count, 10)))
    labels = torch.from_numpy(rng.integers(0, 10, size=count))
    arrays = {name: value for name, value in difficulty_scores(logits, labels).items()}
    difficulty = arrays["cross_entropy"].numpy()
    noise = lambda: torch.from_numpy(rng.normal(size=count))  # noqa: E731
    arrays.update({name: noise() for name in ("kbar_vector", "kbar_scalar", "kappa_scalar", "c_le3_scalar", "full_logit_norm")})
    arrays["kappa_vector"] = noise()
    arrays["n_eff_vector"] = torch.from_numpy(difficulty) + 0.3 * noise()
    arrays["c_le3_vector"] = -torch.from_numpy(difficulty) + 0.3 * noise()
    arrays["k_err"] = torch.full((count, 2), 2**num_blocks)
    arrays["k_mass"] = torch.from_numpy(rng.integers(1, 2**num_blocks, size=(count, 1)))
    arrays.update(valid=torch.ones(count, dtype=torch.bool), index=torch.arange(count), label=labels, full_prediction=logits.argmax(1))
    config = {"num_blocks": num_blocks, "taus": [0.1, 0.3], "etas": [0.9], "arch": "resnet18", "weights": "random"}
    return {"experiment": 5, "question": "?", "config": config, "num_images": count, "num_valid": count, "num_skipped_corrupt": 0,
            "sample_pool": {}, "samples": [], "arrays": arrays}


def test_analysis_verdicts_on_planted_data() -> None:
    analysis = step_2_analyze.analyze(planted_record(), "cross_entropy", seed=0, num_resamples=300)
    verdicts = {name: entry["verdict"] for name, entry in analysis["verdicts"].items()}
    assert verdicts["n_eff_vector"] == "broadened" and analysis["verdicts"]["n_eff_vector"]["direction"] == "more subsets"
    assert verdicts["c_le3_vector"] == "shifted" and analysis["verdicts"]["c_le3_vector"]["direction"] == "higher orders"  # less low-order mass
    assert verdicts["kappa_vector"] == "invariant" and verdicts["k_err"] == "constant" and verdicts["k_err_tau_0.3"] == "constant"
    assert analysis["spearman"]["cross_entropy"]["n_eff_vector"]["rho"] > 0.8 and analysis["spearman"]["cross_entropy"]["c_le3_vector"]["rho"] < -0.8
    kappa = analysis["spearman"]["cross_entropy"]["kappa_vector"]
    assert kappa["ci_low"] < 0 < kappa["ci_high"]
    assert analysis["at_all_subsets"] == {"k_err": 1.0, "k_err_tau_0.3": 1.0, "k_mass": 0.0}
    # The label-aware scores agree on the planted links; correct vs incorrect uses the same arrays.
    assert analysis["verdicts"]["n_eff_vector"]["by_score"]["one_minus_p_true"]["verdict"] == "broadened"
    correctness = analysis["correctness"]
    assert correctness["num_correct"] + correctness["num_incorrect"] == 200 and correctness["measures"]["n_eff_vector"]["incorrect_minus_correct"]["mean"] > 0


class CountingMeasures:
    """Wraps ``complexity_measures``, counting calls and raising on call ``fail_on`` (if given)."""

    def __init__(self, original, fail_on: int | None = None) -> None:
        self.original, self.fail_on, self.calls = original, fail_on, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls == self.fail_on:
            raise RuntimeError("simulated interruption")
        return self.original(*args, **kwargs)


def test_three_steps_end_to_end_with_resume(tiny_shards: Path, small_input: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sample_index = write_labelled_list(tiny_shards, tmp_path / "val.json")
    full_dir, resumed_dir = tmp_path / "results", tmp_path / "resumed"
    step_1_evaluate.main(flags(tiny_shards, sample_index, full_dir))
    record = load_per_image(full_dir / "per_image.pt")
    arrays = {name: value.numpy() for name, value in record["arrays"].items()}
    samples = load_sample_list(sample_index, IMAGES)
    assert record["num_valid"] == IMAGES and record["config"]["input_size"] == small_input
    assert record["samples"] == [{"source": s.source, "row": s.row, "label": s.label} for s in samples]
    np.testing.assert_array_equal(arrays["label"], [s.label for s in samples])
    assert record["sample_pool"] == {"pattern": "validation-*.parquet", "mode": "per-class", "per_class": 4, "list_size": 12, "labelled_images_matching_pattern": 12}
    assert record["config"]["taus"] == [0.1, 0.05, 0.2, 0.3] and record["config"]["etas"] == [0.9, 0.5, 0.75, 0.95]
    # Nothing of size 2^L × C is kept: at most one small trailing dimension (the thresholds).
    assert all(value.ndim == 1 or (value.ndim == 2 and value.shape[1] == 4) for value in arrays.values())

    # The first batch recomputed here with the same engine on the same batch shape: every array bit-equal.
    model = pipeline.build_gated_resnet("resnet18", "random", device="cpu", seed=0)
    dataset = SampleDataset(tiny_shards, samples, model.preprocess)
    images = torch.stack([dataset[index]["image"] for index in range(BATCH)])
    labels = torch.tensor([s.label for s in samples[:BATCH]])
    logits = evaluate_all_masks(model, images, mask_chunk=256)
    full = logits[:, -1]
    expected = {**difficulty_scores(full, labels), **complexity_measures(mobius_transform(logits, dim=1, dtype=torch.float64), full, [0.1, 0.05, 0.2, 0.3], [0.9, 0.5, 0.75, 0.95])}
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
    assert [stat["mean"] for stat in quartile["quartile_means"]] == pytest.approx([k_err[group].mean() for group in groups])
    difference = quartile["hard_minus_easy"]
    covers_zero = difference["ci_low"] <= 0 <= difference["ci_high"]
    assert (analysis["verdicts"]["k_err"]["verdict"] == "invariant") == covers_zero
    assert analysis["published"]["resnet18"]["k_tau_err_hard_minus_easy"] == 2.8
    assert set(analysis["spearman"]) == set(DIFFICULTY_SCORES) and "k_err_tau_0.05" in analysis["measures"]

    step_3_plot.main(["--analysis", str(full_dir / "analysis.json"), "--per-image", str(full_dir / "per_image.pt")])
    report = (full_dir / "REPORT.md").read_text()
    for name in ("rho_heatmap", "quartile_bars", "strongest_pairs"):
        assert (full_dir / f"{name}.png").stat().st_size > 0 and f"({name}.png)" in report
    assert step_3_plot.rho_cell(entry) in report and step_3_plot.difference_cell(difference, "k_err") in report
    assert f"K_τ^err: **{analysis['verdicts']['k_err']['verdict']}**" in report and "## Beside the seed" in report
    tables_root = tmp_path / "repo"
    (tables_root / "experiment_5" / "results_tiny").mkdir(parents=True)
    shutil.copy(full_dir / "analysis.json", tables_root / "experiment_5" / "results_tiny")
    tables_main(["--root", str(tables_root)])
    tables = (tables_root / "tables.md").read_text()
    assert "`experiment_5/results_tiny` — resnet18, `random`, N = 8, difficulty = cross-entropy" in tables
    assert f"| K_τ^err | {step_3_plot.rho_cell(entry)} | {step_3_plot.rho_cell(entry, 'partial_')} | {step_3_plot.difference_cell(difference, 'k_err')} |" in tables

    # Interrupt after the first batch, then resume: only the missing batch runs, and the JSON is identical.
    failing = CountingMeasures(step_1_evaluate.complexity_measures, fail_on=2)
    monkeypatch.setattr(step_1_evaluate, "complexity_measures", failing)
    with pytest.raises(RuntimeError, match="simulated interruption"):
        step_1_evaluate.main(flags(tiny_shards, sample_index, resumed_dir))
    counting = CountingMeasures(failing.original)
    monkeypatch.setattr(step_1_evaluate, "complexity_measures", counting)
    step_1_evaluate.main(flags(tiny_shards, sample_index, resumed_dir))
    assert counting.calls == 1 and read_json(resumed_dir / "timing.json")["images_evaluated"] == BATCH
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
    assert record["sample_pool"]["labelled_images_matching_pattern"] == 1750 and record["sample_pool"]["list_size"] == 1000
    labels = record["arrays"]["label"].numpy()
    assert ((labels >= 0) & (labels < 1000)).all() and record["num_valid"] == IMAGES
    analysis = run_analysis(output_dir)
    step_3_plot.main(["--analysis", str(output_dir / "analysis.json"), "--per-image", str(output_dir / "per_image.pt")])
    assert f"{IMAGES} analysed" in (output_dir / "REPORT.md").read_text() and analysis["num_analysed"] == IMAGES
