"""Atomic writes, JSON and summary reading, provenance (versions, git commit) and seeding shared by every step.

Every read or write failure is a :class:`PipelineError` naming the file and the cause.
"""
from __future__ import annotations

import errno
import json
import os
import platform
import random
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import torch

from experiment_1.errors import PipelineError
from experiment_1.paths import REPO_ROOT

_WRITE_HINTS = {
    errno.ENOSPC: "the disk is full; free some space and rerun (finished work is kept)",
    errno.EDQUOT: "the disk quota is exhausted; free some space and rerun (finished work is kept)",
    errno.EACCES: "no permission to write there; make it writable or choose another output folder",
    errno.EPERM: "no permission to write there; make it writable or choose another output folder",
    errno.EROFS: "the file system is read-only; choose another output folder",
    errno.ENOTDIR: "a file stands where a folder is needed; choose another output folder",
    errno.EEXIST: "a file stands where a folder is needed; choose another output folder",
}


def write_error(path: Path, error: OSError) -> PipelineError:
    """A one-line error for a failed write: the path, the cause and what to do."""
    cause = error.strerror or str(error) or type(error).__name__
    return PipelineError(f"{path}: cannot write ({cause}); {_WRITE_HINTS.get(error.errno, 'check the path and rerun')}")


def ensure_dir(path: Path) -> None:
    """``mkdir -p``, with a one-line error if a file is in the way or the place is not writable."""
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise write_error(Path(path), error) from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _atomic_replace(path: Path, write: Any, mode: str) -> None:
    path = Path(path)
    ensure_dir(path.parent)
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:
        raise write_error(path, error) from None
    try:
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp's 0600 would hide results from a shared group
        with os.fdopen(handle, mode) as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException as error:
        if os.path.exists(temporary):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise write_error(path, error) from None
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and ``os.replace``."""
    _atomic_replace(path, lambda stream: stream.write(text), "w")


def atomic_write_json(path: Path, data: Any) -> None:
    """Write JSON (sorted keys, 2-space indent, trailing newline) atomically."""
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=True, allow_nan=True) + "\n")


def atomic_torch_save(obj: Any, path: Path) -> None:
    """``torch.save`` atomically."""
    _atomic_replace(path, lambda stream: torch.save(obj, stream), "wb")


def atomic_save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """``numpy.savez_compressed`` atomically."""
    _atomic_replace(path, lambda stream: np.savez_compressed(stream, **arrays), "wb")


def read_json(path: Path, fix: str = "regenerate it with the step that wrote it") -> Any:
    """Read a JSON file; a one-line error naming the file (and ``fix``) if it is unreadable or damaged."""
    try:
        with open(path) as stream:
            return json.load(stream)
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError
        raise PipelineError(f"{path}: damaged or not JSON ({type(error).__name__}: {error}); {fix}") from None
    except OSError as error:
        raise PipelineError(f"{path}: cannot read ({error.strerror or error}); {fix}") from None


def load_summary(path: Path, experiment: int | str, producer_step: str, flag: str = "--summary", keys: Sequence[str] = ("config",)) -> dict[str, Any]:
    """The summary ``producer_step`` wrote for ``experiment``; a one-line error if it is missing,
    damaged, of another experiment or lacks one of ``keys``. For every plot step."""
    path = Path(path)
    if not path.exists():
        raise PipelineError(f"{path}: {flag} not found; run `python -m {producer_step}` first")
    summary = read_json(path, fix=f"rerun `python -m {producer_step}` to rewrite it")
    found = summary.get("experiment") if isinstance(summary, dict) else None
    if found != experiment or any(key not in summary for key in keys):
        what = f"a summary of Experiment {found}" if found is not None else "not a summary"
        raise PipelineError(f"{path}: {what}, not the Experiment {experiment} summary of {producer_step}; pass the file that step wrote to {flag}")
    return summary


def load_torch_record(path: Path, flag: str, producer_step: str, is_record: Callable[[Any], bool]) -> Any:
    """A ``.pt`` file that ``producer_step`` wrote (``torch.load``, tensors and plain types only); a
    one-line error if it is missing, unreadable, or ``is_record`` rejects it. For steps reading another
    step's per-image tensors."""
    path = Path(path)
    if not path.exists():
        raise PipelineError(f"{path}: {flag} not found; run `python -m {producer_step}` first")
    try:
        record = torch.load(path, weights_only=True)
    except Exception as error:  # truncated, empty or foreign files raise many types; all mean the same here
        raise PipelineError(f"{path}: cannot be read ({type(error).__name__}); rerun `python -m {producer_step}` to rewrite it") from None
    if not is_record(record):
        raise PipelineError(f"{path}: not a file of {producer_step} (pass the file that step wrote to {flag})")
    return record


def read_json_if_exists(path: Path) -> Any | None:
    """Read a JSON file, or return ``None`` when it does not exist (e.g. an optional timing.json)."""
    path = Path(path)
    return read_json(path) if path.exists() else None


def git_commit() -> str:
    """The repository's HEAD commit (with ``-dirty`` if the tree has changes), or ``unknown``."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT, capture_output=True, text=True
        ).stdout.strip()
        return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def package_versions() -> dict[str, str]:
    """Versions of the packages that determine the numbers."""
    import pyarrow
    import torchvision

    return {
        "python": platform.python_version(),
        "torch": str(torch.__version__),
        "torchvision": torchvision.__version__,
        "numpy": np.__version__,
        "pyarrow": pyarrow.__version__,
    }


def seed_everything(seed: int) -> None:
    """Seed Python, numpy and torch (CPU and CUDA); make cuDNN deterministic."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
