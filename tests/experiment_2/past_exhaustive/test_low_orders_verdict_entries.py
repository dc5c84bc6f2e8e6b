"""Step 8's verdicts (experiment_2/past_exhaustive/verdicts.py) on hand-built per-image arrays, compared whole to
hand-written entries, so a changed id, claim, rule, parameter, effect, note or the seed shows: the low-degree share
and the surrogate's R² at, just below and just above 0.5 on each side of the CI, with pretrained and random-init
weights; the share's interval widened by the images' own intervals (and the bootstrap's when those lie inside it);
the change with depth at 0 on each side, on the log10 and the raw scale, with and without the images' own intervals
(bounded, unbounded, NaN); what the run cannot decide, at the exhaustive limit and just off it, with and without
sub-cubes. Values are dyadic, so means and shifted bounds are exact; a CI that depends on the seed is the project's
bootstrap called directly with that seed (and differs from seed 0's, so a dropped seed shows). Written against the
survivors of `make mutation MODULES=experiment_2/past_exhaustive/verdicts.py`."""

from __future__ import annotations

import numpy as np
import pytest

from experiment_1.errors import PipelineError
from experiment_1.report import (
    ALPHA,
    CANNOT_TELL,
    FAILS,
    HOLDS,
    NON_FINITE,
    OUT_OF_RANGE,
    bootstrap_mean_ci_rows,
    check_verdicts,
)
from experiment_2.past_exhaustive.verdicts import (
    depth_change_verdict,
    low_degree_share_verdict,
    out_of_reach,
    surrogate_verdict,
)
from experiment_2.record import VERDICTS

EPS = 2.0**-30  # dyadic: 0.5 ± EPS and ± EPS are exact
SEED = 5
NULL = (
    "random-init weights: a demonstration of the method and a null, not a finding about a trained network "
    "(nor the original study's claim)"
)
SHARE_RULE = (
    "holds when the 95 % CI of the mean low-degree Walsh share lies above 0.5, fails when below 0.5, else cannot tell; "
    "cannot tell (estimator out of range) when an image's estimate lies outside the share's range [0, 1]; saturated "
    "when the estimates sit at or near its bound 0 or 1 (within 0.05 of it) on at least 90 % of the images"
)
SE = {"errors": np.array([0.25, 0.125, 0.5]), "num_samples": 1024}  # median SE 0.25: 1024 · 0.25 / 0.05 = 5120 masks
NOISE = (
    "; the weights' pair noise dominates it (the share's SE 0.25, median over the images, at 1024 random base masks; "
    "the pair noise falls as 1/m, so an SE under 0.05 takes at least 5120 masks)"
)
R2_RULE = "holds when the 95 % bootstrap CI of the mean R² lies above 0.5, fails when below 0.5, else cannot tell"
ARCHITECTURES = "different architectures, one initialisation each: the spread between networks is not in the interval"
NON_FINITE_NOTE = "non-finite input: no verdict is drawn from it"
UNBOUNDED = "an image's own interval is unbounded or undefined, so the change's interval is too"


def effect(name: str, mean: float, low: float, high: float, percent: bool = False) -> dict:
    return {"name": name, "value": mean, "ci_low": low, "ci_high": high, "confidence": 1 - ALPHA, "percent": percent}


def seeded_ci(values: list[float], seed: int) -> tuple[float, float]:
    """The project's bootstrap CI of the mean with ``seed``, checked to differ from seed 0's."""
    rows = bootstrap_mean_ci_rows(np.array(values)[:, None], seed=seed)
    default = bootstrap_mean_ci_rows(np.array(values)[:, None], seed=0)
    assert (rows["ci_low"][0], rows["ci_high"][0]) != (default["ci_low"][0], default["ci_high"][0])
    return rows["ci_low"][0], rows["ci_high"][0]


