"""The sampling estimators' intervals at the levels the pipeline passes, and step 11's Holm where the correction matters.

Step 8 reads the per-image intervals through :func:`experiment_2.past_exhaustive.sampled.subcube_per_image` and
:func:`~experiment_2.past_exhaustive.sampled.walsh_per_image`, step 11 through
:func:`experiment_2.past_exhaustive.validation.replications.subcube_replications` and
:func:`~experiment_2.past_exhaustive.validation.replications.walsh_replications` (at its ``NOMINAL``): none of them names
a level the test could supply. Each interval is recomputed here at the documented 95 % from the draws the estimator
reads: the sub-cube means and the Walsh variance and influence by a bootstrap-t written out resample by resample (each
resample's mean, its own SD, the pivots' 97.5 % and 2.5 % quantiles), the noise stabilities by the normal interval on
log(1 − s) with ``scipy.stats.norm.ppf(0.975)`` from the reported estimate and SE. A 90 % interval reported as 95 %
fails here. Step 11's coverage intervals are checked against the exact 95 % interval of :func:`scipy.stats.binomtest`,
and its Holm over the groups on a family whose Holm, Bonferroni and unadjusted decisions differ."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from experiment_2.past_exhaustive.sampled import subcube_per_image, walsh_per_image
from experiment_2.past_exhaustive.sampling import subcubes, walsh
from experiment_2.past_exhaustive.sampling.subcubes import draw_subcubes, subcube_mask_ids, subcube_order_means
from experiment_2.past_exhaustive.sampling.walsh import RHOS, estimate_names, walsh_design
from experiment_2.past_exhaustive.validation import replications
from experiment_2.past_exhaustive.validation.calibration import TABLE_DEPENDENT, over_tables
from experiment_2.past_exhaustive.validation.replications import (
    DenseTable,
    cell,
    replication_seed,
    subcube_replications,
    walsh_replications,
)
from tests.sampling_tables import residual_game_table

Z = float(stats.norm.ppf(0.975))


def test_the_rule_constants_written_out() -> None:
    """Step 11's rule and the estimators' design constants, as its README states them."""
    assert replications.NOMINAL == 0.95
    assert replications.COVERAGE_BAND == (0.93, 0.97) and replications.MAX_BIAS_SE == 1.0
    assert (subcubes.MIN_COEFFICIENTS, subcubes.VALIDATED_DRAWS, subcubes.NUM_RESAMPLES) == (6, 120, 1999)
    assert walsh.RESAMPLES == 2000 and walsh.RHOS == (0.95, 0.9, 0.75, 0.5)


def bootstrap_t(samples: np.ndarray, seed: int, resamples: int) -> tuple[float, float]:
    """The two-sided 95 % bootstrap-t interval of the mean of ``samples``: ``resamples`` resamples drawn as
    ``default_rng(seed).integers(0, n, (resamples, n))``, each studentised by its own SD (ddof 1), the interval
    ``mean − t*_{0.975}·se, mean − t*_{0.025}·se`` with the sample's ``se = sd/√n``."""
    count = len(samples)
    drawn = samples[np.random.default_rng(seed).integers(0, count, size=(resamples, count))]
    pivots = (drawn.mean(axis=1) - samples.mean()) / (drawn.std(axis=1, ddof=1) / np.sqrt(count))
    upper, lower = np.quantile(pivots, [0.975, 0.025])
    error = samples.std(ddof=1) / np.sqrt(count)
    return samples.mean() - upper * error, samples.mean() - lower * error


