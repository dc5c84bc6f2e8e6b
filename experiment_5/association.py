"""Association statistics of Experiment 5: Spearman ρ (plain and partial) with bootstrap CIs, group differences.

- :func:`spearman_table`: for every pair (x, y) of two families of per-image variables, Spearman's
  ρ with its p-value (scipy) and a percentile-bootstrap 95 % CI (images resampled with replacement,
  ranks recomputed in every resample, the same resamples for every pair), and the partial Spearman
  ρ controlling for a covariate z — ``(ρ_xy − ρ_xz ρ_yz) / sqrt((1 − ρ_xz²)(1 − ρ_yz²))`` on ranks —
  with its bootstrap CI and a t-test p-value (n − 3 degrees of freedom).
- :func:`quartile_groups`: the images split into four equal-count groups by a score (ties by
  position, so the split is deterministic).
- :func:`compare_groups`: the mean of a variable in two groups (bootstrap CIs), the difference
  ``second − first`` with a CI from resampling each group independently, Mann–Whitney p-value and
  the standardised difference (difference / pooled standard deviation), and the equivalence test of
  "no difference" within ±:data:`EQUIVALENCE_SD_FRACTION` pooled standard deviations (Welch TOST).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats as scipy_stats

from experiment_1.report import NUM_RESAMPLES, bootstrap_mean_ci, tost_two_sample

EQUIVALENCE_SD_FRACTION = 0.25
"""The equivalence margin of "difficulty does not move this measure": a quarter of the measure's pooled between-image
standard deviation in the two groups (README, Equivalence margins)."""

RESAMPLE_CHUNK = 250

__all__ = ["spearman_table", "quartile_groups", "compare_groups", "ci_excludes_zero"]


def _standardised_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks along the last axis (average ties), centred and scaled to unit norm per row (NaN for a constant row)."""
    ranks = scipy_stats.rankdata(values, axis=-1)
    ranks -= ranks.mean(axis=-1, keepdims=True)
    norms = np.linalg.norm(ranks, axis=-1, keepdims=True)
    return np.divide(ranks, norms, out=np.full_like(ranks, np.nan), where=norms > 0)


def _partial(rho_xy: np.ndarray, rho_xz: np.ndarray, rho_yz: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rho_xy - rho_xz * rho_yz) / np.sqrt((1 - rho_xz**2) * (1 - rho_yz**2))


def _percentile_ci(samples: np.ndarray) -> tuple[float, float]:
    finite = samples[np.isfinite(samples)]
    if len(finite) == 0:
        return float("nan"), float("nan")
    low, high = np.quantile(finite, [0.025, 0.975])
    return float(low), float(high)


def _partial_p_value(rho: float, count: int) -> float:
    if not np.isfinite(rho) or count < 4:
        return float("nan")
    if abs(rho) >= 1:
        return 0.0
    t = rho * np.sqrt((count - 3) / (1 - rho**2))
    return float(2 * scipy_stats.t.sf(abs(t), count - 3))


