"""The images: shards and image folders read by sample list, sample lists, ImageNet classes, the download.

Its names load lazily, on first use (:mod:`experiment_1.faces`); import them from this face, never from its
modules (tests/whole/test_layers.py).
"""

from __future__ import annotations

from experiment_1.faces import lazy_face

# name -> the module of this package that defines it
_EXPORTS: dict[str, str] = {
    "list_items": "shards",
}
_SUBMODULES: tuple[str, ...] = ()

__all__, __getattr__, __dir__ = lazy_face(__name__, _EXPORTS, _SUBMODULES)
