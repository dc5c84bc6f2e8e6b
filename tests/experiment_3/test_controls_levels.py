"""Experiment 3's magnitude − control comparison at the level its summary passes, and its Holm over the controls where
the correction matters — in the verdict and in the checker that re-derives it.

:func:`experiment_3.summary.improvement_summary` is what the summary calls (arrays, valid images, the seed): each
control's paired per-image difference (the magnitude ranking's top-1 agreement less the control's, each averaged over
its draws) has its interval checked against :func:`scipy.stats.bootstrap` at 95 % over the images (the same draws).
The controls verdict then runs on families of the three controls' sign-flip ps whose Holm, Bonferroni and unadjusted
decisions differ."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from scipy import stats

from experiment_1.errors import PipelineError
from experiment_1.report import CANNOT_TELL, HOLDS, by_id, check_verdicts
from experiment_3.summary import improvement_summary
from experiment_3.verdicts import SAME_SUBSETS_SHARE, controls_verdicts
from paper.experiments import VERDICTS

CONTROLS = {"random": "random", "order_matched": "order_matched_vector", "low_order_first": "low_order_first"}
KS = [1, 2, 4, 8, 16]


def test_the_same_subsets_share_written_out() -> None:
    assert SAME_SUBSETS_SHARE == 0.01


def agreement_arrays() -> dict[str, np.ndarray]:
    """Per-image top-1 agreement and captured energy ``(30, 2 draws, 5 Ks)`` of the vector ranking (agrees 80 % of the
    time) and of each control (20 %)."""
    rng = np.random.default_rng(48)
    arrays = {}
    for source, rate in (("magnitude_vector", 0.8), *((source, 0.2) for source in CONTROLS.values())):
        arrays[f"top1_agreement_{source}"] = (rng.random((30, 2, 5)) < rate).astype(np.float32)
        arrays[f"captured_energy_{source}"] = rng.random((30, 2, 5)).astype(np.float32)
    return arrays


def test_each_controls_paired_difference_has_scipys_95_percent_interval_over_images() -> None:
    arrays = agreement_arrays()
    block = improvement_summary(arrays, "vector", np.ones(30, dtype=bool), 3)
    ours = arrays["top1_agreement_magnitude_vector"].astype(np.float64).mean(axis=1)
    for control, source in CONTROLS.items():
        difference = ours - arrays[f"top1_agreement_{source}"].astype(np.float64).mean(axis=1)
        reference = stats.bootstrap(
            (difference,),
            lambda sample, axis: sample.mean(axis=axis),
            axis=0,
            n_resamples=2000,
            method="percentile",
            confidence_level=0.95,
            rng=np.random.default_rng(3),
        ).confidence_interval
        stored = block[control]["top1_agreement"]["difference"]
        np.testing.assert_allclose(stored["mean"], difference.mean(axis=0), rtol=1e-12)
        np.testing.assert_allclose(stored["ci_low"], reference.low, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(stored["ci_high"], reference.high, rtol=1e-12, atol=1e-15)
        assert min(stored["mean"]) > 0.3  # the ranking agrees more often: a swapped difference turns negative


def controls_summary(p_values: tuple[float, float, float]) -> dict:
    """What the controls verdict reads, by hand: the K of the seed's fraction (K = 4 of 16) and, per control, a paired
    difference whose CI lies above 0 at every K, with the given sign-flip p at K = 4 (and 1e-6 elsewhere)."""
    improvement = {}
    for control, p_value in zip(CONTROLS, p_values):
        improvement[control] = {
            "top1_agreement": {
                "difference": {"mean": [0.5] * 5, "ci_low": [0.4] * 5, "ci_high": [0.6] * 5},
                "sign_flip_p": [1e-6, 1e-6, p_value, 1e-6, 1e-6],
            }
        }
    best = {"mean": 0.2, "ci_low": 0.15, "ci_high": 0.25}
    return {
        "ks": KS,
        "num_masks": 16,
        "beside_seed": {
            "rows": [
                {
                    "quantity": "top1_agreement_controls_max",
                    "ranking": "vector",
                    "fraction": 0.25,
                    "seed": 0.01,
                    "seed_k": 64,
                    "at_matching_fraction": {"k": 4, "value": best},
                    "at_seed_k": {"k": None, "value": None},
                }
            ]
        },
        "small_k": {"vector": {"control_is_the_ranking": {control: [0.0] * 5 for control in CONTROLS}}},
        "improvement": {"vector": improvement},
    }


@pytest.mark.parametrize(
    ("p_values", "holm", "decision"),
    [
        # Holm 0.03, max(0.03, 0.04), max(0.04, 0.04): every control rejected — Bonferroni's 0.06 and 0.12 would not
        ((0.01, 0.02, 0.04), ("0.03", "0.04", "0.04"), HOLDS),
        # every raw p ≤ α, Holm 0.06 from the smallest on: none rejected
        ((0.02, 0.03, 0.04), ("0.06", "0.06", "0.06"), CANNOT_TELL),
    ],
    ids=["holm-rejects-where-bonferroni-would-not", "raw-ps-would-reject-where-holm-does-not"],
)
def test_holm_over_the_controls_decides_and_the_checker_rederives_it(
    p_values: tuple, holm: tuple, decision: str
) -> None:
    summary = controls_summary(p_values)
    summary["verdicts"] = controls_verdicts(summary, "vector")
    entry = by_id(summary["verdicts"])["controls.vector"]
    assert entry["decision"] == decision and entry["parameters"]["k"] == 4
    for note, adjusted in zip(entry["notes"], holm):
        assert note.endswith(f"Holm p = {adjusted}")
    check_verdicts(summary, "summary.json", VERDICTS[3])
    flipped = copy.deepcopy(summary)
    by_id(flipped["verdicts"])["controls.vector"]["decision"] = CANNOT_TELL if decision == HOLDS else HOLDS
    with pytest.raises(PipelineError, match="controls.vector says"):
        check_verdicts(flipped, "summary.json", VERDICTS[3])
