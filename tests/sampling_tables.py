"""Tables for the tests of :mod:`experiment_2.past_exhaustive.sampling`: a small residual game (a network's mask table in miniature:
dense, with a large mean and most of its Walsh weight at low degree, like the measured networks) and the Möbius and
Walsh coefficients by their definitions (no butterfly)."""

from __future__ import annotations

import numpy as np


def residual_game_table(num_blocks: int, num_classes: int, seed: int, width: int = 8) -> np.ndarray:
    """``(2^L, C)``: ``h(T) = V x_L``, ``x_{l+1} = x_l + m_l · relu(W_l x_l)`` with random ``W_l``, ``V``, ``x_0``."""
    rng = np.random.default_rng(seed)
    weights = rng.normal(size=(num_blocks, width, width)) * 1.5 / np.sqrt(width)
    readout = rng.normal(size=(num_classes, width))
    masks = np.arange(2**num_blocks)
    state = np.tile(rng.normal(size=width), (len(masks), 1))
    for block in range(num_blocks):
        state = state + ((masks >> block) & 1)[:, None] * np.maximum(state @ weights[block].T, 0)
    return state @ readout.T


def subset_of(inner: int, outer: int) -> bool:
    return inner & ~outer == 0


def popcount(mask: int) -> int:
    return bin(mask).count("1")


def mobius_by_definition(table: np.ndarray) -> np.ndarray:
    """``Δ_S = Σ_{T⊆S} (−1)^{|S−T|} h(T)`` for every ``S``, by the double loop."""
    size = len(table)
    signs = np.array(
        [[(-1.0) ** popcount(s ^ t) if subset_of(t, s) else 0.0 for t in range(size)] for s in range(size)]
    )
    return signs @ table


def walsh_by_definition(table: np.ndarray) -> np.ndarray:
    """``f̂(S) = 2^{−L} Σ_T (−1)^{|S∩T|} h(T)`` for every ``S``, by the double loop."""
    size = len(table)
    signs = np.array([[(-1.0) ** popcount(s & t) for t in range(size)] for s in range(size)])
    return signs @ table / size
