"""Where the repository is: the root every default path (data, checkpoints, results) is relative to.

Paths given on the command line are read as given — a relative one from the folder you run in. Where such a path
is missing there but exists under this checkout (a command copied from the README and run from another folder),
the one-line error names the checkout's file (:func:`checkout_hint`) instead of advising to create it."""

from __future__ import annotations

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
