"""The old import path ``experiment_1.gating``: a deprecated alias of the face :mod:`experiment_1.network` (the same
module object, which names every part of the gating API a factory uses), removed in release 0.2.0. Import the gating
API from the face, ``experiment_1.network``."""

import sys
import warnings

import experiment_1.network as _module

warnings.warn(
    "experiment_1.gating is deprecated and removed in 0.2.0: import from experiment_1.network",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _module
