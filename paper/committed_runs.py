"""The committed runs: which results files the tables and the paper may read.

Results folders sit beside each other (``experiment_N/results_*``), so a glob over them also finds
``make demo``'s ``experiment_1/results_demo_*``, a user's scratch ``--output-dir`` and a new ``make bench``
JSON, and would write those into the committed tables.md, README and paper. ``paper/committed_runs.txt``
lists the committed runs instead (one results folder or single results file per line); every reader in
``paper/`` globs through :func:`committed_glob`, which keeps only the paths that list covers.

A root without the list (a tree a test generates) has no committed runs to tell apart: everything in it counts.
"""
from __future__ import annotations

from pathlib import Path

MANIFEST = Path("paper") / "committed_runs.txt"


def committed_runs(root: Path) -> frozenset[str] | None:
    """The manifest's entries (paths relative to ``root``), or ``None`` where ``root`` has no manifest."""
    manifest = root / MANIFEST
    if not manifest.exists():
        return None
    lines = (line.split("#", 1)[0].strip() for line in manifest.read_text().splitlines())
    return frozenset(line.rstrip("/") for line in lines if line)


def is_committed(path: Path, root: Path, runs: frozenset[str] | None) -> bool:
    """Whether ``path`` (under ``root``) is a listed results file or lies in a listed results folder."""
    if runs is None:
        return True
    relative = path.relative_to(root).as_posix().split("/")
    return any("/".join(relative[:end]) in runs for end in range(1, len(relative) + 1))


def committed_glob(root: Path, pattern: str) -> list[Path]:
    """``sorted(root.glob(pattern))`` restricted to the committed runs."""
    runs = committed_runs(root)
    return [path for path in sorted(root.glob(pattern)) if is_committed(path, root, runs)]
