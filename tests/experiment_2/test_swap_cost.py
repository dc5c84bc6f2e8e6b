"""experiment_2.step_6_swap_cost: the swap's top-1 cost against a brute-force count on a tiny random ResNet-18 at 64 px."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.stats import bootstrap

import experiment_1.run.loop as run_loop
import experiment_1.run.setup as run_setup
from conftest import jpeg_bytes, write_shard
from experiment_1.data.shards import list_items, sample_list_json
from experiment_1.errors import PipelineError
from experiment_1.files import atomic_write_json, read_json
from experiment_2 import step_6_swap_cost
from experiment_2.limit.swap_cost import mcnemar_exact
from paper import make_tables
from paper.render_markdown import render_markdown

NUM_IMAGES = 9
SHARD = "validation-00000-of-00001.parquet"


def write_data(data_dir: Path, sample_index: Path, labels: list[int]) -> None:
    """One shard of NUM_IMAGES fixed images with ``labels``, and the sample list of all of them."""
    write_shard(data_dir / SHARD, [jpeg_bytes(index) for index in range(NUM_IMAGES)], labels)
    atomic_write_json(
        sample_index,
        sample_list_json(list_items(data_dir, "validation-*.parquet"), "validation-*.parquet", "uniform", 0, None),
    )


def flags(data_dir: Path, sample_index: Path, output_dir: Path) -> list[str]:
    return [
        "--weights",
        "random",
        "--data-dir",
        str(data_dir),
        "--sample-index",
        str(sample_index),
        "--num-workers",
        "0",
        "--batch-size",
        "4",
        "--device",
        "cpu",
        "--seed",
        "0",
        "--output-dir",
        str(output_dir),
    ]


def brute_force_predictions(argv: list[str], beta: float | None) -> np.ndarray:
    """Each image on its own through the model's plain forward (every gate on, λ = 1), argmax."""
    config = step_6_swap_cost.COMMAND.parse(argv)
    setup = run_setup.build_setup(dataclasses.replace(config, smooth_activations=beta))
    with torch.no_grad():
        return np.array(
            [int(setup.model(setup.dataset[index]["image"][None]).argmax()) for index in range(len(setup.samples))]
        )


def test_swap_cost_matches_a_brute_force_count(
    small_input: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir, sample_index, output_dir = (
        tmp_path / "data",
        tmp_path / "samples.json",
        tmp_path / "experiment_2" / "results_3c_resnet18_swap_cost",
    )
    write_data(data_dir, sample_index, [0] * NUM_IMAGES)
    argv = flags(data_dir, sample_index, output_dir)
    native, smooth = brute_force_predictions(argv, None), brute_force_predictions(argv, 10.0)
    # labels that make each variant right on some images and both wrong on others, whatever the random network predicts
    labels = [int([native[index], smooth[index], (native[index] + 1) % 1000][index % 3]) for index in range(NUM_IMAGES)]
    write_data(data_dir, sample_index, labels)
    step_6_swap_cost.main(argv)

    summary = read_json(output_dir / "swap_cost.json")
    correct_native, correct_smooth = native == np.array(labels), smooth == np.array(labels)
    assert correct_native.any() and correct_smooth.any() and not (correct_native | correct_smooth).all()
    assert summary["counts"] == {
        "labelled": NUM_IMAGES,
        "correct_native": int(correct_native.sum()),
        "correct_smooth": int(correct_smooth.sum()),
        "both_correct": int((correct_native & correct_smooth).sum()),
        "only_native_correct": int((correct_native & ~correct_smooth).sum()),
        "only_smooth_correct": int((~correct_native & correct_smooth).sum()),
        "neither_correct": int((~correct_native & ~correct_smooth).sum()),
    }
    assert summary["variants"]["native"]["top1"]["mean"] == pytest.approx(correct_native.mean())
    assert summary["variants"]["smooth"]["top1"]["mean"] == pytest.approx(correct_smooth.mean())
    difference = summary["top1_difference"]
    assert difference["mean"] == pytest.approx(correct_smooth.mean() - correct_native.mean())
    assert difference["n"] == NUM_IMAGES
    # the CI is scipy's percentile bootstrap of the per-image differences on the same resamples (seed 0)
    paired = correct_smooth.astype(np.float64) - correct_native.astype(np.float64)
    interval = bootstrap(
        (paired,), np.mean, n_resamples=2000, method="percentile", rng=np.random.default_rng(0), vectorized=True
    ).confidence_interval
    assert (difference["ci_low"], difference["ci_high"]) == pytest.approx(
        (interval.low, interval.high), rel=1e-12, abs=1e-12
    )
    assert summary["prediction_agreement"]["mean"] == pytest.approx((native == smooth).mean())
    assert (
        summary["config"]["engine"] == "naive"
        and "smooth_activations" not in summary["config"]
        and summary["variants"]["smooth"]["smooth_activations"] == {"activation": "softplus", "beta": 10.0}
    )
    assert (
        summary["variants"]["native"]["run_id"]
        == summary["config"]["run_id"]
        != summary["variants"]["smooth"]["run_id"]
    )
    entry = summary["verdicts"][0]
    # "the swap lowers top-1": holds when the whole CI lies below 0, fails when it lies above, else cannot tell
    expected = "holds" if interval.high < 0 else ("fails" if interval.low > 0 else "cannot tell")
    assert entry["decision"] == expected and entry["effect"]["value"] == difference["mean"]
    assert entry["test"]["p_value"] == mcnemar_exact(
        summary["counts"]["only_native_correct"], summary["counts"]["only_smooth_correct"]
    )
    report = (output_dir / "REPORT.md").read_text()
    assert f"{summary['counts']['correct_smooth']} / {NUM_IMAGES}" in report and "swap_cost.json" in report

    # a rerun resumes from the partial store: nothing is evaluated again, the same JSON
    monkeypatch.setattr(
        run_loop, "evaluate_masks_naive", lambda *args, **kwargs: pytest.fail("a finished batch was evaluated again")
    )
    step_6_swap_cost.main(argv)
    assert read_json(output_dir / "swap_cost.json") == summary
    make_tables.allow_all_runs(tmp_path)
    assert "results_3c_resnet18_swap_cost" in render_markdown(
        make_tables.section_blocks("experiment_3c_swap", tmp_path)
    )


def test_mcnemar_exact_against_the_binomial_sum() -> None:
    # two-sided exact: 2 × P(X ≤ 1) for X ~ Bin(6, 1/2) = 2 × 7/64
    assert mcnemar_exact(5, 1) == pytest.approx(14 / 64) and mcnemar_exact(1, 5) == pytest.approx(14 / 64)
    assert mcnemar_exact(0, 0) == 1.0


def test_an_unlabelled_sample_list_is_refused(small_input: int, tmp_path: Path) -> None:
    data_dir, sample_index = tmp_path / "data", tmp_path / "samples.json"
    write_data(data_dir, sample_index, [-1] * NUM_IMAGES)
    with pytest.raises(PipelineError, match="no image of the sample list carries a label"):
        step_6_swap_cost.main(flags(data_dir, sample_index, tmp_path / "out"))
