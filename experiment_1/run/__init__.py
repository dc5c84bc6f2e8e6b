"""The shared evaluation loop: flags and the steps' command line, the set-up of a run, the per-batch loop, provenance and the writers, the
single-pass ExperimentPass, torchrun sharding.

Its names load lazily, on first use (:mod:`experiment_1.faces`); import them from this face, never from its
modules (tests/whole/test_layers.py).
"""

from __future__ import annotations

from experiment_1.faces import lazy_face

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

__all__, __getattr__, __dir__ = lazy_face(__name__, _EXPORTS, _SUBMODULES)
