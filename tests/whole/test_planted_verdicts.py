"""Issue 25, part A: each defect the referee found, planted on a small synthetic summary, and the rule that now decides it.

One right word per case: an Experiment 2 spectrum at the round-off floor is "unresolved"; a tied null peak is read as
tied; κ and C≤3 on the same side of the null are "cannot tell", not two contradictory findings; the naive sum fails for an
additive network too, and only the first-order error speaks about interactions; 0/1 shares at small N get exact intervals;
two images cannot say "no" (3A); K_τ^err near its bound is saturated; a seed claim with one failing part beside undecided
ones is "cannot tell"; a few images cannot make an Experiment 3 control win; the batch-norm calibration of the null
computes the exact statistics and learns nothing. And (issue 58) a stored verdict edited in a copy of a committed run is
refused by every renderer — each plot step and paper.make_tables — before anything is written.
"""

from __future__ import annotations

import importlib
import itertools
import json
import shutil
from math import comb
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.stats import beta, binom, binomtest
from torch import nn

from experiment_1.mobius.spectrum import binomial_null
from experiment_1.network.batchnorm_calibration import calibrate_batchnorm
from experiment_1.reconstruction.verdicts import verdicts as reconstruction_verdicts
from experiment_1.report.stats import bootstrap_mean_ci, exact_proportion_ci, exact_proportion_ci_rows, sign_flip_p_rows
from experiment_1.report.verdicts import (
    CANNOT_TELL,
    FAILS,
    HOLDS,
    NEAR_BOUND_MARGIN,
    PARTLY_CONTRADICTED,
    SATURATED,
    UNRESOLVED,
    by_id,
    power_guard,
    saturation,
    sign_test_power,
)
from experiment_2.lambda_sweep.verdicts import kappa_changes, migration_verdict, monotone_verdict
from experiment_2.spectrum import evaluation
from experiment_2.spectrum.verdicts import null_verdicts, peak_decision, shape_decision
from experiment_5.verdicts import seed_claim_decision
from paper import make_tables

BLOCKS = 4


def spectrum_arrays(energy: np.ndarray, roundoff: float, predictions: np.ndarray) -> dict[str, np.ndarray]:
    """Per-image Experiment 2 arrays from order energies ``(N, L+1)`` (both projections alike)."""
    count = energy.shape[0]
    orders = np.arange(1, BLOCKS + 1)
    spectrum = energy[:, 1:] / energy[:, 1:].sum(1, keepdims=True)
    arrays = {
        "full_prediction": predictions,
        "index": np.arange(count),
        "label": np.full(count, -1),
        "valid": np.ones(count, dtype=bool),
    }
    for projection in ("vector", "scalar"):
        arrays.update(
            {
                f"energy_{projection}": energy,
                f"spectrum_{projection}": spectrum,
                f"kappa_{projection}": spectrum @ orders,
                f"peak_order_{projection}": spectrum.argmax(1) + 1,
                f"c_le3_{projection}": spectrum[:, :3].sum(1),
                f"trunk_share_{projection}": energy[:, 0] / energy.sum(1),
                f"roundoff_variance_{projection}": np.full(count, roundoff),
            }
        )
    return arrays


def summarize(arrays: dict[str, np.ndarray], weights: str = "pretrained", run: str = "a") -> dict:
    config = {"num_blocks": BLOCKS, "arch": "resnet18", "weights": weights, "seed": 0, "run_id": run}
    return evaluation.summarize(arrays, config, seed=0)


def floor(roundoff: float) -> np.ndarray:
    return roundoff * np.array([comb(BLOCKS, order) * 2.0**order for order in range(BLOCKS + 1)])