def check_share(entry: dict, share: np.ndarray, low: np.ndarray, high: np.ndarray) -> None:
    """The project's checker on a step-8 summary holding the share's per-image estimates and own intervals."""
    block = {
        "per_image": [[float(value)] for value in share],
        "ci_low": [entry["effect"]["ci_low"]],
        "ci_high": [entry["effect"]["ci_high"]],
        "per_image_ci_low": np.asarray(low).tolist(),
        "per_image_ci_high": np.asarray(high).tolist(),
    }
    summary = {"walsh": {"projections": {entry["id"].split(".")[-1]: {"low_degree_share": block}}}, "verdicts": [entry]}
    check_verdicts(summary, "planted.json", VERDICTS["experiment_2_low_orders"])


def share_entry(
    projection: str, decision: str, stat: tuple, images: int, null: bool, extra: tuple = (), saturated: tuple = ()
) -> dict:
    return {
        "id": f"walsh_low_degree_share.{projection}",
        "claim": f"the Walsh degrees 1–3 hold more than 0.5 of Var h ({projection} projection)",
        "decision": decision,
        "rule": SHARE_RULE,
        "parameters": {"threshold": 0.5, "bounds": [0.0, 1.0], "near_bound_margin": 0.05},
        "statistic": None,
        "effect": effect("(W_1 + W_2 + W_3) / Var h", *stat, percent=True),
        "test": None,
        "seed": None,
        "notes": [
            "interval: the bootstrap CI over images of the mean, widened to cover every image's own 95 % interval "
            f"(a bootstrap-t over the design's samples); {images} image(s)",
            *saturated,
            *([NULL] if null else []),
            *extra,
        ],
    }


# share, own lows, own highs → the widened CI is [min low, max high] (the bootstrap CI of [0.75, 0.75] is a point)
@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        ([0.5 + EPS, 0.625], [0.875, 0.8125], HOLDS),  # the lowest own bound just above 0.5
        ([0.625, 0.5], [0.875, 0.8125], CANNOT_TELL),  # at 0.5 (the second image's): not above
        ([0.5 - EPS, 0.625], [0.875, 0.8125], CANNOT_TELL),  # just below
    ],
)
def test_the_share_holds_only_when_every_own_interval_lies_above_the_threshold(
    low: list[float], high: list[float], expected: str
) -> None:
    entry = low_degree_share_verdict(
        "vector", np.array([0.75, 0.75]), np.array(low), np.array(high), SEED, "pretrained", **SE
    )
    assert entry == share_entry("vector", expected, (0.75, min(low), 0.875), 2, null=False)


@pytest.mark.parametrize(
    ("high", "expected"),
    [
        ([0.5 - EPS, 0.375], FAILS),  # the highest own bound just below 0.5
        ([0.375, 0.5], CANNOT_TELL),  # at 0.5: not below
        ([0.5 + EPS, 0.375], CANNOT_TELL),  # just above
    ],
)
def test_the_share_fails_only_when_every_own_interval_lies_below_the_threshold(
    high: list[float], expected: str
) -> None:
    low = [0.125, 0.0625, 0.25]
    share = np.array([0.25, 0.25, 0.25])
    entry = low_degree_share_verdict("scalar", share, np.array(low), np.array([*high, 0.3125]), SEED, "random", **SE)
    assert entry == share_entry("scalar", expected, (0.25, 0.0625, max(high)), 3, null=True)


def test_share_own_intervals_inside_the_bootstrap_ci_leave_the_seeded_bootstrap_ci() -> None:
    share = [value / 64 for value in (13, 56, 40, 47, 36, 22, 62, 27)]  # mean 303/512
    point = np.full(8, 0.625)  # the union is the bootstrap's CI when every own interval lies inside it
    low, high = seeded_ci(share, SEED)
    assert low < 0.5 < 0.625 < high
    entry = low_degree_share_verdict("vector", np.array(share), point, point, SEED, "trained", **SE)
    assert entry == share_entry("vector", CANNOT_TELL, (303 / 512, low, high), 8, null=False)


def test_a_nan_own_bound_decides_nothing_and_makes_its_end_undefined() -> None:
    share = [0.625, 0.875]  # bootstrap CI [0.625, 0.875] (each image alone in at least 2.5 % of resamples)
    entry = low_degree_share_verdict(
        "vector", np.array(share), np.array([np.nan, 0.75]), np.array([0.6875, 0.9375]), SEED, "random", **SE
    )
    assert np.isnan(entry["effect"]["ci_low"])  # the first image's interval has no lower end: neither has the union
    entry["effect"]["ci_low"] = "nan"
    expected = share_entry("vector", NON_FINITE, (0.75, 0.625, 0.9375), 2, null=True)  # the rule itself says n/a
    expected["effect"]["ci_low"] = "nan"
    assert entry == expected


