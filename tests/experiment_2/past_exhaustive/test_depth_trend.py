"""Step 12's parts on planted numbers: the Möbius mean order by hand; the basis comparison's five readings (and the
checker's re-reading of them); an estimate outside its range (each run against its own L) at and just past the bound;
saturation only where the change is in range; and what a random-init run can tell, calibrated or not."""

from __future__ import annotations

import numpy as np
import pytest

from experiment_1.report import CANNOT_TELL, FAILS, HOLDS, OUT_OF_RANGE, SATURATED, check_verdicts
from experiment_2.past_exhaustive.depth_trend import UNVALIDATED_KAPPA, change_verdicts, mean_order, range_note
from experiment_2.past_exhaustive.verdicts import (
    BASIS_CHANGE,
    basis_verdict,
    depth_change_verdict,
    outside_range,
    random_init_reading,
)
from experiment_2.record import VERDICTS

EPS = 2.0**-30


def test_the_mean_order_weighs_each_order_by_its_per_coefficient_energy() -> None:
    ebar = np.array([[1.0, 1.0, 2.0], [3.0, 0.0, 1.0]])
    np.testing.assert_allclose(mean_order(ebar), [(1 + 2 + 6) / 4, (3 + 3) / 4])
    assert mean_order(np.array([[0.0, 5.0]]))[0] == 2.0  # all energy at the top order: its order
    assert mean_order(ebar * 1e12)[0] == mean_order(ebar)[0]  # the output's scale leaves it


@pytest.mark.parametrize(
    ("mobius", "walsh", "decision", "reading"),
    [
        (HOLDS, HOLDS, HOLDS, "both bases agree"),
        (FAILS, FAILS, HOLDS, "both bases agree"),
        (HOLDS, FAILS, FAILS, "reverses in the Walsh basis"),
        (FAILS, HOLDS, FAILS, "reverses in the Walsh basis"),
        (HOLDS, CANNOT_TELL, CANNOT_TELL, "Möbius only"),
        (FAILS, OUT_OF_RANGE, CANNOT_TELL, "Möbius only"),
        (CANNOT_TELL, HOLDS, CANNOT_TELL, "Walsh only"),
        (CANNOT_TELL, OUT_OF_RANGE, CANNOT_TELL, "neither basis decides"),
    ],
)
def test_the_basis_reading_names_where_the_bases_part(mobius: str, walsh: str, decision: str, reading: str) -> None:
    parts = [
        {"id": "mobius_mean_order.off.vector.L16_to_L33", "decision": mobius},
        {"id": "walsh_kappa_per_block.vector.L16_to_L33", "decision": walsh},
    ]
    entry = basis_verdict(*parts, "vector", (16, 33))
    assert (entry["decision"], entry["reading"]) == (decision, reading)
    words = {HOLDS: "rises", FAILS: "falls"}
    note = f"{reading}: Möbius {words.get(mobius, mobius)}, Walsh {words.get(walsh, walsh)}"
    assert entry["id"] == "basis.vector.L16_to_L33" and entry["notes"] == [note]
    # the checker re-reads the two parts' stored decisions from the summary
    assert BASIS_CHANGE.judge(entry, {"verdicts": [*parts, entry]}) == decision
    assert entry["rule"] == BASIS_CHANGE.text


def test_an_estimate_at_its_bound_is_in_range_and_one_past_it_is_not() -> None:
    assert outside_range(np.array([0.0, 1.0, 0.5]), 0.0, 1.0, "the share") is None
    note = outside_range(np.array([1.0 + EPS, 0.5, -EPS]), 0.0, 1.0, "the share")
    assert note.startswith(f"{OUT_OF_RANGE}: 2 of 3 estimates of the share lie outside its range [0, 1]")


def test_each_run_is_held_to_its_own_range() -> None:
    """κ_W / L lies in [1/L, 1]: 1/20 lies outside it at L = 16 (1/16 > 1/20) and inside it at L = 33."""
    shallow = {"num_blocks": 16, "kappa": np.array([0.05, 0.5]), "kappa_range": (1 / 16, 1.0)}
    deep = {"num_blocks": 33, "kappa": np.array([0.05, 0.5]), "kappa_range": (1 / 33, 1.0)}
    note = range_note((shallow, deep), "kappa", "κ_W / L")
    assert note.startswith("L = 16: ") and "L = 33" not in note
    deep["kappa"] = np.array([1 / 33, 1.0])
    shallow["kappa"] = np.array([1 / 16, 1.0])
    assert range_note((shallow, deep), "kappa", "κ_W / L") is None


