"""The shared evaluation loop: flags and the steps' command line, the set-up of a run, the per-batch loop, provenance and the writers, the
single-pass ExperimentPass, torchrun sharding.

This face is the package's contract: experiments, paper/ and users' factories import these names from
``experiment_1.run``, never from its modules (tests/whole/test_layers.py). Each name is imported on first use, so
importing one light name does not import the heavy modules beside it. The package's own modules import each other
by module path, never through this face.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> the module of this package that defines it
_EXPORTS: dict[str, str] = {
    "UNSCALED": "run_config",
    "ExperimentPass": "loop",
    "run_passes": "loop",
    "BatchFunction": "loop",
    "DTYPES": "setup",
    "EvaluationSetup": "setup",
    "MOBIUS_DTYPES": "setup",
    "build_setup": "setup",
    "image_counts": "loop",
    "provenance": "setup",
    "run_per_image": "loop",
    "valid_images": "loop",
    "write_results": "loop",
    "write_timing": "loop",
    "RunConfig": "run_config",
    "Command": "run_config",
    "flag": "run_config",
    "check_lambdas": "preflight",
    "measured_rate": "preflight",
    "unique_passes": "distributed",
}
# modules of this package that callers import whole (``from experiment_1.run import run_config``)
_SUBMODULES = ('run_config', 'distributed')

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
