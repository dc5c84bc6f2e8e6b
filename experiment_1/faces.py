"""The lazy package face, one helper for the core's five (``experiment_1.mobius``, ``.network``, ``.data``, ``.run``,
``.report``).

A face is its package's contract: experiments, paper/ and users' factories import these names from the package,
never from its modules (tests/whole/test_layers.py). Each name is imported from its module on first use (and kept on
the package), so importing one light name does not import the heavy modules beside it. The package's own modules
import each other by module path, never through the face. This module imports nothing of the project, so every layer
may use it.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable


def lazy_face(
    package: str, exports: dict[str, str], submodules: tuple[str, ...] = ()
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` of the face ``package``: ``exports`` maps each name to the module of
    the package that defines it, ``submodules`` are the package's modules callers import whole."""
    names = sorted([*exports, *submodules])

    def __getattr__(name: str) -> Any:
        """The exported ``name``, imported from its module on first use (and kept on the package)."""
        if name in exports:
            value = getattr(importlib.import_module(f"{package}.{exports[name]}"), name)
        elif name in submodules:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return names

    return names, __getattr__, __dir__
