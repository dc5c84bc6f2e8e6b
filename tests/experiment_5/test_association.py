"""Experiment 5's Spearman and quartile statistics on planted monotone and independent data, and against explicit loops."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from experiment_1.report import bootstrap_mean_ci, tost_two_sample
from experiment_5.association import (
    _partial_p_value,
    _standardised_ranks,
    ci_excludes_zero,
    compare_groups,
    quartile_groups,
    spearman_table,
)

N = 300
# fixed data; every test that draws more draws from its own generator
X, Z = np.random.default_rng(11).normal(size=(2, N))


def test_planted_monotone_and_independent_pairs() -> None:
    rng = np.random.default_rng(16)
    ys = {"increasing": np.exp(X), "decreasing": -(X**3), "independent": rng.normal(size=N)}
    table = spearman_table({"x": X}, ys, Z, seed=0, num_resamples=400)["x"]
    assert table["increasing"]["rho"] == pytest.approx(1.0) and table["increasing"]["ci_low"] == pytest.approx(1.0)
    assert table["decreasing"]["rho"] == pytest.approx(-1.0) and table["decreasing"]["ci_high"] == pytest.approx(-1.0)
    independent = table["independent"]
    assert abs(independent["rho"]) < 0.15 and not ci_excludes_zero(independent) and independent["p_value"] > 0.05
    assert independent["ci_low"] < independent["rho"] < independent["ci_high"]
    assert table["increasing"]["n"] == N


def explicit_spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson correlation of average ranks, by explicit sums."""
    rx, ry = scipy_stats.rankdata(x), scipy_stats.rankdata(y)
    dx, dy = rx - rx.mean(), ry - ry.mean()
    return float(sum(a * b for a, b in zip(dx, dy)) / np.sqrt(sum(a * a for a in dx) * sum(b * b for b in dy)))


def test_rho_and_its_bootstrap_ci_match_an_explicit_resampling_loop() -> None:
    rng = np.random.default_rng(13)
    y = np.round(X + rng.normal(size=N), 1)  # rounded: ties, which the ranks must average
    resamples = 60
    entry = spearman_table({"x": X}, {"y": y}, Z, seed=5, num_resamples=resamples)["x"]["y"]
    assert entry["rho"] == pytest.approx(explicit_spearman(X, y), abs=1e-12)
    rng = np.random.default_rng(5)
    indices = rng.integers(0, N, size=(resamples, N))  # the same draw the function makes (one chunk)
    values = [explicit_spearman(X[row], y[row]) for row in indices]
    low, high = np.quantile(values, [0.025, 0.975])
    assert entry["ci_low"] == pytest.approx(low, abs=1e-12) and entry["ci_high"] == pytest.approx(high, abs=1e-12)


