"""Experiment 1 as paper/ sees it (:class:`experiment_1.report.record.ExperimentRecord`): declared once, read by
``paper/experiments.py``."""

from __future__ import annotations

from typing import Any

import numpy as np

from experiment_1.report.record import ExperimentRecord
from experiment_1.report.rules import VerdictTable

RESULTS = "experiment_1/results_efficientnet_lite0_sample"
_RULES = "experiment_1.reconstruction.verdicts"
VERDICTS: dict[int | str, VerdictTable] = {
    1: (
        ("mobius.exact", f"{_RULES}:EXACT"),
        ("naive.misses", f"{_RULES}:NAIVE"),
        ("first_order.interactions", f"{_RULES}:FIRST_ORDER"),
    )
}
"""The rule of each verdict id its summaries carry (experiment_1.report.rules)."""


def rebuild(
    summary: dict[str, Any], arrays: dict[str, np.ndarray], config: dict[str, Any], seed: int
) -> dict[str, Any]:
    """The current summary of a run's per-image arrays (imported here, on use: the record stays light)."""
    from experiment_1.reconstruction import summary as reconstruction_summary

    return reconstruction_summary.summarize(arrays, config, seed)


RECORDS = (
    ExperimentRecord(
        experiment=1,
        title="Experiment 1 — naive subset summation vs Möbius",
        macro="ExpOne",
        summaries="experiment_1/results*/summary.json",
        primary=f"{RESULTS}/summary.json",
        tables=("experiment_1",),
        figures=(("FigExpOneReconstruction", f"{RESULTS}/reconstruction_error.pdf"),),
        single_pass="experiment_1.step_3_evaluate:COMMAND",
        rebuild="experiment_1.record:rebuild",
    ),
)
