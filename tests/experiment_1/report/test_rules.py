"""The verdict engine (experiment_1/report/rules.py): a committed Experiment 1 summary passes its check, and each planted
edit is refused in one line naming the file and the verdict — a decision the rule does not give, an id no rule
matches, another rule's words, a missing number, a verdict edited together with its own number (the summary's source
disagrees), a decided verdict on a non-finite input, and "n/a — non-finite", "saturated" or "unresolved" stored where
the rule on finite numbers gives another word. The shared decisions at their boundaries."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.record import VERDICTS
from experiment_1.report.markdown import NON_FINITE
from experiment_1.report.rules import (
    check_verdicts,
    ci_against,
    every_part,
    excludes_zero,
    holm_sides,
    rule_of,
    significant_side,
)
from experiment_1.report.verdicts import CANNOT_TELL, FAILS, HOLDS, SATURATED, UNRESOLVED

REPO = Path(__file__).resolve().parents[3]
SUMMARY = "experiment_1/results_efficientnet_lite0_sample/summary.json"
TABLE = VERDICTS[1]


def committed() -> dict:
    return copy.deepcopy(read_json(REPO / SUMMARY))


def entry(document: dict, verdict_id: str) -> dict:
    return next(item for item in document["verdicts"] if item["id"] == verdict_id)


def refused(document: dict) -> str:
    with pytest.raises(PipelineError) as error:
        check_verdicts(document, Path("summary.json"), TABLE)
    line = str(error.value)
    assert "\n" not in line and line.startswith("summary.json: verdict ")
    return line


def test_the_committed_summary_passes_and_its_verdicts_are_rebuilt_as_stored() -> None:
    from experiment_1.reconstruction.verdicts import verdicts

    document = committed()
    check_verdicts(document, Path("summary.json"), TABLE)
    assert verdicts(document) == document["verdicts"]


@pytest.mark.parametrize("word", [CANNOT_TELL, FAILS, SATURATED, UNRESOLVED, NON_FINITE])
def test_a_decision_the_rule_does_not_give_is_refused(word: str) -> None:
    document = committed()
    entry(document, "naive.misses")["decision"] = word
    assert f"verdict naive.misses says {word!r} but its rule exp1.naive_misses gives 'holds'" in refused(document)


def test_a_decision_outside_the_vocabulary_an_unknown_id_and_another_rules_words_are_refused() -> None:
    document = committed()
    entry(document, "naive.misses")["decision"] = "confirmed"
    assert "has decision 'confirmed', not one of" in refused(document)
    document = committed()
    entry(document, "naive.misses")["id"] = "naive.misses_again"
    assert "verdict naive.misses_again matches no declared rule" in refused(document)
    document = committed()
    entry(document, "naive.misses")["rule"] = "holds when the CI lies anywhere"
    assert "verdict naive.misses: it states another rule than its declared rule exp1.naive_misses" in refused(document)
    document = committed()
    entry(document, "naive.misses").pop("rule")  # a verdict without its rule: one line, no traceback
    assert "states another rule than its declared rule" in refused(document)
    document = committed()
    entry(document, "naive.misses")["effect"] = "wide"  # a part of another shape
    assert "verdict naive.misses says 'holds' but lacks effect.ci_low" in refused(document)


def test_a_missing_number_is_refused_naming_it() -> None:
    document = committed()
    document["metrics"]["first_order_rel_error"].pop("ci_high")
    line = refused(document)
    assert "verdict first_order.interactions says 'holds' but lacks metrics.first_order_rel_error.ci_high" in line


def test_a_verdict_edited_with_its_own_number_is_refused_by_the_summarys_source() -> None:
    document = committed()
    naive = entry(document, "naive.misses")
    naive["decision"], naive["effect"]["ci_low"], naive["effect"]["ci_high"] = FAILS, 0.2, 0.5
    assert "verdict naive.misses: its effect.ci_low 0.2 is not 522.5" in refused(document)
    document = committed()
    exact = entry(document, "mobius.exact")
    exact["decision"], exact["statistic"]["value"] = FAILS, 1.0
    assert "verdict mobius.exact: its statistic.value 1.0 is not " in refused(document)
    document = committed()
    entry(document, "mobius.exact")["parameters"]["tolerance"] = 1e-12  # a threshold edited where it is printed
    assert "verdict mobius.exact: its parameters.tolerance 1e-12 is not 0.0001, the number its rule reads" in refused(
        document
    )


def test_a_decided_verdict_on_a_non_finite_number_is_refused_and_na_stands() -> None:
    document = committed()
    document["metrics"]["naive_sum_rel_error"]["ci_low"] = float("nan")
    entry(document, "naive.misses")["effect"]["ci_low"] = float("nan")
    assert "verdict naive.misses says 'holds' but its rule exp1.naive_misses gives 'n/a — non-finite'" in refused(
        document
    )
    entry(document, "naive.misses")["decision"] = NON_FINITE
    check_verdicts(document, Path("summary.json"), TABLE)


def test_each_verdict_id_finds_its_rule_and_no_other() -> None:
    assert [rule_of(TABLE, name).id for name in ("mobius.exact", "naive.misses", "first_order.interactions")] == [
        "exp1.mobius_exact",
        "exp1.naive_misses",
        "exp1.first_order_interactions",
    ]
    assert rule_of(TABLE, "naive.misses.vector") is None


@pytest.mark.parametrize(
    ("low", "high", "holds", "at_or", "decision"),
    [
        (1.0, 2.0, "above", True, HOLDS),  # at the value counts with at_or
        (1.0, 2.0, "above", False, CANNOT_TELL),
        (0.5, 0.999, "above", True, FAILS),
        (0.5, 1.0, "above", True, CANNOT_TELL),
        (0.2, 1.0, "below", True, HOLDS),
        (0.2, 1.0, "below", False, CANNOT_TELL),
        (1.001, 2.0, "below", False, FAILS),
    ],
)
def test_a_ci_against_a_number_at_its_boundary(low: float, high: float, holds: str, at_or: bool, decision: str) -> None:
    assert ci_against(low, high, 1.0, holds, at_or) == decision


def test_the_shared_sign_rules_at_their_boundaries() -> None:
    assert excludes_zero(0.0, 1.0) == CANNOT_TELL and excludes_zero(-2.0, -1e-9) == HOLDS
    assert significant_side(-2.0, -1.0, 0.05, 0.05, holds=-1) == HOLDS  # p at α counts
    assert significant_side(-2.0, -1.0, 0.0501, 0.05, holds=-1) == CANNOT_TELL
    assert significant_side(1.0, 2.0, 0.01, 0.05, holds=-1) == FAILS
    assert every_part([]) == CANNOT_TELL and every_part([HOLDS, FAILS, CANNOT_TELL]) == FAILS
    # Holm over two parts: p = 0.03 and 0.02 adjust to 0.04 and 0.04 (≤ α), 0.03 and 0.026 to 0.052 (> α)
    assert holm_sides([(0.1, 1.0), (0.2, 1.0)], [0.03, 0.02], 0.05) == HOLDS
    assert holm_sides([(0.1, 1.0), (0.2, 1.0)], [0.03, 0.026], 0.05) == CANNOT_TELL