def saturated_note(bound: str, share: str, span: str, rule: str) -> str:
    return (
        f"saturated: the estimate sits at or near the share's bound {bound} on {share} of the images (estimates "
        f"{span}); the rule alone would have said {rule}"
    )


def out_of_range_note(outside: int, images: int, span: str, rule: str) -> str:
    return (
        f"cannot tell (estimator out of range): {outside} of {images} estimates of the share lie outside its range "
        f"[0, 1] (estimates {span}): the estimator's noise at this depth and budget, not a value of the quantity"
        f"{NOISE}; the rule alone would have said {rule}"
    )


def test_shares_beyond_one_are_out_of_range_not_saturated() -> None:
    """Estimates above 1 on every image (W_1 + W_2 + W_3 > Var h: pair noise) with own intervals cut at 1 whose lowest
    bound lies above 0.5: the CI rule says holds, the entry says cannot tell (estimator out of range) and why."""
    share = np.array([1.25, 1.3125, 1.375])
    low = np.array([0.625, 0.6875, 0.75])
    entry = low_degree_share_verdict("vector", share, low, np.ones(3), SEED, "random", **SE)
    note = out_of_range_note(3, 3, "1.25 … 1.38", HOLDS)
    expected = share_entry("vector", OUT_OF_RANGE, (1.3125, 0.625, 1.375), 3, null=True, saturated=(note,))
    assert entry == expected
    check_share(entry, share, low, np.ones(3))


def test_one_share_beyond_a_bound_is_out_of_range_even_when_the_others_are_near_it() -> None:
    share = np.array([0.96875, 1.0 + EPS, 0.984375])  # all near 1, one just beyond: out of range, not saturated
    entry = low_degree_share_verdict(
        "scalar", share, share - 0.25, np.minimum(share + 0.25, 1.0), SEED, "trained", **SE
    )
    assert entry["decision"] == OUT_OF_RANGE and entry["notes"][1].startswith(
        "cannot tell (estimator out of range): 1 of 3"
    )
    at_one = share_entry  # a share at exactly 1 is inside the range: saturated
    entry = low_degree_share_verdict("scalar", np.minimum(share, 1.0), share - 0.25, np.ones(3), SEED, "trained", **SE)
    assert entry["decision"] == "saturated" and at_one


@pytest.mark.parametrize(
    ("share", "saturated"),
    [
        ([0.953125, 1.0, 0.96875], True),  # every image within 0.05 of 1, none beyond
        ([0.953125] * 9 + [0.875], True),  # 9 of 10 (the 90 % share) near 1
        ([0.953125] * 8 + [0.875] * 2, False),  # 8 of 10
        ([0.9375, 1.0, 0.96875], False),  # one image 0.0625 below 1: 2 of 3 near it
    ],
)
def test_shares_near_one_are_saturated_on_nine_in_ten_images(share: list[float], saturated: bool) -> None:
    values = np.array(share)
    entry = low_degree_share_verdict(
        "scalar", values, values - 0.25, np.minimum(values + 0.25, 1.0), SEED, "trained", **SE
    )
    low, high = min(values - 0.25), max(np.minimum(values + 0.25, 1.0))
    mean = float(values.mean())
    if saturated:
        span = f"{min(share):.3g} … {max(share):.3g}"
        note = saturated_note("1", f"{np.mean(values >= 0.95):.0%}", span, HOLDS)
        expected = share_entry("scalar", "saturated", (mean, low, high), len(share), null=False, saturated=(note,))
    else:
        expected = share_entry("scalar", HOLDS, (mean, low, high), len(share), null=False)
    assert entry == expected


