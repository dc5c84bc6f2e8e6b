"""Where the repository is: the root every default path (data, checkpoints, results) is relative to."""
from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
