"""Experiment 5 as paper/ sees it (:class:`experiment_1.report.record.ExperimentRecord`): declared once, read by
``paper/experiments.py``."""

from __future__ import annotations

from experiment_1.report import ExperimentRecord, VerdictTable

RESULTS = "experiment_5/results_efficientnet_lite0_sample"
_RULES = "experiment_5.verdicts"
VERDICTS: dict[int | str, VerdictTable] = {
    5: (
        ("*.hard_minus_easy", f"{_RULES}:MEASURE"),
        ("seed_claim", f"{_RULES}:SEED_CLAIM"),
        ("k_err.partial", f"{_RULES}:PARTIAL"),
    )
}
"""The rule of each verdict id its summaries carry (experiment_1.report.rules)."""

RECORDS = (
    ExperimentRecord(
        experiment=5,
        title="Experiment 5 — difficulty vs interaction complexity",
        macro="ExpFive",
        summaries="experiment_5/results*/analysis.json",
        primary=f"{RESULTS}/analysis.json",
        tables=("experiment_5",),
        figures=(
            ("FigExpFiveQuartiles", f"{RESULTS}/quartile_bars.pdf"),
            ("FigExpFiveRho", f"{RESULTS}/rho_heatmap.pdf"),
        ),
        single_pass="experiment_5.step_1_evaluate:COMMAND",
    ),
)
