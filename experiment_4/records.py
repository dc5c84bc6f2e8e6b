"""What Experiment 4's steps hand each other: the signatures.pt format and the names of its axes.

Step 1 writes ``signatures.pt`` tagged with :data:`FORMAT`; steps 2 and 3 read it with
:func:`load_signatures` and iterate over :data:`SIMILARITIES` (binary or weighted signatures) and
:data:`TARGETS` (what 1-NN predicts).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from experiment_1.errors import PipelineError

FORMAT = "experiment_4.step_1_signatures"
SIMILARITIES = ("binary", "weighted")
TARGETS = ("true_label", "predicted_class")


def load_signatures(path: Path) -> dict[str, Any]:
    """Read step 1's signatures.pt, with a one-line error if it is missing or something else."""
    path = Path(path)
    if not path.exists():
        raise PipelineError(f"{path}: --signatures not found; run `python -m experiment_4.step_1_signatures` first")
    try:
        document = torch.load(path, weights_only=True)
    except Exception as error:  # a truncated or foreign file: any unpickling error means the same to the user
        raise PipelineError(f"{path}: not readable as signatures.pt ({type(error).__name__}); rerun experiment_4.step_1_signatures") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise PipelineError(f"{path}: not a signatures.pt of experiment_4.step_1_signatures (pass that file to --signatures)")
    return document
