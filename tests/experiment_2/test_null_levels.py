"""Experiment 2's comparisons of the trained network with random-init ones, on runs that differ: the numbers checked by
hand, the intervals at the level the step passes, and Holm over the tested family where the correction matters — in
the verdicts and in the checker that re-derives them.

Step 14 calls :func:`experiment_2.spectrum.null_networks.compare_networks`: the trained network's mean over the seeds'
images only (its other images hold other values, so a mix-up of rows shows), its exact rank p among the null networks
counted by hand, Holm over the two tested statistics on families whose Holm, Bonferroni and unadjusted decisions
differ, and the null networks' mean spectrum with its interval against :func:`scipy.stats.bootstrap` at 95 % over the
networks. Step 2 calls :func:`experiment_2.spectrum.verdicts.null_verdicts` for one seed's null: its decision and its
"training moves κ" note from two runs whose κ intervals differ, trained less null."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from scipy import stats

from experiment_1.errors import PipelineError
from experiment_1.report import CANNOT_TELL, HOLDS, check_verdicts
from experiment_2.spectrum import null_networks
from experiment_2.spectrum.null_networks import compare_networks
from experiment_2.spectrum.verdicts import FLOOR_MARGIN, INPUT_SPREAD, LOW_ORDERS, null_verdicts
from paper.experiments import VERDICTS
from tests.experiment_2.test_null_networks import IMAGES, L, seed_run, trained_run

SEEDS = 99


def test_the_rule_constants_written_out() -> None:
    """The null's rule as fixed before the seeds ran (experiment_2/README.md), and the spectrum rules' thresholds."""
    assert null_networks.TESTED == ("kappa_vector", "walsh_kappa_vector")
    assert list(null_networks.STATISTICS) == [
        "kappa_vector",
        "walsh_kappa_vector",
        "kappa_scalar",
        "walsh_kappa_scalar",
        "c_le3_vector",
        "walsh_c_le3_vector",
        "trunk_share_vector",
        "cancellation_ratio_vector",
    ]
    assert (null_networks.DIRECTION, null_networks.INPUT_FRACTION) == ("lower", 0.01)
    assert (FLOOR_MARGIN, LOW_ORDERS, INPUT_SPREAD) == (1000.0, 3, 1e-4)


def seeds_with(kappa: dict[str, float]) -> list[tuple[dict, dict]]:
    """99 random-init runs; seed i has κ^v = κ_W^v = 5 + 0.01·i on its four images (the other statistics 5), and a
    mean spectrum of its own."""
    runs = []
    for seed in range(1, SEEDS + 1):
        summary, arrays = seed_run(seed, 5.0)
        for name in kappa:
            arrays[name] = np.full(IMAGES, 5.0 + 0.01 * seed)
        for projection in ("vector", "scalar"):
            spectrum = np.linspace(1.0, 2.0, L) + np.sin(seed * np.arange(1, L + 1))
            summary["projections"][projection]["mean_spectrum"]["mean"] = (spectrum / spectrum.sum()).tolist()
        runs.append((summary, arrays))
    return runs


def compared_with(trained: dict[str, float]) -> dict:
    """The trained run over ten images: on the four the seeds evaluated its κ^v and κ_W^v average ``trained`` (spread
    around it), on the other six they sit at 0 — below every seed."""
    summary, arrays = trained_run(5.0)
    for name, value in trained.items():
        arrays[name] = np.concatenate([value + np.array([-0.004, 0.004, -0.002, 0.002]), np.zeros(6)])
    return compare_networks(summary, arrays, seeds_with(trained), {"trained_summary": "t.json", "seeds_dir": "seeds"})


def entry(result: dict, name: str) -> dict:
    return next(verdict for verdict in result["verdicts"] if verdict["id"] == f"null_networks.{name}")


@pytest.mark.parametrize(
    ("trained", "raw", "adjusted", "decisions"),
    [
        # 1 and 3 seeds at or below the trained value: p = 2/100, 4/100; Holm 0.04 and max(0.04, 0.04) — both hold,
        # where Bonferroni would give 0.08 to κ_W^v
        ((5.015, 5.035), (0.02, 0.04), (0.04, 0.04), (HOLDS, HOLDS)),
        # 2 and 3 seeds: p = 0.03, 0.04, each ≤ α alone; Holm 0.06 for both — neither holds
        ((5.025, 5.035), (0.03, 0.04), (0.06, 0.06), (CANNOT_TELL, CANNOT_TELL)),
    ],
    ids=["holm-rejects-where-bonferroni-would-not", "raw-ps-would-reject-where-holm-does-not"],
)
def test_rank_tests_by_hand_with_holm_where_the_corrections_differ(
    trained: tuple, raw: tuple, adjusted: tuple, decisions: tuple
) -> None:
    result = compared_with(dict(zip(("kappa_vector", "walsh_kappa_vector"), trained)))
    for name, value, p_value, p_adjusted, decided in zip(
        ("kappa_vector", "walsh_kappa_vector"), trained, raw, adjusted, decisions
    ):
        block = result["statistics"][name]
        assert result["trained"]["means"][name] == pytest.approx(value, rel=1e-12)  # the four shared images only
        seeds = 5.0 + 0.01 * np.arange(1, SEEDS + 1)
        assert block["networks"] == pytest.approx(seeds.tolist(), rel=1e-12)
        assert block["networks_below"] == int((seeds < value).sum())
        assert (block["mean"], block["min"], block["max"]) == (
            pytest.approx(seeds.mean()),
            pytest.approx(5.01),
            pytest.approx(5.99),
        )
        verdict = entry(result, name)
        assert block["rank_p"] == verdict["test"]["p_value"] == pytest.approx(p_value, rel=1e-12)
        assert verdict["test"]["p_adjusted"] == pytest.approx(p_adjusted, rel=1e-12)
        assert verdict["test"]["family_size"] == 2 and verdict["decision"] == decided
    check_verdicts(result, "null.json", VERDICTS["2N"])
    flipped = copy.deepcopy(result)
    entry(flipped, "walsh_kappa_vector")["decision"] = CANNOT_TELL if decisions[1] == HOLDS else HOLDS
    with pytest.raises(PipelineError, match="null_networks.walsh_kappa_vector says"):
        check_verdicts(flipped, "null.json", VERDICTS["2N"])


def test_the_null_networks_mean_spectrum_has_scipys_95_percent_interval_over_networks() -> None:
    result = compared_with({"kappa_vector": 5.015, "walsh_kappa_vector": 5.035})
    for projection in ("vector", "scalar"):
        spectra = np.array(
            [summary["projections"][projection]["mean_spectrum"]["mean"] for summary, _ in seeds_with({})]
        )
        reference = stats.bootstrap(
            (spectra,),
            lambda sample, axis: sample.mean(axis=axis),
            axis=0,
            n_resamples=2000,
            method="percentile",
            confidence_level=0.95,
            rng=np.random.default_rng(0),
        ).confidence_interval
        block = result["random_init"]["projections"][projection]["mean_spectrum"]
        np.testing.assert_allclose(block["mean"], spectra.mean(axis=0), rtol=1e-12)
        np.testing.assert_allclose(block["ci_low"], reference.low, rtol=1e-12)
        np.testing.assert_allclose(block["ci_high"], reference.high, rtol=1e-12)


def run_with_kappa(mean: float, low: float, high: float, run_id: str) -> dict:
    resolved = {projection: {"unresolved_orders": []} for projection in ("vector", "scalar")}
    return {
        "config": {"run_id": run_id},
        "num_valid": 40,
        "roundoff": resolved,
        "projections": {
            projection: {"kappa": {"mean": mean + shift, "ci_low": low + shift, "ci_high": high + shift}}
            for projection, shift in (("vector", 0.0), ("scalar", 0.5))
        },
        "verdicts": [{"id": "input_dependent", "decision": HOLDS}],
    }


@pytest.mark.parametrize(
    ("ours", "theirs", "decision", "note"),
    [
        ((3.1, 2.9, 3.3), (4.0, 3.8, 4.2), HOLDS, "training moves κ down by -0.9"),  # disjoint, trained below
        ((4.3, 4.1, 4.5), (4.0, 3.8, 4.2), CANNOT_TELL, None),  # overlapping by 0.1
        ((4.5, 4.3, 4.7), (4.0, 3.8, 4.2), HOLDS, "training moves κ up by +0.5"),  # disjoint, trained above
    ],
)
def test_one_seeds_null_against_the_trained_run_on_two_runs_that_differ(
    ours: tuple, theirs: tuple, decision: str, note: str | None
) -> None:
    block = null_verdicts(run_with_kappa(*ours, "trained"), run_with_kappa(*theirs, "null"))
    for verdict, shift in zip(block, (0.0, 0.5)):
        assert verdict["decision"] == decision
        assert verdict["effect"]["value"] == pytest.approx(ours[0] + shift)
        assert (verdict["effect"]["ci_low"], verdict["effect"]["ci_high"]) == (
            pytest.approx(ours[1] + shift),
            pytest.approx(ours[2] + shift),
        )
        assert verdict["notes"][0].startswith(
            f"null (random init): κ = {theirs[0] + shift:.3g} [{theirs[1] + shift:.3g}, "
        )
        assert verdict["notes"][1:] == ([note] if note else [])
