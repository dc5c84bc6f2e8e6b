"""Where the repository is: the root every default path (data, checkpoints, results) is relative to.

Paths given on the command line are read as given — a relative one from the folder you run in. Where such a path
is missing there but exists under this checkout (a command copied from the README and run from another folder),
the one-line error names the checkout's file (:func:`checkout_hint`) instead of advising to create it; where a
path a flag names is misspelled, the file or folder it resembles (:func:`missing_path`)."""

from __future__ import annotations

import difflib
import shlex
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def found_in_checkout(path: Path | str) -> Path | None:
    """``REPO_ROOT / path`` when ``path`` is relative, missing from the working folder and present in the checkout."""
    path = Path(path)
    if path.is_absolute() or path.exists():
        return None
    candidate = REPO_ROOT / path
    return candidate if candidate.exists() else None


def checkout_hint(path: Path | str) -> str | None:
    """The fix for a relative ``path`` missing here but present in the checkout (None where it is not):
    relative paths are read from the working folder, so pass the checkout's path."""
    found = found_in_checkout(path)
    if found is None:
        return None
    return f"not in the working folder {Path.cwd()}, but found at {found} in the checkout (relative paths are read from the folder you run in); pass that path"


DOWNLOAD_HINT = (
    "download the shards with `bash experiment_1/step_1.sh`, or point --data-dir / MOE_DATA at a folder of shards"
)


def look_alike(path: Path | str, folder: bool) -> Path | None:
    """The existing folder (``folder``) or file whose name is closest to ``path``'s — beside it, or inside the
    look-alike of its own folder where that folder is misspelled too — or None where nothing is close."""
    path = Path(path)
    parent = path.parent
    if parent != path and not parent.is_dir():
        parent = look_alike(parent, folder=True)
        if parent is None:
            return None
    try:
        names = [entry.name for entry in parent.iterdir() if entry.is_dir() == folder]
    except OSError:
        return None
    close = difflib.get_close_matches(path.name, names, n=1, cutoff=0.8)
    return parent / close[0] if close else None


def missing_path(path: Path | str, folder: bool, what: str, fix: str, given: bool = False) -> str | None:
    """The one line for an input that is not there — None where ``path`` is a folder (``folder``) or a file, as
    asked. In order: the checkout's copy of a relative path missing here (:func:`checkout_hint`); a file given
    for a folder or the reverse; for a path the user gave (``given``), the folder relative paths are read from and a
    look-alike (:func:`look_alike`: a typo is not a missing file), else ``fix``."""
    path = Path(path)
    if path.is_dir() if folder else path.is_file():
        return None
    hint = checkout_hint(path)
    if hint:
        return f"{path}: {what} {hint}"
    kind, other = ("folder", "file") if folder else ("file", "folder")
    if path.exists():
        return f"{path}: {what} is a {other}, not a {kind}; pass " + (
            f"its folder, {path.parent}" if folder else "the file inside it"
        )
    if not given:
        return f"{path}: {what} not found; {fix}"
    where = "" if path.is_absolute() else f" (relative paths are read from the folder you run in, {Path.cwd()})"
    alike = look_alike(path, folder)
    return f"{path}: {what} not found{where}; " + (f"did you mean {alike}?" if alike is not None else fix)


def create_sample_list(path: Path | str, data_dir: Path | str | None = None) -> str:
    """How to create the sample list ``path`` from the shards in ``data_dir`` (default: step_2_sample's own), as a
    command that runs as written."""
    data = "" if data_dir is None else f" --data-dir {shlex.quote(str(data_dir))}"
    return f"create it with `python -m experiment_1.step_2_sample{data} --output {shlex.quote(str(path))}`"
