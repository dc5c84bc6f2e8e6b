"""Experiment 3 as paper/ sees it (:class:`experiment_1.report.record.ExperimentRecord`): declared once, read by
``paper/experiments.py``."""

from __future__ import annotations

from typing import Any

import numpy as np

from experiment_1.report import ExperimentRecord, VerdictTable

RESULTS = "experiment_3/results_efficientnet_lite0_sample"
_RULES = "experiment_3.verdicts"
VERDICTS: dict[int | str, VerdictTable] = {
    3: (
        ("captured_energy.*", f"{_RULES}:SEED"),
        ("captured_scalar_energy.*", f"{_RULES}:SEED"),
        ("top1_agreement_magnitude.*", f"{_RULES}:SEED"),
        ("controls.*", f"{_RULES}:CONTROLS"),
        ("controls_bound.*", f"{_RULES}:BOUND"),
        ("relative_error.*", f"{_RULES}:RELATIVE_ERROR"),
        ("orders.*", f"{_RULES}:ORDERS"),
        ("empty_top1.*", f"{_RULES}:SHARE"),
    )
}
"""The rule of each verdict id its summaries carry (experiment_1.report.rules)."""


def rebuild(
    summary: dict[str, Any], arrays: dict[str, np.ndarray], config: dict[str, Any], seed: int
) -> dict[str, Any]:
    """The current summary of a run's per-image arrays (imported on use: the record stays light)."""
    from experiment_3.summary import summarize

    return summarize(arrays, config, seed)


RECORDS = (
    ExperimentRecord(
        experiment=3,
        title="Experiment 3 — top-K sparse reconstruction",
        macro="ExpThree",
        summaries="experiment_3/results*/summary.json",
        primary=f"{RESULTS}/summary.json",
        tables=("experiment_3",),
        figures=(
            ("FigExpThreeCurves", f"{RESULTS}/topk_curves.pdf"),
            ("FigExpThreeOrders", f"{RESULTS}/topk_orders.pdf"),
        ),
        single_pass="experiment_3.step_1_evaluate:COMMAND",
        rebuild="experiment_3.record:rebuild",
    ),
)
