"""Experiment 2's comparison of a run with its random-init null (experiment_2/spectrum/verdicts.py: null_verdicts and
check_random_init_null) on hand-built summaries: κ's CIs touching, just apart on either side, a constant null, an
unresolved run or null, the batch-norm calibration label, each projection on its own; and every refusal of a null that
is no random-init run of the same list, at its boundary. Written against the survivors of
`make mutation MODULES=experiment_2/spectrum/verdicts.py`."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiment_1.errors import PipelineError
from experiment_1.report import ALPHA, CANNOT_TELL, FAILS, HOLDS, UNRESOLVED
from experiment_2.spectrum.verdicts import NULL, UNRESOLVED_NOTE, check_random_init_null, null_verdicts

EPS = 1e-9


def kappa(mean: float, low: float, high: float) -> dict:
    return {"mean": mean, "ci_low": low, "ci_high": high}


def run(vector: dict, scalar: dict, unresolved: tuple[list, list] = ([], []), **extra) -> dict:
    return {
        "projections": {"vector": {"kappa": vector}, "scalar": {"kappa": scalar}},
        "roundoff": {"vector": {"unresolved_orders": unresolved[0]}, "scalar": {"unresolved_orders": unresolved[1]}},
        **extra,
    }


def null(vector: dict, scalar: dict, constant: bool = False, calibration: dict | None = None, **extra) -> dict:
    config = {"weights": "random"} | ({"batchnorm_calibration": calibration} if calibration else {})
    verdicts = [
        {"id": "resolved.vector", "decision": HOLDS},
        {"id": "input_dependent", "decision": FAILS if constant else HOLDS},
    ]
    return run(vector, scalar, num_valid=12, config=config, verdicts=verdicts, **extra)


THEIRS = kappa(2.0, 1.5, 2.5)


@pytest.mark.parametrize(
    "ours, decision, moved",
    [
        (kappa(1.2, 1.0, 1.5), CANNOT_TELL, None),  # our CI's top touches the null's bottom: they overlap
        (kappa(1.2, 1.0, 1.5 - EPS), HOLDS, "down by -0.8"),
        (kappa(2.8, 2.5, 3.0), CANNOT_TELL, None),  # the null's top touches ours
        (kappa(2.8, 2.5 + EPS, 3.0), HOLDS, "up by +0.8"),
        (kappa(2.0, 1.9, 2.1), CANNOT_TELL, None),  # inside
    ],
)
def test_kappa_cis_decide_at_touching_ends(ours: dict, decision: str, moved: str | None) -> None:
    vector, scalar = null_verdicts(run(ours, THEIRS), null(THEIRS, THEIRS))
    assert vector == {
        "id": "null.vector",
        "claim": "vector projection: training changes the spectrum (κ differs from the random-init null's)",
        "decision": decision,
        "rule": NULL.text,
        "parameters": {},
        "statistic": None,
        "effect": {
            "name": "κ, this run",
            "value": ours["mean"],
            "ci_low": ours["ci_low"],
            "ci_high": ours["ci_high"],
            "confidence": 1 - ALPHA,
            "percent": False,
        },
        "test": None,
        "seed": None,
        "notes": ["null (random init): κ = 2 [1.5, 2.5], N = 12"] + ([f"training moves κ {moved}"] if moved else []),
    }
    # the scalar projection is read on its own: same κ as the null's, so no change there
    assert scalar["id"] == "null.scalar" and scalar["decision"] == CANNOT_TELL
    assert scalar["claim"].startswith("scalar projection: ")
    assert scalar["notes"] == ["null (random init): κ = 2 [1.5, 2.5], N = 12"]


def test_a_constant_null_is_no_null_even_when_the_cis_are_apart() -> None:
    apart = kappa(3.0, 2.9, 3.1)
    for entry in null_verdicts(run(apart, apart), null(THEIRS, THEIRS, constant=True)):
        assert entry["decision"] == CANNOT_TELL
        assert entry["notes"][1:] == ["the null is a constant function of its input: it is no null"]


@pytest.mark.parametrize(
    "ours_unresolved, null_unresolved, named",
    [
        (([], []), ([1], []), "the null"),
        (([2], []), ([], []), "this run"),
        (([2], []), ([1, 2], []), "the null and this run"),
    ],
)
def test_an_unresolved_order_in_either_run_makes_the_projection_unresolved(
    ours_unresolved: tuple, null_unresolved: tuple, named: str
) -> None:
    apart = kappa(3.0, 2.9, 3.1)
    theirs = null(THEIRS, THEIRS, constant=True)  # unresolved is read first: before the constant null
    theirs["roundoff"] = run(THEIRS, THEIRS, null_unresolved)["roundoff"]
    vector, scalar = null_verdicts(run(apart, apart, ours_unresolved), theirs)
    assert vector["decision"] == UNRESOLVED
    assert vector["notes"][1:] == [f"{named} has orders within the round-off floor; {UNRESOLVED_NOTE}"]
    assert scalar["decision"] == CANNOT_TELL and scalar["notes"][1:] == [
        "the null is a constant function of its input: it is no null"
    ]


def test_the_null_label_names_its_batchnorm_calibration() -> None:
    entry = null_verdicts(run(THEIRS, THEIRS), null(THEIRS, THEIRS, calibration={"images": 64}))[0]
    assert entry["notes"] == [
        "null (random init, batch-norm statistics re-estimated on 64 sample images): κ = 2 [1.5, 2.5], N = 12"
    ]


BASE = {
    "run_id": "a",
    "weights": "IMAGENET1K_V1",
    "arch": "resnet18",
    "sample_list_sha256": "s",
    "num_images": 10,
    "sample_index": "l.json",
}
GOOD = {**BASE, "run_id": "b", "weights": "random"}


@pytest.mark.parametrize("num_images", [1, 10])
def test_a_null_on_the_same_list_or_its_first_images_is_accepted(tmp_path: Path, num_images: int) -> None:
    check_random_init_null(
        {"config": BASE}, tmp_path / "s.json", {"config": {**GOOD, "num_images": num_images}}, tmp_path / "n.json"
    )


@pytest.mark.parametrize(
    "changes, same_path, message",
    [
        (
            {},
            True,
            "{n}: is the same run as {s}; pass to --compare-summary the summary of the same step run with --weights random",
        ),
        (
            {"run_id": "a"},
            False,
            "{n}: is the same run as {s}; pass to --compare-summary the summary of the same step run with --weights random",
        ),
        (
            {"weights": "IMAGENET1K_V1"},
            False,
            "{n}: a run with weights IMAGENET1K_V1, not a random-init null; pass to --compare-summary the summary of the "
            "same step run with --weights random",
        ),
        (
            {"arch": "resnet50"},
            False,
            "{n}: a resnet50 run but {s} is resnet18; run the null with --arch resnet18 --weights random",
        ),
        (
            {"sample_list_sha256": "t"},
            False,
            "{n}: evaluated another sample list (l.json, 10 images) than {s} (l.json, 10 images); run the null on the same "
            "list (--limit N for its first N images)",
        ),
        (
            {"num_images": 11, "sample_index": "m.json"},
            False,
            "{n}: evaluated another sample list (m.json, 11 images) than {s} (l.json, 10 images); run the null on the same "
            "list (--limit N for its first N images)",
        ),
    ],
)
def test_a_null_that_is_no_random_init_run_of_the_same_list_is_refused(
    tmp_path: Path, changes: dict, same_path: bool, message: str
) -> None:
    summary_path = tmp_path / "s.json"
    null_path = summary_path if same_path else tmp_path / "n.json"
    with pytest.raises(PipelineError) as refused:
        check_random_init_null({"config": BASE}, summary_path, {"config": {**GOOD, **changes}}, null_path)
    assert str(refused.value) == message.format(n=null_path, s=summary_path)


def test_the_refusal_names_the_flag_it_was_given(tmp_path: Path) -> None:
    with pytest.raises(PipelineError, match=r"not a random-init null; pass to --null the summary"):
        check_random_init_null(
            {"config": BASE},
            tmp_path / "s.json",
            {"config": {**GOOD, "weights": None}},
            tmp_path / "n.json",
            flag="--null",
        )
