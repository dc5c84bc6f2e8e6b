"""The old import path ``experiment_1.gating``: a deprecated alias of :mod:`experiment_1.network.gating` (the same module
object), removed in release 0.2.0. Import the gating API from the face, ``experiment_1.network``."""

import sys
import warnings

from experiment_1.network import gating as _module

warnings.warn(
    "experiment_1.gating is deprecated and removed in 0.2.0: import from experiment_1.network",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _module