def test_a_spectrum_at_the_roundoff_floor_is_unresolved_and_its_null_comparison_too() -> None:
    rng = np.random.default_rng(0)
    roundoff = 1e-14
    noise = floor(roundoff) * rng.uniform(
        0.5, 1.7, size=(8, BLOCKS + 1)
    )  # every order 0.5–1.7× its floor, like the committed null
    noise[:, 0] = 0.25
    null = summarize(spectrum_arrays(noise, roundoff, np.full(8, 162)), weights="random", run="null")
    assert by_id(null["verdicts"])["resolved.vector"]["decision"] == UNRESOLVED
    assert by_id(null["verdicts"])["shape.vector"]["decision"] == UNRESOLVED  # never a null, never a finding
    assert (
        by_id(null["verdicts"])["input_dependent"]["decision"] == FAILS
    )  # one trunk energy for every image: a constant function
    signal = floor(roundoff) * 1e6 * rng.uniform(1, 2, size=(8, BLOCKS + 1))
    signal[:, 0] = rng.uniform(1, 2, size=8)
    trained = summarize(spectrum_arrays(signal, roundoff, np.arange(8)))
    assert by_id(trained["verdicts"])["resolved.vector"]["decision"] == HOLDS
    assert [entry["decision"] for entry in null_verdicts(trained, null)] == [UNRESOLVED, UNRESOLVED]


def test_the_tied_binomial_peak_is_read_as_tied() -> None:
    assert binomial_null(9)["peak_orders"] == [4, 5] and binomial_null(8)["peak_orders"] == [4]
    # Lite0's per-image peak order 4.90 [4.86, 4.93] sits between the null's tied peaks: it peaks where counting does.
    assert peak_decision({"mean": 4.9, "ci_low": 4.86, "ci_high": 4.93}, binomial_null(9)["peak_orders"]) == FAILS
    assert peak_decision({"mean": 6.0, "ci_low": 5.8, "ci_high": 6.2}, [4, 5]) == HOLDS


def test_kappa_and_c_le3_on_one_side_are_no_shift() -> None:
    # Lite0: κ above the null (higher orders) and C≤3 above it (lower orders) — one wider spectrum, not two findings.
    decision, notes = shape_decision(+1, +1)
    assert decision == CANNOT_TELL and "wider" in notes[0]
    assert shape_decision(+1, -1)[0] == HOLDS and shape_decision(-1, +1)[0] == FAILS


def test_the_naive_sum_fails_for_an_additive_network_and_the_first_order_error_tells_them_apart() -> None:
    rng = np.random.default_rng(1)
    masks = list(itertools.product((0, 1), repeat=BLOCKS))
    rows = {}
    for name, interaction in (("additive", 0.0), ("interacting", 3.0)):
        naive, first = [], []
        for _ in range(6):
            trunk, effects, pair = rng.normal(size=10), rng.normal(size=(BLOCKS, 10)), rng.normal(size=10)
            value = {
                mask: trunk + np.asarray(mask) @ effects + interaction * mask[0] * mask[1] * pair for mask in masks
            }
            full = value[(1,) * BLOCKS]
            empty = value[(0,) * BLOCKS]
            singles = [value[tuple(int(j == block) for j in range(BLOCKS))] - empty for block in range(BLOCKS)]
            naive.append(np.linalg.norm(sum(value.values()) - full) / np.linalg.norm(full))
            first.append(np.linalg.norm(empty + sum(singles) - full) / np.linalg.norm(full))
        metrics = {
            "naive_sum_rel_error": bootstrap_mean_ci(np.array(naive)),
            "first_order_rel_error": bootstrap_mean_ci(np.array(first)),
            "max_subset_rel_error_float32": {"max": 1e-7},
            "first_order_top1_agreement": exact_proportion_ci(np.ones(6)),
        }
        rows[name] = by_id(reconstruction_verdicts({"metrics": metrics, "config": {"num_blocks": BLOCKS}}))
    assert rows["additive"]["naive.misses"]["decision"] == HOLDS  # the naive sum misses without any interaction
    assert rows["additive"]["first_order.interactions"]["decision"] == FAILS
    assert rows["interacting"]["first_order.interactions"]["decision"] == HOLDS


