"""Atomic writes, provenance (versions, git commit) and seeding shared by every step."""
from __future__ import annotations

import json
import os
import platform
import random
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from experiment_1.gated_resnet import REPO_ROOT


def _atomic_replace(path: Path, write: Any, mode: str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, mode) as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
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


def read_json(path: Path) -> Any:
    """Read a JSON file."""
    with open(path) as stream:
        return json.load(stream)


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
