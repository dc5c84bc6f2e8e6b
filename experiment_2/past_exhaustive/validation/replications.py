"""Seeded replications of the sampling estimators on exhaustive tables, and the verdict rule.

Each replication draws a fresh design (sub-cubes: ``draws`` random ``u``-subsets of the blocks; Walsh: ``m`` random
mask units), reads ``h`` at the design's masks from the exhaustive table (no forward), and records the estimate and
its nominal 95 % interval beside the exact value computed from the whole table. Per (table, statistic, budget) cell:

- coverage: the share of replications whose interval holds the exact value, with its exact (Clopper–Pearson) CI;
- bias in units of the estimator's standard error: ``(mean estimate − exact) / SD(estimate)``, the SD over the
  replications (the estimator's own sampling SE at that budget);
- relative RMSE: ``sqrt(mean (estimate − exact)²) / |exact|``.

- where the exact value falls when an interval misses it: the shares of replications with the exact value above the
  interval and below it, and the rank (Spearman) correlation over the replications between the estimate and its
  interval's half-width (a positive one with misses above: low estimates come with narrow intervals, the mark of a
  heavy-tailed ``h``; ranks, so a few extreme replications do not decide it).

The functions read ``h`` through a :class:`SetFunction`: an exhaustive table (:class:`DenseTable`, step 11) or a
synthetic function with a known spectrum at any ``L`` (:mod:`experiment_2.past_exhaustive.validation.synthetic`,
step 15), each with its exact values.

The rule (:data:`RULE`): a cell passes when its coverage lies in [93 %, 97 %] and ``|bias| < 1 SE``; a
(table, statistic) is *validated* when every budget's cell passes, otherwise *not validated* with the failing cells'
numbers. A cell whose estimator gives no interval by design (a sub-cube order with too few coefficients per
draw, :data:`experiment_2.past_exhaustive.sampling.subcubes.NO_INTERVAL`) is judged on its bias alone, and a (table, statistic) with no
interval at any budget is *estimate only* (validated or not on its bias; not counted among the pairs with an
interval). :func:`chance_failure` gives the probability that a perfectly calibrated interval fails the coverage band
at a given number of replications, so a reader can judge how many failures chance alone explains.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from math import comb
from typing import Any, Protocol

import numpy as np
import torch
from scipy import stats

from experiment_1.mobius import mobius_transform, num_blocks_from_size
from experiment_1.report import exact_proportion_ci
from experiment_2.past_exhaustive.sampling.subcubes import (
    draw_subcubes,
    subcube_estimates,
    subcube_mask_ids,
    subcube_order_means,
)
from experiment_2.past_exhaustive.sampling.walsh import RHOS, estimate_names, walsh_design, walsh_estimates, walsh_exact

NOMINAL = 0.95
COVERAGE_BAND = (0.93, 0.97)
MAX_BIAS_SE = 1.0
VALIDATED, NOT_VALIDATED, ESTIMATE_ONLY = "validated", "not validated", "estimate only"
CONSERVATIVE = "conservative"  # fails only by covering more than the band, without bias


def rule(band: tuple[float, float] = COVERAGE_BAND) -> str:
    """The verdict rule of :func:`decide` with the coverage ``band``, in words."""
    return (
        f"a (table, statistic) is {VALIDATED} when, at every budget, the nominal {NOMINAL:.0%} interval covers the exact "
        f"value in {band[0]:.0%}–{band[1]:.0%} of the replications and the mean bias is below {MAX_BIAS_SE:g} "
        f"standard error of the estimator (|mean estimate − exact| < {MAX_BIAS_SE:g} × SD of the estimates over the "
        f"replications); otherwise {NOT_VALIDATED}; a budget at which the estimator gives no interval by design is judged "
        f"on the bias alone, and a (table, statistic) with no interval at any budget is {ESTIMATE_ONLY}; a (table, "
        f"statistic) that is not validated only because some budget covers more than {band[1]:.0%} (its "
        f"intervals wider than they need be), with the bias below {MAX_BIAS_SE:g} SE everywhere, is {CONSERVATIVE}"
    )


RULE = rule()


class SetFunction(Protocol):
    """A set function ``h`` on ``num_blocks`` blocks with ``C`` outputs whose exact spectrum is known."""

    num_blocks: int

    def values(self, ids: np.ndarray) -> np.ndarray:
        """``h`` at the int64 mask ids ``ids`` (any shape): float64 of shape ``ids.shape + (C,)``."""

    def exact_per_coefficient(self, max_order: int) -> np.ndarray:
        """``ē_k = E_k / C(L, k)``, ``k = 0 … max_order`` (Möbius, base ∅)."""

    def walsh_exact(self) -> dict[str, float]:
        """The exact values of :func:`~experiment_2.past_exhaustive.sampling.walsh.estimate_names`."""

    def digest(self) -> str:
        """A content key of the function (its numbers and kind): the resume store's."""


