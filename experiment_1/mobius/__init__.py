"""The mathematics of set functions on the 2^L mask axis (torch only, no project imports): the mask convention and
the Möbius butterfly.

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
]
