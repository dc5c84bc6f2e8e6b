"""A mask family: the masks within ``k`` gates of one corner of the cube (the all-off network or the full network).

The engine walks a family with :func:`experiment_1.network.engines.evaluate_family_tree`; the Möbius transform on
it is :func:`experiment_1.mobius.family.family_mobius`, which says what the coefficients mean at either base.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import comb

import torch

BASES = ("off", "on")


@dataclass(frozen=True)
class MaskFamily:
    """The masks within ``order`` gates of the ``base`` corner (``off``: the all-off network, ``on``: the full network)."""

    order: int
    base: str = "off"

    def __post_init__(self) -> None:
        if self.base not in BASES:
            raise ValueError(f"unknown family base '{self.base}'; choose one of {', '.join(BASES)}")
        if self.order < 0:
            raise ValueError(f"a family's order must be ≥ 0; got {self.order}")

    def size(self, num_blocks: int) -> int:
        """``Σ_{j ≤ k} C(L, j)``, the number of masks."""
        return sum(comb(num_blocks, j) for j in range(min(self.order, num_blocks) + 1))

    def deviation_sets(self, num_blocks: int) -> torch.Tensor:
        """The ids of the sets of gates that differ from the base (``|A| ≤ k``), ascending, int64."""
        ids = [
            sum(1 << bit for bit in chosen)
            for size in range(min(self.order, num_blocks) + 1)
            for chosen in combinations(range(num_blocks), size)
        ]
        return torch.tensor(sorted(ids), dtype=torch.long)

    def mask_ids(self, num_blocks: int) -> torch.Tensor:
        """The family's mask ids (bit ``l`` = gate of block ``l`` on), ascending, int64."""
        sets = self.deviation_sets(num_blocks)
        if self.base == "off":
            return sets
        return torch.sort(((1 << num_blocks) - 1) ^ sets).values

    def descriptor(self) -> dict[str, object]:
        """The compact description a resume key and a summary record."""
        return {"order_max": self.order, "base": self.base}

    def describe(self) -> str:
        corner = "the all-off network" if self.base == "off" else "the full network"
        return f"masks within {self.order} gate(s) of {corner}"
