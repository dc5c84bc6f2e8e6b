"""The random-init null over networks (experiment_2.spectrum.null_networks): each rule planted in small synthetic
summaries — the exact rank p against a brute-force count over relabellings, the power rule with few seeds at and
beside its boundary, the input rule's threshold at, just below and just above it, the disjointness of the calibration
images — and the stored verdicts re-derived by the verdict engine (experiment_1.report.rules)."""

from __future__ import annotations

import copy
import itertools
from pathlib import Path

import numpy as np
import pytest

from experiment_1.data.shards import SampleRef
from experiment_1.errors import PipelineError
from experiment_1.report import check_verdicts
from experiment_1.run.preflight import calibration_samples
from experiment_2.record import VERDICTS
from experiment_2.spectrum.null_networks import (
    INPUT_FRACTION,
    STATISTICS,
    best_attainable_p,
    calibration_disjoint,
    check_seed_runs,
    compare_networks,
    is_input_function,
    rank_p_value,
)

IMAGES = 4
L = 9
TRAINED_SPREAD = 0.3


def arrays_with(kappa: float, images: int = IMAGES, offset: float = 0.0) -> dict[str, np.ndarray]:
    """Per-image arrays whose every statistic is ``kappa`` (± a small per-image offset) on ``images`` images."""
    values = kappa + offset * np.arange(images)
    arrays = {name: values.copy() for name in STATISTICS}
    arrays.update(index=np.arange(images), valid=np.ones(images, dtype=bool))
    return arrays


def roundoff(unresolved: list[int]) -> dict:
    return {projection: {"unresolved_orders": unresolved} for projection in ("vector", "scalar")}


def seed_run(seed: int, kappa: float, spread: float = 0.02, unresolved: list[int] | None = None) -> tuple[dict, dict]:
    summary = {
        "config": {
            "seed": seed,
            "run_id": f"run-{seed}",
            "arch": "efficientnet_lite0",
            "num_blocks": L,
            "num_images": IMAGES,
            "batchnorm_calibration": {"images": 10, "batch": 64, "positions": [IMAGES, IMAGES + 10]},
        },
        "num_valid": IMAGES,
        "input_dependence": {"trunk_energy_relative_spread": spread, "distinct_predictions": 2},
        "roundoff": roundoff(unresolved or []),
        "walsh": {"roundoff": roundoff([])},
        "projections": {
            projection: {"mean_spectrum": {"mean": (np.ones(L) / L).tolist()}} for projection in ("vector", "scalar")
        },
    }
    return summary, arrays_with(kappa)


def trained_run(kappa: float) -> tuple[dict, dict]:
    summary = {
        "config": {"run_id": "trained", "arch": "efficientnet_lite0", "num_blocks": L, "sample_index": "list.json"},
        "input_dependence": {"trunk_energy_relative_spread": TRAINED_SPREAD, "distinct_predictions": 200},
    }
    return summary, arrays_with(kappa, images=10, offset=0.0)


def compared(trained_kappa: float, seeds: list[tuple[dict, dict]]) -> dict:
    summary, arrays = trained_run(trained_kappa)
    return compare_networks(summary, arrays, seeds, {"trained_summary": "t.json", "seeds_dir": "seeds"})


def decision(result: dict, verdict_id: str) -> dict:
    return next(entry for entry in result["verdicts"] if entry["id"] == verdict_id)


# ---- the exact rank p


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("direction", ["lower", "higher"])
def test_rank_p_is_the_brute_force_share_of_relabellings(seed: int, direction: str) -> None:
    """Under the null every network is equally likely to be the one labelled trained: p is the share of all (n+1)!
    orderings in which the labelled network is at or beyond the observed value (ties included)."""
    rng = np.random.default_rng(seed)
    pool = rng.integers(0, 4, size=6).astype(float)  # small integers: ties happen
    trained, seeds = pool[0], pool[1:]
    beyond = 0
    orderings = list(itertools.permutations(range(len(pool))))
    for order in orderings:
        labelled = pool[order[0]]
        beyond += labelled <= trained if direction == "lower" else labelled >= trained
    assert rank_p_value(trained, seeds, direction) == pytest.approx(beyond / len(orderings))


