"""The committed runs: which results files the tables and the paper may read.

Results folders sit beside each other (``experiment_N/results_*``), so a glob over them also finds
``make demo``'s ``experiment_1/results_demo_*``, a user's scratch ``--output-dir`` and a new ``make bench``
JSON, and would write those into the committed tables.md, README and paper. ``paper/committed_runs.txt``
lists the committed runs instead (one results folder or single results file per line); every reader in
``paper/`` reads through :func:`committed_glob`, which keeps only the paths that list covers (a file outside every
``results*`` folder, e.g. a sample list, is no run and passes). A listed run that is missing is refused (one line):
the tables and the paper never silently lose a run (a wall-time total that changes without a word).

A root without the list is refused (one line) unless the reader was told to read every run there
(``paper.make_tables --all-runs``, :func:`allow_all_runs`), which it says in its output. Every path is resolved
(``realpath``) and must lie inside the root; a results file or folder that is a symbolic link is refused — a link
to outside the tree never enters the tables or the paper.
"""

from __future__ import annotations

import os
from pathlib import Path

from experiment_1.errors import PipelineError

MANIFEST = Path("paper") / "committed_runs.txt"


_ALL_RUNS: set[str] = set()  # roots whose every results folder counts (--all-runs), by real path


def allow_all_runs(root: Path) -> None:
    """Read every results folder under ``root`` where it has no manifest (``--all-runs``; the caller says so in its output)."""
    _ALL_RUNS.add(os.path.realpath(root))


def committed_runs(root: Path) -> frozenset[str] | None:
    """The manifest's entries (paths relative to ``root``), or ``None`` where ``root`` has no manifest and
    :func:`allow_all_runs` was called for it; a missing manifest is refused otherwise."""
    manifest = root / MANIFEST
    if not manifest.exists():
        if os.path.realpath(root) in _ALL_RUNS:
            return None
        raise PipelineError(
            f"{manifest}: not found; the tables and the paper read only the committed runs it lists — restore it "
            "(git checkout paper/committed_runs.txt), or pass --all-runs to read every results folder, which the output then says"
        )
    lines = (line.split("#", 1)[0].strip() for line in manifest.read_text().splitlines())
    runs = frozenset(line.rstrip("/") for line in lines if line)
    missing = sorted(run for run in runs if not os.path.lexists(root / run))
    if missing:
        raise PipelineError(
            f"{manifest}: lists {missing[0]}, which is not there{f' (and {len(missing) - 1} more)' if len(missing) > 1 else ''}; "
            "restore the run (git checkout), or remove its line from the manifest"
        )
    return runs


def is_committed(path: Path, root: Path, runs: frozenset[str] | None) -> bool:
    """Whether ``path`` (under ``root``) is a listed results file or lies in a listed results folder; a file in no
    ``results*`` folder (a sample list) is no run and always counts."""
    relative = path.relative_to(root).as_posix().split("/")
    if runs is None or not any(part.startswith("results") for part in relative):
        return True
    return any("/".join(relative[:end]) in runs for end in range(1, len(relative) + 1))


def check_inside(path: Path, root: Path) -> Path:
    """``path`` (under ``root``) checked to be no symbolic link, in none of its folders below ``root``, and to resolve inside ``root``."""
    base = Path(os.path.realpath(root))
    relative = Path(path).relative_to(root)
    for end in range(1, len(relative.parts) + 1):
        part = Path(root, *relative.parts[:end])
        if part.is_symlink():
            raise PipelineError(
                f"{part}: a symbolic link (to {os.readlink(part)}) in the results; a committed run is a file or folder of this tree — "
                "replace the link by the run's files, or remove it"
            )
    resolved = Path(os.path.realpath(path))
    if resolved != base and base not in resolved.parents:
        raise PipelineError(
            f"{path}: resolves to {resolved}, outside {base}; a committed run lies inside the repository"
        )
    return Path(path)


def committed_glob(root: Path, pattern: str) -> list[Path]:
    """``sorted(root.glob(pattern))`` restricted to the committed runs, each checked by :func:`check_inside`."""
    runs = committed_runs(root)
    return [check_inside(path, root) for path in sorted(root.glob(pattern)) if is_committed(path, root, runs)]


def committed_file(root: Path, relative: str | Path) -> Path | None:
    """The results file ``relative`` (under ``root``) checked by :func:`check_inside`, or ``None`` where it is absent or
    its run is not in the manifest (a run taken out of the manifest feeds nothing, as with :func:`committed_glob`)."""
    path = Path(root) / relative
    if not (path.exists() or path.is_symlink()) or not is_committed(path, Path(root), committed_runs(Path(root))):
        return None
    return check_inside(path, Path(root))