def test_shares_below_zero_are_out_of_range_not_fails() -> None:
    share = np.array([-0.0625, 0.0, 0.03125])
    entry = low_degree_share_verdict(
        "vector", share, np.zeros(3), np.array([0.125, 0.25, 0.1875]), SEED, "random", **SE
    )
    note = out_of_range_note(1, 3, "-0.0625 … 0.0312", FAILS)
    assert entry == share_entry("vector", OUT_OF_RANGE, (-1 / 96, -0.0625, 0.25), 3, null=True, saturated=(note,))


def test_shares_at_zero_inside_the_range_are_saturated() -> None:
    share = np.array([0.0, 0.0, 0.03125])
    entry = low_degree_share_verdict(
        "vector", share, np.zeros(3), np.array([0.125, 0.25, 0.1875]), SEED, "random", **SE
    )
    note = saturated_note("0", "100%", "0 … 0.0312", FAILS)
    assert entry == share_entry("vector", "saturated", (1 / 96, 0.0, 0.25), 3, null=True, saturated=(note,))


def test_one_image_takes_its_own_interval() -> None:
    entry = low_degree_share_verdict(
        "scalar", np.array([0.625]), np.array([0.5625]), np.array([0.6875]), 0, "random", **SE
    )
    assert entry == share_entry("scalar", HOLDS, (0.625, 0.5625, 0.6875), 1, null=True)


def r2_entry(projection: str, order: int, decision: str, stat: tuple, images: int, null: bool) -> dict:
    return {
        "id": f"surrogate_r2.{projection}",
        "claim": f"the exact order-≤{order} Möbius expansion about the all-off network explains more than 0.5 "
        f"of the spread of h over uniformly random masks ({projection} projection)",
        "decision": decision,
        "rule": R2_RULE,
        "parameters": {"threshold": 0.5},
        "statistic": None,
        "effect": effect("R² of the order-≤k surrogate on the design's masks", *stat),
        "test": None,
        "seed": None,
        "notes": [f"bootstrap over {images} image(s)", *([NULL] if null else [])],
    }


# equal R² on every image: the bootstrap CI is that value
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.5 + EPS, HOLDS),
        (0.5, CANNOT_TELL),
        (0.5 - EPS, FAILS),
    ],
)
@pytest.mark.parametrize("weights", ["pretrained", "random"])
def test_the_surrogate_r2_at_and_just_off_the_threshold(value: float, expected: str, weights: str) -> None:
    entry = surrogate_verdict("vector", np.full(4, value), 2, SEED, weights)
    assert entry == r2_entry("vector", 2, expected, (value, value, value), 4, null=weights == "random")


def test_the_surrogate_r2_ci_is_the_seeded_bootstrap() -> None:
    r2 = [value / 64 for value in (40, 60, 45, 53, 42, 37, 58, 49)]  # every image above 0.5: so is the CI
    low, high = seeded_ci(r2, 3)
    entry = surrogate_verdict("scalar", np.array(r2), 3, 3, "pretrained")
    assert entry == r2_entry("scalar", 3, HOLDS, (0.75, low, high), 8, null=False)


def test_the_surrogate_r2_straddling_the_threshold_cannot_tell() -> None:
    r2 = [0.25, 0.75]  # bootstrap CI [0.25, 0.75]
    entry = surrogate_verdict("scalar", np.array(r2), 1, SEED, "random")
    assert entry == r2_entry("scalar", 1, CANNOT_TELL, (0.5, 0.25, 0.75), 2, null=True)