@dataclass(frozen=True, eq=False)
class DenseTable:
    """An exhaustive table ``(2^L, C)`` (``h`` at every mask id) as a :class:`SetFunction`; exact values by the dense
    butterflies in float64."""

    table: np.ndarray

    @property
    def num_blocks(self) -> int:
        return num_blocks_from_size(self.table.shape[0])

    def values(self, ids: np.ndarray) -> np.ndarray:
        return self.table[ids]

    def exact_per_coefficient(self, max_order: int) -> np.ndarray:
        return exact_per_coefficient(self.table)[: max_order + 1]

    def walsh_exact(self) -> dict[str, float]:
        return walsh_exact(self.table)

    def digest(self) -> str:
        digest = hashlib.sha256(np.ascontiguousarray(self.table, dtype="<f8").tobytes())
        digest.update(str(list(self.table.shape)).encode())
        return digest.hexdigest()


def budget_list(sizes: list[int], draws: list[int], samples: list[int]) -> list[dict[str, Any]]:
    """Every budget: sub-cube (``u``, draws) pairs, then Walsh sample counts ``m``; ``forwards`` per replication (Walsh:
    the design's nominal count, base + flip + one copy per ρ)."""
    subcubes = [
        {
            "estimator": "subcubes",
            "size": size,
            "draws": count,
            "forwards": count * 2**size,
            "name": f"u={size}×{count}",
        }
        for size in sizes
        for count in draws
    ]
    walsh = [{"estimator": "walsh", "samples": m, "forwards": m * (2 + len(RHOS)), "name": f"m={m}"} for m in samples]
    return subcubes + walsh


def replication_seed(*parts: int) -> int:
    """A seed for one replication, a deterministic function of its coordinates (``np.random.SeedSequence``)."""
    return int(np.random.SeedSequence(list(parts)).generate_state(1)[0])


def exact_per_coefficient(table: np.ndarray) -> np.ndarray:
    """``ē_k = E_k / C(L, k)``, ``k = 0 … L``, of a ``(2^L, C)`` table (dense butterfly in float64)."""
    num_blocks = num_blocks_from_size(table.shape[0])
    coefficients = mobius_transform(torch.from_numpy(np.asarray(table, dtype=np.float64)), dim=0).numpy()
    orders = np.bitwise_count(np.arange(table.shape[0], dtype=np.int64)).astype(np.int64)
    energies = np.bincount(orders, weights=np.square(coefficients).sum(axis=1), minlength=num_blocks + 1)
    return energies / np.array([comb(num_blocks, k) for k in range(num_blocks + 1)], dtype=np.float64)


def subcube_replications(
    function: SetFunction, size: int, draws: int, replications: int, seed: int
) -> dict[str, np.ndarray]:
    """``replications`` sub-cube estimates of ``ē_1 … ē_size`` from ``function``: arrays ``estimate``, ``ci_low``,
    ``ci_high`` of shape ``(replications, size)``."""
    out = {name: np.empty((replications, size)) for name in ("estimate", "ci_low", "ci_high")}
    for replication in range(replications):
        blocks = draw_subcubes(function.num_blocks, size, draws, replication_seed(seed, replication))
        rows = subcube_estimates(
            subcube_order_means(function.values(subcube_mask_ids(blocks))),
            confidence=NOMINAL,
            seed=replication_seed(seed, replication, 1),  # the interval's resamples, independent of the draws
        )
        for row in rows:
            out["estimate"][replication, row["order"] - 1] = row["mean"]
            out["ci_low"][replication, row["order"] - 1] = row["ci_low"]
            out["ci_high"][replication, row["order"] - 1] = row["ci_high"]
    return out


