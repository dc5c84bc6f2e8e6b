"""The degree-2 U-statistic ``U = Σ_{a≠b} φ(a, b) / (m(m − 1))`` of a symmetric kernel over ``m`` independent units,
from the kernel's row sums: its unbiased variance estimate, that estimate's linear and degenerate parts, and the exact
value of each with one unit left out (the jackknife the Walsh pair intervals resample).

A kernel enters through three sums over the ordered pairs ``a ≠ b``: ``total = Σ φ``, ``squares = Σ φ²`` and
``row_squares = Σ_a R_a²`` with ``R_a = Σ_{b≠a} φ(a, b)``. From them, with ``(m)_j = m(m − 1)…(m − j + 1)``:

- ``Q₄ = (total² + 2·squares − 4·row_squares) / (m)_4``, the mean of ``φ(a, b) φ(c, d)`` over distinct ``a, b, c, d``
  (unbiased for ``θ² = (E U)²``);
- ``ζ̂₁ = (row_squares − squares) / (m)_3 − Q₄``, the mean of ``φ(a, b) φ(a, c)`` over distinct ``a, b, c`` less
  ``Q₄`` (unbiased for ``ζ₁ = Var E[φ(a, b) | a]``), and ``ζ̂₂ = squares / (m)_2 − Q₄`` (unbiased for ``Var φ``);
- ``Var U = 4 ζ₁ / m + 2 (ζ₂ − 2 ζ₁) / (m(m − 1))``: the linear part (the units' own noise) and the degenerate part
  (the single pairs' noise beyond it); their estimates sum to ``U² − Q₄``, the unbiased variance estimate.

Leaving unit ``a`` out of ``m`` gives the sums of the other ``m − 1``: ``total − 2 R_a``, ``squares − 2 r_a`` and
``row_squares − R_a² − 2 (φR)_a + r_a``, with ``r_a = Σ_{b≠a} φ(a, b)²`` and ``(φR)_a = Σ_{b≠a} φ(a, b) R_b``; every
function here takes arrays of sums, so the same call gives the whole sample's values and the ``m`` left-out ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["KernelSums", "kernel_sums", "leave_one_out", "variance_parts"]


@dataclass(frozen=True)
class KernelSums:
    """The sums of the module docstring for ``count`` units (scalars, or arrays of one value per left-out unit)."""

    count: int
    total: np.ndarray
    squares: np.ndarray
    row_squares: np.ndarray

    def statistic(self) -> np.ndarray:
        """``U = total / (m(m − 1))``."""
        return self.total / (self.count * (self.count - 1))

    def variance(self) -> np.ndarray:
        """The unbiased variance estimate ``U² − Q₄`` (may be negative)."""
        linear, degenerate = variance_parts(self)
        return linear + degenerate


def _falling(count: int, length: int) -> int:
    """``count (count − 1) … (count − length + 1)``."""
    return int(np.prod([count - j for j in range(length)]))


def kernel_sums(rows: np.ndarray, row_seconds: np.ndarray) -> KernelSums:
    """The sums of a kernel from its ``(m,)`` row sums ``R_a`` and row sums of squares ``r_a``."""
    return KernelSums(len(rows), rows.sum(), row_seconds.sum(), np.square(rows).sum())


def variance_parts(sums: KernelSums) -> tuple[np.ndarray, np.ndarray]:
    """The estimates ``4 ζ̂₁ / m`` and ``2 (ζ̂₂ − 2 ζ̂₁) / (m(m − 1))`` of the linear and degenerate parts of
    ``Var U`` (module docstring; each unbiased, either may be negative). Needs ``m ≥ 4``."""
    count = sums.count
    fourth = (sums.total**2 + 2 * sums.squares - 4 * sums.row_squares) / _falling(count, 4)
    first = (sums.row_squares - sums.squares) / _falling(count, 3) - fourth
    second = sums.squares / _falling(count, 2) - fourth
    return 4 * first / count, 2 * (second - 2 * first) / _falling(count, 2)


def leave_one_out(sums: KernelSums, rows: np.ndarray, row_seconds: np.ndarray, row_products: np.ndarray) -> KernelSums:
    """The sums of the ``m − 1`` units left when each unit ``a`` is left out, as ``(m,)`` arrays: from the whole
    sample's ``sums``, ``R_a`` (``rows``), ``r_a`` (``row_seconds``) and ``(φR)_a`` (``row_products``)."""
    return KernelSums(
        sums.count - 1,
        sums.total - 2 * rows,
        sums.squares - 2 * row_seconds,
        sums.row_squares - np.square(rows) - 2 * row_products + row_seconds,
    )