def test_the_sub_cube_intervals_of_step_8_are_95_percent_bootstrap_t_over_draws() -> None:
    rng = np.random.default_rng(47)
    order_means = rng.lognormal(sigma=1.0, size=(2, 25, 7))  # two images, 25 draws of 6-block sub-cubes
    per_image = subcube_per_image(order_means)
    for image in range(2):
        for order in range(1, 7):  # C(6, k) ≥ 6 for k = 1 … 5: an interval; k = 6 (one coefficient) none
            samples = order_means[image, :, order]
            assert per_image["mean"][image, order - 1] == pytest.approx(samples.mean(), rel=1e-12)
            got = (per_image["ci_low"][image, order - 1], per_image["ci_high"][image, order - 1])
            if order == 6:
                assert np.isnan(got).all()
                continue
            low, high = bootstrap_t(samples, 0, 1999)
            assert got == (pytest.approx(low, rel=1e-9), pytest.approx(high, rel=1e-9)), (image, order)


def unit_terms(table: np.ndarray, design) -> dict[str, np.ndarray]:
    """Per mask unit: the variance's term m/(m − 1)·‖h(x_a) − h̄‖² and the influence's L/4·‖h(x_a) − h(x_a ⊕ e_i)‖²."""
    base = table[design.base]
    count = len(base)
    return {
        "variance": count / (count - 1) * np.square(base - base.mean(axis=0)).sum(axis=1),
        "influence": design.num_blocks / 4 * np.square(base - table[design.flipped]).sum(axis=1),
    }


def stability_interval(estimate: float, error: float, rho: float, num_blocks: int) -> tuple[float, float]:
    """The normal 95 % interval on log(1 − s), cut to [ρ^L, ρ]."""
    factor = np.exp(Z * error / (1 - estimate))
    low, high = 1 - (1 - estimate) * factor, 1 - (1 - estimate) / factor
    return float(np.clip(low, rho**num_blocks, rho)), float(np.clip(high, rho**num_blocks, rho))


def test_the_walsh_intervals_of_step_8_are_at_95_percent() -> None:
    num_blocks = 6
    table = residual_game_table(num_blocks, 3, seed=9)
    design = walsh_design(num_blocks, 60, seed=11)
    predicted = np.array([1])
    arrays = walsh_per_image(design, table[design.all_ids()][None], predicted)
    names = list(estimate_names(design.rhos))
    for projection, values in (("vector", table), ("scalar", table[:, [1]])):
        got = {
            field: dict(zip(names, arrays[f"walsh_{field}_{projection}"][0]))
            for field in ("estimate", "ci_low", "ci_high", "se")
        }
        for name, terms in unit_terms(values, design).items():
            low, high = bootstrap_t(terms, design.seed, 2000)
            assert got["estimate"][name] == pytest.approx(terms.mean(), rel=1e-12)
            assert (got["ci_low"][name], got["ci_high"][name]) == (
                pytest.approx(max(low, 0.0), rel=1e-9),
                pytest.approx(high, rel=1e-9),
            ), (projection, name)
        for rho in design.rhos:
            name = f"stability_{rho}"
            want = stability_interval(got["estimate"][name], got["se"][name], rho, num_blocks)
            assert (got["ci_low"][name], got["ci_high"][name]) == (
                pytest.approx(want[0], rel=1e-12),
                pytest.approx(want[1], rel=1e-12),
            )
        assert got["ci_low"]["stability_0.5"] < got["estimate"]["stability_0.5"] < got["ci_high"]["stability_0.5"]


def test_step_11_replicates_the_sub_cube_intervals_at_95_percent() -> None:
    table = residual_game_table(7, 2, seed=12)
    out = subcube_replications(DenseTable(table), 4, 12, 3, seed=5)
    for replication in range(3):
        blocks = draw_subcubes(7, 4, 12, replication_seed(5, replication))
        means = subcube_order_means(table[subcube_mask_ids(blocks)])
        low, high = bootstrap_t(means[:, 2], replication_seed(5, replication, 1), 1999)  # order 2: C(4, 2) = 6
        assert out["estimate"][replication, 1] == pytest.approx(means[:, 2].mean(), rel=1e-12)
        assert (out["ci_low"][replication, 1], out["ci_high"][replication, 1]) == (
            pytest.approx(low, rel=1e-9),
            pytest.approx(high, rel=1e-9),
        )