def test_rank_p_floor_and_ties() -> None:
    assert rank_p_value(1.0, [2.0, 3.0, 4.0]) == pytest.approx(1 / 4)
    assert rank_p_value(2.0, [2.0, 3.0, 4.0]) == pytest.approx(2 / 4)  # a tie counts against the trained network
    assert rank_p_value(5.0, [2.0, 3.0, 4.0]) == pytest.approx(1.0)
    assert rank_p_value(5.0, [2.0, 3.0, 4.0], "higher") == pytest.approx(1 / 4)
    with pytest.raises(ValueError):
        rank_p_value(1.0, [2.0], "sideways")


# ---- the power rule


def test_few_seeds_cannot_tell_for_lack_of_power_even_at_the_extreme() -> None:
    result = compared(1.0, [seed_run(seed, 5.0 + 0.01 * seed) for seed in range(1, 6)])
    entry = decision(result, "null_networks.kappa_vector")
    assert entry["test"]["p_value"] == pytest.approx(1 / 6)
    assert entry["decision"] == "cannot tell" and entry["notes"][0].startswith("no power")
    check_verdicts(result, "planted.json", VERDICTS["2N"])


@pytest.mark.parametrize("networks, expected", [(38, "cannot tell"), (39, "holds"), (40, "holds")])
def test_power_boundary_two_tests_need_39_networks(networks: int, expected: str) -> None:
    """m = 2, α = 0.05: the floor 1/(n+1) times 2 reaches α at n = 39 exactly, not at 38."""
    assert (best_attainable_p(networks, 2) <= 0.05) == (networks >= 39)
    result = compared(1.0, [seed_run(seed, 5.0 + 0.01 * seed) for seed in range(1, networks + 1)])
    entry = decision(result, "null_networks.walsh_kappa_vector")
    assert entry["decision"] == expected
    assert entry["test"]["p_adjusted"] == pytest.approx(2 / (networks + 1))
    check_verdicts(result, "planted.json", VERDICTS["2N"])


def test_a_trained_value_inside_the_seeds_cannot_tell_and_never_fails() -> None:
    result = compared(5.2, [seed_run(seed, 5.0 + 0.01 * seed) for seed in range(1, 45)])
    entries = [decision(result, f"null_networks.{name}") for name in ("kappa_vector", "walsh_kappa_vector")]
    assert [entry["decision"] for entry in entries] == ["cannot tell", "cannot tell"]
    assert not any(entry["notes"][0].startswith("no power") for entry in entries)  # it had power: the data say no
    beyond = compared(9.0, [seed_run(seed, 5.0 + 0.01 * seed) for seed in range(1, 45)])  # the other direction
    assert decision(beyond, "null_networks.kappa_vector")["decision"] == "cannot tell"
    check_verdicts(result, "planted.json", VERDICTS["2N"])


def test_a_planted_wrong_decision_is_refused_by_the_verdict_checker() -> None:
    result = compared(1.0, [seed_run(seed, 5.0 + 0.01 * seed) for seed in range(1, 6)])
    planted = copy.deepcopy(result)
    decision(planted, "null_networks.kappa_vector")["decision"] = "holds"
    with pytest.raises(PipelineError, match="null_networks.kappa_vector says 'holds'"):
        check_verdicts(planted, "planted.json", VERDICTS["2N"])
    planted = copy.deepcopy(result)
    decision(planted, "null_networks.kappa_vector")["test"]["p_value"] = 0.01
    with pytest.raises(PipelineError, match=r"its test\.p_value 0\.01 is not 0\.16"):
        check_verdicts(planted, "planted.json", VERDICTS["2N"])


# ---- the input rule


