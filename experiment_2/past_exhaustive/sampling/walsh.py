"""The Walsh (±1 Fourier) spectrum from random masks, observable at any ``L``; and the Möbius surrogate's faithfulness.

Mask convention of :mod:`experiment_1.mobius`; Walsh normalisation of :func:`experiment_1.mobius.walsh_transform`:
``f̂(S) = 2^{−L} Σ_T (−1)^{|S ∩ T|} h(T)``, the coefficients of ``h`` in the characters ``χ_S(x) = Π_{l∈S} (−1)^{x_l}``,
orthonormal under the uniform distribution on masks. For a vector-valued ``h`` (``C`` columns) every energy is the
squared norm summed over the columns. With ``w_k = Σ_{|S|=k} ‖f̂(S)‖²``:

- ``variance = Var h(x) = Σ_{S≠∅} ‖f̂(S)‖²`` (``x`` a uniform mask);
- ``influence = Σ_i E‖h(x) − h(x ⊕ e_i)‖² / 4 = Σ_S |S| ‖f̂(S)‖²``, ``kappa_w = influence / variance`` (the mean Walsh
  degree) and ``kappa_w_per_block = kappa_w / L``;
- ``stability_ρ = Σ_{S≠∅} ρ^{|S|} ‖f̂(S)‖² / variance = (E⟨h(x), h(y)⟩ − ‖E h‖²) / variance`` for ``y`` a
  ρ-correlated copy of ``x`` (each bit kept with probability ``(1 + ρ)/2``);
- ``w1, w2, w3`` and ``low_degree_share = (w1 + w2 + w3) / variance``.

The exact-degree weights come from the Krawtchouk identity: ``Σ_{|S|=k} χ_S(x) χ_S(y) = K_k(d(x, y))`` with
``d`` the Hamming distance and ``K_k(d) = Σ_j (−1)^j C(d, j) C(L − d, k − j)``, so for independent uniform ``x, y``,
``E ⟨h(x), h(y)⟩ K_k(d(x, y)) = Σ_{|S|=k} ‖E h(x) χ_S(x)‖² = w_k``: the U-statistic over distinct pairs of the random
masks is unbiased (``k = 0`` gives ``‖E h‖²``).

A :class:`WalshDesign` holds the masks to evaluate: ``m`` uniform base masks, each with a one-block flip (the
influence) and one ρ-correlated copy per ρ (the stabilities). :func:`walsh_estimates` turns ``h`` on them into the
estimates with intervals; :func:`walsh_exact` computes the same names from a full table (for validation).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from math import comb

import numpy as np
import torch
from scipy import stats

from experiment_1 import mobius
from experiment_1.errors import PipelineError
from experiment_2.past_exhaustive.sampling.bootstrap import (
    ROUND_OFF_SPREAD,
    linearised_bootstrap_t_limits,
    resample_counts,
)
from experiment_2.past_exhaustive.sampling.u_statistics import KernelSums, kernel_sums, leave_one_out, variance_parts

__all__ = [
    "INTERVAL",
    "INTERVALS",
    "NORMAL_INTERVAL",
    "PAIR_INTERVAL",
    "RHOS",
    "STABILITY_INTERVAL",
    "WalshDesign",
    "estimate_names",
    "krawtchouk",
    "statistic_range",
    "surrogate_r2_by_size",
    "walsh_design",
    "walsh_estimates",
    "walsh_exact",
    "walsh_statistics",
]

RHOS: tuple[float, ...] = (0.95, 0.9, 0.75, 0.5)
MAX_DEGREE = 3  # the exact-degree weights w1 … w3
INTERVAL = "bootstrap-t over the mask units, studentised by the delta-method SE"
NORMAL_INTERVAL = "normal, delta method, unbiased U-statistic variance"
STABILITY_INTERVAL = f"{NORMAL_INTERVAL}, on the scale log(1 − s)"
PAIR_INTERVAL = (
    "bootstrap-t of the estimate with its U-statistic variance, both resampled through their jackknife pseudo-values"
)
INTERVALS = (
    f"variance, influence and κ_W: {INTERVAL}; the stabilities: {STABILITY_INTERVAL}; W_1 … W_3 and the low-degree "
    f"share: {PAIR_INTERVAL}"
)  # every name's interval, in one line (the reports)
RESAMPLES = 2000  # bootstrap resamples of the mask units, for every interval
_CHUNK_ENTRIES = 1_000_000  # entries per block of the pair sums (and of the surrogate's subset matrix)


def estimate_names(rhos: tuple[float, ...] = RHOS) -> tuple[str, ...]:
    """The names :func:`walsh_estimates` and :func:`walsh_exact` return, in order."""
    return (
        "variance",
        "influence",
        "kappa_w",
        "kappa_w_per_block",
        *(f"stability_{rho}" for rho in rhos),
        *(f"w{k}" for k in range(1, MAX_DEGREE + 1)),
        "low_degree_share",
    )


@dataclass(frozen=True, eq=False)
class WalshDesign:
    """The random masks of a Walsh estimate (ids in the project's convention, int64).

    ``base`` (m,): uniform random masks; ``flip_bits`` (m,): a uniform random block per sample; ``flipped`` (m,):
    ``base ^ (1 << flip_bits)``; ``correlated`` (len(rhos), m): row ``r`` keeps each bit of ``base`` with probability
    ``(1 + rhos[r]) / 2`` and flips it otherwise, so the ±1 coordinates of base and copy have correlation ``rhos[r]``.
    Sample ``a`` is the unit ``(base[a], flipped[a], correlated[:, a])``; units are independent.
    """

    num_blocks: int
    seed: int
    rhos: tuple[float, ...]
    base: np.ndarray
    flip_bits: np.ndarray
    flipped: np.ndarray
    correlated: np.ndarray

    def all_ids(self) -> np.ndarray:
        """The distinct mask ids to evaluate, ascending (int64)."""
        return np.unique(np.concatenate([self.base, self.flipped, self.correlated.ravel()]))

    def describe(self) -> dict:
        """A compact JSON-able descriptor (resume key and summary): the parameters, the count of distinct ids and the
        SHA-256 of their ascending int64 bytes."""
        ids = self.all_ids()
        return {
            "design": "walsh random masks",
            "num_blocks": self.num_blocks,
            "num_samples": int(len(self.base)),
            "seed": self.seed,
            "rhos": list(self.rhos),
            "num_ids": int(len(ids)),
            "ids_sha256": hashlib.sha256(ids.astype("<i8").tobytes()).hexdigest(),
        }


def _pack_bits(bits: np.ndarray) -> np.ndarray:
    """Mask ids of ``(..., L)`` 0/1 arrays (bit ``l`` = column ``l``)."""
    return (bits.astype(np.int64) << np.arange(bits.shape[-1], dtype=np.int64)).sum(axis=-1)


def walsh_design(num_blocks: int, num_samples: int, seed: int, rhos: tuple[float, ...] = RHOS) -> WalshDesign:
    """Draw a :class:`WalshDesign` of ``num_samples`` units on ``num_blocks`` blocks (1 ≤ L ≤ 62) with
    ``np.random.default_rng(seed)``: base bits, then flip blocks, then one flip pattern per ρ (deterministic)."""
    if not 1 <= num_blocks <= 62:
        raise ValueError(f"a Walsh design needs 1 ≤ num_blocks ≤ 62, got {num_blocks}")
    if num_samples < 2:
        raise ValueError(f"a Walsh design needs at least 2 samples, got {num_samples}")
    rhos = tuple(float(rho) for rho in rhos)
    if not all(-1.0 <= rho <= 1.0 for rho in rhos):
        raise ValueError(f"every ρ must lie in [−1, 1], got {rhos}")
    rng = np.random.default_rng(seed)
    base = _pack_bits(rng.integers(0, 2, size=(num_samples, num_blocks)))
    flip_bits = rng.integers(0, num_blocks, size=num_samples).astype(np.int64)
    flips = [_pack_bits(rng.random((num_samples, num_blocks)) < (1 - rho) / 2) for rho in rhos]
    correlated = base[None, :] ^ np.stack(flips) if rhos else np.zeros((0, num_samples), dtype=np.int64)
    return WalshDesign(
        num_blocks=num_blocks,
        seed=seed,
        rhos=rhos,
        base=base,
        flip_bits=flip_bits,
        flipped=base ^ (np.int64(1) << flip_bits),
        correlated=correlated.astype(np.int64),
    )


def krawtchouk(num_blocks: int, degree: int) -> np.ndarray:
    """``K_degree(d)`` for ``d = 0 … L`` (float64, from exact integers): ``Σ_{|S|=degree} χ_S(z)`` for any ``z`` of
    Hamming weight ``d``."""
    return np.array(
        [
            sum((-1) ** j * comb(d, j) * comb(num_blocks - d, degree - j) for j in range(degree + 1))
            for d in range(num_blocks + 1)
        ],
        dtype=np.float64,
    )


@dataclass(frozen=True)
class _PairSums:
    """Row sums of the pair kernels ``k_j(a, b) = s·⟨h_a, h_b⟩ K_j(d(x_a, x_b))``, ``j = 1 … MAX_DEGREE`` (``s`` the
    centring's correction), over ``b ≠ a``: ``rows`` (J, m) ``Σ_b k_j(a, b)``; ``seconds`` (m, J, J)
    ``Σ_b k_i(a, b) k_j(a, b)``; ``against`` (m, J, R + J) ``Σ_b k_j(a, b) v_b`` for ``v_b`` the ``R`` unit terms of
    unit ``b`` followed by its ``J`` row sums (what the leave-one-out sums of every linearised kernel need)."""

    rows: np.ndarray
    seconds: np.ndarray
    against: np.ndarray


def _pair_sums(
    values: np.ndarray, masks: np.ndarray, num_blocks: int, unit_terms: np.ndarray, scale: float
) -> _PairSums:
    """The :class:`_PairSums` of ``values`` (m, C) on ``masks`` (m,). The kernels depend on the pair only through
    ``⟨h_a, h_b⟩`` and the distance, so for the row sums the inner products are binned by row and distance (and their
    squares) and the Krawtchouk tables applied to the bins; ``against`` needs the row sums, so a second pass forms
    each kernel's block and multiplies it into the unit values. ``O(m²·C)`` multiply-adds for the Gram blocks,
    ``O(m·L)`` memory beyond one block of rows."""
    count = len(masks)
    table = scale * np.stack([krawtchouk(num_blocks, k) for k in range(1, MAX_DEGREE + 1)])  # (J, L + 1)
    bins = num_blocks + 1
    step = max(1, _CHUNK_ENTRIES // count)

    def blocks():  # (first row, Gram block without the pairs a = b, distances), block by block of rows
        for start in range(0, count, step):
            gram = values[start : start + step] @ values.T
            local = np.arange(len(gram))
            gram[local, local + start] = 0.0
            yield start, gram, np.bitwise_count(masks[start : start + step, None] ^ masks[None, :])

    by_row = np.zeros((count, bins))  # Σ_{b ≠ a, d_ab = d} ⟨h_a, h_b⟩
    squares = np.zeros((count, bins))  # Σ_{b ≠ a, d_ab = d} ⟨h_a, h_b⟩²
    for start, gram, distances in blocks():
        cells = (distances + bins * np.arange(len(gram))[:, None]).ravel()
        size = bins * len(gram)  # one bin per (row, distance)
        by_row[start : start + len(gram)] = np.bincount(cells, weights=gram.ravel(), minlength=size).reshape(-1, bins)
        squares[start : start + len(gram)] = np.bincount(
            cells, weights=np.square(gram).ravel(), minlength=size
        ).reshape(-1, bins)
    rows = table @ by_row.T
    unit_values = np.vstack([unit_terms, rows]).T  # (m, R + J)
    against = np.empty((count, len(table), len(unit_values[0])))
    for start, gram, distances in blocks():
        for degree, kernel in enumerate(table):
            against[start : start + len(gram), degree] = (gram * kernel[distances]) @ unit_values
    return _PairSums(rows, np.einsum("id,ad,jd->aij", table, squares, table), against)


def _rows(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Row of each ``wanted`` id in ``ids``; a :class:`PipelineError` if one is missing."""
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    position = np.clip(np.searchsorted(sorted_ids, wanted), 0, len(ids) - 1)
    missing = sorted_ids[position] != wanted
    if missing.any():
        raise PipelineError(
            f"walsh_estimates: {int(missing.sum())} design masks (e.g. id {int(wanted[missing].ravel()[0])}) have no "
            "value; evaluate design.all_ids()"
        )
    return order[position]


def _kernel_rows(
    unit_weights: np.ndarray, unit_terms: np.ndarray, pair_weights: np.ndarray, pairs: _PairSums
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The row sums ``R_a``, ``r_a`` and ``(φR)_a`` (:mod:`experiment_2.past_exhaustive.sampling.u_statistics`) of the degree-2
    U-statistic kernel ``φ(a, b) = (A_a + A_b) + κ(a, b)``, ``A_a = Σ_i unit_weights[i] unit_terms[i, a] / 2`` (a mean
    over units is the U-statistic of ``(t_a + t_b)/2``) and ``κ = Σ_j pair_weights[j] k_j``: a statistic's
    linearisation. From the pair sums alone, with ``P_a = Σ_b κ(a, b)``, ``X_a = Σ_b κ(a, b) A_b`` and
    ``Y_a = Σ_b κ(a, b) P_b``."""
    count, units = unit_terms.shape[1], len(unit_terms)
    half = unit_weights @ unit_terms / 2  # A_a
    pair_rows = pair_weights @ pairs.rows  # P_a
    pair_squares = np.einsum("i,aij,j->a", pair_weights, pairs.seconds, pair_weights)  # Σ_b κ(a, b)²
    pair_halves = pairs.against[:, :, :units] @ (unit_weights / 2) @ pair_weights  # X_a
    pair_pairs = pairs.against[:, :, units:] @ pair_weights @ pair_weights  # Y_a
    total_half, total_half_sq = half.sum(), np.square(half).sum()
    rows = (count - 2) * half + total_half + pair_rows
    seconds = (
        (count - 4) * np.square(half)
        + 2 * half * total_half
        + total_half_sq
        + 2 * half * pair_rows
        + 2 * pair_halves
        + pair_squares
    )
    products = (  # Σ_{b≠a} (A_a + A_b + κ(a, b)) R_b
        half * (rows.sum() - rows)
        + (half @ rows - half * rows)
        + (count - 2) * pair_halves
        + total_half * pair_rows
        + pair_pairs
    )
    return rows, seconds, products


def _unit_ratio(means: np.ndarray, ratio: tuple[int, int | None, float]) -> tuple[np.ndarray, np.ndarray]:
    """A statistic ``M_i / (M_j · c)`` (or ``M_i / c`` when ``j`` is None) of the unit-term means ``means``
    ``(..., R)``, ``ratio = (i, j, c)``: its value ``(...)`` and gradient ``(..., R)`` in the means."""
    numerator, denominator, divisor = ratio
    gradient = np.zeros(means.shape)
    if denominator is None:
        value = means[..., numerator] / divisor
        gradient[..., numerator] = 1 / divisor
        return value, gradient
    with np.errstate(divide="ignore", invalid="ignore"):  # a resample of zero variance: no value, no pivot
        value = means[..., numerator] / (means[..., denominator] * divisor)
        gradient[..., numerator] = 1 / (means[..., denominator] * divisor)
        gradient[..., denominator] -= value / means[..., denominator]
    return value, gradient


def _unit_bootstrap_t_intervals(
    unit_terms: np.ndarray,
    ratios: dict[str, tuple[int, int | None, float]],
    tail: float,
    seed: int,
    resamples: int = RESAMPLES,
) -> dict[str, tuple[float, float]]:
    """The intervals of the statistics that are ratios of unit-term means (variance, influence, κ_W, κ_W / L): for
    each name, the ratio of :func:`_unit_ratio` of the rows of ``unit_terms`` ``(R, m)``.

    Bootstrap-t over the ``m`` units (``resamples`` resamples drawn by ``np.random.default_rng(seed)``): each resample's
    statistic is recomputed from its means and studentised by its own delta-method SE ``sqrt(∇ᵀ S ∇ / m)`` (``S`` the
    resample's covariance of the unit terms, divisor ``m − 1``); the interval is ``θ̂ − t*_{hi}·SE, θ̂ − t*_{lo}·SE``
    with the sample's SE. Why not the normal interval: the masks' squared deviations are right-skewed, so a sample
    that misses the largest has both a low estimate and a low SE; on the exhaustive tables of step 11 the normal
    interval of the variance left the exact value above it in 4–7 % of replications at 1 024 masks (the bootstrap-t:
    2–4 %). No spread over the units: the estimate itself; no resample with a pivot: the whole line."""
    count = unit_terms.shape[1]
    means = unit_terms.mean(axis=1)
    centred = unit_terms - means[:, None]  # the pivot is unchanged by the shift; the sums lose less to round-off
    rows = len(unit_terms)
    counts = resample_counts(count, resamples, seed)
    shifts = counts @ centred.T / count  # (B, R): each resample's means minus the sample's
    products = (centred[:, None, :] * centred[None, :, :]).reshape(rows * rows, count)
    seconds = (counts @ products.T / count).reshape(resamples, rows, rows)
    covariances = (seconds - shifts[:, :, None] * shifts[:, None, :]) * count / (count - 1)
    covariance = centred @ centred.T / (count - 1)
    out = {}
    for name, ratio in ratios.items():
        estimate, gradient = _unit_ratio(means, ratio)
        error = float(np.sqrt(max(gradient @ covariance @ gradient, 0.0) / count))
        if error == 0:
            out[name] = (float(estimate), float(estimate))
            continue
        values, gradients = _unit_ratio(means + shifts, ratio)
        with np.errstate(divide="ignore", invalid="ignore"):
            errors = np.sqrt(np.maximum(np.einsum("bi,bij,bj->b", gradients, covariances, gradients), 0.0) / count)
            pivots = (values - estimate) / errors
        pivots = pivots[np.isfinite(pivots) & (errors > ROUND_OFF_SPREAD * error)]
        if len(pivots) == 0:
            out[name] = (-np.inf, np.inf)
            continue
        upper_pivot, lower_pivot = np.quantile(pivots, [1 - tail / 2, tail / 2])
        out[name] = (float(estimate - upper_pivot * error), float(estimate - lower_pivot * error))
    return out


def _pair_intervals(
    estimates: np.ndarray,
    errors: np.ndarray,
    estimate_pseudo: np.ndarray,
    variance_pseudo: np.ndarray,
    tail: float,
    seed: int,
    upper_bounds: np.ndarray,
    resamples: int = RESAMPLES,
) -> list[tuple[float, float]]:
    """The intervals of the statistics built on the pairs of masks (``w1 … w3``, the low-degree share), one per
    column: :func:`experiment_2.past_exhaustive.sampling.bootstrap.linearised_bootstrap_t_limits` of the estimates with their SEs
    ``errors``, from the jackknife pseudo-values ``(m, S)`` of each estimate and of its U-statistic variance
    (``resamples`` resamples of the ``m`` units drawn by ``seed``); column ``j`` cut to ``[0, upper_bounds[j]]``, so a
    column with no interval (a leave-one-out variance of 0) gets that whole range.

    Why this interval: the masks' squared deviations are heavy-tailed (a handful of masks hold a large part of the
    variance), so a sample that misses the largest has a low estimate *and* a low SE; the normal interval missed on
    one side (the exact value above it in 6–12 % of replications at 1 024–4 096 masks for w2, w3 and the share). A
    bootstrap-t of the pseudo-values alone sees that skew but studentises by the jackknife's variance, which counts
    the single pairs' noise ``2 Var φ / (m(m − 1))`` twice where the U-statistic variance counts it once: on step 11's
    exhaustive tables it was conservative (96–99 %) for ``w3`` at ``L = 16``, where that noise dominates."""
    limits = linearised_bootstrap_t_limits(estimates, errors, estimate_pseudo, variance_pseudo, tail, seed, resamples)
    return [_cut(float(low), float(high), 0.0, float(bound)) for low, high, bound in zip(*limits, upper_bounds)]


def statistic_range(name: str, num_blocks: int) -> tuple[float, float, str]:
    """The range of the Walsh summary ``name`` (of :func:`estimate_names`) on ``num_blocks`` blocks, ``(floor, ceiling,
    cut)``: variance, influence and the weights at least 0, κ_W a mean degree in [1, L] (κ_W / L in [1/L, 1]),
    ``stability_ρ`` a mean of ``ρ^{|S|}`` over degrees 1 … L in [ρ^L, ρ], the low-degree share in [0, 1]; ``cut`` names
    the cut of an interval to it. The intervals are cut to the range and the estimates are not (each is unbiased, or a
    ratio of unbiased ones), so an estimate outside it is the estimator's noise, not a value of the quantity."""
    if name in ("variance", "influence") or name in {f"w{k}" for k in range(1, MAX_DEGREE + 1)}:
        return 0.0, np.inf, "cut at 0"
    if name == "kappa_w":
        return 1.0, float(num_blocks), "cut to [1, L]"
    if name == "kappa_w_per_block":
        return 1 / num_blocks, 1.0, "cut to [1/L, 1]"
    if name.startswith("stability_"):
        rho = float(name.removeprefix("stability_"))
        return rho**num_blocks, rho, "cut to [ρ^L, ρ]"
    if name == "low_degree_share":
        return 0.0, 1.0, "cut to [0, 1]"
    raise ValueError(f"no Walsh summary named {name!r}; the names are estimate_names()")


def _cut(low: float, high: float, floor: float, ceiling: float) -> tuple[float, float]:
    """An interval's ends, each moved into its statistic's range ``[floor, ceiling]`` (a cut to the parameter space
    never drops the exact value); a NaN end stays NaN."""
    return float(np.clip(low, floor, ceiling)), float(np.clip(high, floor, ceiling))


@np.errstate(divide="ignore", invalid="ignore")  # a variance of 0 on the base masks: non-finite ratios (docstring)
def walsh_estimates(
    design: WalshDesign, ids: np.ndarray, values: np.ndarray, confidence: float = 0.95, seed: int = 0
) -> dict[str, dict]:
    """Estimates of the Walsh summaries (module docstring) from ``h`` on a design's masks.

    ``ids`` (n,) and ``values`` (n, C): ``h`` at those mask ids, a superset of ``design.all_ids()`` in any order
    (a :class:`PipelineError` if one is missing). Returns, for each name of :func:`estimate_names` (``design.rhos``),
    ``{"estimate", "ci_low", "ci_high", "interval", "se"}`` (``se``: the delta-method standard error, raw scale, as
    below).

    Estimators (``m`` base masks ``x_a``, ``h̄`` their mean, ``g = h − h̄``; every one exactly unbiased):
    ``variance = Σ_a ‖g_a‖² / (m − 1)``; ``influence = L/4 · mean_a ‖h(x_a) − h(x_a ⊕ e_{i_a})‖²``;
    ``Σ_{S≠∅} ρ^{|S|}‖f̂(S)‖² = m/(m − 1) · mean_a ⟨g_a, h(y_a) − h̄⟩`` (``y_a`` the ρ-copy);
    ``w_k = Σ_{a≠b} ⟨g_a, g_b⟩ K_k(d_ab) / (m(m − 1)) / (1 − 2/m + 2/m²)`` — centring leaves ``w_k`` (k ≥ 1) unchanged,
    removes the ``‖E h‖² K_k`` noise term of the uncentred U-statistic, and shrinks its mean by exactly that factor
    (``E_b K_k(d_ab) = 0``). The ratios (``kappa_w``, stabilities, ``low_degree_share``) are ratios of these.

    Intervals, two-sided ``confidence``; a bootstrap-t over the mask units where it helps (``seed`` draws the
    resamples, the same for every name), because the masks' squared deviations are heavy-tailed and a sample that
    misses the largest has both a low estimate and a low plug-in SE: the normal interval left the exact value above it
    too often (on the exhaustive L = 16 tables of a random-init ResNet-34: 4–7 % of replications for the variance,
    6–12 % for w2, w3 and the share, at 1 024–4 096 masks). Variance, influence and ``kappa_w``, ratios of the unit
    terms' means: :func:`_unit_bootstrap_t_intervals` (:data:`INTERVAL`). The stabilities: normal on ``log(1 − s)``,
    bounded by 1 (:data:`STABILITY_INTERVAL`; their bootstrap-t covered less, 0.93–0.94 against 0.95 for ρ = 0.95 on
    scalar tables). ``w1 … w3`` and ``low_degree_share``, built on the pairs of masks: :func:`_pair_intervals`
    (:data:`PAIR_INTERVAL`; the share's variance with a unit left out is that of its linearisation at the other
    units' share and variance). ``se`` is the delta-method SE from the degree-2 U-statistic whose kernel joins the unit
    terms and the pair kernels of the statistic's linearisation (:mod:`experiment_2.past_exhaustive.sampling.u_statistics`): for the
    unit statistics the root of its unbiased variance (the SE their intervals use); for the pair statistics the root
    of its linear and degenerate parts, each cut at 0 (either alone can be negative where the other dominates, and
    their sum then understates the SE). Coverage at the budgets a run uses is measured by
    ``experiment_2.step_11_estimator_validation`` on exhaustive tables (its REPORT.md); ``w3`` needs the most masks,
    so check it at the ``L`` and ``m`` of a run. Each interval of the unit and pair statistics is cut to its
    statistic's range (variance and influence ≥ 0, κ_W in [1, L], the weights ≥ 0, the share in [0, 1],
    ``stability_ρ`` in [ρ^L, ρ]: a mean of ``ρ^{|S|}`` over degrees 1 … L). Where ``h`` is constant on the base masks
    (a variance of 0) the ratios are non-finite, the intervals of κ_W and the share their whole range and the
    stabilities' NaN, without a numpy warning. Needs ``m ≥ 4`` (the pair intervals ``m ≥ 5``: a variance left out
    needs four units; at 4 they are their whole range). Cost: about ``2·m²·C`` multiply-adds for the pair sums and
    ``2000·m`` draws per bootstrap.
    """
    ids = np.asarray(ids, dtype=np.int64).ravel()
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or len(values) != len(ids):
        raise PipelineError(f"walsh_estimates: values must be (len(ids), C) = ({len(ids)}, C), got {values.shape}")
    count, num_blocks = len(design.base), design.num_blocks
    if count < 4:
        raise PipelineError(f"walsh_estimates: the design has {count} samples; draw at least 4")
    base = values[_rows(ids, design.base)]
    centre = base.mean(axis=0)
    centred = base - centre
    flipped = values[_rows(ids, design.flipped)]
    shrink = count / (count - 1)
    # the unit terms, one row each: ‖g_a‖²·m/(m−1), the influence term, one ρ-product per ρ (means over units)
    unit_terms = np.stack(
        [
            shrink * np.einsum("ij,ij->i", centred, centred),
            num_blocks / 4 * np.square(base - flipped).sum(axis=1),
            *(
                shrink * np.einsum("ij,ij->i", centred, values[_rows(ids, copies)] - centre)
                for copies in design.correlated
            ),
        ]
    )
    scale = 1 / (1 - 2 / count + 2 / count**2)  # the centring's shrinkage, undone in the kernels
    pairs = _pair_sums(centred, design.base, num_blocks, unit_terms, scale)
    row_sums = pairs.rows
    means = unit_terms.mean(axis=1)
    weights = row_sums.sum(axis=1) / (count * (count - 1))  # w1 … w_MAX_DEGREE
    square, influence_row = 0, 1  # rows of unit_terms; then one row per ρ from 2

    def linear(units: dict[int, float], pairs: dict[int, float]) -> tuple[np.ndarray, np.ndarray]:
        unit_weights, pair_weights = np.zeros(len(unit_terms)), np.zeros(MAX_DEGREE)
        for row, weight in units.items():
            unit_weights[row] += weight
        for degree, weight in pairs.items():
            pair_weights[degree - 1] += weight
        return unit_weights, pair_weights

    variance, influence = means[square], means[influence_row]
    kappa = influence / variance
    kappa_linear = linear({influence_row: 1 / variance, square: -kappa / variance}, {})
    # each name: its estimate and its linearisation (unit weights, pair weights)
    estimates: dict[str, tuple[float, tuple[np.ndarray, np.ndarray]]] = {
        "variance": (variance, linear({square: 1.0}, {})),
        "influence": (influence, linear({influence_row: 1.0}, {})),
        "kappa_w": (kappa, kappa_linear),
        "kappa_w_per_block": (kappa / num_blocks, (kappa_linear[0] / num_blocks, kappa_linear[1])),
    }
    for row, rho in enumerate(design.rhos, start=2):
        stability = means[row] / variance
        estimates[f"stability_{rho}"] = (stability, linear({row: 1 / variance, square: -stability / variance}, {}))
    for degree in range(1, MAX_DEGREE + 1):
        estimates[f"w{degree}"] = (float(weights[degree - 1]), linear({}, {degree: 1.0}))
    share = float(weights.sum()) / variance
    share_pairs = {degree: 1 / variance for degree in range(1, MAX_DEGREE + 1)}
    estimates["low_degree_share"] = (share, linear({square: -share / variance}, share_pairs))
    tail = 1 - confidence
    pair_names = [*(f"w{k}" for k in range(1, MAX_DEGREE + 1)), "low_degree_share"]
    # leave one unit out (the same centred values): w1 … w3, the variance and the share of the others
    weights_without = (row_sums.sum(axis=1, keepdims=True) - 2 * row_sums) / ((count - 1) * (count - 2))  # (J, m)
    variance_without = (unit_terms[square].sum() - unit_terms[square]) / (count - 1)
    share_without = weights_without.sum(axis=0) / variance_without  # a leave-one-out variance of 0: not finite

    def kernel_variances(unit_weights: np.ndarray, pair_weights: np.ndarray) -> tuple[KernelSums, np.ndarray]:
        """A linearised kernel's sums, and its U-statistic variance with each unit left out (m,)."""
        rows, seconds, products = _kernel_rows(unit_weights, unit_terms, pair_weights, pairs)
        sums = kernel_sums(rows, seconds)
        return sums, leave_one_out(sums, rows, seconds, products).variance()

    errors, left_out = {}, {}  # each name's SE; a pair statistic's variance, whole and with each unit left out
    for name in estimate_names(design.rhos):
        sums, without = kernel_variances(*estimates[name][1])
        if name in pair_names:
            linear_part, degenerate_part = variance_parts(sums)
            errors[name] = float(np.sqrt(max(linear_part, 0.0) + max(degenerate_part, 0.0)))
            left_out[name] = (sums.variance(), without)
        else:
            errors[name] = float(np.sqrt(max(sums.variance(), 0.0)))
    # the share's variance without unit a is that of its linearisation at the others' share and variance,
    # (P − s₍₋ₐ₎·A) / V₍₋ₐ₎ (P the summed pair kernels, A the squared deviations' unit kernel), not at the whole
    # sample's: a variance estimate is a quadratic form in the kernel, v(P − sA) = v(P) − s·(v(P + A) − v(P) − v(A))
    # + s²·v(A), so three fixed kernels give every unit's
    every_degree, squares_only = np.ones(MAX_DEGREE), linear({square: 1.0}, {})[0]
    pairs_left = kernel_variances(np.zeros(len(unit_terms)), every_degree)[1]
    squares_left = kernel_variances(squares_only, np.zeros(MAX_DEGREE))[1]
    cross_left = kernel_variances(squares_only, every_degree)[1] - pairs_left - squares_left
    share_left = (pairs_left - share_without * cross_left + share_without**2 * squares_left) / variance_without**2
    left_out["low_degree_share"] = (left_out["low_degree_share"][0], share_left)
    pair_estimates = np.append(weights, share)
    estimates_without = np.vstack([weights_without, share_without])  # (J + 1, m)
    pseudo_values = (count * pair_estimates[:, None] - (count - 1) * estimates_without).T
    bounds = np.array([statistic_range(name, num_blocks)[1] for name in pair_names])
    pair_errors = np.array([errors[name] for name in pair_names])
    variance_pseudo_values = np.column_stack(
        [count * whole - (count - 1) * without for whole, without in (left_out[name] for name in pair_names)]
    )
    pair_intervals = dict(
        zip(
            pair_names,
            _pair_intervals(pair_estimates, pair_errors, pseudo_values, variance_pseudo_values, tail, seed, bounds),
        )
    )
    ratios = {
        "variance": (square, None, 1.0),
        "influence": (influence_row, None, 1.0),
        "kappa_w": (influence_row, square, 1.0),
        "kappa_w_per_block": (influence_row, square, float(num_blocks)),
    }
    unit_intervals = _unit_bootstrap_t_intervals(unit_terms, ratios, tail, seed)
    result = {}
    for name in estimate_names(design.rhos):
        estimate, error = estimates[name][0], errors[name]
        floor, ceiling, cut = statistic_range(name, num_blocks)
        if name in pair_intervals:
            (low, high), method = pair_intervals[name], PAIR_INTERVAL
        else:
            low, high, method = (
                (*unit_intervals[name], INTERVAL)
                if name in unit_intervals
                else _stability_interval(float(estimate), error, float(stats.norm.ppf(1 - tail / 2)))
            )
            low, high = _cut(low, high, floor, ceiling)
        interval = f"{method}, {cut}"
        result[name] = {"estimate": float(estimate), "ci_low": low, "ci_high": high, "interval": interval, "se": error}
    return result


def _stability_interval(estimate: float, error: float, quantile: float) -> tuple[float, float, str]:
    """A stability's normal interval on the scale ``log(1 − s)`` (bounded by 1): ``1 − (1 − s)·exp(±quantile·error /
    (1 − s))``; for an estimate at or above 1, ``estimate ± quantile·error`` on the raw scale. With its name."""
    if estimate < 1:
        with np.errstate(over="ignore"):  # an estimate far inside its noise: the interval (−∞, 1)
            factor = float(np.exp(quantile * error / (1 - estimate)))
        return 1 - (1 - estimate) * factor, 1 - (1 - estimate) / factor, STABILITY_INTERVAL
    return estimate - quantile * error, estimate + quantile * error, NORMAL_INTERVAL


def walsh_exact(table: np.ndarray, rhos: tuple[float, ...] = RHOS) -> dict[str, float]:
    """The names of :func:`estimate_names` computed exactly from a full ``(2^L, C)`` table (``h`` at every mask id),
    through :func:`experiment_1.mobius.walsh_transform` in float64."""
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 2:
        raise ValueError(f"table must be (2^L, C), got shape {table.shape}")
    num_blocks = mobius.num_blocks_from_size(table.shape[0])
    coefficients = mobius.walsh_transform(torch.from_numpy(table), dim=0).numpy()
    orders = np.bitwise_count(np.arange(table.shape[0], dtype=np.int64)).astype(np.int64)
    return walsh_statistics(
        np.bincount(orders, weights=np.square(coefficients).sum(axis=1), minlength=num_blocks + 1), rhos
    )


def walsh_statistics(weights: np.ndarray, rhos: tuple[float, ...] = RHOS) -> dict[str, float]:
    """The names of :func:`estimate_names` from the Walsh weights ``W_0 … W_L`` (``weights``, length ``L + 1``) of
    a function on ``L`` blocks: the exact values :func:`walsh_estimates` estimates."""
    weights = np.asarray(weights, dtype=np.float64)
    num_blocks = len(weights) - 1
    degrees = np.arange(len(weights))
    variance = float(weights[1:].sum())
    influence = float((degrees * weights).sum())
    result = {
        "variance": variance,
        "influence": influence,
        "kappa_w": influence / variance,
        "kappa_w_per_block": influence / variance / num_blocks,
    }
    for rho in rhos:
        result[f"stability_{float(rho)}"] = float((float(rho) ** degrees[1:] * weights[1:]).sum()) / variance
    for k in range(1, MAX_DEGREE + 1):
        result[f"w{k}"] = float(weights[k]) if k <= num_blocks else 0.0
    result["low_degree_share"] = float(weights[1 : MAX_DEGREE + 1].sum()) / variance
    return result


def surrogate_r2_by_size(
    coefficient_ids: np.ndarray,
    coefficients: np.ndarray,
    ids: np.ndarray,
    values: np.ndarray,
    num_blocks: int,
) -> list[dict]:
    """Faithfulness of a truncated Möbius expansion on sampled masks, by mask size.

    The surrogate ``g(T) = Σ_{S ⊆ T, S ∈ coefficient_ids} Δ_S`` (``coefficient_ids`` (M,) the kept sets as ids,
    e.g. every ``|S| ≤ k``; ``coefficients`` (M, C) their ``Δ_S`` at the all-off base) is evaluated at the masks
    ``ids`` (n,) where ``values`` (n, C) holds ``h``. For each mask size ``|T|`` present, ascending, then for all masks:
    ``{"size", "count", "r2"}``, ``r2 = 1 − Σ‖h − g‖² / Σ‖h − mean h‖²`` over those masks (mean per column over the
    same masks; NaN when they all share one value). ``"size"`` is ``"all"`` on the last row.
    """
    coefficient_ids = np.asarray(coefficient_ids, dtype=np.int64).ravel()
    coefficients = np.asarray(coefficients, dtype=np.float64)
    ids = np.asarray(ids, dtype=np.int64).ravel()
    values = np.asarray(values, dtype=np.float64)
    if coefficients.shape[0] != len(coefficient_ids) or values.shape[0] != len(ids):
        raise ValueError("coefficients must have one row per coefficient id and values one row per mask id")
    if len(ids) and int(ids.max()) >> num_blocks:
        raise ValueError(f"mask ids must lie below 2^{num_blocks}")
    surrogate = np.empty((len(ids), coefficients.shape[1]))
    step = max(1, _CHUNK_ENTRIES // max(len(coefficient_ids), 1))
    for start in range(0, len(ids), step):
        inside = (coefficient_ids[None, :] & ~ids[start : start + step, None]) == 0  # S ⊆ T
        surrogate[start : start + step] = inside.astype(np.float64) @ coefficients
    sizes = np.bitwise_count(ids).astype(np.int64)

    def row(size: int | str, chosen: np.ndarray) -> dict:
        residual = np.square(values[chosen] - surrogate[chosen]).sum()
        spread = np.square(values[chosen] - values[chosen].mean(axis=0)).sum()
        r2 = float(1 - residual / spread) if spread > 0 else float("nan")
        return {"size": size, "count": int(chosen.sum()), "r2": r2}

    rows = [row(int(size), sizes == size) for size in np.unique(sizes)]
    rows.append(row("all", np.ones(len(ids), dtype=bool)))
    return rows
