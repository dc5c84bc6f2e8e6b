"""The set-function mathematics on the 2^L mask axis (torch only, no project imports): the mask convention and
the butterfly, order spectra, top-K rankings.

This face is the package's contract: experiments, paper/ and users' factories import these names from
``experiment_1.mobius``, never from its modules (tests/whole/test_layers.py). Each name is imported on first use, so
importing one light name does not import the heavy modules beside it. The package's own modules import each other
by module path, never through this face.
"""

from __future__ import annotations

import importlib
from typing import Any

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
    "full_mask_index": "transform",
    "mobius_transform": "transform",
    "num_blocks_from_size": "transform",
    "subset_orders": "transform",
    "walsh_transform": "transform",
}
_SUBMODULES: tuple[str, ...] = ()

__all__ = sorted([*_EXPORTS, *_SUBMODULES])


def __getattr__(name: str) -> Any:
    """The exported ``name``, imported from its module on first use (and kept on the package)."""
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