def test_step_11_replicates_the_walsh_intervals_at_95_percent() -> None:
    table = residual_game_table(6, 2, seed=13)
    names = ["variance", "influence", "stability_0.9"]
    out = walsh_replications(DenseTable(table), 40, 2, seed=6, names=names)
    for replication in range(2):
        design = walsh_design(6, 40, replication_seed(6, replication), RHOS)
        for column, (name, terms) in enumerate(unit_terms(table, design).items()):
            low, high = bootstrap_t(terms, replication_seed(6, replication, 1), 2000)
            assert (out["ci_low"][replication, column], out["ci_high"][replication, column]) == (
                pytest.approx(max(low, 0.0), rel=1e-9),
                pytest.approx(high, rel=1e-9),
            ), (replication, name)


def test_a_cells_coverage_interval_is_the_exact_95_percent_one() -> None:
    estimate = np.linspace(0.0, 1.0, 40)
    low, high = estimate - 0.3, estimate + 0.3
    entry = cell(estimate, low, high, 0.8)  # covered where |estimate − 0.8| ≤ 0.3: 20 of 40 … by hand below
    covered = int(((low <= 0.8) & (0.8 <= high)).sum())
    exact = stats.binomtest(covered, 40).proportion_ci(confidence_level=0.95, method="exact")
    assert entry["coverage"] == covered / 40
    assert entry["coverage_ci"] == [pytest.approx(exact.low, rel=1e-12), pytest.approx(exact.high, rel=1e-12)]


# ---- Holm over step 11's groups, where Holm, Bonferroni and no correction decide differently


def group_cells(name: str, covered: tuple[int, int]) -> list[dict]:
    """Two tables' cells of one (estimator, statistic, budget) group, 200 replications each."""
    return [
        {
            "estimator": "walsh",
            "statistic": name,
            "budget": "m=64",
            "interval_reported": True,
            "replications": 200,
            "coverage": count / 200,
        }
        for count in covered
    ]


def homogeneity(covered: tuple[int, int]) -> float:
    return float(stats.chi2_contingency(np.array([covered, [200 - c for c in covered]]), correction=False).pvalue)


@pytest.mark.parametrize(
    ("first", "second", "dependent"),
    [
        # p ≈ 0.0121 and 0.0214 (and ≈ 0.47): Holm 3·p₁, max(3·p₁, 2·p₂) ≈ 0.043 — both reject, where Bonferroni's
        # 3·p₂ ≈ 0.064 would not
        ((190, 176), (189, 176), (True, True)),
        # p ≈ 0.0214 twice: each ≤ α alone, Holm 3·p ≈ 0.064 for both — neither rejects
        ((189, 176), (189, 176), (False, False)),
    ],
    ids=["holm-rejects-where-bonferroni-would-not", "raw-ps-would-reject-where-holm-does-not"],
)
def test_holm_over_the_groups_where_the_corrections_differ(first: tuple, second: tuple, dependent: tuple) -> None:
    third = (190, 187)
    result = over_tables(group_cells("w1", first) + group_cells("w2", second) + group_cells("w3", third))
    raw = [homogeneity(first), homogeneity(second), homogeneity(third)]
    assert raw[0] <= raw[1] < 0.05 < raw[2]
    holm_by_hand = [3 * raw[0], max(3 * raw[0], 2 * raw[1]), max(3 * raw[0], 2 * raw[1], raw[2])]
    rows = result["groups"]
    for row, p_value, adjusted, expected in zip(rows, raw, holm_by_hand, (*dependent, False)):
        assert row["homogeneity_p"] == pytest.approx(p_value, rel=1e-12)
        assert row["homogeneity_p_holm"] == pytest.approx(adjusted, rel=1e-12)
        assert (row["verdict"] == TABLE_DEPENDENT) == expected
    pooled = stats.binomtest(first[0] + first[1], 400).proportion_ci(confidence_level=0.95, method="exact")
    assert rows[0]["coverage_ci"] == [pytest.approx(pooled.low, rel=1e-12), pytest.approx(pooled.high, rel=1e-12)]