def residual_correlation(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> float:
    """Partial Spearman by its definition: correlate the ranks of x and y after regressing out the ranks of z."""
    rx, ry, rz = (scipy_stats.rankdata(v) for v in (x, y, z))
    design = np.column_stack([np.ones_like(rz), rz])
    residual_x = rx - design @ np.linalg.lstsq(design, rx, rcond=None)[0]
    residual_y = ry - design @ np.linalg.lstsq(design, ry, rcond=None)[0]
    return float(np.corrcoef(residual_x, residual_y)[0, 1])


def test_partial_rho_removes_a_shared_covariate_and_keeps_a_direct_link() -> None:
    rng = np.random.default_rng(14)
    noise = rng.normal(size=(3, N))
    through_z = {"x": Z + 0.3 * noise[0]}
    ys = {"only_via_z": Z + 0.3 * noise[1], "direct": noise[0] + 0.3 * noise[2]}
    table = spearman_table(through_z, ys, Z, seed=0, num_resamples=400)["x"]
    via = table["only_via_z"]
    assert (
        via["rho"] > 0.7
        and not ci_excludes_zero(via, "partial_ci_low", "partial_ci_high")
        and via["partial_p_value"] > 0.05
    )
    direct = table["direct"]
    assert (
        direct["partial_rho"] > 0.5
        and ci_excludes_zero(direct, "partial_ci_low", "partial_ci_high")
        and direct["partial_p_value"] < 1e-6
    )
    for name, value in ys.items():
        assert table[name]["partial_rho"] == pytest.approx(residual_correlation(through_z["x"], value, Z), abs=1e-10)


def test_a_constant_variable_has_no_rho() -> None:
    entry = spearman_table({"x": X}, {"constant": np.ones(N)}, Z, seed=0, num_resamples=50)["x"]["constant"]
    assert np.isnan(entry["rho"]) and np.isnan(entry["ci_low"])


def test_quartiles_split_by_score_and_the_planted_effect_shows() -> None:
    rng = np.random.default_rng(15)
    groups = quartile_groups(X)
    assert sorted(len(group) for group in groups) == [75] * 4
    assert sorted(np.concatenate(groups).tolist()) == list(range(N))
    assert all(X[groups[q]].max() <= X[groups[q + 1]].min() for q in range(3))
    tied = quartile_groups(np.array([1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]))
    assert [group.tolist() for group in tied] == [[1, 3, 5], [7, 0], [2, 4], [6, 8]]

    planted = X + 0.5 * rng.normal(size=N)
    effect = compare_groups(planted[groups[0]], planted[groups[3]], seed=0, num_resamples=500)
    assert effect["difference"]["mean"] == pytest.approx(planted[groups[3]].mean() - planted[groups[0]].mean())
    assert effect["first"]["mean"] == pytest.approx(planted[groups[0]].mean())
    assert (
        ci_excludes_zero(effect["difference"])
        and effect["difference"]["ci_low"] > 0
        and effect["mann_whitney_p"] < 1e-10
    )
    pooled = np.sqrt((planted[groups[0]].var(ddof=1) + planted[groups[3]].var(ddof=1)) / 2)  # equal group sizes
    assert effect["standardised_difference"] == pytest.approx(effect["difference"]["mean"] / pooled)

    unrelated = rng.normal(size=N)
    null = compare_groups(unrelated[groups[0]], unrelated[groups[3]], seed=0, num_resamples=500)
    assert not ci_excludes_zero(null["difference"]) and null["mann_whitney_p"] > 0.05


# --------------------------------------------------------------------------------------------
# Every number of a table entry and of a group comparison against an independent computation


def explicit_partial(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> float:
    """The partial Spearman ρ of x and y given z from the three explicit Spearman ρs."""
    xy, xz, yz = explicit_spearman(x, y), explicit_spearman(x, z), explicit_spearman(y, z)
    return (xy - xz * yz) / np.sqrt((1 - xz**2) * (1 - yz**2))


def partial_t_test_p(rho: float, count: int) -> float:
    t = rho * np.sqrt((count - 3) / (1 - rho**2))
    return float(2 * scipy_stats.t.sf(abs(t), count - 3))


def test_every_number_of_an_entry_over_two_resample_chunks() -> None:
    count, resamples = 40, 260  # 260 resamples: a chunk of 250 and one of 10, drawn as one stream
    rng = np.random.default_rng(21)
    x, z = rng.normal(size=(2, count))
    y = np.round(x + z + rng.normal(size=count), 1)
    entry = spearman_table({"x": x}, {"y": y}, z, seed=3, num_resamples=resamples)["x"]["y"]
    indices = np.random.default_rng(3).integers(0, count, size=(resamples, count))
    rho = [explicit_spearman(x[row], y[row]) for row in indices]
    partial = [explicit_partial(x[row], y[row], z[row]) for row in indices]
    want_rho = scipy_stats.spearmanr(x, y)
    want_partial = explicit_partial(x, y, z)
    assert entry == pytest.approx(
        {
            "rho": want_rho.statistic,
            "ci_low": np.quantile(rho, 0.025),
            "ci_high": np.quantile(rho, 0.975),
            "p_value": want_rho.pvalue,
            "partial_rho": want_partial,
            "partial_ci_low": np.quantile(partial, 0.025),
            "partial_ci_high": np.quantile(partial, 0.975),
            "partial_p_value": partial_t_test_p(want_partial, count),
            "n": count,
        },
        rel=1e-10,
        abs=1e-12,
    )
    assert isinstance(entry["n"], int) and entry["n"] == count


def test_a_table_has_every_pair_of_the_two_families() -> None:
    rng = np.random.default_rng(22)
    xs = {"a": rng.normal(size=30), "b": rng.normal(size=30)}
    ys = {"c": rng.normal(size=30), "d": rng.normal(size=30), "e": rng.normal(size=30)}
    table = spearman_table(xs, ys, rng.normal(size=30), seed=1, num_resamples=20)
    assert list(table) == ["a", "b"] and all(list(row) == ["c", "d", "e"] for row in table.values())
    for x, row in table.items():
        for y, entry in row.items():
            assert entry["rho"] == pytest.approx(explicit_spearman(xs[x], ys[y]), abs=1e-12)


def test_default_seed_and_resamples() -> None:
    rng = np.random.default_rng(23)
    x, y, z = rng.normal(size=(3, 25))
    assert spearman_table({"x": x}, {"y": y}, z) == spearman_table({"x": x}, {"y": y}, z, seed=0, num_resamples=2000)
    first, second = rng.normal(size=(2, 12))
    assert compare_groups(first, second) == compare_groups(first, second, seed=0, num_resamples=2000)


def test_a_constant_variable_or_covariate_leaves_every_statistic_nan() -> None:
    entry = spearman_table({"x": X}, {"constant": np.ones(N)}, Z, seed=0, num_resamples=50)["x"]["constant"]
    nan_keys = ("rho", "ci_low", "ci_high", "p_value", "partial_rho", "partial_ci_low", "partial_ci_high")
    assert all(np.isnan(entry[key]) for key in nan_keys) and np.isnan(entry["partial_p_value"]) and entry["n"] == N
    # a constant covariate: ρ is read as usual, the partial ρ has nothing to control for (NaN)
    flat = spearman_table({"x": X}, {"y": -X}, np.zeros(N), seed=0, num_resamples=50)["x"]["y"]
    assert flat["rho"] == pytest.approx(-1.0) and np.isnan(flat["partial_rho"]) and np.isnan(flat["partial_ci_low"])


@pytest.mark.parametrize(
    ("low", "high", "excludes"),
    [(0.0, 1.0, False), (1e-12, 1.0, True), (-1e-12, 1.0, False), (-1.0, 0.0, False), (-1.0, -1e-12, True)],
)
def test_ci_excludes_zero_strictly(low: float, high: float, excludes: bool) -> None:
    assert ci_excludes_zero({"ci_low": low, "ci_high": high}) is excludes
    assert ci_excludes_zero({"lo": low, "hi": high}, "lo", "hi") is excludes


def test_compare_groups_of_unequal_sizes_against_explicit_numbers() -> None:
    rng = np.random.default_rng(24)
    first, second = rng.normal(size=9), rng.normal(1.0, 2.0, size=14)
    result = compare_groups(first, second, seed=6, num_resamples=300)
    draws = np.random.default_rng(6)
    second_means = second[draws.integers(0, 14, size=(300, 14))].mean(axis=1)
    first_means = first[draws.integers(0, 9, size=(300, 9))].mean(axis=1)
    low, high = np.quantile(second_means - first_means, [0.025, 0.975])
    pooled = np.sqrt((8 * first.var(ddof=1) + 13 * second.var(ddof=1)) / 21)
    difference = second.mean() - first.mean()
    assert result["difference"] == pytest.approx({"mean": difference, "ci_low": low, "ci_high": high}, rel=1e-12)
    assert result["first"] == bootstrap_mean_ci(first, seed=6, num_resamples=300)
    assert result["second"] == bootstrap_mean_ci(second, seed=6, num_resamples=300)
    assert result["mann_whitney_p"] == scipy_stats.mannwhitneyu(second, first, alternative="two-sided").pvalue
    assert result["standardised_difference"] == pytest.approx(difference / pooled, rel=1e-12)
    assert result["equivalence"] == tost_two_sample(first, second, 0.25 * pooled)
    assert set(result) == {"first", "second", "difference", "mann_whitney_p", "standardised_difference", "equivalence"}


def test_compare_groups_of_constant_groups_has_standardised_difference_0() -> None:
    result = compare_groups(np.full(3, 2.0), np.full(4, 2.0), seed=0, num_resamples=50)
    assert result["standardised_difference"] == 0.0 and result["difference"]["mean"] == 0.0


@pytest.mark.parametrize(("first", "second"), [(1, 2), (2, 1), (1, 1)])
def test_groups_need_two_values_each(first: int, second: int) -> None:
    with pytest.raises(ValueError, match=f"^each group needs at least two values; got {first} and {second}$"):
        compare_groups(np.arange(float(first)), np.arange(float(second)))


def test_two_values_each_are_enough() -> None:
    result = compare_groups(np.array([0.0, 1.0]), np.array([2.0, 4.0]), seed=0, num_resamples=40)
    assert result["difference"]["mean"] == 2.5 and result["first"]["n"] == 2


def test_standardised_ranks_of_two_values_have_norm_1() -> None:
    # centred ranks of two values are ±1/2 (norm 1/√2 < 1): scaled to ±1/√2; a constant row has none
    assert _standardised_ranks(np.array([3.0, 1.0])) == pytest.approx([2**-0.5, -(2**-0.5)], rel=1e-15)
    assert np.isnan(_standardised_ranks(np.array([[2.0, 2.0, 2.0]]))).all()


@pytest.mark.parametrize(("rho", "count"), [(0.5, 4), (-0.3, 5), (0.9, 40)])
def test_partial_p_value_from_four_images_on(rho: float, count: int) -> None:
    assert _partial_p_value(rho, count) == pytest.approx(partial_t_test_p(rho, count), rel=1e-12)


def test_partial_p_value_edges() -> None:
    assert np.isnan(_partial_p_value(1.0, 3)) and np.isnan(_partial_p_value(0.5, 3))  # below 4 images: none
    assert np.isnan(_partial_p_value(float("nan"), 10))
    assert _partial_p_value(1.0, 4) == _partial_p_value(-1.0, 10) == 0.0  # a perfect partial ρ
