"""The verdict engine (experiment_1/report/rules.py): a committed Experiment 1 summary passes its check, and each planted
edit is refused in one line naming the file and the verdict — a decision the rule does not give, an id no rule
matches, another rule's words, a missing number, a verdict edited together with its own number (the summary's source
disagrees), a decided verdict on a non-finite input, and "n/a — non-finite", "saturated" or "unresolved" stored where
the rule on finite numbers gives another word. The shared decisions at their boundaries."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.record import VERDICTS
from experiment_1.report.markdown import NON_FINITE
from experiment_1.report.rules import (
    Contradiction,
    Missing,
    Reading,
    Rule,
    check_verdicts,
    ci_against,
    every_part,
    excludes_zero,
    holm_sides,
    load_checked_summary,
    real,
    resolve,
    rule_of,
    same,
    side,
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


# ---- Rule.verdict on a rule written here: the claim, the words, the notes and the non-finite guard, written out

ABOVE = Rule(
    id="test.above",
    text=lambda entry: f"holds when the mean exceeds {entry['parameters']['bound']:g}, else fails",
    read=lambda reading: {"mean": reading.number("stats", "mean"), "bound": reading.own("parameters", "bound")},
    decide=lambda mean, bound: HOLDS if mean > bound else FAILS,
    claim="the mean exceeds {bound}",
)
NON_FINITE_NOTE = "non-finite input: no verdict is drawn from it"


def above(mean: float, effect: float = 0.5, **options) -> dict:
    return ABOVE.verdict(
        "above", {"stats": {"mean": mean}}, parameters={"bound": 1.0}, effect={"estimate": effect}, **options
    )


def test_a_rule_fills_its_claim_states_its_words_and_decides_on_the_summary() -> None:
    made = above(2.0, fields={"bound": 1}, notes=lambda decision: [f"decided {decision}"])
    assert (made["claim"], made["rule"], made["decision"], made["notes"]) == (
        "the mean exceeds 1",
        "holds when the mean exceeds 1, else fails",
        HOLDS,
        ["decided holds"],
    )
    assert above(0.5, claim="given")["claim"] == "given"
    assert (above(0.5, notes=["kept"])["decision"], above(0.5, notes=["kept"])["notes"]) == (FAILS, ["kept"])
    assert above(0.5)["claim"] == "the mean exceeds {bound}"  # no fields: the template as declared


@pytest.mark.parametrize(
    ("mean", "effect"), [(float("nan"), 0.5), (float("inf"), 0.5), (2.0, float("inf")), (2.0, float("nan"))]
)
def test_a_non_finite_input_or_entry_number_gives_no_verdict_and_says_so(mean: float, effect: float) -> None:
    # the rule's own input (the summary's mean) or a number of the entry (its effect): either one non-finite is enough
    made = above(mean, effect, notes=lambda decision: [f"decided {decision}"])
    assert made["decision"] == NON_FINITE
    assert made["notes"] == [f"decided {NON_FINITE}", NON_FINITE_NOTE]
    assert ABOVE.judge(made, {"stats": {"mean": mean}}) == NON_FINITE


def test_a_reading_finds_another_verdicts_decision_or_names_what_is_missing() -> None:
    summary = {"verdicts": [{"id": "a", "decision": HOLDS}, "not an entry"]}
    assert Reading({}, summary).decision_of("a") == HOLDS
    for summary in ({"verdicts": [{"id": "b", "decision": HOLDS}]}, {}, ["a"], None):
        with pytest.raises(Missing, match="the verdict a"):
            Reading({}, summary).decision_of("a")


def test_load_checked_summary_loads_the_file_and_refuses_a_verdict_its_numbers_contradict(tmp_path: Path) -> None:
    step = "experiment_1.step_3_evaluate"
    assert load_checked_summary(REPO / SUMMARY, 1, step, keys=("metrics",), rules=TABLE) == committed()
    document = committed()
    edited = entry(document, "mobius.exact")
    edited["decision"] = FAILS if edited["decision"] != FAILS else HOLDS
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "summary.json").write_text(json.dumps(document))
    with pytest.raises(PipelineError) as error:
        load_checked_summary(folder / "summary.json", 1, step, keys=("metrics",), rules=TABLE)
    assert str(error.value).startswith(f"{folder / 'summary.json'}: verdict mobius.exact says ")
    assert str(error.value).endswith(f"; rerun `python -m {step}` to rewrite it")
    with pytest.raises(PipelineError, match="lacks nothing_here, .* to --its-summary, or rerun it"):
        load_checked_summary(REPO / SUMMARY, 1, step, "--its-summary", keys=("nothing_here",), rules=TABLE)
    with pytest.raises(PipelineError, match="not the Experiment 2 summary of experiment_1.step_3_evaluate"):
        load_checked_summary(REPO / SUMMARY, 2, step, rules=TABLE)


def test_holm_sides_reads_the_side_it_is_given_and_the_holm_adjusted_p() -> None:
    below = [(-1.0, -0.1), (-1.0, -0.2)]
    assert holm_sides(below, [0.03, 0.02], 0.05, holds=-1) == HOLDS
    assert holm_sides(below, [0.03, 0.02], 0.05) == FAILS
    # a family where Holm and Bonferroni differ: p = 0.02, 0.04 → Holm 0.04, 0.04 (both ≤ 0.05); Bonferroni 0.04, 0.08
    assert holm_sides([(0.1, 1.0), (0.1, 1.0)], [0.02, 0.04], 0.05) == HOLDS
    # and one where Holm and no correction differ: p = 0.03, 0.04 → Holm 0.06, 0.06 (> 0.05); unadjusted both ≤ 0.05
    assert holm_sides([(0.1, 1.0), (0.1, 1.0)], [0.03, 0.04], 0.05) == CANNOT_TELL


def test_a_number_the_rule_reads_must_be_a_real_number_and_a_missing_one_is_named_by_its_path() -> None:
    summary = {"x": [{"y": "text", "z": True, "w": 2}]}
    assert Reading({}, summary).number("x", 0, "w") == 2.0
    for key in ("y", "z", "v"):
        with pytest.raises(Missing) as missing:
            Reading({}, summary).number("x", 0, key)
        assert missing.value.args == (f"x.0.{key}",)


def test_the_checker_names_the_rule_its_words_and_the_shape_it_cannot_read() -> None:
    table = (("above", ABOVE),)
    summary = {"stats": {"mean": 2.0}}
    good = above(2.0)
    check_verdicts({**summary, "verdicts": [good]}, "f.json", table)
    with pytest.raises(PipelineError) as error:
        check_verdicts({**summary, "verdicts": [{**good, "rule": "another rule"}]}, "f.json", table)
    assert str(error.value) == (
        "f.json: verdict above: it states another rule than its declared rule test.above "
        "('holds when the mean exceeds 1, else fails'); rerun the step that wrote it"
    )
    odd = {**good, "parameters": {"bound": "one"}, "rule": "holds when the mean exceeds one, else fails"}
    with pytest.raises(
        PipelineError, match=r"not in the shape its rule test.above reads \(ValueError: Unknown format code"
    ):
        check_verdicts({**summary, "verdicts": [odd]}, "f.json", table)
    assert ABOVE.judge(good, {"stats": {"mean": float("inf")}}) == NON_FINITE


def test_the_checker_reads_only_a_list_of_entries_and_names_an_entry_without_an_id() -> None:
    for document in (None, [], {"verdicts": None}, {"verdicts": "holds"}, {}):
        check_verdicts(document, "f.json", TABLE)  # nothing to check
    with pytest.raises(PipelineError) as error:
        check_verdicts({"verdicts": ["not an entry"]}, "f.json", TABLE)
    assert str(error.value) == (
        "f.json: verdict ? has decision None, not one of holds, fails, cannot tell, cannot tell (not converged), "
        "cannot tell (no power), cannot tell (estimator out of range), cannot tell (partly contradicted), consistent (post hoc), saturated, constant, "
        f"unresolved, {NON_FINITE}; rerun the step that wrote it"
    )


def test_side_and_significant_side_at_zero() -> None:
    assert (side(-1.0, 0.0), side(0.0, 1.0), side(-1.0, -1e-12), side(1e-12, 1.0)) == (0, 0, -1, 1)
    assert side(1.0, 2.0, value=1.0) == 0 and side(1.0, 2.0, value=0.999) == 1
    assert significant_side(1.0, 2.0, 0.01, 0.05) == HOLDS and significant_side(-2.0, -1.0, 0.01, 0.05) == FAILS


def test_real_numbers_and_copies_of_one_number() -> None:
    assert [real(value) for value in (1, 1.5, -0.0, True, float("inf"), float("nan"), "1", None)] == [
        True,
        True,
        True,
        False,
        False,
        False,
        False,
        False,
    ]
    nan = float("nan")
    # to 1e-9 relative (a JSON round trip), or 1e-12 absolute near 0; NaN is its own copy; anything else by ==
    assert same(1.0, 1.0 + 1e-10) and not same(1.0, 1.0 + 1e-8) and same(1e6, 1e6 + 1e-4) and same(0.0, 1e-13)
    assert not same(0.0, 1e-11)
    assert same(nan, nan) and not same(nan, 1.0) and not same(1.0, nan) and not same(1.0, None)
    assert same(None, None) and same("a", "a") and not same(1, "1")


def test_an_entrys_own_part_or_what_it_lacks() -> None:
    reading = Reading({"effect": {"ci_low": 0.5}, "test": None}, {})
    assert reading.own("effect", "ci_low") == 0.5
    for part, key in (("effect", "ci_high"), ("test", "p_value"), ("seed", "x")):
        with pytest.raises(Missing) as missing:
            reading.own(part, key)
        assert missing.value.args == (f"{part}.{key}",)


def test_a_reference_names_one_module_and_one_attribute() -> None:
    assert resolve("experiment_1.report.rules:side") is side
    with pytest.raises(ValueError, match="^'experiment_1.report.rules': expected 'module:attribute'$"):
        resolve("experiment_1.report.rules")
    with pytest.raises(AttributeError):  # the module is what precedes the first colon
        resolve("experiment_1.report.rules:side:more")
    assert rule_of((("above", ABOVE),), "above") is ABOVE and rule_of((("above", ABOVE),), "other") is None


def test_a_copy_against_a_source_that_is_not_a_mapping_and_a_decision_outside_the_vocabulary() -> None:
    with pytest.raises(Contradiction, match=r"^its effect.ci_low 1.0 is not None, the number its rule reads$"):
        Reading({"effect": {"ci_low": 1.0}}, {}).copied("effect", None, keys=("ci_low",))
    inputs = {"mean": 2.0, "bound": 1.0}
    assert ABOVE.decide_on(inputs) == HOLDS and ABOVE.decide_on(inputs, None, {"p": 0.5}) == HOLDS
    assert ABOVE.decide_on({**inputs, "mean": float("nan")}) == NON_FINITE
    assert ABOVE.decide_on(inputs, {"estimate": float("-inf")}) == NON_FINITE
    vague = Rule(id="test.vague", text="", read=lambda reading: {}, decide=lambda: "maybe")
    with pytest.raises(ValueError, match=r"^rule test.vague: decision 'maybe' is not one of \('holds', "):
        vague.decide_on({})
