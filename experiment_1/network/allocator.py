"""The CPU allocator setting every evaluation starts with: glibc's malloc keeps large buffers.

Every evaluation step applies it at start-up (``run.setup.build_setup``), and every engine of
:mod:`experiment_1.network.engines` on its first call, so the library path (``evaluate_all_masks``
without a step script) gets it too.

An all-mask pass allocates and frees activation tensors of tens to hundreds of MB per block and
batch. glibc's malloc serves every request above its mmap threshold (dynamic, 128 KiB rising to at
most 32 MiB) with a fresh ``mmap`` and returns it with ``munmap`` on free, so each batch pays the
page faults of touching that memory again: over half the CPU time of an EfficientNet pass, measured
(``python -m experiment_1.tools.bench allocator``). :func:`tune_allocator` raises the mmap threshold and
the trim threshold with ``mallopt`` to the largest value its ``int`` argument takes (2 GiB − 1), so
buffers up to 2 GiB are carved from the heap and freed memory stays there for the next batch — the
same effect as ``GLIBC_TUNABLES=glibc.malloc.mmap_threshold=4294967296:glibc.malloc.trim_threshold=17179869184``.
No arithmetic changes; the cost is that the process keeps its peak heap until it exits.

It changes nothing where the user already chose: ``GLIBC_TUNABLES`` naming a ``glibc.malloc.``
setting, a preloaded allocator (tcmalloc, jemalloc, mimalloc — one whose library is mapped into the process, read
from ``/proc/self/maps``: an ``LD_PRELOAD`` of a missing library loads nothing), or ``MOE_MALLOC_TUNING=off``;
and nothing off glibc (macOS, musl, Windows). What it did is returned for the run's provenance.
No torch import: the setting must not depend on anything but the C library.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any

SWITCH = "MOE_MALLOC_TUNING"
M_TRIM_THRESHOLD = -1  # glibc's malloc.h
M_MMAP_THRESHOLD = -3
THRESHOLD_BYTES = 2**31 - 1  # mallopt takes an int: the largest value it can be given
PRELOADED_ALLOCATORS = ("tcmalloc", "jemalloc", "mimalloc")

_applied: dict[str, Any] | None = None
MAPS = "/proc/self/maps"


def loaded_allocators(maps: str = MAPS) -> list[str]:
    """The preloadable allocators whose shared library is mapped into this process (read from ``maps``), in
    :data:`PRELOADED_ALLOCATORS` order: what was loaded, not what ``LD_PRELOAD`` asked for (a missing library is
    skipped by the loader with a warning, and the process then runs on glibc's malloc)."""
    try:
        with open(maps, encoding="utf-8", errors="replace") as handle:
            libraries = {os.path.basename(line.split()[-1]) for line in handle if "/" in line and ".so" in line}
    except OSError:
        return []
    return [name for name in PRELOADED_ALLOCATORS if any(library.startswith(f"lib{name}") for library in libraries)]


def _glibc() -> tuple[ctypes.CDLL, str] | None:
    """The process's C library and its version if it is glibc (it has ``gnu_get_libc_version``), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        version = libc.gnu_get_libc_version
    except (OSError, AttributeError):
        return None
    version.restype = ctypes.c_char_p
    return libc, version().decode()


def allocator_record() -> dict[str, Any] | None:
    """What :func:`tune_allocator` did in this process, or ``None`` while it has not run."""
    return _applied


def tune_allocator() -> dict[str, Any]:
    """Apply the setting once per process (later calls return the first call's record).

    Returns ``{"allocator": …, "tuning": …}`` plus, when it acted, ``mmap_threshold`` and
    ``trim_threshold`` in bytes; ``tuning`` says what was done or why nothing was.
    """
    global _applied
    if _applied is not None:
        return _applied
    found = _glibc()
    preloaded = loaded_allocators()
    tunables = [part for part in os.environ.get("GLIBC_TUNABLES", "").split(":") if part.startswith("glibc.malloc.")]
    if preloaded:
        _applied = {
            "allocator": f"{preloaded[0]} (loaded: {MAPS})",
            "tuning": "none (the preloaded allocator is the user's choice)",
        }
    elif found is None:
        _applied = {"allocator": f"not glibc ({sys.platform})", "tuning": "none (mallopt is glibc's)"}
    elif os.environ.get(SWITCH, "").lower() in ("0", "off", "no", "false"):
        _applied = {"allocator": f"glibc {found[1]}", "tuning": f"none ({SWITCH}={os.environ[SWITCH]})"}
    elif tunables:
        _applied = {
            "allocator": f"glibc {found[1]}",
            "tuning": f"none (the user's GLIBC_TUNABLES: {':'.join(tunables)})",
        }
    else:
        libc, _ = found
        accepted = [libc.mallopt(option, THRESHOLD_BYTES) == 1 for option in (M_MMAP_THRESHOLD, M_TRIM_THRESHOLD)]
        _applied = {
            "allocator": f"glibc {found[1]}",
            "tuning": "mallopt"
            if all(accepted)
            else f"mallopt refused (accepted: mmap {accepted[0]}, trim {accepted[1]})",
            "mmap_threshold": THRESHOLD_BYTES if accepted[0] else None,
            "trim_threshold": THRESHOLD_BYTES if accepted[1] else None,
        }
    return _applied
