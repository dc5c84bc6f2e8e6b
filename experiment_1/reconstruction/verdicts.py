"""Experiment 1's verdicts (the :mod:`experiment_1.report.verdicts` schema), decided from the summary's metrics.

- ``mobius.exact`` — Σ_{T⊆S} Δ_T h recovers h(S) for every subset S to round-off (float32 worst case below
  :data:`EXACT_TOLERANCE`). An inversion identity: it tests the code, not the network.
- ``naive.misses`` — the naive sum Σ_S h(S) is no closer to h(full) than the zero vector (relative error ≥ 1).
  It counts the trunk h(∅) 2^L times, so an additive network, with no interaction at all, fails the same way:
  this failure says nothing about interactions.
- ``first_order.interactions`` — the additive (first-order) reading h(∅) + Σ_l [h({l}) − h(∅)] misses h(full)
  by a material share (relative error above :data:`MATERIAL_ERROR`): this is the evidence that interactions
  between blocks carry part of the function.

Top-1 agreements are shares of 0/1 outcomes and carry exact (Clopper–Pearson) intervals in the summary.
"""

from __future__ import annotations

from typing import Any, Callable

from experiment_1.report.rules import Reading, Rule, ci_against
from experiment_1.report.verdicts import FAILS, HOLDS, effect_from_stat

EXACT_TOLERANCE = 1e-4  # worst relative error of any subset's reconstruction that still counts as round-off (float32)
MATERIAL_ERROR = 0.1  # a relative error of 10 % of ‖h(full)‖ is a material miss


def _read_error(metric: str) -> Callable[[Reading], dict[str, float]]:
    """The CI of a mean relative error in the summary's ``metrics`` (the entry's effect must be its copy)."""

    def read(reading: Reading) -> dict[str, float]:
        low, high = reading.interval("metrics", metric)
        reading.copied("effect", reading.at("metrics", metric))
        return {"low": low, "high": high}

    return read


def _read_worst(reading: Reading) -> dict[str, float]:
    worst = reading.number("metrics", "max_subset_rel_error_float32", "max")
    reading.copied("statistic", {"value": worst}, ("value",))
    reading.copied("parameters", {"tolerance": EXACT_TOLERANCE}, ("tolerance",))
    return {"worst": worst}


EXACT = Rule(
    "exp1.mobius_exact",
    f"holds when the worst relative error of any subset's Möbius reconstruction over every image is below {EXACT_TOLERANCE:g} (float32), else fails",
    _read_worst,
    lambda worst: HOLDS if worst < EXACT_TOLERANCE else FAILS,
    "the Möbius reconstruction recovers h(S) for every subset S to round-off",
)
NAIVE = Rule(
    "exp1.naive_misses",
    "holds when the 95 % CI of the naive sum's mean relative error lies at or above 1 (no closer than the zero "
    "vector), fails when it lies below 1, else cannot tell",
    _read_error("naive_sum_rel_error"),
    lambda low, high: ci_against(low, high, 1.0, at_or=True),
    "summing subnetwork outputs, Σ_S h(S), does not reconstruct h(full)",
)


def _read_first_order(reading: Reading) -> dict[str, float]:
    reading.copied("parameters", {"material_error": MATERIAL_ERROR}, ("material_error",))
    return _read_error("first_order_rel_error")(reading)


FIRST_ORDER = Rule(
    "exp1.first_order_interactions",
    f"holds when the 95 % CI of the first-order reading's mean relative error lies above {MATERIAL_ERROR:g}, fails when it lies below "
    f"{MATERIAL_ERROR:g} (the additive reading is as good as exact), else cannot tell",
    _read_first_order,
    lambda low, high: ci_against(low, high, MATERIAL_ERROR),
    "interactions between blocks carry part of the function: the additive (first-order) reading "
    "h(∅) + Σ_l [h({l}) − h(∅)] misses h(full)",
)


def verdicts(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The verdicts block (see the module docstring)."""
    metrics, blocks = summary["metrics"], int(summary["config"]["num_blocks"])
    worst = metrics["max_subset_rel_error_float32"]["max"]
    exact = EXACT.verdict(
        "mobius.exact",
        summary,
        statistic={"name": "worst relative error over all subsets and images (float32)", "value": worst},
        parameters={"tolerance": EXACT_TOLERANCE},
        notes=[
            "an inversion identity: it checks the transform and the gating code, not the network; any exact basis reconstructs as well"
        ],
    )
    naive = NAIVE.verdict(
        "naive.misses",
        summary,
        effect=effect_from_stat("naive sum's relative error", metrics["naive_sum_rel_error"]),
        notes=[
            f"Σ_S h(S) counts the trunk h(∅) 2^L = {2**blocks} times, so a network without any interaction fails the same way "
            "(the error grows with 2^L, so numbers at another L are not comparable): this says nothing "
            "about interactions (the first-order verdict does)"
        ],
    )
    first_effect = effect_from_stat("first-order reading's relative error", metrics["first_order_rel_error"])
    agreement = metrics["first_order_top1_agreement"]
    notes = [
        f"top-1 agreement of the first-order reading with h(full): {100 * agreement['mean']:.1f} % "
        f"[{100 * agreement['ci_low']:.1f}, {100 * agreement['ci_high']:.1f}] ({agreement.get('method', 'bootstrap')})"
    ]
    if first_effect["ci_low"] >= 1:
        notes.append("the additive reading is further from h(full) than the zero vector")
    first = FIRST_ORDER.verdict(
        "first_order.interactions",
        summary,
        effect=first_effect,
        parameters={"material_error": MATERIAL_ERROR},
        notes=notes,
    )
    return [exact, naive, first]
