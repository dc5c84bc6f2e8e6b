"""Synthetic set functions with a known spectrum at any ``L``: where step 15 stresses the estimators at the depths and
budgets step 8 uses them (L = 33 and 50), which no exhaustive table reaches.

Mask convention of :mod:`experiment_1.mobius` (bit ``l`` of a mask id is the gate of block ``l``). Each of the ``C``
outputs is the real part of a sum of products over the blocks,

    ``h_c(T) = Re Σ_r b_{c,r} Π_{l ∈ T} (1 + a_{c,r,l})``,

each block on multiplying a component by ``1 + a``, as a residual block scales its input (rates and scales may be
complex: a unit-modulus ``1 + a`` turns a phase, and the function stays bounded). Every Möbius coefficient and every
Walsh coefficient is then non-zero (dense, as the networks' are), and both spectra are exact at any ``L``: writing
``h_c = Σ_r B_r Π_l (1 + A_{r,l} x_l)`` over the components and their conjugates (``B = b/2``), ``Δ_S = Σ_r B_r Π_{l∈S}
A_{r,l}`` (base ∅) and ``f̂(U) = Σ_r B_r Π_{l∉U} (1 + A_{r,l}/2) Π_{l∈U} (−A_{r,l}/2)``, so

- ``E_j = Σ_{r,s} B_r B_s e_j(A_r A_s)`` (``e_j`` the elementary symmetric polynomial over the blocks), and
- ``W_k = Σ_{r,s} B_r B_s [t^k] Π_l ((1 + A_{r,l}/2)(1 + A_{s,l}/2) + A_{r,l} A_{s,l} t / 4)``.

The families (:data:`FAMILIES`, :func:`synthetic_function`), fixed here before any run, each ``C`` outputs (the
vector projection; the scalar one is the first, :meth:`SyntheticFunction.column`):

- ``low_degree``: 4 real components, ``a ~ N(0, 0.3²)``: Walsh weight mostly in degrees 1–3, as the networks';
- ``spread``: 2 components with ``1 + a = e^{iθ}``, ``θ ~ N(0, 0.8²)``, bounded by ``|b|``: Walsh weight spread over
  degrees around ``L·E tan²(θ/2)`` (about 8 at L = 50), the low-degree share near 0;
- ``heavy_tailed``: 4 real components, ``a = 0.3·t_{1.5}`` (Student t, infinite variance): a few blocks with huge
  rates hold most of each order's energy, so the coefficient energies are heavy-tailed across sets and draws;
- ``exploding``: one real component, ``a ~ N(0.5, 0.15²)``, ``b = 1000``: ``h(full) / h(∅)`` about ``1.5^L``
  (``10^9`` at L = 50), ``Var h`` dominated by the masks with most blocks on — as a random-init ResNet's logits with
  its batch norm at initial statistics.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from math import comb

import numpy as np

from experiment_2.past_exhaustive.sampling.walsh import RHOS, walsh_statistics

__all__ = ["FAMILIES", "SyntheticFunction", "synthetic_function"]

FAMILIES = ("low_degree", "spread", "heavy_tailed", "exploding")
LOW_DEGREE_COMPONENTS, LOW_DEGREE_RATE_SD = 4, 0.3
SPREAD_COMPONENTS, SPREAD_PHASE_SD = 2, 0.8
HEAVY_COMPONENTS, HEAVY_RATE_SCALE, HEAVY_TAIL = 4, 0.3, 1.5
EXPLODING_RATE, EXPLODING_RATE_SD, EXPLODING_SCALE = 0.5, 0.15, 1000.0


def _polynomials(constants: np.ndarray, roots: np.ndarray, top: int) -> np.ndarray:
    """Coefficients ``0 … top`` of ``Π_l (constants[p, l] + roots[p, l] t)`` for each row ``p``: ``(P, top + 1)``."""
    result = np.zeros((len(constants), top + 1), dtype=np.complex128)
    result[:, 0] = 1.0
    for constant, root in zip(constants.T, roots.T):
        result[:, 1:] = constant[:, None] * result[:, 1:] + root[:, None] * result[:, :-1]
        result[:, 0] *= constant
    return result


@dataclass(frozen=True, eq=False)
class SyntheticFunction:
    """``h_c(T) = Re Σ_r scales[c, r] Π_{l ∈ T} (1 + rates[c, r, l])`` (module docstring): ``rates`` (C, R, L) and
    ``scales`` (C, R), complex. A :class:`~experiment_2.past_exhaustive.validation.replications.SetFunction`."""

    family: str
    rates: np.ndarray
    scales: np.ndarray

    @property
    def num_blocks(self) -> int:
        return self.rates.shape[2]

    def column(self, number: int) -> SyntheticFunction:
        """The function of output ``number`` alone (the scalar projection)."""
        return SyntheticFunction(self.family, self.rates[[number]], self.scales[[number]])

    def values(self, ids: np.ndarray) -> np.ndarray:
        """``h`` at the int64 mask ids ``ids`` (any shape): ``ids.shape + (C,)``, float64."""
        flat = np.asarray(ids, dtype=np.int64).ravel()
        bits = ((flat[:, None] >> np.arange(self.num_blocks, dtype=np.int64)) & 1).astype(np.float64)
        logs = np.log(1 + self.rates.astype(np.complex128))  # (C, R, L): Π (1 + a x) = exp Σ x log(1 + a)
        out = np.einsum("cr,ncr->nc", self.scales, np.exp(np.einsum("nl,crl->ncr", bits, logs))).real
        return out.reshape(*np.shape(ids), -1)

    def _pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per output, every pair ``(r, s)`` of the components and their conjugates: ``B_r B_s`` (P,) and the rates
        ``A_r``, ``A_s`` (P, L), over all outputs (the energies sum over them)."""
        weights, first, second = [], [], []
        for rates, scales in zip(self.rates.astype(np.complex128), self.scales.astype(np.complex128)):
            rates = np.concatenate([rates, rates.conj()])
            scales = np.concatenate([scales, scales.conj()]) / 2
            left, right = np.meshgrid(np.arange(len(scales)), np.arange(len(scales)), indexing="ij")
            weights.append((scales[left] * scales[right]).ravel())
            first.append(rates[left.ravel()])
            second.append(rates[right.ravel()])
        return np.concatenate(weights), np.concatenate(first), np.concatenate(second)

    def order_energies(self, max_order: int) -> np.ndarray:
        """The Möbius energies ``E_k = Σ_{|S|=k} ‖Δ_S‖²`` at base ∅, ``k = 0 … max_order``."""
        weights, first, second = self._pairs()
        return (weights @ _polynomials(np.ones(first.shape), first * second, max_order)).real

    def walsh_weights(self) -> np.ndarray:
        """The Walsh weights ``W_k = Σ_{|U|=k} ‖f̂(U)‖²``, ``k = 0 … L``."""
        weights, first, second = self._pairs()
        constants = (1 + first / 2) * (1 + second / 2)
        return (weights @ _polynomials(constants, first * second / 4, self.num_blocks)).real

    def exact_per_coefficient(self, max_order: int) -> np.ndarray:
        """``ē_k = E_k / C(L, k)``, ``k = 0 … max_order``."""
        counts = np.array([comb(self.num_blocks, k) for k in range(max_order + 1)], dtype=np.float64)
        return self.order_energies(max_order) / counts

    def walsh_exact(self) -> dict[str, float]:
        """The exact Walsh summaries (:func:`~experiment_2.past_exhaustive.sampling.walsh.walsh_statistics`)."""
        return walsh_statistics(self.walsh_weights(), RHOS)

    def digest(self) -> str:
        """The content key: the family and the numbers."""
        digest = hashlib.sha256(self.family.encode())
        for array in (self.rates, self.scales):
            digest.update(np.ascontiguousarray(array, dtype=np.complex128).tobytes())
            digest.update(str(array.shape).encode())
        return digest.hexdigest()

    def describe(self) -> dict:
        """What the summary records of the function: family, size and its exact spectrum's main numbers."""
        exact = self.walsh_exact()
        ebar = self.exact_per_coefficient(3)
        gap = self.values(np.array([0, (1 << self.num_blocks) - 1]))
        return {
            "family": self.family,
            "num_blocks": self.num_blocks,
            "outputs": int(self.rates.shape[0]),
            "components": int(self.rates.shape[1]),
            "variance": exact["variance"],
            "kappa_w": exact["kappa_w"],
            "low_degree_share": exact["low_degree_share"],
            "per_coefficient_energy_1_3": ebar[1:].tolist(),
            "corner_gap": float(np.square(gap[1] - gap[0]).sum()),
        }


