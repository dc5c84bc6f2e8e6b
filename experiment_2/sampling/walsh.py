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

__all__ = [
    "INTERVAL",
    "RHOS",
    "WalshDesign",
    "estimate_names",
    "krawtchouk",
    "surrogate_r2_by_size",
    "walsh_design",
    "walsh_estimates",
    "walsh_exact",
]

RHOS: tuple[float, ...] = (0.95, 0.9, 0.75, 0.5)
MAX_DEGREE = 3  # the exact-degree weights w1 … w3
INTERVAL = "delta method over samples (Hoeffding projection for the U-statistics), normal"
_CHUNK_ENTRIES = 4_000_000  # pairs per block of the pair sums


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


def _pair_sums(values: np.ndarray, masks: np.ndarray, num_blocks: int, max_degree: int) -> np.ndarray:
    """``(max_degree + 1, m)``: entry ``[k, a] = Σ_{b≠a} ⟨h_a, h_b⟩ K_k(d(x_a, x_b))``, in blocks of rows."""
    count = len(masks)
    table = np.stack([krawtchouk(num_blocks, k) for k in range(max_degree + 1)])  # (K, L + 1)
    sums = np.zeros((max_degree + 1, count))
    step = max(1, _CHUNK_ENTRIES // max(count, 1))
    for start in range(0, count, step):
        stop = min(count, start + step)
        gram = values[start:stop] @ values.T  # (c, m)
        distance = np.bitwise_count(masks[start:stop, None] ^ masks[None, :])
        for k in range(max_degree + 1):
            sums[k, start:stop] = (gram * table[k][distance]).sum(axis=1)
        diagonal = np.einsum("ij,ij->i", values[start:stop], values[start:stop])
        sums[:, start:stop] -= table[:, :1] * diagonal[None, :]  # the pair a = b, distance 0
    return sums


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


def walsh_estimates(
    design: WalshDesign, ids: np.ndarray, values: np.ndarray, confidence: float = 0.95, seed: int = 0
) -> dict[str, dict]:
    """Estimates of the Walsh summaries (module docstring) from ``h`` on a design's masks.

    ``ids`` (n,) and ``values`` (n, C): ``h`` at those mask ids, a superset of ``design.all_ids()`` in any order.
    Returns, for each name of :func:`estimate_names` (``design.rhos``), ``{"estimate", "ci_low", "ci_high",
    "interval"}``. Every estimate is a mean over the design's independent units or a U-statistic over distinct pairs
    of base masks, unbiased, or a ratio of such (consistent); the two-sided ``confidence`` interval is normal with the
    delta-method standard error (each statistic linearised into per-unit influence values, the U-statistics through
    their Hoeffding projection; :data:`INTERVAL`). ``seed`` is accepted for a resampling interval; this one draws
    nothing.
    """
    ids = np.asarray(ids, dtype=np.int64).ravel()
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or len(values) != len(ids):
        raise PipelineError(f"walsh_estimates: values must be (len(ids), C) = ({len(ids)}, C), got {values.shape}")
    count, num_blocks = len(design.base), design.num_blocks
    base = values[_rows(ids, design.base)]
    flipped = values[_rows(ids, design.flipped)]
    # linear statistics: point value and per-unit influence values (centred terms)
    point: dict[str, float] = {}
    influence: dict[str, np.ndarray] = {}

    def add_mean(name: str, terms: np.ndarray) -> None:
        point[name] = float(terms.mean())
        influence[name] = terms - terms.mean()

    pair = _pair_sums(base, design.base, num_blocks, MAX_DEGREE) / (count - 1)  # (K, m): mean over b ≠ a
    for k in range(MAX_DEGREE + 1):
        point[f"u{k}"] = float(pair[k].mean())
        influence[f"u{k}"] = 2 * (pair[k] - pair[k].mean())
    add_mean("mean_square", np.einsum("ij,ij->i", base, base))
    add_mean("influence", num_blocks / 4 * np.square(base - flipped).sum(axis=1))
    for rho, copies in zip(design.rhos, design.correlated):
        add_mean(f"cross_{rho}", np.einsum("ij,ij->i", base, values[_rows(ids, copies)]))

    def combine(name: str, weights: dict[str, float]) -> None:
        point[name] = sum(w * point[key] for key, w in weights.items())
        influence[name] = sum(w * influence[key] for key, w in weights.items())

    combine("variance", {"mean_square": 1.0, "u0": -1.0})
    for rho in design.rhos:
        combine(f"stable_{rho}", {f"cross_{rho}": 1.0, "u0": -1.0})
    combine("low", {f"u{k}": 1.0 for k in range(1, MAX_DEGREE + 1)})

    def ratio(name: str, numerator: str, scale: float = 1.0) -> None:
        value = point[numerator] / point["variance"]
        point[name] = scale * value
        influence[name] = scale * (influence[numerator] - value * influence["variance"]) / point["variance"]

    ratio("kappa_w", "influence")
    ratio("kappa_w_per_block", "influence", 1.0 / num_blocks)
    for rho in design.rhos:
        ratio(f"stability_{rho}", f"stable_{rho}")
    ratio("low_degree_share", "low")
    for k in range(1, MAX_DEGREE + 1):
        point[f"w{k}"], influence[f"w{k}"] = point[f"u{k}"], influence[f"u{k}"]
    quantile = float(stats.norm.ppf((1 + confidence) / 2))
    result = {}
    for name in estimate_names(design.rhos):
        error = float(np.sqrt(np.square(influence[name]).sum() / (count - 1) / count))
        result[name] = {
            "estimate": point[name],
            "ci_low": point[name] - quantile * error,
            "ci_high": point[name] + quantile * error,
            "interval": INTERVAL,
        }
    return result


def walsh_exact(table: np.ndarray, rhos: tuple[float, ...] = RHOS) -> dict[str, float]:
    """The names of :func:`estimate_names` computed exactly from a full ``(2^L, C)`` table (``h`` at every mask id),
    through :func:`experiment_1.mobius.walsh_transform` in float64."""
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 2:
        raise ValueError(f"table must be (2^L, C), got shape {table.shape}")
    num_blocks = mobius.num_blocks_from_size(table.shape[0])
    coefficients = mobius.walsh_transform(torch.from_numpy(table), dim=0).numpy()
    orders = np.bitwise_count(np.arange(table.shape[0], dtype=np.int64)).astype(np.int64)
    weights = np.bincount(orders, weights=np.square(coefficients).sum(axis=1), minlength=MAX_DEGREE + 1)
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
        result[f"w{k}"] = float(weights[k])
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
