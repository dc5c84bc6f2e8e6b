"""Experiment 5's Spearman and quartile statistics on planted monotone and independent data, and against explicit loops."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from experiment_5.association import ci_excludes_zero, compare_groups, quartile_groups, spearman_table

RNG = np.random.default_rng(11)
N = 300
X = RNG.normal(size=N)
Z = RNG.normal(size=N)


def test_planted_monotone_and_independent_pairs() -> None:
    ys = {"increasing": np.exp(X), "decreasing": -(X**3), "independent": RNG.normal(size=N)}
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
    y = np.round(X + RNG.normal(size=N), 1)  # rounded: ties, which the ranks must average
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
    noise = RNG.normal(size=(3, N))
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
    groups = quartile_groups(X)
    assert sorted(len(group) for group in groups) == [75] * 4
    assert sorted(np.concatenate(groups).tolist()) == list(range(N))
    assert all(X[groups[q]].max() <= X[groups[q + 1]].min() for q in range(3))
    tied = quartile_groups(np.array([1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]))
    assert [group.tolist() for group in tied] == [[1, 3, 5], [7, 0], [2, 4], [6, 8]]

    planted = X + 0.5 * RNG.normal(size=N)
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

    unrelated = RNG.normal(size=N)
    null = compare_groups(unrelated[groups[0]], unrelated[groups[3]], seed=0, num_resamples=500)
    assert not ci_excludes_zero(null["difference"]) and null["mann_whitney_p"] > 0.05


def test_groups_need_two_values() -> None:
    with pytest.raises(ValueError):
        compare_groups(np.array([1.0]), np.array([1.0, 2.0]))
