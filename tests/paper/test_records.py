"""One record per experiment (experiment_N/record.py): every reference resolves, and paper/ reads the list from them."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiment_1.report import resolve
from experiment_1.run.loop import ExperimentPass
from paper.claims import verdicts_tex
from paper.committed_runs import committed_glob
from paper.experiments import RECORDS, record_of
from paper.figures import FIGURES
from paper.resummarize import REBUILDABLE
from paper.single_pass import STEPS
from paper.tables import DECLARED, SECTIONS

REPO = Path(__file__).resolve().parents[2]


def test_each_record_names_what_exists() -> None:
    assert len({record.experiment for record in RECORDS}) == len(RECORDS)
    assert len({record.macro for record in RECORDS}) == len(RECORDS)
    for record in RECORDS:
        assert committed_glob(REPO, record.primary), (
            f"{record.experiment}: its paper run {record.primary} is not committed"
        )
        assert set(committed_glob(REPO, record.primary)) <= set(committed_glob(REPO, record.summaries)), (
            record.experiment
        )
        assert set(record.tables) <= set(DECLARED), record.experiment
        for _, path in record.figures:
            assert (REPO / path).exists(), path


def test_references_resolve_to_their_experiment() -> None:
    for record in RECORDS:
        if record.single_pass:
            step = resolve(record.single_pass)  # the evaluation step: its flags, and its pass as the work
            entry = resolve(step.work)
            assert isinstance(entry, ExperimentPass) and entry.experiment == record.experiment
        if record.rebuild:
            assert callable(resolve(record.rebuild))


def test_paper_tools_iterate_the_records() -> None:
    assert sorted(STEPS) == sorted(record.experiment for record in RECORDS if record.single_pass)
    assert set(REBUILDABLE) == {record.experiment for record in RECORDS if record.rebuild}
    pointers = [
        line.split("}")[0]
        for line in verdicts_tex(REPO).splitlines()
        if line.startswith(r"\newcommand{\VerdictPointer")
    ]
    assert pointers == [rf"\newcommand{{\VerdictPointer{record.macro}" for record in RECORDS]
    assert list(FIGURES) == [name for record in RECORDS for name, _ in record.figures]
    assert [section.key for section in SECTIONS][: sum(len(record.tables) for record in RECORDS)] == [
        key for record in RECORDS for key in record.tables
    ]
    assert record_of(2).title in [section.title for section in SECTIONS]


def test_every_macro_stem_is_letters_only_and_a_bad_reference_is_refused() -> None:
    assert all(record.macro.isalpha() for record in RECORDS)  # a LaTeX name
    with pytest.raises(ValueError, match="module:attribute"):
        resolve("experiment_1.record")
    with pytest.raises(KeyError):
        record_of("no such experiment")
