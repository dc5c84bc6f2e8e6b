"""Step 8's verdicts (experiment_2/past_exhaustive/verdicts.py) on planted numbers: each outcome — holds, fails, cannot
tell — for the low-degree share, the surrogate's R² and the change with depth; the project's checker re-derives the
change with depth from its own CI; a non-finite input gives no verdict."""

from __future__ import annotations

import numpy as np
import pytest

from experiment_1.report import check_verdicts
from experiment_2.past_exhaustive.verdicts import (
    LOW_DEGREE_SHARE,
    depth_change_verdict,
    low_degree_share_verdict,
    out_of_reach,
    surrogate_verdict,
)
from experiment_2.record import VERDICTS

SE = {"errors": np.full(3, 0.01), "num_samples": 1024}  # each image's SE of the share, at 1024 random base masks


@pytest.mark.parametrize(
    ("share", "half_width", "expected"),
    [
        ([0.8, 0.82, 0.81], 0.05, "holds"),
        ([0.2, 0.22, 0.21], 0.05, "fails"),
        ([0.45, 0.55, 0.5], 0.01, "cannot tell"),  # the images straddle the threshold
        ([0.7, 0.71, 0.72], 0.3, "cannot tell"),  # the images agree but their own intervals reach below 0.5
    ],
)
def test_low_degree_share_outcomes(share: list[float], half_width: float, expected: str) -> None:
    values = np.array(share)
    entry = low_degree_share_verdict("vector", values, values - half_width, values + half_width, 0, "random", **SE)
    assert entry["decision"] == expected
    assert entry["parameters"]["threshold"] == LOW_DEGREE_SHARE and "null" in " ".join(entry["notes"])


@pytest.mark.parametrize(
    ("r2", "expected"), [([0.9, 0.95], "holds"), ([-3.0, -2.5, -2.8], "fails"), ([0.1, 0.9, 0.5], "cannot tell")]
)
def test_surrogate_outcomes(r2: list[float], expected: str) -> None:
    entry = surrogate_verdict("scalar", np.array(r2), 3, 0, "pretrained")
    assert entry["decision"] == expected
    assert not any("null" in note for note in entry["notes"])


@pytest.mark.parametrize(
    ("change", "expected"),
    [([-2.0, -1.5, -1.8], "holds"), ([1.0, 1.2, 0.9], "fails"), ([-1.0, 1.0, 0.1], "cannot tell")],
)
def test_depth_change_outcomes(change: list[float], expected: str) -> None:
    entry = depth_change_verdict(
        "ratio_to_variance.vector.order_1.L16_to_L33", "E_1 / Var h (vector)", (16, 33), np.array(change), 0
    )
    assert entry["decision"] == expected
    assert "L = 16 to L = 33" in entry["claim"]
    check_verdicts({"verdicts": [entry]}, "planted.json", VERDICTS["experiment_2_depth_trend"])


def test_a_non_finite_input_decides_nothing() -> None:
    values = np.array([0.8, np.nan])
    assert (
        low_degree_share_verdict("vector", values, values, values, 0, "random", **SE)["decision"] == "n/a — non-finite"
    )


def test_out_of_reach_names_the_spectrum_and_its_reason() -> None:
    entries = out_of_reach(50, 16, 2, 8)
    assert (
        entries[0]["status"] == "out of reach" and "2^50" in entries[0]["reason"] and "order 8" in entries[0]["reason"]
    )


def test_the_images_own_intervals_widen_the_depth_change() -> None:
    change = np.array([-2.0, -1.9, -2.1])  # the bootstrap alone would say holds
    wide = (change - 3.0, change + 3.0)
    entry = depth_change_verdict("share.vector", "share", (33, 50), change, 0, log=False, own=wide)
    assert entry["decision"] == "cannot tell"
    unbounded = (change - 1.0, np.array([np.inf, -1.0, -1.0]))
    entry = depth_change_verdict("ratio.vector", "E_1 / Var h", (33, 50), change, 0, own=unbounded)
    assert entry["decision"] == "n/a — non-finite" and any("unbounded" in note for note in entry["notes"])


def test_an_undefined_own_bound_is_never_left_out() -> None:
    """A NaN bound of one image's own interval makes the widened CI undefined (no decision), where Python's min/max
    would have dropped it and decided on the other images alone."""
    change = np.array([-2.0, -1.9, -2.1])  # bootstrap and own intervals alone: holds
    own = (change - 0.1, np.array([-1.0, np.nan, -1.0]))
    entry = depth_change_verdict("ratio.vector", "E_1 / Var h", (33, 50), change, 0, own=own)
    assert np.isnan(entry["effect"]["ci_high"]) and entry["decision"] == "n/a — non-finite"
    assert any("undefined" in note for note in entry["notes"])
    assert (
        depth_change_verdict("ratio.vector", "E_1 / Var h", (33, 50), change, 0, own=(own[0], own[0] + 1.0))["decision"]
        == "holds"
    )
    share = np.array([0.8, 0.81, 0.82])
    entry = low_degree_share_verdict("vector", share, np.array([0.7, np.nan, 0.7]), share + 0.05, 0, "random", **SE)
    assert np.isnan(entry["effect"]["ci_low"]) and entry["decision"] == "n/a — non-finite"
