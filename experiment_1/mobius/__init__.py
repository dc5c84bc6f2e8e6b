"""The mathematics of set functions on the 2^L mask axis (torch only, no project imports): the mask convention and
the Möbius butterfly (transform), order spectra (spectrum) and top-K rankings and reconstructions (sparsity).

The package's public names; its modules import each other by module path, never through this face.
"""
from experiment_1.mobius.transform import (
    num_blocks_from_size,
    all_masks,
    subset_orders,
    full_mask_index,
    empty_mask_index,
    singleton_mask_indices,
    mobius_transform,
    inverse_mobius_transform,
    inverse_mobius_transform_,
)

from experiment_1.mobius.spectrum import (
    PROJECTIONS,
    LOW_ORDER_MAX,
    scalar_projection,
    order_energies,
    interaction_spectrum,
    trunk_share,
    peak_order,
    mean_order,
    low_order_mass,
    spectrum_statistics,
    binomial_null,
    order_layout,
    unit_in_last_place,
)
from experiment_1.mobius.sparsity import (
    RANKINGS,
    DEFAULT_CHUNK,
    power_of_two_ks,
    subset_magnitudes,
    rank_subsets,
    participation_ratio,
    captured_fraction,
    smallest_k_reaching_mass,
    cumulative_reconstruction,
    row_cumsum,
)

__all__ = [
    'num_blocks_from_size',
    'all_masks',
    'subset_orders',
    'full_mask_index',
    'empty_mask_index',
    'singleton_mask_indices',
    'mobius_transform',
    'inverse_mobius_transform',
    'inverse_mobius_transform_',
    'PROJECTIONS',
    'LOW_ORDER_MAX',
    'scalar_projection',
    'order_energies',
    'interaction_spectrum',
    'trunk_share',
    'peak_order',
    'mean_order',
    'low_order_mass',
    'spectrum_statistics',
    'binomial_null',
    'order_layout',
    'unit_in_last_place',
    'RANKINGS',
    'DEFAULT_CHUNK',
    'power_of_two_ks',
    'subset_magnitudes',
    'rank_subsets',
    'participation_ratio',
    'captured_fraction',
    'smallest_k_reaching_mass',
    'cumulative_reconstruction',
    'row_cumsum',
]