@pytest.mark.parametrize(
    "factor, expected", [(1.0, True), (1.0 - 1e-9, False), (1.0 + 1e-9, True), (0.1, False), (10.0, True)]
)
def test_input_rule_threshold_at_below_and_above(factor: float, expected: bool) -> None:
    threshold = INPUT_FRACTION * TRAINED_SPREAD
    assert is_input_function(threshold * factor, TRAINED_SPREAD) is expected


def test_a_constant_or_unresolved_seed_is_left_out_of_the_null() -> None:
    seeds = [seed_run(seed, 5.0 + 0.01 * seed) for seed in range(1, 41)]
    seeds.append(seed_run(41, 0.5, spread=1e-8))  # a constant function with an extreme κ: must not count
    seeds.append(seed_run(42, 0.5, unresolved=[1, 2]))  # round-off
    result = compared(1.0, seeds)
    entry = decision(result, "null_input_function")
    assert entry["decision"] == "fails" and "seed 41 (trunk-energy spread below the threshold)" in entry["notes"][1]
    assert "seed 42 (unresolved: round-off)" in entry["notes"][1]
    assert result["num_null_networks"] == 40
    assert decision(result, "null_networks.kappa_vector")["test"]["p_value"] == pytest.approx(1 / 41)
    check_verdicts(result, "planted.json", VERDICTS["2N"])
    planted = copy.deepcopy(result)
    entry = decision(planted, "null_input_function")
    entry["decision"] = "holds"
    with pytest.raises(PipelineError, match="null_input_function says 'holds'"):
        check_verdicts(planted, "planted.json", VERDICTS["2N"])


def test_every_seed_a_function_of_its_input_holds() -> None:
    result = compared(1.0, [seed_run(seed, 5.0, spread=INPUT_FRACTION * TRAINED_SPREAD) for seed in range(1, 4)])
    assert decision(result, "null_input_function")["decision"] == "holds"
    check_verdicts(result, "planted.json", VERDICTS["2N"])


# ---- the calibration images


def samples(count: int) -> list[SampleRef]:
    return [SampleRef("shard.parquet", row, 0) for row in range(count)]


def test_calibration_images_follow_the_evaluated_ones_and_never_overlap() -> None:
    chosen = calibration_samples(samples(20), 4, 10, Path("list.json"))
    assert [sample.row for sample in chosen] == list(range(4, 14))
    assert not {sample.row for sample in chosen} & set(range(4))
    with pytest.raises(PipelineError, match="needs 10 images after the 12 evaluated ones"):
        calibration_samples(samples(20), 12, 10, Path("list.json"))
    repeated = samples(4) + [SampleRef("shard.parquet", 1, 0)] + samples(20)[4:]
    with pytest.raises(PipelineError, match="is also evaluated"):
        calibration_samples(repeated, 4, 3, Path("list.json"))


def test_a_seed_calibrated_on_its_evaluated_images_is_refused() -> None:
    summary, arrays = seed_run(1, 5.0)
    assert calibration_disjoint(summary["config"], arrays["index"].tolist())
    overlapping = copy.deepcopy(summary)
    overlapping["config"]["batchnorm_calibration"]["positions"] = [0, 10]
    assert not calibration_disjoint(overlapping["config"], arrays["index"].tolist())
    old = copy.deepcopy(summary)
    del old["config"]["batchnorm_calibration"]["positions"]  # the single-seed null of before: the first images
    assert not calibration_disjoint(old["config"], arrays["index"].tolist())
    with pytest.raises(PipelineError, match="not estimated on images disjoint"):
        check_seed_runs([(summary, arrays), (overlapping, arrays)], ["a/summary.json", "b/summary.json"])
    with pytest.raises(PipelineError, match="a second run of seed 1"):
        check_seed_runs([(summary, arrays), (summary, arrays)], ["a/summary.json", "b/summary.json"])
    with pytest.raises(PipelineError, match="evaluated other images"):
        check_seed_runs([(summary, arrays), seed_run(2, 5.0)[:1] + (arrays_with(5.0, images=3),)], ["a", "b"])
