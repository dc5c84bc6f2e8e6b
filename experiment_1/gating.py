"""The documented import path ``experiment_1.gating``: an alias of :mod:`experiment_1.network.gating` (the same module object)."""
import sys

from experiment_1.network import gating as _module

sys.modules[__name__] = _module