def change_entry(
    verdict_id: str,
    quantity: str,
    scaled: str,
    depths: tuple[int, int],
    decision: str,
    stat: tuple,
    images: int,
    own: bool,
    extra: tuple = (),
    direction: str = "falls",
    estimate: str | None = None,
) -> dict:
    side, other = ("below", "above") if direction == "falls" else ("above", "below")
    interval = (
        "; interval: the bootstrap CI over images of the mean change, widened to cover every image's own interval of "
        "the change (from the two runs' per-image 95 % intervals)"
        if own
        else "; interval: the bootstrap CI over images of the mean change"
    )
    return {
        "id": verdict_id,
        "claim": f"{quantity} {direction} from L = {depths[0]} to L = {depths[1]}",
        "decision": decision,
        "rule": f"holds when the 95 % CI of the mean change of {scaled} lies {side} 0, fails when {other} 0, "
        "else cannot tell"
        + (
            "; cannot tell (estimator out of range) when an estimate of either run lies outside the quantity's range"
            if estimate
            else ""
        )
        + ("; saturated when either run's own low-degree-share verdict is" if estimate == "low_degree_share" else ""),
        "parameters": {"threshold": 0.0, "scale": scaled, "direction": direction, "estimate": estimate},
        "statistic": None,
        "effect": effect(f"{scaled} at L = {depths[1]} minus at L = {depths[0]}", *stat),
        "test": None,
        "seed": None,
        "notes": [f"paired over the {images} image(s) both runs evaluated{interval}", ARCHITECTURES, *extra, NULL],
    }


# equal changes on every image: the bootstrap CI is that value; "rises" mirrors "falls"
@pytest.mark.parametrize(("value", "expected"), [(EPS, HOLDS), (0.0, CANNOT_TELL), (-EPS, FAILS)])
def test_a_rise_holds_above_zero_and_fails_below(value: float, expected: str) -> None:
    entry = depth_change_verdict("k.v", "κ_W / L", (16, 33), np.full(2, value), SEED, log=False, direction="rises")
    assert entry == change_entry(
        "k.v", "κ_W / L", "κ_W / L", (16, 33), expected, (value, value, value), 2, False, direction="rises"
    )
    check_verdicts({"verdicts": [entry]}, "planted.json", VERDICTS["experiment_2_depth_trend"])


def kappa_levels(outside: int) -> list[dict]:
    """Step 12's levels of two runs, the deeper with ``outside`` estimates of κ_W / L outside its range."""
    return [
        {"projection": "vector", "num_blocks": depth, "kappa_w_per_block_outside_range": count}
        for depth, count in ((16, 0), (33, outside))
    ]


@pytest.mark.parametrize(("outside", "expected"), [(1, OUT_OF_RANGE), (0, HOLDS)])
def test_an_estimate_out_of_range_makes_the_change_cannot_tell_out_of_range(outside: int, expected: str) -> None:
    """The CI alone says holds; one estimate of either run outside its range (the runs' levels, which the checker
    reads too) makes it cannot tell (estimator out of range), with the note; a null network's note only with
    random_init."""
    levels = kappa_levels(outside)
    entry = depth_change_verdict(
        "walsh_kappa_per_block.vector.L16_to_L33",
        "κ_W / L",
        (16, 33),
        np.full(2, 0.25),
        SEED,
        log=False,
        direction="rises",
        estimate="kappa_w_per_block",
        levels=levels,
        outside="L = 33: out",
        random_init=False,
    )
    expected_entry = change_entry(
        "walsh_kappa_per_block.vector.L16_to_L33",
        "κ_W / L",
        "κ_W / L",
        (16, 33),
        expected,
        (0.25, 0.25, 0.25),
        2,
        False,
        extra=("L = 33: out; the rule alone would have said holds",) if outside else (),
        direction="rises",
        estimate="kappa_w_per_block",
    )
    expected_entry["notes"].remove(NULL)
    assert entry == expected_entry
    check_verdicts({"levels": levels, "verdicts": [entry]}, "planted.json", VERDICTS["experiment_2_depth_trend"])
    flipped = {"levels": kappa_levels(1 - outside), "verdicts": [entry]}
    with pytest.raises(PipelineError, match="its rule low_orders.depth_change gives"):
        check_verdicts(flipped, "planted.json", VERDICTS["experiment_2_depth_trend"])
    with pytest.raises(ValueError, match="direction"):
        depth_change_verdict("k.v", "κ_W / L", (16, 33), np.full(2, 0.25), SEED, direction="up")


def test_the_change_of_a_ratio_is_on_the_log10_scale_by_default_with_the_seeded_bootstrap() -> None:
    change = [-value / 64 for value in (19, 7, 30, 3, 15, 11, 26, 1)]  # every image falls: so does the CI
    low, high = seeded_ci(change, 3)
    entry = depth_change_verdict("ratio.vector.order_1", "E_1 / Var h", (16, 33), np.array(change), 3)
    expected = change_entry(
        "ratio.vector.order_1",
        "E_1 / Var h",
        "log10(E_1 / Var h)",
        (16, 33),
        HOLDS,
        (-0.21875, low, high),
        8,
        own=False,
    )
    assert entry == expected


