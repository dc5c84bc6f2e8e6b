"""Experiment 4 as paper/ sees it (:class:`experiment_1.report.record.ExperimentRecord`): declared once, read by
``paper/experiments.py``."""

from __future__ import annotations

from experiment_1.report import ExperimentRecord, VerdictTable

RESULTS = "experiment_4/results_efficientnet_lite0_sample"
_RULES = "experiment_4.verdicts"
VERDICTS: dict[int | str, VerdictTable] = {
    4: (
        ("class_alignment.*", f"{_RULES}:ALIGNMENT"),
        ("scalar_minus_vector", f"{_RULES}:CONTRAST"),
        ("vector_global_core", f"{_RULES}:CORE"),
        ("seed_claim", f"{_RULES}:SEED_CLAIM"),
    )
}
"""The rule of each verdict id its summaries carry (experiment_1.report.rules)."""

RECORDS = (
    ExperimentRecord(
        experiment=4,
        title="Experiment 4 — input-dependent expert sets",
        macro="ExpFour",
        summaries="experiment_4/results*/overlap.json",
        primary=f"{RESULTS}/overlap.json",
        tables=("experiment_4",),
        figures=(
            ("FigExpFourJaccard", f"{RESULTS}/jaccard_histograms.pdf"),
            ("FigExpFourNN", f"{RESULTS}/nn_accuracy_vs_k.pdf"),
            ("FigExpFourCore", f"{RESULTS}/global_core.pdf"),
        ),
        single_pass="experiment_4.step_1_signatures:COMMAND",
    ),
)