def walsh_replications(
    function: SetFunction, samples: int, replications: int, seed: int, names: list[str]
) -> dict[str, np.ndarray]:
    """``replications`` Walsh estimates of ``names`` from ``function``: arrays ``(replications, len(names))`` and
    ``masks``, the distinct masks each replication read."""
    out = {name: np.empty((replications, len(names))) for name in ("estimate", "ci_low", "ci_high")}
    masks = np.empty(replications)
    for replication in range(replications):
        design = walsh_design(function.num_blocks, samples, replication_seed(seed, replication), RHOS)
        ids = design.all_ids()
        result = walsh_estimates(  # the share's bootstrap draws, independent of the design's
            design, ids, function.values(ids), confidence=NOMINAL, seed=replication_seed(seed, replication, 1)
        )
        masks[replication] = len(ids)
        for column, name in enumerate(names):
            for key in ("estimate", "ci_low", "ci_high"):
                out[key][replication, column] = result[name][key]
    return {**out, "masks": masks}


def _constant(values: np.ndarray) -> bool:
    """Whether ``values`` spread by no more than round-off (``1e-12`` of their largest magnitude)."""
    return bool(np.ptp(values) <= 1e-12 * np.max(np.abs(values)))


def cell(
    estimate: np.ndarray,
    ci_low: np.ndarray,
    ci_high: np.ndarray,
    exact: float,
    band: tuple[float, float] = COVERAGE_BAND,
) -> dict[str, Any]:
    """The coverage, bias and error of one (table, statistic, budget) cell, and whether it passes the rule with the
    coverage ``band``. An estimator that gives no interval at all (every limit NaN: by design) has coverage ``None``
    and is judged on its bias alone; otherwise a NaN interval covers nothing."""
    has_interval = bool(np.isfinite(ci_low).any() or np.isfinite(ci_high).any())
    spread = float(np.std(estimate, ddof=1))
    bias = float(np.mean(estimate) - exact)
    bias_se = bias / spread if spread > 0 else (0.0 if bias == 0 else float("inf"))
    rmse = float(np.sqrt(np.mean(np.square(estimate - exact))))
    entry = {
        "exact": float(exact),
        "mean_estimate": float(np.mean(estimate)),
        "replications": int(len(estimate)),
        "interval_reported": has_interval,
        "bias": bias,
        "estimator_se": spread,
        "bias_in_se": bias_se,
        "bias_t": bias / (spread / np.sqrt(len(estimate))) if spread > 0 else 0.0,
        "relative_rmse": rmse / abs(exact) if exact else float("inf"),
    }
    if not has_interval:
        return {**entry, "coverage": None, "coverage_ci": None, "passes": bool(abs(bias_se) < MAX_BIAS_SE)}
    covered = (ci_low <= exact) & (exact <= ci_high)  # a NaN interval covers nothing
    coverage = exact_proportion_ci(covered.astype(np.float64))
    half_width = (ci_high - ci_low) / 2
    defined = ~np.isnan(half_width)  # an unbounded interval's half-width is ∞; one with a NaN end has none
    finite = np.isfinite(half_width)
    correlation = None  # fewer than 3 finite half-widths, or an estimate or half-width constant to round-off: none
    if finite.sum() > 2 and not (_constant(estimate[finite]) or _constant(half_width[finite])):
        correlation = float(stats.spearmanr(estimate[finite], half_width[finite]).statistic)
    return {
        **entry,
        "coverage": coverage["mean"],
        "coverage_ci": [coverage["ci_low"], coverage["ci_high"]],
        "exact_above_interval": float(np.mean(exact > ci_high)),
        "exact_below_interval": float(np.mean(exact < ci_low)),
        "estimate_half_width_rank_correlation": correlation,
        "mean_ci_half_width": float(np.mean(half_width[defined])) if defined.any() else None,
        "passes": bool(band[0] <= coverage["mean"] <= band[1] and abs(bias_se) < MAX_BIAS_SE),
    }