# equal changes on every image: the bootstrap CI is that value
@pytest.mark.parametrize(("value", "expected"), [(-EPS, HOLDS), (0.0, CANNOT_TELL), (EPS, FAILS)])
def test_the_change_without_own_intervals_at_and_just_off_zero(value: float, expected: str) -> None:
    entry = depth_change_verdict("share.scalar", "share", (33, 50), np.full(2, value), SEED, log=False)
    assert entry == change_entry("share.scalar", "share", "share", (33, 50), expected, (value, value, value), 2, False)


# change [-0.5, -0.25] (bootstrap CI [-0.5, -0.25]); own lows [-0.875, -0.625] widen the low side
@pytest.mark.parametrize(("top", "expected"), [(-EPS, HOLDS), (0.0, CANNOT_TELL), (EPS, CANNOT_TELL)])
def test_own_intervals_reaching_zero_from_below(top: float, expected: str) -> None:
    own = (np.array([-0.875, -0.625]), np.array([top, -0.125]))
    entry = depth_change_verdict("r.v", "E_2 / Var h", (9, 16), np.array([-0.5, -0.25]), SEED, log=True, own=own)
    expected_entry = change_entry(
        "r.v", "E_2 / Var h", "log10(E_2 / Var h)", (9, 16), expected, (-0.375, -0.875, top), 2, own=True
    )
    assert entry == expected_entry


# change [0.25, 0.5] (bootstrap CI [0.25, 0.5]); own highs [0.75, 0.875] widen the high side
@pytest.mark.parametrize(("bottom", "expected"), [(EPS, FAILS), (0.0, CANNOT_TELL), (-EPS, CANNOT_TELL)])
def test_own_intervals_reaching_zero_from_above(bottom: float, expected: str) -> None:
    own = (np.array([0.125, bottom]), np.array([0.75, 0.875]))
    entry = depth_change_verdict("s.s", "share", (16, 33), np.array([0.25, 0.5]), SEED, log=False, own=own)
    assert entry == change_entry("s.s", "share", "share", (16, 33), expected, (0.375, bottom, 0.875), 2, own=True)


def test_change_own_intervals_inside_the_bootstrap_ci_leave_the_seeded_bootstrap_ci() -> None:
    change = [value / 64 for value in (-32, 16, -8, 24, -4, 7, -19, 2)]  # mean −7/256
    low, high = seeded_ci(change, SEED)
    point = np.zeros(8)  # inside the bootstrap CI, which straddles 0
    assert low < 0.0 < high
    entry = depth_change_verdict("r.s", "E_1 / Var h", (33, 50), np.array(change), SEED, own=(point, point))
    expected = change_entry(
        "r.s", "E_1 / Var h", "log10(E_1 / Var h)", (33, 50), CANNOT_TELL, (-7 / 256, low, high), 8, own=True
    )
    assert entry == expected


def test_an_unbounded_own_interval_decides_nothing_and_says_why() -> None:
    own = (np.array([-np.inf, -0.625]), np.array([-0.125, -0.125]))
    entry = depth_change_verdict("r.v", "E_1 / Var h", (16, 33), np.array([-0.5, -0.25]), SEED, own=own)
    expected = change_entry(
        "r.v",
        "E_1 / Var h",
        "log10(E_1 / Var h)",
        (16, 33),
        NON_FINITE,
        (-0.375, -np.inf, -0.125),
        2,
        own=True,
        extra=(UNBOUNDED,),
    )
    expected["notes"].append(NON_FINITE_NOTE)  # the engine's, after the rule's own notes
    assert entry == expected


