"""Random sub-cubes: unbiased mean Möbius coefficient energies of every order up to the sub-cube's size.

Mask convention of :mod:`experiment_1.mobius` (a mask id is an integer, bit ``l`` the gate of block ``l``). The game
restricted to a ``u``-subset ``U`` of the ``L`` blocks (every gate outside ``U`` held off) is ``h_U(T) = h(T)`` for
``T ⊆ U``; since the Möbius coefficient ``Δ_S = Σ_{T⊆S} (−1)^{|S−T|} h(T)`` (base: all off) reads only masks inside
``S``, ``h_U`` has exactly the coefficients ``Δ_S``, ``S ⊆ U``. If ``U`` is a uniformly random ``u``-subset, every
``k``-subset ``S`` is equally likely to lie in it, so the mean of ``‖Δ_S‖²`` over the ``C(u, k)`` sets ``S ⊆ U`` of
size ``k`` is an unbiased estimate of ``ē_k = E_k / C(L, k)``, the mean coefficient energy of order ``k``
(``E_k = Σ_{|S|=k} ‖Δ_S‖²``), for every ``k ≤ u`` at once: one exhaustive pass over ``2^u`` masks per draw.

Layout: a draw's ``2^u`` masks are held in *local* order, local index ``t`` with bit ``j`` ↔ block ``blocks[j]``
(:func:`subcube_mask_ids`), so a draw's values are a dense ``2^u`` table the project's butterfly transforms.
"""

from __future__ import annotations

from math import comb

import numpy as np

from experiment_1 import mobius
from experiment_2.past_exhaustive.sampling.bootstrap import bootstrap_t_limits

__all__ = [
    "INTERVAL",
    "MIN_COEFFICIENTS",
    "NO_INTERVAL",
    "NUM_RESAMPLES",
    "VALIDATED_DRAWS",
    "draw_subcubes",
    "interval_orders",
    "subcube_estimates",
    "subcube_mask_ids",
    "subcube_order_means",
]

INTERVAL = "studentized bootstrap (bootstrap-t) over draws"
MIN_COEFFICIENTS = 6  # an order's interval needs each draw to average at least this many of its coefficients
NO_INTERVAL = (
    f"none: fewer than {MIN_COEFFICIENTS} coefficients of order j per draw (C(u, j) < {MIN_COEFFICIENTS}, always the top "
    "order j = u), too heavy-tailed for an interval over draws"
)
NUM_RESAMPLES = 1999
# The draws at which step 11 validates the intervals over draws (its sub-cube run, experiment_2/README.md). What sets
# an interval's coverage is the per-draw means' tail against the number of draws, not the coefficients per draw: at
# 30 draws step 11 found ē_4 of 6-block and ē_6 of 8-block sub-cubes table-dependent on held-out Lite1 tables (one at
# 91 %), and a sample that missed the tail looks light, so no rule read off the draws themselves withholds those
# intervals. Fewer draws still get an interval; a run says it is below this.
VALIDATED_DRAWS = 120


def draw_subcubes(num_blocks: int, size: int, num_draws: int, seed: int) -> np.ndarray:
    """``(num_draws, size)`` int64: each row a uniformly random ``size``-subset of the ``num_blocks`` blocks, ascending;
    rows independent (a subset may recur), drawn by ``np.random.default_rng(seed)`` (deterministic for a seed)."""
    if not 0 <= size <= num_blocks:
        raise ValueError(f"a sub-cube of {size} blocks needs 0 ≤ size ≤ num_blocks = {num_blocks}")
    if num_draws < 0:
        raise ValueError(f"num_draws must be ≥ 0, got {num_draws}")
    rng = np.random.default_rng(seed)
    keys = rng.random((num_draws, num_blocks))  # the first `size` of a uniform random permutation
    return np.sort(np.argsort(keys, axis=1, kind="stable")[:, :size], axis=1).astype(np.int64)


def subcube_mask_ids(blocks: np.ndarray) -> np.ndarray:
    """The ``2^size`` global mask ids of the masks ``T ⊆ U`` for ``U = blocks`` (distinct block indices < 62), in
    local order: entry ``t`` has block ``blocks[j]`` on iff bit ``j`` of ``t`` is set. int64. ``blocks`` of shape
    ``(..., size)`` gives ``(..., 2^size)``, one row per sub-cube."""
    blocks = np.asarray(blocks, dtype=np.int64)
    size = blocks.shape[-1]
    local = np.arange(1 << size, dtype=np.int64)
    bits = (local[:, None] >> np.arange(size, dtype=np.int64)) & 1  # (2^size, size)
    return (bits << blocks[..., None, :]).sum(axis=-1)


def _local_orders(size: int) -> np.ndarray:
    """``popcount`` of every local index ``0 … 2^size − 1``."""
    return np.bitwise_count(np.arange(1 << size, dtype=np.int64)).astype(np.int64)


