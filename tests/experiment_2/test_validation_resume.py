"""Step 11's store of replicated tables (experiment_2.validation.resume): the key changes with every input and with
the source of each module that computes the cells, and a second run reads the stored cells and seconds instead of
replicating again."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from experiment_2.sampling import walsh
from experiment_2.validation import replications, resume

BUDGETS = [{"kind": "walsh", "samples": 8}]


def test_the_key_changes_with_each_input() -> None:
    table = np.arange(8, dtype=np.float64).reshape(4, 2)
    key = resume.replication_key(table, BUDGETS, 10, 0)
    assert key == resume.replication_key(table.copy(), BUDGETS, 10, 0)
    changed = table.copy()
    changed[0, 0] = 0.5
    others = {
        resume.replication_key(changed, BUDGETS, 10, 0),
        resume.replication_key(table.reshape(2, 4), BUDGETS, 10, 0),
        resume.replication_key(table, [{"kind": "walsh", "samples": 16}], 10, 0),
        resume.replication_key(table, BUDGETS, 11, 0),
        resume.replication_key(table, BUDGETS, 10, 1),
    }
    assert len(others) == 5 and key not in others


@pytest.mark.parametrize("module", resume.SOURCES, ids=lambda module: module.__name__)
def test_the_key_reads_each_source(module, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An edit to the estimators (every module of experiment_2.sampling, so a new one cannot be left out), their
    helpers or the replications recomputes the cells."""
    sampling = {f"experiment_2.sampling.{path.stem}" for path in Path(walsh.__file__).parent.glob("[!_]*.py")}
    assert len(sampling) >= 4
    assert {source.__name__ for source in resume.SOURCES} >= sampling | {"experiment_2.validation.replications"}
    table = np.ones((4, 1))
    key = resume.replication_key(table, BUDGETS, 10, 0)
    edited = tmp_path / Path(module.__file__).name
    shutil.copy(module.__file__, edited)
    with edited.open("a") as handle:
        handle.write("# an edit\n")
    monkeypatch.setattr(module, "__file__", str(edited))
    assert resume.replication_key(table, BUDGETS, 10, 0) != key


def test_a_second_run_reads_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def replicate(table, budget_list, count, seed):
        calls.append(seed)
        return [{"cell": seed}]

    monkeypatch.setattr(replications, "replicate_table", replicate)
    table = np.ones((4, 1))
    first = resume.replicate_or_resume(tmp_path, table, BUDGETS, 10, 3)
    second = resume.replicate_or_resume(tmp_path, table, BUDGETS, 10, 3)
    assert calls == [3] and first == second and first[0] == [{"cell": 3}]
    resume.replicate_or_resume(tmp_path, table, BUDGETS, 10, 4)
    assert calls == [3, 4] and len(list(tmp_path.glob("*.json"))) == 2
