"""The fourth fault round (identity, not descriptions): each root cause planted in a copy of a committed results
file, and the one-line refusal (or the right result) shown."""
from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.report import check_verdicts

REPO = Path(__file__).resolve().parents[2]
EXP1 = "experiment_1/results_efficientnet_lite0_sample"
EXP3 = "experiment_3/results_efficientnet_lite0_sample"


def entry_of(document: dict, verdict_id: str) -> dict:
    return next(entry for entry in document["verdicts"] if entry["id"] == verdict_id)


def planted(relative: str, verdict_id: str, **changes: object) -> dict:
    document = copy.deepcopy(read_json(REPO / relative))
    entry_of(document, verdict_id).update(changes)
    return document


# --- 2: one verdict checker, every rule shape re-derived from the numbers of its own block ---------------------

def test_every_committed_results_file_passes_the_one_checker() -> None:
    for path in sorted(REPO.glob("experiment_*/results*/*.json")) + sorted(REPO.glob("paper/results*/*.json")):
        check_verdicts(read_json(path), path)


def flipped(decision: str) -> str:
    return "fails" if decision == "holds" else "holds"


@pytest.mark.parametrize("relative, verdict_id, why", [
    (f"{EXP3}/summary.json", "captured_energy.vector", "CI above / below the original study's number"),
    (f"{EXP3}/summary.json", "controls_bound.vector", "CI below the bound the seed reports"),
    (f"{EXP3}/summary.json", "empty_top1.vector", "CI of a share against its threshold"),
    (f"{EXP1}/summary.json", "naive.misses", "CI at or above a threshold"),
    (f"{EXP1}/summary.json", "first_order.interactions", "CI above a threshold"),
    (f"{EXP1}/summary.json", "mobius.exact", "a worst-case error against its tolerance"),
    ("experiment_2/results_3c_efficientnet_lite0_native/summary_all.json", "seed_endpoint", "CI at or below the seed's number"),
])
def test_a_flipped_decision_contradicts_its_own_numbers(relative: str, verdict_id: str, why: str) -> None:
    document = read_json(REPO / relative)
    decision = entry_of(document, verdict_id)["decision"]
    with pytest.raises(PipelineError, match=f"verdict {verdict_id} says '{flipped(decision)}' but .* under its rule gives '{decision}'"):
        check_verdicts(planted(relative, verdict_id, decision=flipped(decision)), Path(relative))


def test_a_cannot_tell_that_should_be_holds_is_refused() -> None:
    relative = f"{EXP3}/summary.json"
    assert entry_of(read_json(REPO / relative), "orders.vector")["decision"] == "holds"
    with pytest.raises(PipelineError, match="verdict orders.vector says 'cannot tell' but its own CI .* gives 'holds'"):
        check_verdicts(planted(relative, "orders.vector", decision="cannot tell"), Path(relative))


def test_a_flipped_threshold_on_a_worst_case_error_is_refused() -> None:
    relative = f"{EXP1}/summary.json"
    entry = entry_of(read_json(REPO / relative), "mobius.exact")
    with pytest.raises(PipelineError, match="mobius.exact: its rule states the threshold 0.0001 but parameters.tolerance is 1e-12"):
        check_verdicts(planted(relative, "mobius.exact", parameters={**entry["parameters"], "tolerance": 1e-12}), Path(relative))
    with pytest.raises(PipelineError, match="mobius.exact says 'holds' but its own numbers under its rule gives 'fails'"):
        check_verdicts(planted(relative, "mobius.exact", statistic={**entry["statistic"], "value": 0.5}), Path(relative))


def test_a_verdict_whose_effect_block_was_removed_is_refused_not_skipped() -> None:
    relative = f"{EXP3}/summary.json"
    with pytest.raises(PipelineError, match="verdict captured_energy.vector says .* but lacks effect.ci_low, which its rule needs"):
        check_verdicts(planted(relative, "captured_energy.vector", effect=None), Path(relative))


def test_a_verdict_beside_non_finite_source_numbers_is_refused() -> None:
    document = {"experiment": 3, "share": {"vector": {"mean": float("nan")}},
                "verdicts": [{"id": "share.vector", "claim": "c", "decision": "holds", "rule": "a rule of its own", "parameters": {},
                              "statistic": None, "effect": None, "test": None, "seed": None, "notes": []}]}
    with pytest.raises(PipelineError, match="verdict share.vector says 'holds' beside non-finite source numbers"):
        check_verdicts(document, Path("summary.json"))


def test_a_plot_step_refuses_a_contradicted_verdict_before_it_writes(tmp_path: Path, expect_one_line) -> None:
    from experiment_3 import step_2_plot

    folder = tmp_path / "results"
    shutil.copytree(REPO / EXP3, folder)
    document = read_json(folder / "summary.json")
    entry = entry_of(document, "captured_energy.vector")
    entry["decision"] = flipped(entry["decision"])
    (folder / "summary.json").write_text(json.dumps(document))
    (folder / "REPORT.md").unlink()
    line = expect_one_line(step_2_plot.main, ["--summary", str(folder / "summary.json")])
    assert f"{folder / 'summary.json'}: verdict captured_energy.vector" in line
    assert not (folder / "REPORT.md").exists()
