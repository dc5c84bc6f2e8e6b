"""Experiment 2 step 8's sampled parts, end to end on ResNet-18 (L = 8) at 32 px against the exhaustive table of the
same images: the Walsh estimates, the sub-cube means (each draw's held-off view) and the surrogate's R² equal the
estimators applied to the brute-force table; the verdicts pass the project's checker; a rerun recomputes nothing; the
depth reader's verdicts on two runs. (The flags: test_low_orders_flags.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import evaluation_flags
from experiment_1.data.shards import SampleDataset, load_sample_list
from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.mobius.transform import mobius_transform
from experiment_1.network.engines import evaluate_all_masks
from experiment_1.network.registry import build_gated_stack
from experiment_1.report import CANNOT_TELL, OUT_OF_RANGE, check_verdicts
from experiment_1.run import loop
from experiment_2 import step_8_low_orders, step_12_depth_trend
from experiment_2.past_exhaustive.sampling.subcubes import (
    VALIDATED_DRAWS,
    draw_subcubes,
    subcube_mask_ids,
    subcube_order_means,
)
from experiment_2.past_exhaustive.sampling.walsh import (
    estimate_names,
    surrogate_r2_by_size,
    walsh_design,
    walsh_estimates,
)
from experiment_2.record import VERDICTS

FLAGS = ("--arch", "resnet18", "--order", "2", "--resolution", "32", "--random-masks", "12", "--limit", "2")
SUBCUBES = ("--subcube-size", "3", "--subcubes", "3")


@pytest.fixture
def run(tiny_shards: Path, tiny_sample_index: Path, tmp_path: Path) -> Path:
    out = tmp_path / "low"
    step_8_low_orders.main(evaluation_flags(tiny_shards, tiny_sample_index, out, *FLAGS, *SUBCUBES))
    return out


def exhaustive_table(tiny_shards: Path, tiny_sample_index: Path) -> torch.Tensor:
    model = build_gated_stack("resnet18", "random", seed=0)
    model.preprocess = type(model.preprocess)(resize=37, crop=32)
    samples = load_sample_list(tiny_sample_index)[:2]
    dataset = SampleDataset(tiny_shards, samples, model.preprocess)
    return evaluate_all_masks(model, torch.stack([dataset[i]["image"] for i in range(len(samples))])).double()


def test_sampled_parts_equal_the_estimators_on_the_exhaustive_table(
    run: Path, tiny_shards: Path, tiny_sample_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary, arrays = read_json(run / "summary.json"), np.load(run / "per_image.npz")
    table = exhaustive_table(tiny_shards, tiny_sample_index).numpy()
    predicted = table[:, 255].argmax(axis=1)
    design = walsh_design(8, 12, 0)
    ids = design.all_ids()
    for image in range(2):
        expected = walsh_estimates(design, ids, table[image, ids])
        np.testing.assert_allclose(
            arrays["walsh_estimate_vector"][image], [expected[n]["estimate"] for n in estimate_names()], rtol=1e-4
        )
        scalar = walsh_estimates(design, ids, table[image, ids][:, [predicted[image]]])
        np.testing.assert_allclose(
            arrays["walsh_ci_high_scalar"][image], [scalar[n]["ci_high"] for n in estimate_names()], rtol=1e-4
        )
    # the sub-cubes: each draw's view table is the full table at the draw's global ids
    draws = draw_subcubes(8, 3, 3, 1)
    assert summary["subcubes"]["design"]["blocks"] == draws.tolist()
    for number, blocks in enumerate(draws):
        expected = subcube_order_means(table[:, subcube_mask_ids(blocks)])
        np.testing.assert_allclose(arrays["order_means_vector"][:, number], expected, rtol=1e-4)
    # the surrogate: exact order-≤2 coefficients of the brute-force table at the design's masks
    coefficients = mobius_transform(torch.from_numpy(table), dim=1).numpy()
    low = np.array([s for s in range(256) if bin(s).count("1") <= 2])
    sizes = summary["surrogate_r2_by_size"]["sizes"]
    for image in range(2):
        rows = surrogate_r2_by_size(low, coefficients[image, low], ids, table[image, ids], 8)
        by_size = {row["size"]: row["r2"] for row in rows}
        np.testing.assert_allclose(arrays["surrogate_r2_vector"][image], [by_size[s] for s in sizes], rtol=1e-4)
    # Var h is the sample variance of the design's base masks
    np.testing.assert_allclose(
        arrays["variance_vector"], table[:, design.base].var(axis=1, ddof=1).sum(axis=1), rtol=1e-4
    )
    # verdicts: both projections of each, in the vocabulary and re-derived by the checker; the out-of-reach list
    ids_ = {entry["id"] for entry in summary["verdicts"]}
    assert ids_ == {f"{name}.{p}" for name in ("walsh_low_degree_share", "surrogate_r2") for p in ("vector", "scalar")}
    check_verdicts(summary, run / "summary.json", VERDICTS[summary["experiment"]])
    assert summary["undecided"][0]["status"] == "out of reach" and "peak" in summary["undecided"][0]["quantity"]
    report = (run / "REPORT.md").read_text()
    assert "Random sub-cubes" in report and "Walsh summaries" in report and "a null" in report
    # 3 draws: fewer than those at which step 11 validates the intervals, and the summary and REPORT say so
    assert summary["subcubes"]["design"]["validated_draws"] == VALIDATED_DRAWS > 3
    assert summary["subcubes"]["design"]["draws_validated"] is False
    assert f"**3 draws, fewer than the {VALIDATED_DRAWS} at which step 11 validates them**" in report
    assert "cost_estimate" in read_json(run / "timing.json")

    # a rerun evaluates nothing, writes the same summary and keeps the estimate made before the evaluation
    before = (run / "summary.json").read_bytes()
    estimate = read_json(run / "timing.json")["cost_estimate"]
    for name in ("evaluate_all_masks", "evaluate_mask_family", "evaluate_masks_naive"):
        monkeypatch.setattr(loop, name, lambda *args, **kwargs: pytest.fail("a batch was recomputed"))
    step_8_low_orders.main(evaluation_flags(tiny_shards, tiny_sample_index, run, *FLAGS, *SUBCUBES))
    assert (run / "summary.json").read_bytes() == before
    assert read_json(run / "timing.json")["cost_estimate"] == estimate

    # the depth reader refuses a random-init run with batch norm at its initial statistics
    trend = run.parent / "trend"
    with pytest.raises(PipelineError, match=r"summary.json: a random-init network with batch norm at its initial"):
        step_12_depth_trend.main(["--runs", str(run), str(run), "--output-dir", str(trend)])
    # ... and reads two calibrated runs of the same images (the same network twice: a change of exactly 0)
    calibrated = read_json(run / "summary.json")
    calibrated["config"]["batchnorm_calibration"] = {"images": 4}
    first, second = run.parent / "first", run.parent / "second"
    for folder in (first, second):
        folder.mkdir()
        (folder / "summary.json").write_text(json.dumps(calibrated))
    step_12_depth_trend.main(["--runs", str(first), str(second), "--output-dir", str(trend)])
    trend_summary = read_json(trend / "summary.json")
    check_verdicts(trend_summary, trend / "summary.json", VERDICTS[trend_summary["experiment"]])
    kinds = {entry["id"].split(".")[0] for entry in trend_summary["verdicts"]}
    assert kinds == {"mobius_mean_order", "walsh_kappa_per_block", "low_degree_share", "basis"}
    assert len(trend_summary["verdicts"]) == 2 * (
        2 + 1 + 1 + 1
    )  # per projection: m̄ at both corners, κ_W / L, share, basis
    assert {entry["decision"] for entry in trend_summary["verdicts"]} <= {CANNOT_TELL, OUT_OF_RANGE}
    assert {entry["reading"] for entry in trend_summary["verdicts"] if "reading" in entry} == {"neither basis decides"}
    assert "batch norm calibrated on 4 held-out images" in (trend / "REPORT.md").read_text()
    # a run whose own vector share is saturated makes the vector share's change saturated (unless out of range)
    for entry in calibrated["verdicts"]:
        if entry["id"] == "walsh_low_degree_share.vector":
            entry["decision"] = "saturated"
    (second / "summary.json").write_text(json.dumps(calibrated))
    step_12_depth_trend.main(["--runs", str(first), str(second), "--output-dir", str(trend)])
    decisions = {entry["id"]: entry for entry in read_json(trend / "summary.json")["verdicts"]}
    share = decisions["low_degree_share.vector.L8_to_L8"]
    outside = any(OUT_OF_RANGE in note for note in share["notes"])
    assert share["decision"] == (OUT_OF_RANGE if outside else "saturated")
    assert all(
        entry["rule"].endswith("own low-degree-share verdict is")
        for entry in decisions.values()
        if entry["id"].startswith("low_degree_share")
    )