def share_levels(own: str, outside: int) -> list[dict]:
    """Step 12's levels of two runs: the shallower's own share decision ``own``, ``outside`` of its estimates outside
    the share's range."""
    return [
        {
            "projection": "vector",
            "num_blocks": depth,
            "low_degree_share_outside_range": count,
            "low_degree_share_decision": decision,
        }
        for depth, decision, count in ((16, own, outside), (33, HOLDS, 0))
    ]


@pytest.mark.parametrize(
    ("own", "change", "outside", "expected"),
    [
        (SATURATED, -0.25, 0, SATURATED),  # the CI alone: holds
        (SATURATED, 0.0, 0, SATURATED),  # the CI alone: cannot tell
        (SATURATED, -0.25, 1, OUT_OF_RANGE),  # out of range is decided first and stays
        (HOLDS, -0.25, 0, HOLDS),
    ],
)
def test_saturation_is_read_only_where_the_change_is_in_range(
    own: str, change: float, outside: int, expected: str
) -> None:
    levels = share_levels(own, outside)
    entry = depth_change_verdict(
        "low_degree_share.vector.L16_to_L33",
        "share",
        (16, 33),
        np.full(2, change),
        0,
        log=False,
        estimate="low_degree_share",
        levels=levels,
        outside="L = 16: out" if outside else None,
    )
    assert entry["decision"] == expected
    assert entry["rule"].endswith("; saturated when either run's own low-degree-share verdict is")
    assert any(note.startswith("saturated: the low-degree share of the run at L = 16") for note in entry["notes"]) == (
        expected == SATURATED
    )
    check_verdicts({"levels": levels, "verdicts": [entry]}, "planted.json", VERDICTS["experiment_2_depth_trend"])


def test_what_a_random_init_run_can_tell() -> None:
    assert random_init_reading({"weights": "pretrained"}) is None
    assert "no evidence about depth until calibrated" in random_init_reading({"weights": "random"})
    calibrated = random_init_reading({"weights": "random", "batchnorm_calibration": {"images": 50}})
    assert "calibrated on 50 held-out images" in calibrated and "cannot tell what the trained network" in calibrated


def _values(num_blocks: int, kappa: float) -> dict:
    ones = np.ones(2)
    return {
        "index": np.arange(2),
        "num_blocks": num_blocks,
        "mean_order_off": 2.0 * ones,
        "kappa": kappa * ones,
        "kappa_low": kappa * ones - 0.01,
        "kappa_high": kappa * ones + 0.01,
        "kappa_range": (1 / num_blocks, 1.0),
        "share": 0.5 * ones,
        "share_low": 0.4 * ones,
        "share_high": 0.6 * ones,
        "share_range": (0.0, 1.0),
    }


def test_a_walsh_change_into_the_deep_runs_says_its_interval_is_not_validated_there() -> None:
    levels = [
        {
            "projection": "vector",
            "num_blocks": depth,
            "kappa_w_per_block_outside_range": 0,
            "low_degree_share_outside_range": 0,
            "low_degree_share_decision": HOLDS,
        }
        for depth in (8, 16, 33)
    ]
    shallow = change_verdicts(_values(8, 0.2), _values(16, 0.1), "vector", levels, 0, True)
    deep = change_verdicts(_values(16, 0.2), _values(33, 0.1), "vector", levels, 0, True)
    kappa = {entries[1]["id"]: entries[1] for entries in (shallow, deep)}
    assert [entry["decision"] for entry in kappa.values()] == [FAILS, FAILS]  # κ_W / L falls: the claim "rises" fails
    assert UNVALIDATED_KAPPA not in kappa["walsh_kappa_per_block.vector.L8_to_L16"]["notes"]
    assert UNVALIDATED_KAPPA in kappa["walsh_kappa_per_block.vector.L16_to_L33"]["notes"]
    assert deep[-1]["reading"] == "Walsh only" and deep[0]["decision"] == CANNOT_TELL  # m̄ unchanged: only Walsh decides