def test_shares_at_small_n_have_exact_intervals_and_power() -> None:
    none_of_six = exact_proportion_ci(np.zeros(6))
    assert none_of_six["ci_low"] == 0 and none_of_six["ci_high"] == pytest.approx(
        1 - 0.025 ** (1 / 6)
    )  # 0–46 %, not [0, 0]
    assert none_of_six["ci_high"] == pytest.approx(beta.ppf(0.975, 1, 6))
    for n in (2, 5, 6, 10):
        brute = sum(binom.pmf(count, n, 0.9) for count in range(n + 1) if binomtest(count, n, 0.5).pvalue <= 0.05)
        assert sign_test_power(n, 0.9) == pytest.approx(brute)
    assert sign_test_power(5, 1.0) == 0.0 and sign_test_power(6, 1.0) == 1.0


@pytest.mark.parametrize("direction", [+1.0, -1.0])
def test_two_images_cannot_say_yes_or_no_to_migration(direction: float) -> None:
    lambdas = [1.0, 0.5, 0.2]
    kappa = np.array(
        [[8.0, 8.0 + direction * 0.5, 8.0 + direction * 1.0], [8.2, 8.2 + direction * 0.4, 8.2 + direction * 0.9]]
    )
    arrays = {"kappa_vector": kappa, "kappa_scalar": kappa}
    summary = {"kappa_changes": kappa_changes(arrays, np.ones(2, dtype=bool), lambdas, seed=0)}
    migration = migration_verdict(summary, "vector")
    assert migration["decision"] == CANNOT_TELL and any("power 0.00" in note for note in migration["notes"])
    assert (
        power_guard(FAILS, 0.0)[0] == CANNOT_TELL and power_guard(FAILS, 0.0, significant=True)[0] == FAILS
    )  # silence never fails
    assert monotone_verdict(summary, "vector")["decision"] == CANNOT_TELL
    many = np.repeat(kappa, 10, axis=0) + np.random.default_rng(2).normal(scale=0.01, size=(20, 3))
    decided = migration_verdict(
        {
            "kappa_changes": kappa_changes(
                {"kappa_vector": many, "kappa_scalar": many}, np.ones(20, dtype=bool), lambdas, 0
            )
        },
        "vector",
    )
    assert decided["decision"] == (HOLDS if direction < 0 else FAILS)


def test_k_err_near_its_bound_is_saturated() -> None:
    values = np.random.default_rng(3).integers(494, 512, size=200).astype(float)  # 494–511 of 512, never exactly 512
    assert saturation(values, (1.0, 512.0)) is None  # the old rule let it through as a finding
    assert saturation(values, (1.0, 512.0), margin=NEAR_BOUND_MARGIN)["decision"] == SATURATED


def test_the_seed_claim_is_decided_at_the_strength_of_its_parts() -> None:
    assert (
        seed_claim_decision([CANNOT_TELL, SATURATED], [FAILS, CANNOT_TELL, CANNOT_TELL]) == PARTLY_CONTRADICTED
    )  # N12
    assert seed_claim_decision([FAILS, CANNOT_TELL], [FAILS, CANNOT_TELL]) == FAILS
    assert seed_claim_decision([HOLDS, HOLDS], [HOLDS, FAILS]) == FAILS
    assert seed_claim_decision([HOLDS, HOLDS], [HOLDS, HOLDS]) == HOLDS


def test_batchnorm_calibration_sets_the_exact_statistics_and_learns_nothing() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Conv2d(4, 2, 1), nn.BatchNorm2d(2)
    ).eval()
    weights = {name: value.clone() for name, value in model.named_parameters()}
    images = torch.randn(6, 3, 8, 8) * 3 + 1
    assert calibrate_batchnorm(model, [images[:3], images[3:]]) == 6
    assert not model.training and all(torch.equal(value, weights[name]) for name, value in model.named_parameters())
    first = model[0](images)
    batches = [first[:3], first[3:]]
    expected_mean = torch.stack([batch.mean(dim=(0, 2, 3)) for batch in batches]).mean(0)
    expected_var = torch.stack([batch.var(dim=(0, 2, 3), unbiased=True) for batch in batches]).mean(0)
    torch.testing.assert_close(model[1].running_mean, expected_mean)
    torch.testing.assert_close(model[1].running_var, expected_var)
    assert model[1].momentum == 0.1
    with torch.no_grad():
        normalised = model[1](first)
    assert normalised.mean().abs() < 0.2 and (normalised.var() - 1).abs() < 0.2  # unit scale again on these images