def test_a_nan_own_bound_decides_nothing_and_its_end_is_undefined() -> None:
    # the NaN lower end of the first image's change is the union's: not the bootstrap's −0.5
    own = (np.array([np.nan, -0.625]), np.array([-0.0625, -0.125]))
    entry = depth_change_verdict("r.v", "E_1 / Var h", (16, 33), np.array([-0.5, -0.25]), SEED, own=own)
    assert np.isnan(entry["effect"]["ci_low"])
    entry["effect"]["ci_low"] = "nan"
    expected = change_entry(
        "r.v",
        "E_1 / Var h",
        "log10(E_1 / Var h)",
        (16, 33),
        NON_FINITE,
        (-0.375, -0.5, -0.0625),
        2,
        own=True,
        extra=(UNBOUNDED,),
    )
    expected["notes"].append(NON_FINITE_NOTE)  # the engine's, after the rule's own notes
    expected["effect"]["ci_low"] = "nan"
    assert entry == expected


SPECTRUM = "where the Möbius spectrum peaks (the peak order), κ, p_j and C≤k"
WALSH = {
    "quantity": "the Walsh weights W_j of degree j > 3 one by one",
    "status": "out of reach",
    "reason": "the U-statistic's variance grows with C(L, j); only their sum (Var h − W_1 − W_2 − W_3) and moments "
    "(influence, noise stability) are estimated",
}


@pytest.mark.parametrize(
    ("num_blocks", "subcube_size", "reason"),
    [
        (
            17,  # just above the exhaustive limit: no pointer to step 1
            8,
            "each needs every order's energy Σ_j E_j, i.e. all 2^17 − 1 coefficients; the exact family stops at order "
            "3 and the sub-cubes at order 8; the per-order sampling of single coefficients cannot reach the middle "
            "orders",
        ),
        (
            16,  # at the limit: step 1 is exhaustive there
            0,
            "each needs every order's energy Σ_j E_j, i.e. all 2^16 − 1 coefficients; the exact family stops at order "
            "3 and the sub-cubes were not run; the per-order sampling of single coefficients cannot reach the middle "
            "orders (here L = 16: the exhaustive step 1 gives them)",
        ),
        (
            15,
            4,
            "each needs every order's energy Σ_j E_j, i.e. all 2^15 − 1 coefficients; the exact family stops at order "
            "3 and the sub-cubes at order 4; the per-order sampling of single coefficients cannot reach the middle "
            "orders (here L = 15: the exhaustive step 1 gives them)",
        ),
    ],
)
def test_out_of_reach_entries_whole(num_blocks: int, subcube_size: int, reason: str) -> None:
    assert out_of_reach(num_blocks, 16, 3, subcube_size) == [
        {"quantity": SPECTRUM, "status": "out of reach", "reason": reason},
        WALSH,
    ]


@pytest.mark.parametrize(
    ("errors", "clause"),
    [
        # 1024 · 0.05 / 0.05 = 1024 masks, no more than the run's: no masks to ask for
        ([0.05, 0.05, 0.0], " (the share's SE 0.05, median over the images, at 1024 random base masks)"),
        ([0.0625, 0.0], " (the share's SE 0.031, median over the images, at 1024 random base masks)"),
        (  # 1024 · 0.0500001 / 0.05 → 1025
            [0.0500001] * 3,
            " (the share's SE 0.05, median over the images, at 1024 random base masks; the pair noise falls as 1/m, so "
            "an SE under 0.05 takes at least 1025 masks)",
        ),
        ([np.nan, 0.25, 0.25], ""),  # an undefined SE: no number
    ],
)
def test_the_noise_clause_sizes_the_masks_only_when_more_are_needed(errors: list[float], clause: str) -> None:
    share = np.array([1.25, 1.375, 1.3125])
    entry = low_degree_share_verdict(
        "vector",
        share,
        np.array([0.625, 0.6875, 0.75]),
        np.ones(3),
        SEED,
        "random",
        errors=np.array(errors),
        num_samples=1024,
    )
    head = "not a value of the quantity; the weights' pair noise dominates it"
    outside = [note for note in entry["notes"] if note.startswith("cannot tell (estimator out of range)")]
    assert len(outside) == 1 and "(estimates 1.25 … 1.38): the estimator's noise" in outside[0]
    assert f"{head}{clause}; the rule alone" in outside[0]
