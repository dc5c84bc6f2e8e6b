"""The held-block test's replications (Experiment 3C): the a priori tests' convergence rule on planted slope sequences
(settled, still falling, at the tolerance), the deciding-order verdict, the prediction files (fields, run, slopes, rule,
and commit order in a scratch git repository), and the combined verdict over replications (all must hold) — each rule
with its defect planted, and the verdict checker re-deriving what they decide."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

import pytest

from experiment_1.data.shards import load_sample_list
from experiment_1.errors import PipelineError
from experiment_1.report import all_must_hold, check_verdicts
from experiment_2.limit.law_replications import summarize as combine
from experiment_2.limit.laws import (
    LAW_TEST_CONVERGENCE_TOLERANCE,
    NOT_CONVERGED,
    convergence,
    law_test,
    predicted_slopes,
    scored,
)
from experiment_2.limit.prediction import (
    check_rule,
    check_run,
    check_slopes,
    code_rule,
    committed_before,
    load_prediction,
    run_started,
)
from experiment_2.limit.report import successive_trend
from experiment_2.limit.summary import floor_headroom
from experiment_2.limit.verdicts import deciding_order_verdict
from experiment_2.record import VERDICTS
from tests.experiment_2.test_limit_rules import block

REPO = Path(__file__).resolve().parents[2]
PREDICTIONS = REPO / "experiment_2/limit/predictions"
TOL = LAW_TEST_CONVERGENCE_TOLERANCE


def k2_block(window: list[float]) -> dict:
    """A held-block-like 3C block (k = 0 … 3, R = 1) whose order 2 has the given last two successive slopes; every other
    order sits at its refined-law slope."""
    return block([[0.0, 1.0, 1.8, 1.5], [0.0, 1.0, window[0], 1.5], [0.0, 1.0, window[1], 1.5]], chain=1, exponent=1.0)


def k2_test(window: list[float], tolerance: float = TOL) -> dict:
    planted = k2_block(window)
    return law_test(
        planted["limit_slopes"],
        planted["successive_slopes"],
        predicted_slopes("kink_chain", 3, 1.0, 1),
        0.25,
        convergence_tolerance=tolerance,
    )


# --- the convergence rule on planted slope sequences -------------------------------------------------------------


def test_settled_slopes_converge_and_decide() -> None:
    test = k2_test([1.51, 1.50])
    assert test["converged"][1] and test["per_order"][1] == "holds" and test["verdict"] == "holds"


def test_still_falling_slopes_read_not_converged_under_the_law_tests_tolerance() -> None:
    # the first held-block run's k = 2: 1.64 → 1.53, inside 3/2 ± 0.25 but still falling by 0.11 > 0.1
    test = k2_test([1.64, 1.53])
    assert test["per_order"][1] == NOT_CONVERGED and test["verdict"] == NOT_CONVERGED
    assert "still move by 0.11 > 0.1" in test["not_converged_reasons"]["2"]
    # the step-5 rule (convergence tolerance = slope tolerance 0.25) still reads it converged: that rule is unchanged
    assert k2_test([1.64, 1.53], tolerance=0.25)["per_order"][1] == "holds"


def test_at_the_tolerance_is_settled_just_above_is_not() -> None:
    assert k2_test([1.6, 1.5])["converged"][1]  # 1.6 − 1.5 is 0.1 + 1 ulp in binary: at the tolerance
    assert k2_test([1.5, 1.5 + TOL])["converged"][1]
    assert not k2_test([1.5, 1.5 + TOL + 1e-6])["converged"][1]
    rows = convergence(
        k2_block([1.5, 1.5 + TOL + 1e-6])["limit_slopes"], k2_block([1.5, 1.6])["successive_slopes"], TOL
    )
    assert rows[2]["converged"]  # the spread is measured on the window's successive slopes, not the limit rows


def test_rising_slopes_are_not_settled_either() -> None:
    assert k2_test([1.35, 1.5])["per_order"][1] == NOT_CONVERGED


# --- the deciding-order verdict -----------------------------------------------------------------------------------


def deciding_summary(window: list[float]) -> dict:
    planted = k2_block(window)
    scored_block = {**planted, **scored(planted, 0.25, post_hoc=False, convergence_tolerance=TOL)}
    entry = deciding_order_verdict("native", "kink_chain", scored_block, 2, 0.25, TOL, 1000.0)
    return {
        "variants": {"native": scored_block},
        "slope_tolerance": 0.25,
        "convergence_tolerance": TOL,
        "verdicts": [entry],
    }


@pytest.mark.parametrize(
    "window, decision", [([1.51, 1.50], "holds"), ([1.64, 1.53], NOT_CONVERGED), ([2.0, 2.0], "fails")]
)
def test_the_deciding_order_verdict_is_rederived_by_the_checker(window: list[float], decision: str) -> None:
    summary = deciding_summary(window)
    assert summary["verdicts"][0]["id"] == "exp3c.native.kink_chain.k2"
    assert summary["verdicts"][0]["decision"] == decision
    check_verdicts(summary, "planted.json", VERDICTS["3C"])
    flipped = copy.deepcopy(summary)
    flipped["verdicts"][0]["decision"] = "cannot tell" if decision != "cannot tell" else "holds"
    with pytest.raises(PipelineError, match="exp3c.native.kink_chain.k2"):
        check_verdicts(flipped, "planted.json", VERDICTS["3C"])


def test_the_checker_holds_the_convergence_and_slope_tolerances_apart() -> None:
    summary = deciding_summary([1.64, 1.53])  # not converged at 0.1
    loosened = copy.deepcopy(summary)
    loosened["verdicts"][0]["decision"] = "holds"  # what the slope tolerance 0.25 alone would give
    with pytest.raises(PipelineError, match="gives 'cannot tell \\(not converged\\)'"):
        check_verdicts(loosened, "planted.json", VERDICTS["3C"])


# --- prediction files --------------------------------------------------------------------------------------------

SWEEP_CONFIG = {
    "arch": "experiment_2.held_block:resnet18_first_block_held",
    "weights": "random",
    "seed": 1,
    "sample_index": "experiment_1/sample_index_sample_test.json",
    "sample_list_sha256": "d0435bf1f04c0f81cf1bd1ca91d3c597fe7a8726a7bd4bcde8be1dbdf7eecf8a",
    "limit": 6,
    "num_images": 6,
    "dtype": "float64",
}
GRID = [1.0, 0.03, 0.01, 0.003, 0.001, 0.0003, 0.0001]


def test_every_committed_prediction_is_the_laws_for_the_held_block_network_under_the_codes_rule() -> None:
    files = sorted(PREDICTIONS.glob("*.json"))
    assert {path.stem for path in files} == {"held_block_lambda_1e-4", "held_block_seed1", "held_block_images_6_11"}
    runs = set()
    for path in files:
        prediction = load_prediction(path)
        check_slopes(prediction, 7, 1.0, 1, path)
        check_rule(prediction, code_rule(0.25, TOL, 1000.0, 2), path)
        assert prediction["deciding_order"] == 2 and prediction["run"]["lambdas"] == GRID
        runs.add((prediction["run"]["seed"], prediction["run"]["sample_list_sha256"], prediction["run"]["limit"]))
    assert len(runs) == len(files)  # no two predict the same data


def test_the_other_images_are_positions_6_to_11_of_the_test_list_disjoint_from_the_first_six() -> None:
    test_list = load_sample_list(REPO / "experiment_1/sample_index_sample_test.json")
    others = load_sample_list(REPO / "experiment_2/sample_index_3c_test_6_11.json")
    assert others == test_list[6:12] and not set(others) & set(test_list[:6])


def test_a_prediction_lacking_a_field_or_of_an_unknown_law_is_one_line(tmp_path: Path) -> None:
    document = json.loads((PREDICTIONS / "held_block_seed1.json").read_text())
    del document["run"]["seed"]
    (tmp_path / "p.json").write_text(json.dumps(document))
    with pytest.raises(PipelineError, match="prediction lacks run.seed"):
        load_prediction(tmp_path / "p.json")
    document = json.loads((PREDICTIONS / "held_block_seed1.json").read_text())
    document["law"] = "mine"
    (tmp_path / "p.json").write_text(json.dumps(document))
    with pytest.raises(PipelineError, match="law 'mine' is not one of"):
        load_prediction(tmp_path / "p.json")


def test_a_prediction_about_another_run_slopes_or_rule_is_refused() -> None:
    path = PREDICTIONS / "held_block_seed1.json"
    prediction = load_prediction(path)
    check_run(prediction, {"config": SWEEP_CONFIG, "lambdas": GRID}, path)
    with pytest.raises(PipelineError, match="run.seed = 1, but the sweep has 0"):
        check_run(prediction, {"config": {**SWEEP_CONFIG, "seed": 0}, "lambdas": GRID}, path)
    with pytest.raises(PipelineError, match="run.lambdas"):
        check_run(prediction, {"config": SWEEP_CONFIG, "lambdas": GRID[:-2]}, path)
    with pytest.raises(PipelineError, match="the prediction was of another network"):
        check_slopes(prediction, 7, 1.0, 2, path)  # R = 2: slope 1 at k = 2
    with pytest.raises(PipelineError, match="rule.convergence_tolerance is 0.1 but the code decides with 0.25"):
        check_rule(prediction, code_rule(0.25, 0.25, 1000.0, 2), path)


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    (tmp_path / "code.py").write_text("x = 1\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "code")
    return tmp_path


def commit_prediction(root: Path, content: dict) -> tuple[Path, str]:
    path = root / "prediction.json"
    path.write_text(json.dumps(content))
    git(root, "add", "prediction.json")
    git(root, "commit", "-qm", "prediction")
    return path, git(root, "rev-parse", "HEAD")


def test_a_prediction_committed_before_the_run_passes(repo: Path) -> None:
    path, commit = commit_prediction(repo, {"law": "kink_chain"})
    found = committed_before(path, {"git_commit": commit}, "2999-01-01T00:00:00+00:00", root=repo)
    assert found["commit"] == commit


def test_a_prediction_newer_than_the_run_is_refused(repo: Path) -> None:
    before = git(repo, "rev-parse", "HEAD")  # the run ran here, before the prediction existed
    path, _ = commit_prediction(repo, {"law": "kink_chain"})
    with pytest.raises(PipelineError, match="not in the commit the run recorded .* newer than the run it judges"):
        committed_before(path, {"git_commit": before}, None, root=repo)


def test_a_prediction_edited_after_the_run_is_refused(repo: Path) -> None:
    path, commit = commit_prediction(repo, {"law": "kink_chain", "predicted_slopes": [0, 1, 1.5]})
    path.write_text(json.dumps({"law": "kink_chain", "predicted_slopes": [0, 1, 1.6]}))
    with pytest.raises(PipelineError, match="differs from its content at the run's commit"):
        committed_before(path, {"git_commit": commit}, None, root=repo)


def test_a_dirty_or_missing_run_commit_proves_nothing(repo: Path) -> None:
    path, commit = commit_prediction(repo, {"law": "kink_chain"})
    for recorded in (f"{commit}-dirty", "unknown", None):
        with pytest.raises(PipelineError, match="not a clean commit"):
            committed_before(path, {"git_commit": recorded}, None, root=repo)


def test_a_run_that_started_before_the_predictions_commit_is_refused(repo: Path) -> None:
    path, commit = commit_prediction(repo, {"law": "kink_chain"})
    with pytest.raises(PipelineError, match="not before the run started"):
        committed_before(path, {"git_commit": commit}, "2000-01-01T00:00:00+00:00", root=repo)


def test_the_run_start_is_its_earliest_process(tmp_path: Path) -> None:
    stamps = ["2026-12-01T14:49:42+00:00", "2026-12-01T14:49:32+00:00"]
    (tmp_path / "timing.json").write_text(json.dumps({"processes": [{"started_utc": stamp} for stamp in stamps]}))
    assert run_started(tmp_path / "timing.json") == stamps[1]
    assert run_started(tmp_path / "absent.json") is None


# --- the floor headroom ----------------------------------------------------------------------------------------


def test_the_floor_headroom_is_the_smallest_ratio_over_orders_above_zero() -> None:
    entry = {
        "lambda": 1e-4,
        "projections": {"vector": {"mean_energy": {"mean": [1e-40, 4.0, 30.0]}}},
        "roundoff_floor": {"vector": [1.0, 2.0, 3.0]},
    }
    assert floor_headroom({"per_lambda": [entry]}) == [
        {"lambda": 1e-4, "smallest_energy_over_floor": 2.0, "order": 1}
    ]  # order 0 (far below its floor) is not a limit order


# --- the combined verdict over replications --------------------------------------------------------------------


@pytest.mark.parametrize(
    "parts, decision",
    [
        (["holds", "holds", "holds"], "holds"),
        (["holds", "fails", "holds"], "fails"),
        (["holds", NOT_CONVERGED, "holds"], NOT_CONVERGED),
        (["holds", NOT_CONVERGED, "cannot tell"], "cannot tell"),
        (["fails", NOT_CONVERGED, "cannot tell"], "fails"),
        (["unresolved", "holds"], "cannot tell"),
    ],
)
def test_all_must_hold(parts: list[str], decision: str) -> None:
    assert all_must_hold(parts) == decision


def law_test_summary(seed: int, sha: str, law_decision: str, deciding: str, file: str | None = "p.json") -> dict:
    prediction = {"law": "kink_chain", "deciding_order": 2}
    if file is not None:
        prediction.update(file=file, commit="c" * 40)
    row = {"order": 2, "resolved": True, "slope": 1.51, "ci_low": 1.49, "ci_high": 1.53}
    return {
        "config": {"run_id": f"r{seed}{sha}", "git_commit": "c" * 40, "seed": seed, "sample_index": "s.json"}
        | {"sample_list_sha256": sha, "limit": 6},
        "num_valid": 6,
        "lambdas": GRID,
        "prediction": prediction,
        "variants": {"native": {"limit_slopes": [{}, {}, row]}},
        "verdicts": [
            {"id": "exp3c.native.kink_chain", "decision": law_decision},
            {"id": "exp3c.native.kink_chain.k2", "decision": deciding},
        ],
    }


def test_the_combined_verdicts_are_rederived_and_a_flip_is_caught() -> None:
    tests = [
        (Path("a/summary_3c.json"), law_test_summary(0, "x", NOT_CONVERGED, "holds")),
        (Path("b/summary_3c.json"), law_test_summary(1, "x", "holds", "holds")),
        (Path("c/summary_3c.json"), law_test_summary(0, "y", NOT_CONVERGED, "holds")),
    ]
    summary = combine(tests)
    decisions = {entry["id"]: entry["decision"] for entry in summary["verdicts"]}
    assert decisions == {"replications.kink_chain": NOT_CONVERGED, "replications.kink_chain.k2": "holds"}
    check_verdicts(summary, "planted.json", VERDICTS["3C"])
    flipped = copy.deepcopy(summary)
    flipped["verdicts"][1]["decision"] = "fails"
    with pytest.raises(PipelineError, match="replications.kink_chain.k2"):
        check_verdicts(flipped, "planted.json", VERDICTS["3C"])
    edited = copy.deepcopy(summary)
    edited["replications"][0]["deciding_decision"] = "fails"  # a part changed under a stored verdict
    with pytest.raises(PipelineError, match="parameters.parts"):
        check_verdicts(edited, "planted.json", VERDICTS["3C"])


def test_the_combination_refuses_the_same_data_twice_a_test_without_prediction_and_a_single_test() -> None:
    same = [
        (Path("a/summary_3c.json"), law_test_summary(0, "x", "holds", "holds")),
        (Path("b/summary_3c.json"), law_test_summary(0, "x", "holds", "holds")),
    ]
    with pytest.raises(PipelineError, match="the same seed and images as a/summary_3c.json"):
        combine(same)
    legacy = [same[0], (Path("b/summary_3c.json"), law_test_summary(1, "x", "holds", "holds", file=None))]
    with pytest.raises(PipelineError, match="judged without a prediction file"):
        combine(legacy)
    with pytest.raises(PipelineError, match="at least two replications"):
        combine(same[:1])


# --- the committed replications: each judged against its own prediction, committed before it ran ----------------

HELD = REPO / "experiment_2/results_3c_resnet18_first_block_held"
REPLICATIONS = ("lambda_1e-4", "seed1", "images_6_11")


@pytest.mark.parametrize("name", REPLICATIONS)
def test_each_committed_replication_ran_after_its_prediction_and_refuses_another(name: str) -> None:
    from experiment_1.files import read_json
    from experiment_2.limit.law_test import summarize as law_summary

    folder = Path(f"{HELD}_{name}")
    test = read_json(folder / "summary_3c.json")
    recorded = test["config"]["git_commit"]
    assert not recorded.endswith("-dirty")
    ancestry = subprocess.run(
        ["git", "merge-base", "--is-ancestor", test["prediction"]["commit"], recorded], cwd=REPO, capture_output=True
    )
    assert ancestry.returncode == 0  # the prediction's commit precedes (or is) the run's
    sweep = read_json(folder / "summary_all.json")
    own = PREDICTIONS / f"held_block_{name}.json"
    assert (
        law_summary(sweep, load_prediction(own), own, run_started(folder / "timing.json"))["verdicts"]
        == test["verdicts"]
    )
    other = PREDICTIONS / f"held_block_{REPLICATIONS[(REPLICATIONS.index(name) + 1) % 3]}.json"
    with pytest.raises(PipelineError, match="the prediction is about run"):
        law_summary(sweep, load_prediction(other), other, None)


# --- the REPORT's sentence on the deciding order's successive slopes ----------------------------------------------


def trend_block(slopes: list[float], resolved: list[bool] | None = None) -> dict:
    """Only what the sentence reads: successive slopes of order 2 (order 1 at 1), one λ pair per value."""
    resolved = resolved or [True] * len(slopes)
    return {
        "successive_slopes": [
            {"slope": [0.0, 1.0, slope], "resolved": [True, True, flag]} for slope, flag in zip(slopes, resolved)
        ]
    }


PREFIX = "At the deciding order k = 2 the successive slopes, from the largest λ pair to the smallest, are "


@pytest.mark.parametrize(
    ("slopes", "resolved", "tail"),
    [
        ([1.84, 1.6, 1.45], None, ": they fall at every step and pass the law's 1.5 rather than level at it"),
        ([1.2, 1.4, 1.6], None, ": they rise at every step and pass the law's 1.5 rather than level at it"),
        ([1.84, 1.7, 1.55], None, ": they still fall at every step, towards the law's 1.5."),
        ([1.84, 1.5, 1.55], None, "."),  # not one way at every step: the values alone
        ([1.84, 1.84, 1.45], None, "."),  # a step that does not move is no fall
        ([1.84, 9.0, 1.45], [True, False, True], ": they fall at every step and pass"),  # the unresolved pair left out
    ],
)
def test_the_trend_sentence_at_its_edges(slopes: list[float], resolved: list[bool] | None, tail: str) -> None:
    sentence = successive_trend(trend_block(slopes, resolved), 2, 1.5)
    shown = [slope for slope, flag in zip(slopes, resolved or [True] * len(slopes)) if flag]
    values = PREFIX + ", ".join(f"{slope:.3g}" for slope in shown)
    assert sentence == values + "." if tail == "." else sentence.startswith(values + tail)


def test_one_resolved_pair_says_nothing() -> None:
    assert successive_trend(trend_block([1.8, 1.4], [True, False]), 2, 1.5) == ""


def test_the_committed_lambda_1e4_replication_falls_through_three_halves() -> None:
    summary = json.loads(
        (REPO / "experiment_2/results_3c_resnet18_first_block_held_lambda_1e-4/summary_3c.json").read_text()
    )
    block = summary["variants"]["native"]
    slopes = [pair["slope"][2] for pair in block["successive_slopes"]]
    assert len(slopes) == 6 and all(later < earlier for earlier, later in zip(slopes, slopes[1:]))
    assert slopes[-1] < 1.5 < slopes[0]
    assert "pass the law's 1.5 rather than level at it" in successive_trend(block, 2, 1.5)
