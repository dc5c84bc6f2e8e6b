"""Every experiment's record, in the paper's order: the one list paper/ iterates (single_pass, resummarize,
make_tables, tables, macros, figures, claims). Each record is declared in its experiment's ``record.py``."""

from __future__ import annotations

from typing import Any

from experiment_1.record import RECORDS as EXPERIMENT_1
from experiment_1.record import VERDICTS as EXPERIMENT_1_VERDICTS
from experiment_1.report import ExperimentRecord, VerdictTable
from experiment_2.record import RECORDS as EXPERIMENT_2
from experiment_2.record import VERDICTS as EXPERIMENT_2_VERDICTS
from experiment_3.record import RECORDS as EXPERIMENT_3
from experiment_3.record import VERDICTS as EXPERIMENT_3_VERDICTS
from experiment_4.record import RECORDS as EXPERIMENT_4
from experiment_4.record import VERDICTS as EXPERIMENT_4_VERDICTS
from experiment_5.record import RECORDS as EXPERIMENT_5
from experiment_5.record import VERDICTS as EXPERIMENT_5_VERDICTS

DEPTH = ExperimentRecord(
    experiment="depth",
    title="Depth ladder — the same statistics across depth and width (`python -m paper.depth_compare`)",
    macro="Depth",
    summaries="paper/results_depth*/depth.json",
    primary="paper/results_depth_efficientnet_lite_sample/depth.json",
    tables=("depth",),
    figures=(("FigDepthSpectra", "paper/generated/depth_spectra.pdf"),),  # rendered by paper.plots
)

RECORDS: tuple[ExperimentRecord, ...] = (
    *EXPERIMENT_1,
    *EXPERIMENT_2,
    *EXPERIMENT_3,
    *EXPERIMENT_4,
    *EXPERIMENT_5,
    DEPTH,
)


VERDICTS: dict[int | str, VerdictTable] = {
    "depth": (
        ("*.depth.*", "paper.depth_verdicts:PAIRED"),
        ("*.depth_at_input.*", "paper.depth_verdicts:PAIRED"),
        ("*.width.*", "paper.depth_verdicts:NO_CHANGE"),
        ("*.resolution.*", "paper.depth_verdicts:NO_CHANGE"),
    ),
    **EXPERIMENT_1_VERDICTS,
    **EXPERIMENT_2_VERDICTS,
    **EXPERIMENT_3_VERDICTS,
    **EXPERIMENT_4_VERDICTS,
    **EXPERIMENT_5_VERDICTS,
}
"""Each summary kind's rules (its ``experiment`` value → verdict-id pattern → rule), as the records declare them."""


def rules_of(document: Any) -> VerdictTable:
    """The rules a results file's verdicts are declared under (its ``experiment`` value); none for an unknown one, so
    each of its verdicts is refused."""
    return VERDICTS.get(document.get("experiment"), ()) if isinstance(document, dict) else ()


def record_of(experiment: int | str) -> ExperimentRecord:
    """The record whose summaries carry ``experiment``."""
    matches = [record for record in RECORDS if record.experiment == experiment]
    if not matches:
        raise KeyError(experiment)
    return matches[0]
