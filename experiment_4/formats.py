"""What Experiment 4's steps hand each other: the signatures.pt format and the names of its axes.

Step 1 writes ``signatures.pt`` tagged with :data:`FORMAT` and its compact, committed ``signatures.npz``
(experiment_4.compact); step 2 reads either with :func:`load_signatures`; steps 2 and 3 iterate over :data:`RANKINGS` (the per-image rankings and the
class control), :data:`SIMILARITIES` (binary or weighted signatures) and :data:`TARGETS` (what
1-NN predicts), as far as each ranking has them (:func:`ranking_kinds`, :func:`ranking_targets`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from experiment_1.files import check_schema, load_torch_record
from experiment_4.compact import load_compact

FORMAT = "experiment_4.step_1_signatures"
SIMILARITIES = ("binary", "weighted")
TARGETS = ("true_label", "predicted_class")
CONTROL = "class_control"
RANKINGS = ("vector", "scalar", "scalar_true", CONTROL)


def ranking_kinds(ranking: str) -> tuple[str, ...]:
    """The control has binary signatures only (step 1 keeps its subset ids, not magnitudes)."""
    return ("binary",) if ranking == CONTROL else SIMILARITIES


def ranking_targets(ranking: str) -> tuple[str, ...]:
    """What 1-NN predicts for a ranking: the control compares classes by true label only (its exclusion is by true label)."""
    return ("true_label",) if ranking == CONTROL else TARGETS


def load_signatures(path: Path) -> dict[str, Any]:
    """Read step 1's signatures.pt, or its compact signatures.npz (:mod:`experiment_4.compact`, by the suffix ``.npz``),
    with a one-line error if it is missing or something else."""
    if Path(path).suffix == ".npz":
        return {"format": FORMAT, **load_compact(path, FORMAT)}
    document = load_torch_record(
        path, "--signatures", FORMAT, lambda document: isinstance(document, dict) and document.get("format") == FORMAT
    )
    check_schema(document, Path(path), FORMAT)
    return document