def spearman_table(
    xs: dict[str, np.ndarray],
    ys: dict[str, np.ndarray],
    covariate: np.ndarray,
    seed: int = 0,
    num_resamples: int = NUM_RESAMPLES,
) -> dict[str, dict[str, dict[str, float]]]:
    """``table[x][y]`` = ρ, its CI and p-value, and the partial ρ given ``covariate`` with CI and p-value.

    Every array is 1-D over the same images, without NaNs. A variable constant over the images
    (or over a resample) has no ρ: NaN there, and resamples with NaN are left out of the CI.
    """
    names = [*xs, *ys]
    data = {**xs, **ys, "__covariate__": covariate}
    count = len(covariate)
    full = {name: _standardised_ranks(np.asarray(value, dtype=np.float64)) for name, value in data.items()}
    rng = np.random.default_rng(seed)
    boot_rho = {(x, y): [] for x in xs for y in ys}
    boot_partial = {(x, y): [] for x in xs for y in ys}
    for start in range(0, num_resamples, RESAMPLE_CHUNK):
        indices = rng.integers(0, count, size=(min(RESAMPLE_CHUNK, num_resamples - start), count))
        ranks = {
            name: _standardised_ranks(np.asarray(value, dtype=np.float64)[indices]) for name, value in data.items()
        }
        with_covariate = {name: np.einsum("rn,rn->r", ranks[name], ranks["__covariate__"]) for name in names}
        for x in xs:
            for y in ys:
                rho = np.einsum("rn,rn->r", ranks[x], ranks[y])
                boot_rho[x, y].append(rho)
                boot_partial[x, y].append(_partial(rho, with_covariate[x], with_covariate[y]))
    constant = {name: bool(np.isnan(full[name]).all()) for name in data}
    table: dict[str, dict[str, dict[str, float]]] = {}
    for x in xs:
        table[x] = {}
        for y in ys:
            if constant[x] or constant[y]:
                rho, p_value = float("nan"), float("nan")
            else:
                result = scipy_stats.spearmanr(xs[x], ys[y])
                rho, p_value = float(result.statistic), float(result.pvalue)
            partial = float(
                _partial(
                    np.float64(rho), float(full[x] @ full["__covariate__"]), float(full[y] @ full["__covariate__"])
                )
            )
            low, high = _percentile_ci(np.concatenate(boot_rho[x, y]))
            partial_low, partial_high = _percentile_ci(np.concatenate(boot_partial[x, y]))
            table[x][y] = {
                "rho": rho,
                "ci_low": low,
                "ci_high": high,
                "p_value": p_value,
                "partial_rho": partial,
                "partial_ci_low": partial_low,
                "partial_ci_high": partial_high,
                "partial_p_value": _partial_p_value(partial, count),
                "n": count,
            }
    return table


def quartile_groups(score: np.ndarray) -> list[np.ndarray]:
    """Image positions in four equal-count groups of increasing ``score`` (sizes differ by at most one;
    equal scores are ordered by position)."""
    order = np.argsort(np.asarray(score), kind="stable")
    return np.array_split(order, 4)


def ci_excludes_zero(stat: dict[str, Any], low: str = "ci_low", high: str = "ci_high") -> bool:
    """True when a CI lies strictly on one side of 0."""
    return bool(stat[low] > 0 or stat[high] < 0)


def compare_groups(
    first: np.ndarray, second: np.ndarray, seed: int = 0, num_resamples: int = NUM_RESAMPLES
) -> dict[str, Any]:
    """Means of two groups with CIs, and ``second − first``: difference with CI, Mann–Whitney p, standardised size, and
    ``equivalence`` (:func:`experiment_1.report.tost_two_sample` within ±:data:`EQUIVALENCE_SD_FRACTION` pooled SDs)."""
    first, second = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    if min(len(first), len(second)) < 2:
        raise ValueError(f"each group needs at least two values; got {len(first)} and {len(second)}")
    difference = float(second.mean() - first.mean())
    rng = np.random.default_rng(seed)
    resampled = second[rng.integers(0, len(second), size=(num_resamples, len(second)))].mean(axis=1) - first[
        rng.integers(0, len(first), size=(num_resamples, len(first)))
    ].mean(axis=1)
    low, high = _percentile_ci(resampled)
    pooled = np.sqrt(
        (first.var(ddof=1) * (len(first) - 1) + second.var(ddof=1) * (len(second) - 1)) / (len(first) + len(second) - 2)
    )
    return {
        "first": bootstrap_mean_ci(first, seed=seed, num_resamples=num_resamples),
        "second": bootstrap_mean_ci(second, seed=seed, num_resamples=num_resamples),
        "difference": {"mean": difference, "ci_low": low, "ci_high": high},
        "mann_whitney_p": float(scipy_stats.mannwhitneyu(second, first, alternative="two-sided").pvalue),
        "standardised_difference": difference / pooled if pooled > 0 else 0.0,
        "equivalence": tost_two_sample(first, second, EQUIVALENCE_SD_FRACTION * float(pooled)),
    }
