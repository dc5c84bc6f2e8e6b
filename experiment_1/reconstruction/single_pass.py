"""Experiment 1's part of an all-mask pass: per-batch reconstruction metrics → summary.json, per_image.npz."""

from __future__ import annotations

from typing import Any

import numpy as np

from experiment_1.reconstruction.metrics import reconstruction_metrics
from experiment_1.reconstruction.summary import summarize
from experiment_1.run.loop import BatchFunction, ExperimentPass, write_results
from experiment_1.run.setup import EvaluationSetup, provenance

STAGE = "experiment_1.step_3_evaluate/all_masks"


def batch_function(setup: EvaluationSetup) -> BatchFunction:
    """:func:`experiment_1.reconstruction.metrics.reconstruction_metrics` (it needs nothing of the setup)."""
    return reconstruction_metrics


def finish(setup: EvaluationSetup, arrays: dict[str, np.ndarray], timing: dict[str, Any]) -> None:
    """Write the Experiment 1 summary, per-image arrays and timing; one line on stdout."""
    summary = summarize(arrays, provenance(setup), setup.config.seed)
    path = write_results(setup, arrays, summary, timing)
    mobius = summary["metrics"]["mobius_rel_error_float32"]["mean"]
    naive = summary["metrics"]["naive_sum_rel_error"]["mean"]
    print(f"wrote {path}: Möbius rel. error {mobius:.2e} (float32), naive-sum rel. error {naive:.3g}")


EXPERIMENT_1 = ExperimentPass(1, STAGE, "Exp 1 all masks", batch_function, finish)