def subcube_order_means(values: np.ndarray) -> np.ndarray:
    """Per draw, the mean coefficient energy of each order inside its sub-cube.

    ``values``: ``(num_draws, 2^size, C)`` — ``h`` at each draw's masks in local order (``C = 1`` for the scalar
    projection). Returns ``(num_draws, size + 1)`` float64: entry ``[d, k]`` is the mean of ``‖Δ_S‖²`` (summed over the
    ``C`` columns) over the ``C(size, k)`` sets ``S ⊆ U_d`` with ``|S| = k``; column 0 is ``‖h(∅)‖²``.
    """
    import torch  # here, not atop: step 8's flags read this module's constants before torch loads

    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 3:
        raise ValueError(f"values must be (num_draws, 2^size, C), got shape {values.shape}")
    size = mobius.num_blocks_from_size(values.shape[1])
    coefficients = mobius.mobius_transform(torch.from_numpy(values), dim=1).numpy()
    energies = np.square(coefficients).sum(axis=2)  # (num_draws, 2^size)
    orders = _local_orders(size)
    weights = np.zeros((1 << size, size + 1))
    weights[np.arange(1 << size), orders] = 1.0 / np.array([comb(size, k) for k in range(size + 1)])[orders]
    return energies @ weights


def interval_orders(size: int, min_coefficients: int = MIN_COEFFICIENTS) -> np.ndarray:
    """``(size,)`` bool: whether order ``k = 1 … size`` of a ``size``-block sub-cube gets an interval, i.e. whether each
    draw's mean of that order averages at least ``min_coefficients`` coefficients (``C(size, k) ≥ min_coefficients``)."""
    return np.array([comb(size, order) >= min_coefficients for order in range(1, size + 1)], dtype=bool)


def subcube_estimates(
    order_means: np.ndarray,
    confidence: float = 0.95,
    seed: int = 0,
    num_resamples: int = NUM_RESAMPLES,
    min_coefficients: int = MIN_COEFFICIENTS,
) -> list[dict]:
    """The estimate of ``ē_k`` for each order ``k = 1 … size`` from the per-draw means of
    :func:`subcube_order_means` (``(num_draws, size + 1)``): the mean over draws, unbiased, with a two-sided
    ``confidence`` interval over draws for every order whose per-draw mean averages at least ``min_coefficients``
    coefficients (:func:`interval_orders`).

    One dict per order: ``{"order", "mean", "ci_low", "ci_high", "draws", "interval", "se"}`` (``se``: the standard
    error of the mean over draws, NaN with one draw). The interval is the studentized bootstrap (bootstrap-t,
    :data:`INTERVAL`) over draws, ``num_resamples`` resamples drawn by ``seed``
    (:func:`experiment_2.past_exhaustive.sampling.bootstrap.bootstrap_t_limits`; each order's limits read the same resamples, so they
    do not depend on which other orders get one): the per-draw means of the high orders are few coefficients each and
    right-skewed, where the percentile bootstrap and Student's t under-cover. An order with fewer than
    ``min_coefficients`` coefficients per draw gets the mean alone (``ci_low = ci_high = NaN``, ``interval`` =
    :data:`NO_INTERVAL`), a design rule. The top order ``k = size`` is one coefficient's energy per draw, whose
    distribution over sub-cubes is too heavy-tailed for any interval over a few dozen draws (on step 11's scalar
    tables: per-draw coefficient of variation 3.6–3.8, kurtosis 100–130; bootstrap-t coverage 0.86–0.89 at 30 draws
    and still 0.925–0.935 at 100–150, BCa 0.84 and Student's t 0.74 at 30). Averaging four coefficients is not enough
    either: step 11 found order 3 of a 4-block sub-cube (30 draws) table-dependent, 90.0–97.1 % over its 24 tables.
    The default of :data:`MIN_COEFFICIENTS` (6) is the smallest count step 11 validates (orders 1 and 5 of 6-block
    sub-cubes); it was set after step 11 had shown the failure at four, so it is a rule fitted to those tables. With
    fewer than 3 draws every interval is NaN; an order whose draws are all equal gets the mean itself.
    """
    order_means = np.asarray(order_means, dtype=np.float64)
    if order_means.ndim != 2:
        raise ValueError(f"order_means must be (num_draws, size + 1), got shape {order_means.shape}")
    draws = order_means.shape[0]
    samples = order_means[:, 1:]
    mean = samples.mean(axis=0) if draws else np.full(samples.shape[1], np.nan)
    limits = np.full((2, samples.shape[1]), np.nan)
    error = samples.std(axis=0, ddof=1) / np.sqrt(draws) if draws > 1 else np.full(samples.shape[1], np.nan)
    with_interval = interval_orders(samples.shape[1], min_coefficients)
    if draws >= 3 and with_interval.any():
        limits[:, with_interval] = bootstrap_t_limits(samples[:, with_interval], 1 - confidence, seed, num_resamples)
    return [
        {
            "order": order,
            "mean": float(mean[order - 1]),
            "ci_low": float(limits[0, order - 1]),
            "ci_high": float(limits[1, order - 1]),
            "draws": draws,
            "interval": INTERVAL if with_interval[order - 1] else NO_INTERVAL,
            "se": float(error[order - 1]),
        }
        for order in range(1, samples.shape[1] + 1)
    ]
