"""The gated residual network and how it is evaluated: the gating API a factory uses, the registry of built-in
architectures, weights, and the engines (naive and prefix tree) that evaluate every mask.

Its names load lazily, on first use (:mod:`experiment_1.faces`); import them from this face, never from its
modules (tests/whole/test_layers.py).
"""

from __future__ import annotations

from experiment_1.faces import lazy_face

# name -> the module of this package that defines it
_EXPORTS: dict[str, str] = {
    "DEFAULT_BETA": "choices",
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
    "Weights": "choices",
    "parse_weights": "choices",
    "load_weights_into": "gating",
}
_SUBMODULES: tuple[str, ...] = ()

__all__, __getattr__, __dir__ = lazy_face(__name__, _EXPORTS, _SUBMODULES)
