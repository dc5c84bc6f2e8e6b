"""Step 11's store of replicated tables (experiment_2.past_exhaustive.validation.resume): the key changes with every input and with
the source of each module that computes an estimator's cells, an edit to one estimator recomputes its cells alone,
and a second run reads the stored cells and seconds instead of replicating again."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import numpy as np
import pytest

from experiment_2.past_exhaustive.sampling import walsh
from experiment_2.past_exhaustive.validation import replications, resume

BUDGETS = [
    {"estimator": "subcubes", "size": 1, "draws": 3, "name": "u=1×3"},
    {"estimator": "walsh", "samples": 8, "name": "m=8"},
]


def key(
    table: np.ndarray,
    estimator: str,
    budgets: list[dict] = BUDGETS,
    count: int = 10,
    seed: int = 0,
    band: tuple[float, float] = replications.COVERAGE_BAND,
) -> str:
    return resume.replication_key(replications.DenseTable(table), budgets, count, seed, estimator, band)


def test_the_key_changes_with_each_input() -> None:
    table = np.arange(8, dtype=np.float64).reshape(4, 2)
    for estimator in ("subcubes", "walsh"):
        first = key(table, estimator)
        assert first == key(table.copy(), estimator)
        changed = table.copy()
        changed[0, 0] = 0.5
        others = {
            key(changed, estimator),
            key(table.reshape(2, 4), estimator),
            key(table, estimator, [{**budget, "name": "other"} for budget in BUDGETS]),
            key(table, estimator, BUDGETS[::-1]),  # the same budget at another place of the list: other seeds
            key(table, estimator, count=11),
            key(table, estimator, seed=1),
            key(table, estimator, band=(0.9, 0.99)),
            key(table, "walsh" if estimator == "subcubes" else "subcubes"),
        }
        assert len(others) == 8 and first not in others
    # a budget of the other estimator, added after this one's, leaves this one's key as it is
    assert key(table, "subcubes") == key(table, "subcubes", [*BUDGETS, {"estimator": "walsh", "samples": 16}])


# Which modules' source feeds each estimator's key, written out (not read from resume.SOURCES, which it checks): an
# edit to the estimator's code, its helpers or the replications recomputes its cells, an edit anywhere else none.
SAMPLING, VALIDATION = "experiment_2.past_exhaustive.sampling", "experiment_2.past_exhaustive.validation"
KEYED = {
    "subcubes": (f"{SAMPLING}.subcubes", f"{SAMPLING}.bootstrap", f"{VALIDATION}.replications"),
    "walsh": (f"{SAMPLING}.walsh", f"{SAMPLING}.bootstrap", f"{SAMPLING}.u_statistics", f"{VALIDATION}.replications"),
}
NOT_KEYED = tuple(f"{VALIDATION}.{name}" for name in ("calibration", "passes", "report", "resume", "tables"))


def key_after_editing(module_name: str, estimator: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The key of ``estimator``'s cells once ``module_name``'s source has an added line."""
    module = importlib.import_module(module_name)
    edited = tmp_path / Path(module.__file__).name
    shutil.copy(module.__file__, edited)
    with edited.open("a") as handle:
        handle.write("# an edit\n")
    monkeypatch.setattr(module, "__file__", str(edited))
    return key(np.ones((4, 1)), estimator)


@pytest.mark.parametrize(
    ("estimator", "module_name"), [(estimator, name) for estimator, names in KEYED.items() for name in names]
)
def test_the_key_reads_each_source(
    estimator: str, module_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = key(np.ones((4, 1)), estimator)
    assert key_after_editing(module_name, estimator, tmp_path, monkeypatch) != before


@pytest.mark.parametrize(
    ("estimator", "module_name"),
    [
        (estimator, name)
        for estimator in KEYED
        for name in sorted({name for names in KEYED.values() for name in names} - set(KEYED[estimator]))
        + list(NOT_KEYED)
    ],
)
def test_the_key_reads_no_other_source(
    estimator: str, module_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = key(np.ones((4, 1)), estimator)
    assert key_after_editing(module_name, estimator, tmp_path, monkeypatch) == before


def test_every_sampling_module_is_some_estimators_source() -> None:
    """Each module of experiment_2.past_exhaustive.sampling belongs to an estimator's key, so a new one cannot be left
    out unnoticed (it must be written into KEYED above)."""
    sampling = {f"{SAMPLING}.{path.stem}" for path in Path(walsh.__file__).parent.glob("[!_]*.py")}
    assert sampling == {name for names in KEYED.values() for name in names if name.startswith(SAMPLING)}


def test_an_edit_to_the_sub_cubes_recomputes_their_cells_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two estimators' cells in their budgets' order, as one replicate_table call gives them; after an edit to the
    sub-cube module only the sub-cube cells are replicated again, and the result is the same."""
    table = replications.DenseTable(np.random.default_rng(0).standard_normal((8, 2)))
    whole = replications.replicate_table(table, BUDGETS, 20, 5)
    cells, _ = resume.replicate_or_resume(tmp_path, table, BUDGETS, 20, 5)
    assert cells == whole and len(list(tmp_path.glob("*.json"))) == 2
    edited = tmp_path / "subcubes.py"
    shutil.copy(resume.subcubes.__file__, edited)
    with edited.open("a") as handle:
        handle.write("# an edit\n")
    monkeypatch.setattr(resume.subcubes, "__file__", str(edited))
    calls = []
    replicate = replications.replicate_table

    def counting(*args, **kwargs):
        calls.append(args[4] if len(args) >= 5 else kwargs.get("estimator"))
        return replicate(*args, **kwargs)

    monkeypatch.setattr(replications, "replicate_table", counting)
    again, _ = resume.replicate_or_resume(tmp_path, table, BUDGETS, 20, 5)
    assert calls == ["subcubes"] and again == whole


def test_a_second_run_reads_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def replicate(table, budget_list, count, seed, estimator, band):
        calls.append((seed, estimator))
        return [{"cell": seed, "budget": next(b["name"] for b in budget_list if b["estimator"] == estimator)}]

    monkeypatch.setattr(replications, "replicate_table", replicate)
    table = replications.DenseTable(np.ones((4, 1)))
    first = resume.replicate_or_resume(tmp_path, table, BUDGETS, 10, 3)
    second = resume.replicate_or_resume(tmp_path, table, BUDGETS, 10, 3)
    assert calls == [(3, "subcubes"), (3, "walsh")] and first == second
    assert first[0] == [{"cell": 3, "budget": "u=1×3"}, {"cell": 3, "budget": "m=8"}]
    resume.replicate_or_resume(tmp_path, table, BUDGETS, 10, 4)
    assert len(calls) == 4 and len(list(tmp_path.glob("*.json"))) == 4
