"""The global core against random top-K sets: is more of each image's top-K in the shared core than chance puts there?

The statistic is the mean over images of the share of an image's top-K inside the global core (the K subsets most
often in a top-K, ties to the lower mask index; experiment_4.signatures). A random top-K shares K / 2^L with a fixed
core, but the core is chosen from the same sets, which lifts even random sets above K / 2^L. The null therefore
permutes each image's 2^L subset ids independently (each top-K becomes a uniformly random K-subset, the images stay
independent), **recomputes the core** and the mean share, ``num_draws`` times, seeded: a one-sided Monte Carlo
permutation p = (1 + #null ≥ ours) / (1 + n), at best 1 / (n + 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from experiment_4.inference import TIE_TOLERANCE

CORE_STREAM = 3  # the core null's seed stream (beside the permutations' and the pair samples')


def mean_core_share(indices: np.ndarray, num_subsets: int) -> float:
    """The mean share of each row's ids ``(N, K)`` inside the K most frequent ids (ties to the lower id)."""
    k = indices.shape[1]
    counts = np.bincount(indices.ravel(), minlength=num_subsets)
    core = np.argsort(-counts, kind="stable")[:k]
    return float(np.isin(indices, core).mean())


def random_core_shares(count: int, k: int, num_subsets: int, num_draws: int, seed: int) -> np.ndarray:
    """``(num_draws,)`` :func:`mean_core_share` of ``count`` independent uniformly random K-subsets, seeded."""
    rng = np.random.default_rng([seed, CORE_STREAM])
    shares = np.empty(num_draws)
    for draw in range(num_draws):
        indices = np.argpartition(rng.random((count, num_subsets)), k - 1, axis=1)[:, :k]
        shares[draw] = mean_core_share(indices, num_subsets)
    return shares


def core_test(observed: float, null: np.ndarray) -> dict[str, Any]:
    """The observed mean share against the random sets' shares: one-sided Monte Carlo p with its floor."""
    exceed = int((null >= observed - TIE_TOLERANCE).sum())
    return {
        "observed": observed,
        "null": {
            "mean": float(null.mean()),
            "q975": float(np.quantile(null, 0.975)),
            "max": float(null.max()),
        },
        "p_value": (1 + exceed) / (1 + len(null)),
        "p_value_floor": 1 / (1 + len(null)),
        "num_draws": len(null),
        "alternative": "greater",
        "null_model": "each image's subset ids permuted (a uniformly random top-K), the core recomputed per draw",
    }