def decide(cells: list[dict[str, Any]], band: tuple[float, float] = COVERAGE_BAND) -> dict[str, Any]:
    """The verdict of one (table, statistic) from its budget cells (each with a ``budget`` entry), judged by
    :func:`cell` with the coverage ``band``."""
    failing = [entry for entry in cells if not entry["passes"]]
    wide = [
        entry["interval_reported"] and entry["coverage"] > band[1] and abs(entry["bias_in_se"]) < MAX_BIAS_SE
        for entry in failing
    ]
    if failing and all(wide):
        verdict = CONSERVATIVE
    elif failing:
        verdict = NOT_VALIDATED
    else:
        verdict = VALIDATED if any(entry["interval_reported"] for entry in cells) else ESTIMATE_ONLY
    keys = ("budget", "coverage", "coverage_ci", "bias_in_se", "relative_rmse", "replications", "interval_reported")
    misses = ("exact_above_interval", "exact_below_interval", "estimate_half_width_rank_correlation")
    return {
        # "verdict", not "decision": the project's verdict checker reads "decision" as holds / fails / cannot tell
        "verdict": verdict,
        "budgets": len(cells),
        "budgets_with_interval": sum(entry["interval_reported"] for entry in cells),
        "failing": [
            {key: entry[key] for key in keys + (misses if entry["interval_reported"] else ())} for entry in failing
        ],
        "rule": rule(band),
    }


def chance_failure(replications: int, band: tuple[float, float] = COVERAGE_BAND) -> float:
    """The probability that an interval with exactly nominal coverage shows a coverage outside ``band`` at
    ``replications`` replications (binomial)."""
    low = int(np.ceil(band[0] * replications - 1e-9))
    high = int(np.floor(band[1] * replications + 1e-9))
    inside = stats.binom.cdf(high, replications, NOMINAL) - stats.binom.cdf(low - 1, replications, NOMINAL)
    return float(1 - inside)


def replicate_table(
    function: SetFunction,
    budget_list: list[dict[str, Any]],
    replications: int,
    seed: int,
    estimator: str | None = None,
    band: tuple[float, float] = COVERAGE_BAND,
) -> list[dict[str, Any]]:
    """Every cell of one set function (an exhaustive table, :class:`DenseTable`, or a synthetic one): per budget
    (step 11's budget entries: ``estimator`` "subcubes" with ``size`` and ``draws``, or "walsh" with ``samples``;
    ``name``), per statistic, :func:`cell` of ``replications`` seeded replications with the coverage ``band`` (budget
    ``i`` of the list seeded by ``replication_seed(seed, i)``); with ``estimator``, the cells of that estimator's
    budgets alone, seeded by their places in the whole list (the same cells)."""
    chosen = [(number, budget) for number, budget in enumerate(budget_list) if estimator in (None, budget["estimator"])]
    sizes = [budget["size"] for _, budget in chosen if budget["estimator"] == "subcubes"]
    exact_ebar = function.exact_per_coefficient(max(sizes)) if sizes else None
    exact_walsh = function.walsh_exact() if any(budget["estimator"] == "walsh" for _, budget in chosen) else None
    names = list(estimate_names())
    cells = []
    for number, budget in chosen:
        cell_seed = replication_seed(seed, number)
        if budget["estimator"] == "subcubes":
            out = subcube_replications(function, budget["size"], budget["draws"], replications, cell_seed)
            statistics = [(f"ebar_{k}", k - 1, exact_ebar[k]) for k in range(1, budget["size"] + 1)]
        else:
            out = walsh_replications(function, budget["samples"], replications, cell_seed, names)
            statistics = [(name, column, exact_walsh[name]) for column, name in enumerate(names)]
        for statistic, column, exact in statistics:
            entry = cell(out["estimate"][:, column], out["ci_low"][:, column], out["ci_high"][:, column], exact, band)
            if "masks" in out:  # a Walsh design's distinct masks (units may share one)
                entry["mean_distinct_masks"] = float(out["masks"].mean())
            cells.append({"estimator": budget["estimator"], "statistic": statistic, "budget": budget["name"], **entry})
    return cells


def cells_and_verdicts(
    places: list[dict[str, Any]], results: list[list[dict[str, Any]]], band: tuple[float, float] = COVERAGE_BAND
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The cells of every set function (``results``, one list per function), each with its ``places`` entry (where it
    comes from: network, image, projection …), and the verdict of every (function, statistic) by :func:`decide`."""
    cells, verdicts = [], []
    for where, result in zip(places, results):
        function_cells = [{**where, **entry} for entry in result]
        cells += function_cells
        for statistic in dict.fromkeys(entry["statistic"] for entry in function_cells):
            chosen = [entry for entry in function_cells if entry["statistic"] == statistic]
            verdicts.append(
                {**where, "estimator": chosen[0]["estimator"], "statistic": statistic, **decide(chosen, band)}
            )
    return cells, verdicts
