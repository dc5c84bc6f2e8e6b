"""The set-function mathematics on the 2^L mask axis (torch only; its modules import nothing of the project): the
mask convention and the butterfly, the Möbius–Walsh change of basis, order spectra, top-K rankings, the blocks'
Shapley-family indices.

Its names load lazily, on first use (:mod:`experiment_1.faces`); import them from this face, never from its
modules (tests/whole/test_layers.py).
"""

from __future__ import annotations

from experiment_1.faces import lazy_face

# name -> the module of this package that defines it
_EXPORTS: dict[str, str] = {
    "RANKINGS": "sparsity",
    "captured_fraction": "sparsity",
    "cumulative_reconstruction": "sparsity",
    "participation_ratio": "sparsity",
    "power_of_two_ks": "sparsity",
    "rank_subsets": "sparsity",
    "smallest_k_reaching_mass": "sparsity",
    "subset_magnitudes": "sparsity",
    "PROJECTIONS": "spectrum",
    "binomial_null": "spectrum",
    "order_energies": "spectrum",
    "scalar_projection": "spectrum",
    "spectrum_statistics": "spectrum",
    "unit_in_last_place": "spectrum",
    "family_mobius": "family",
    "family_order_sums": "family",
    "mobius_from_walsh": "basis_change",
    "walsh_from_mobius": "basis_change",
    "banzhaf_values": "shapley",
    "from_interaction_values": "shapley",
    "interaction_indices": "shapley",
    "shapley_values": "shapley",
    "to_interaction_values": "shapley",
    "full_mask_index": "transform",
    "mobius_transform": "transform",
    "num_blocks_from_size": "transform",
    "subset_orders": "transform",
    "walsh_transform": "transform",
}
_SUBMODULES: tuple[str, ...] = ()

__all__, __getattr__, __dir__ = lazy_face(__name__, _EXPORTS, _SUBMODULES)
