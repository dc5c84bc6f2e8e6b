"""Experiment 3's verdict rules on planted per-image arrays (L = 4, 16 subsets): effect present, absent, at the seed's value, controls identical at small K."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from experiment_1.report.verdicts import CANNOT_TELL, FAILS, HOLDS, by_id
from experiment_3.summary import summarize
from experiment_3.topk import CURVE_METRICS, SOURCES
from experiment_3.verdicts import verdicts

L, COUNT, DRAWS = 4, 200, 2
KS = [1, 2, 4, 8, 16]


def planted_arrays(empty_top1_share: float = 0.95, gamma_at_4: float = 0.5) -> dict[str, np.ndarray]:
    """Per-image arrays of every source: the magnitude rankings beat every control in top-1 agreement, their relative error is
    ≥ 1.2 below K = 2^L, their Γ_4 is ``gamma_at_4``; order-matched equals the vector ranking at K = 1 on every image and draw;
    the top-1 subset is ∅ on ``empty_top1_share`` of images."""
    rng = np.random.default_rng(0)
    arrays: dict[str, np.ndarray] = {
        "valid": np.ones(COUNT, bool),
        "index": np.arange(COUNT),
        "label": np.zeros(COUNT, np.int64),
        "full_prediction": np.zeros(COUNT, np.int64),
    }
    for source in SOURCES:
        draws = 1 if source.startswith("magnitude") else DRAWS
        ranked = source.startswith("magnitude")
        shape = (COUNT, draws, len(KS))
        gamma = np.broadcast_to(np.linspace(0.1, 1.0, len(KS)), shape).copy()
        gamma[..., 2] = gamma_at_4 + rng.normal(0, 0.02, shape[:2])
        arrays[f"captured_energy_{source}"] = gamma.astype(np.float32)
        arrays[f"captured_scalar_energy_{source}"] = arrays[f"captured_energy_{source}"].copy()
        error = rng.uniform(1.2, 2.0, shape) if ranked else rng.uniform(1.5, 3.0, shape)
        error[..., -1] = 0.0
        arrays[f"relative_error_{source}"] = error.astype(np.float32)
        agreement = rng.uniform(size=shape) < (0.8 if ranked else 0.2)
        agreement[..., -1] = True
        arrays[f"top1_agreement_{source}"] = agreement.astype(np.float32)
        arrays[f"k_mass_{source}"] = rng.integers(1, 2**L, size=(COUNT, draws, 2))
        arrays[f"k_error_{source}"] = np.full((COUNT, draws, 1), 2**L)
    for metric in (
        "captured_energy",
        "relative_error",
    ):  # order-matched picks the vector ranking's own top-1 everywhere
        arrays[f"{metric}_order_matched_vector"][:, :, 0] = arrays[f"{metric}_magnitude_vector"][:, :, 0]
    for ranking in ("vector", "scalar"):
        histogram = np.zeros((COUNT, len(KS), L + 1), np.int64)
        histogram[:, :, 1] = np.asarray(KS)  # order 1 by default …
        empty = np.arange(COUNT) < round(empty_top1_share * COUNT)
        histogram[empty, 0, :2] = [1, 0]  # … ∅ on top where planted
        arrays[f"order_histogram_{ranking}"] = histogram
        arrays[f"k_eff_{ranking}"] = rng.uniform(1, 2**L, COUNT).astype(np.float32)
    return arrays


def summary_of(arrays: dict[str, np.ndarray]) -> dict:
    config = {
        "ks": KS,
        "num_blocks": L,
        "num_random_seeds": DRAWS,
        "mass_fractions": [0.9, 0.99],
        "error_thresholds": [0.1],
        "seed": 0,
    }
    return json.loads(json.dumps(summarize(arrays, config, seed=0)))  # as read back from summary.json


@pytest.fixture(scope="module")
def planted_summary() -> dict:
    return summary_of(planted_arrays())


def test_planted_effects_give_the_planted_decisions(planted_summary: dict) -> None:
    summary = planted_summary
    block = by_id(summary["verdicts"])
    assert set(CURVE_METRICS) <= set(summary["sources"]["magnitude_scalar"]["curves"])
    # L = 4 has 16 subsets: the seed's K = 64 of 256 is a quarter, K = 4 here; Γ_4 ≈ 0.5 lies far below the seed's 94 %.
    gamma = block["captured_energy.vector"]
    assert gamma["decision"] == FAILS and gamma["parameters"]["k"] == 4 and gamma["seed"]["relation"] == "above"
    assert block["captured_scalar_energy.scalar"]["effect"]["name"].startswith("Γ_K (scalar energy)")
    assert (
        block["controls.vector"]["decision"] == HOLDS and block["controls_bound.vector"]["decision"] == FAILS
    )  # controls agree 20 % ≫ 1 %
    assert block["relative_error.vector"]["decision"] == HOLDS and block["empty_top1.vector"]["decision"] == HOLDS
    assert block["orders.vector"]["decision"] == HOLDS and block["orders.vector"]["notes"] == [
        "the top-4 sits below L/2"
    ]  # order 1 < L/2 = 2
    # The control that picks the ranking's own subsets at K = 1 is named, with how often.
    assert any(
        note.startswith("order-matched random picks the ranking's own subsets (K = 1: 100.0 %")
        for note in block["controls.vector"]["notes"]
    )
    assert summary["small_k"]["vector"]["control_is_the_ranking"]["order_matched"][0] == 1.0
    assert summary["small_k"]["vector"]["relative_error_at_least_1"][:4] == [1.0] * 4


def test_absent_or_ambiguous_effects_do_not_give_a_confident_decision() -> None:
    summary = summary_of(planted_arrays(empty_top1_share=0.9, gamma_at_4=0.94))
    block = by_id(summary["verdicts"])
    assert block["empty_top1.vector"]["decision"] == CANNOT_TELL  # 90 % planted: the CI straddles the 90 % line
    gamma = summary["beside_seed"]["rows"][0]["at_matching_fraction"]["value"]
    assert gamma["ci_low"] <= 0.94 <= gamma["ci_high"]
    assert (
        block["captured_energy.vector"]["decision"] == CANNOT_TELL
        and block["captured_energy.vector"]["seed"]["relation"] == "inside"
    )
    # A relative error below 1 at one K makes the "≥ 1 at every K" claim fail.
    curve = summary["sources"]["magnitude_vector"]["curves"]["relative_error"]
    curve["mean"][1], curve["ci_low"][1], curve["ci_high"][1] = 0.5, 0.4, 0.6
    assert by_id(verdicts(summary))["relative_error.vector"]["decision"] == FAILS


def test_a_grid_without_the_seeds_k_leaves_those_verdicts_out(planted_summary: dict) -> None:
    summary = copy.deepcopy(planted_summary)
    for row in summary["beside_seed"]["rows"]:
        for place in ("at_seed_k", "at_matching_fraction"):
            row[place]["value"] = None
    ids = {entry["id"] for entry in verdicts(summary)}
    assert ids == {f"{name}.{ranking}" for name in ("relative_error", "empty_top1") for ranking in ("vector", "scalar")}
    with pytest.raises(KeyError):
        by_id(verdicts(summary))["captured_energy.vector"]
