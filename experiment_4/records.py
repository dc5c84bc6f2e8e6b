"""What Experiment 4's steps hand each other: the signatures.pt format and the names of its axes.

Step 1 writes ``signatures.pt`` tagged with :data:`FORMAT`; steps 2 and 3 read it with
:func:`load_signatures` and iterate over :data:`SIMILARITIES` (binary or weighted signatures) and
:data:`TARGETS` (what 1-NN predicts).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from experiment_1.io_utils import check_schema, load_torch_record

FORMAT = "experiment_4.step_1_signatures"
SIMILARITIES = ("binary", "weighted")
TARGETS = ("true_label", "predicted_class")


def load_signatures(path: Path) -> dict[str, Any]:
    """Read step 1's signatures.pt, with a one-line error if it is missing or something else."""
    document = load_torch_record(path, "--signatures", FORMAT, lambda document: isinstance(document, dict) and document.get("format") == FORMAT)
    check_schema(document, Path(path), FORMAT)
    return document
