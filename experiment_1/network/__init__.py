"""The gated residual network and how it is evaluated: the gating API a factory uses, the registry of built-in
architectures, weights, and the engines (naive and prefix tree) that evaluate every mask.

This face is the package's contract: experiments, paper/ and users' factories import these names from
``experiment_1.network``, never from its modules (tests/whole/test_layers.py). Each name is imported on first use, so
importing one light name does not import the heavy modules beside it. The package's own modules import each other
by module path, never through this face.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> the module of this package that defines it
_EXPORTS: dict[str, str] = {
    "DEFAULT_BETA": "gating",
    "evaluate_all_masks": "engines",
    "evaluate_mask_family": "engines",
    "family_gmac": "engines",
    "work_ratio": "engines",
    "held_off_view": "held_off",
    "host_reachable": "gating",
    "MaskFamily": "mask_family",
    "native_input_size": "registry",
    "Residual": "gating",
    "ResidualNetwork": "gating",
    "ARCHITECTURES": "registry",
    "build_gated_stack": "registry",
    "register_architecture": "registry",
    "Preprocess": "gating",
    "ResidualStack": "gating",
    "torchvision_resnet": "registry",
    "Weights": "gating",
    "load_weights_into": "gating",
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
