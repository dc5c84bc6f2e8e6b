"""Whether an estimator's interval is calibrated across the tables, not cell by cell: step 11's second reading.

A cell (one table, statistic and budget) fails the coverage band by chance with a small probability
(:func:`experiment_2.past_exhaustive.validation.replications.chance_failure`), so over hundreds of cells a few fail even when every
interval has exactly nominal coverage, and one failing cell does not tell a miscalibrated interval from chance. Per
(estimator, statistic, budget), over every table that gives an interval (the tables are independent; each replicates
with its own seeds):

- the coverage pooled over the tables' replications, with its exact (Clopper–Pearson) 95 % CI: the interval's
  calibration on average over the tables;
- whether the tables share one coverage: the chi-square test of homogeneity of the tables' covered / missed counts
  (:func:`scipy.stats.chi2_contingency`), Holm-adjusted over the groups (:func:`experiment_1.report.holm`). A
  rejection means the coverage depends on the table (some tables' ``h`` is harder for the interval than others').

Over every group together, how many cells fall outside the band if each group's interval has exactly its pooled
coverage (:func:`outside_band_probability` per cell, summed), and the probability of at least the observed number
under that reading (the cells independent: a Poisson-binomial tail, :func:`at_least_probability`). An interval
calibrated at 94 % rather than 95 % leaves the band more often than at exactly 95 %, so this is the count the
groups' own coverages explain; it is descriptive (the coverages are read off the same cells), not a verdict.

The verdict of a group (:data:`RULE`): *calibrated* when the pooled CI lies inside the band and the tables do not
differ; *table-dependent* when they differ (whatever the pooled coverage); *under-covers* / *over-covers* when they do
not differ and the pooled CI lies wholly below / above the band; *cannot tell* when the pooled CI straddles an edge of
the band.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from experiment_1.report import ALPHA, holm
from experiment_2.past_exhaustive.validation.replications import COVERAGE_BAND

CALIBRATED, TABLE_DEPENDENT = "calibrated", "table-dependent"
UNDER, OVER, CANNOT_TELL = "under-covers", "over-covers", "cannot tell"
RULE = (
    f"per (estimator, statistic, budget) over the tables with an interval: {CALIBRATED} when the coverage pooled over "
    f"their replications has its exact 95 % CI inside {COVERAGE_BAND[0]:.0%}–{COVERAGE_BAND[1]:.0%} and the chi-square "
    f"test of one coverage for every table (Holm-adjusted over the groups) does not reject at {ALPHA:g}; "
    f"{TABLE_DEPENDENT} when it rejects; otherwise {UNDER} or {OVER} when the pooled CI lies wholly below or above the "
    f"band, and {CANNOT_TELL} when it straddles an edge"
)


def homogeneity_p(covered: np.ndarray, total: np.ndarray) -> float:
    """The p-value of the chi-square test that every table covers with one probability (``covered`` of ``total``
    replications per table); 1 when every table covers all or none of its replications alike (no variation)."""
    table = np.stack([covered, total - covered]).astype(np.float64)
    if (table.sum(axis=1) == 0).any() or len(covered) < 2:
        return 1.0
    return float(stats.chi2_contingency(table, correction=False).pvalue)


def outside_band_probability(coverage: float, replications: int) -> float:
    """The probability that an interval whose true coverage is ``coverage`` shows a coverage outside the band over
    ``replications`` replications (binomial); at the nominal coverage, the chance failure of every cell
    (:func:`experiment_2.past_exhaustive.validation.replications.chance_failure`)."""
    low = int(np.ceil(COVERAGE_BAND[0] * replications - 1e-9))  # the fewest covered replications inside the band
    high = int(np.floor(COVERAGE_BAND[1] * replications + 1e-9))  # the most
    return float(stats.binom.cdf(low - 1, replications, coverage) + stats.binom.sf(high, replications, coverage))


def at_least_probability(probabilities: np.ndarray, count: int) -> float:
    """``P(X ≥ count)`` for ``X`` the number of successes of independent trials with these success probabilities
    (the Poisson-binomial distribution, by convolving the trials' distributions one at a time)."""
    distribution = np.ones(1)
    for probability in np.asarray(probabilities, dtype=np.float64):
        distribution = np.convolve(distribution, [1 - probability, probability])
    return float(min(1.0, distribution[max(count, 0) :].sum()))


def group_verdict(ci: tuple[float, float], p_adjusted: float) -> str:
    """The verdict of :data:`RULE` for a pooled coverage CI and the Holm-adjusted homogeneity p-value."""
    low, high = COVERAGE_BAND
    if p_adjusted < ALPHA:
        return TABLE_DEPENDENT
    if low <= ci[0] and ci[1] <= high:
        return CALIBRATED
    if ci[1] < low:
        return UNDER
    if ci[0] > high:
        return OVER
    return CANNOT_TELL


def over_tables(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """Per (estimator, statistic, budget), in the cells' order: the tables, the pooled coverage with its CI, the
    cells that fail the band, the homogeneity test and the verdict; and the count of each verdict."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for entry in cells:
        if entry["interval_reported"]:
            groups.setdefault((entry["estimator"], entry["statistic"], entry["budget"]), []).append(entry)
    rows: list[dict[str, Any]] = []
    miss_probabilities: list[float] = []  # per cell, at its group's pooled coverage
    for (estimator, statistic, budget), members in groups.items():
        total = np.array([entry["replications"] for entry in members])
        covered = np.rint(np.array([entry["coverage"] for entry in members]) * total).astype(np.int64)
        interval = stats.binomtest(int(covered.sum()), int(total.sum())).proportion_ci(method="exact")
        pooled = float(covered.sum() / total.sum())
        group_misses = [outside_band_probability(pooled, int(count)) for count in total]
        miss_probabilities += group_misses
        rows.append(
            {
                "estimator": estimator,
                "statistic": statistic,
                "budget": budget,
                "tables": len(members),
                "coverage": pooled,
                "coverage_ci": [float(interval.low), float(interval.high)],
                "lowest_table_coverage": float((covered / total).min()),
                "highest_table_coverage": float((covered / total).max()),
                "cells_outside_band": int(
                    sum(not COVERAGE_BAND[0] <= entry["coverage"] <= COVERAGE_BAND[1] for entry in members)
                ),
                "expected_outside_band": float(sum(group_misses)),
                "homogeneity_p": homogeneity_p(covered, total),
            }
        )
    for row, adjusted in zip(rows, holm([row["homogeneity_p"] for row in rows])):
        row["homogeneity_p_holm"] = float(adjusted)
        row["verdict"] = group_verdict(tuple(row["coverage_ci"]), adjusted)
    verdicts = (CALIBRATED, TABLE_DEPENDENT, UNDER, OVER, CANNOT_TELL)
    outside = sum(row["cells_outside_band"] for row in rows)
    return {
        "groups": rows,
        "outside_band": {
            "cells": len(miss_probabilities),
            "observed": outside,
            "expected_at_pooled_coverage": float(sum(miss_probabilities)),
            "p_at_least_observed": at_least_probability(np.array(miss_probabilities), outside),
        },
        "counts": {name: sum(row["verdict"] == name for row in rows) for name in verdicts},
        "test": "chi-square test of homogeneity (scipy.stats.chi2_contingency, no continuity correction), Holm-adjusted",
        "rule": RULE,
    }