def test_a_few_images_cannot_make_a_control_win() -> None:
    # Lite1-like: the magnitude top-K agrees on no image, a control's draws on 2 of 6 — a bootstrap CI below 0, but the
    # exact paired sign-flip test over 6 images cannot reach p ≤ 0.05 with two non-zero pairs.
    differences = np.array([[0.0], [0.0], [-0.2], [0.0], [-0.4], [0.0]])
    (p_value,) = sign_flip_p_rows(differences)
    flips = np.array(list(itertools.product((-1, 1), repeat=6)))
    means = (flips * differences[:, 0]).mean(1)
    observed = differences[:, 0].mean()
    brute = min(1.0, 2 * min(np.mean(means >= observed - 1e-12), np.mean(means <= observed + 1e-12)))
    assert p_value == pytest.approx(brute) and p_value > 0.05
    rows = exact_proportion_ci_rows(np.array([[0, 1], [0, 1], [0, 0], [0, 1], [0, 1], [0, 1]]))
    assert rows["ci_high"][0] == pytest.approx(exact_proportion_ci(np.zeros(6))["ci_high"]) and rows["mean"][
        1
    ] == pytest.approx(5 / 6)


# --- issue 58: one verdict engine; an edited stored verdict is refused by every renderer, before anything is written ---

RENDERERS = [
    # (the results folder, its file, the verdict edited, the renderer, its arguments after the file)
    ("experiment_1/results_efficientnet_lite0_sample", "summary.json", "naive.misses", "experiment_1.step_4_plot", ()),
    ("experiment_2/results_efficientnet_lite0_sample", "summary.json", "peak.vector", "experiment_2.step_2_plot", ()),
    (
        "experiment_2/results_lambda_efficientnet_lite0_sample",
        "summary_all.json",
        "migration.vector",
        "experiment_2.step_4_lambda_plot",
        (),
    ),
    ("experiment_3/results_efficientnet_lite0_sample", "summary.json", "orders.vector", "experiment_3.step_2_plot", ()),
    ("experiment_4/results_efficientnet_lite0_sample", "overlap.json", "seed_claim", "experiment_4.step_3_plot", ()),
    (
        "experiment_5/results_efficientnet_lite0_sample",
        "analysis.json",
        "kbar_vector.hard_minus_easy",
        "experiment_5.step_3_plot",
        ("--per-image", "per_image.pt"),
    ),
]


@pytest.mark.parametrize("folder, name, verdict_id, renderer, extra", RENDERERS, ids=[r[3] for r in RENDERERS])
def test_a_planted_edit_of_a_stored_verdict_is_refused_by_every_renderer(
    tmp_path, expect_one_line, folder: str, name: str, verdict_id: str, renderer: str, extra: tuple
) -> None:
    repo = Path(__file__).resolve().parents[2]
    copy = tmp_path / folder
    shutil.copytree(repo / folder, copy)
    summary = json.loads((copy / name).read_text())
    entry = next(entry for entry in summary["verdicts"] if entry["id"] == verdict_id)
    entry["decision"] = CANNOT_TELL if entry["decision"] != CANNOT_TELL else HOLDS
    (copy / name).write_text(json.dumps(summary))
    (copy / "REPORT.md").unlink()
    flag = "--analysis" if name == "analysis.json" else "--summary"
    arguments = [flag, str(copy / name), *(str(copy / part) if part.endswith(".pt") else part for part in extra)]
    line = expect_one_line(importlib.import_module(renderer).main, arguments)
    assert f"{copy / name}: verdict {verdict_id} says '{entry['decision']}' but its rule " in line
    assert not (copy / "REPORT.md").exists()  # refused before anything is drawn
    line = expect_one_line(make_tables.main, ["--root", str(tmp_path), "--all-runs"])
    assert f"{copy / name}: verdict {verdict_id} says '{entry['decision']}' but its rule " in line
    assert not (tmp_path / "tables.md").exists()
