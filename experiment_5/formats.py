"""Reading step 1's ``per_image.pt`` and selecting the images Experiment 5 analyses (used by steps 2 and 3)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.errors import PipelineError
from experiment_1.files import check_schema, load_torch_record
from experiment_5.complexity import COMPLEXITY_MEASURES
from experiment_5.difficulty import DIFFICULTY_SCORES

COVARIATE = "full_logit_norm"
MIN_IMAGES = 8

__all__ = ["COVARIATE", "AnalysedImages", "analysed_images", "load_per_image", "measure_columns"]


def load_per_image(path: Path) -> dict[str, Any]:
    """Read step 1's ``per_image.pt``, with a one-line error if it is missing, damaged or of another step."""
    record = load_torch_record(
        path,
        "--per-image",
        "experiment_5.step_1_evaluate",
        lambda record: isinstance(record, dict) and record.get("experiment") == 5 and "arrays" in record,
    )
    check_schema(record, Path(path), "experiment_5.step_1_evaluate")
    return record


def measure_columns(arrays: dict[str, np.ndarray], taus: list[float], etas: list[float]) -> dict[str, np.ndarray]:
    """Every complexity measure as a 1-D array: the headline τ and η as ``k_err`` / ``k_mass``, the others suffixed
    (a record evaluated before the Walsh measures has none of them)."""
    columns = {
        name: np.asarray(arrays[name], dtype=np.float64)
        for name in COMPLEXITY_MEASURES
        if name not in ("k_err", "k_mass") and name in arrays
    }
    columns["k_err"], columns["k_mass"] = (
        np.asarray(arrays[name][:, 0], dtype=np.float64) for name in ("k_err", "k_mass")
    )
    for position, tau in enumerate(taus[1:], 1):
        columns[f"k_err_tau_{tau:g}"] = np.asarray(arrays["k_err"][:, position], dtype=np.float64)
    for position, eta in enumerate(etas[1:], 1):
        columns[f"k_mass_eta_{eta:g}"] = np.asarray(arrays["k_mass"][:, position], dtype=np.float64)
    return columns


@dataclass
class AnalysedImages:
    """The images the analysis uses — valid, every score, measure and ‖h(full)‖ defined — and their values."""

    scores: dict[str, np.ndarray]
    measures: dict[str, np.ndarray]
    covariate: np.ndarray
    correct: np.ndarray
    num_valid: int

    @property
    def count(self) -> int:
        return len(self.covariate)


def analysed_images(record: dict[str, Any]) -> AnalysedImages:
    """Select the analysed images of a loaded ``per_image.pt`` (at least 8, for four quartiles of two)."""
    arrays = {name: value.numpy() for name, value in record["arrays"].items()}
    valid = arrays["valid"].astype(bool)
    scores = {name: np.asarray(arrays[name], dtype=np.float64) for name in DIFFICULTY_SCORES}
    measures = measure_columns(arrays, record["config"]["taus"], record["config"]["etas"])
    covariate = np.asarray(arrays[COVARIATE], dtype=np.float64)
    defined = valid & np.all(np.isfinite(np.column_stack([*scores.values(), *measures.values(), covariate])), axis=1)
    if defined.sum() < MIN_IMAGES:
        raise PipelineError(
            f"only {int(defined.sum())} images with every score and measure defined; Experiment 5's quartiles need at least {MIN_IMAGES} (evaluate more images)"
        )
    return AnalysedImages(
        scores={name: value[defined] for name, value in scores.items()},
        measures={name: value[defined] for name, value in measures.items()},
        covariate=covariate[defined],
        correct=arrays["correct"].astype(bool)[defined],
        num_valid=int(valid.sum()),
    )
