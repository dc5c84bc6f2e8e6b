"""The documented import path ``experiment_1.architectures``: an alias of :mod:`experiment_1.network.registry` (the same module object)."""
import sys

from experiment_1.network import registry as _module

sys.modules[__name__] = _module