def synthetic_function(family: str, num_blocks: int, columns: int, seed: int) -> SyntheticFunction:
    """The function of ``family`` (:data:`FAMILIES`) on ``num_blocks`` blocks with ``columns`` outputs, drawn by
    ``np.random.default_rng(seed)`` (module docstring)."""
    rng = np.random.default_rng(seed)
    if family == "low_degree":
        shape = (columns, LOW_DEGREE_COMPONENTS)
        rates, scales = rng.normal(0.0, LOW_DEGREE_RATE_SD, (*shape, num_blocks)), rng.normal(size=shape)
    elif family == "spread":
        shape = (columns, SPREAD_COMPONENTS)
        rates = np.exp(1j * rng.normal(0.0, SPREAD_PHASE_SD, (*shape, num_blocks))) - 1
        scales = rng.normal(size=shape) + 1j * rng.normal(size=shape)
    elif family == "heavy_tailed":
        shape = (columns, HEAVY_COMPONENTS)
        rates = HEAVY_RATE_SCALE * rng.standard_t(HEAVY_TAIL, (*shape, num_blocks))
        scales = rng.normal(size=shape)
    elif family == "exploding":
        rates = rng.normal(EXPLODING_RATE, EXPLODING_RATE_SD, (columns, 1, num_blocks))
        scales = np.full((columns, 1), EXPLODING_SCALE)
    else:
        raise ValueError(f"no synthetic family {family!r}; the families are {FAMILIES}")
    return SyntheticFunction(family, rates, scales)
