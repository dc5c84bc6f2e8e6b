"""Experiment 4's intervals at the levels the analysis passes, on two rankings that differ, and its Holm family where
the correction matters.

:func:`experiment_4.summary.contrast_block` is what the analysis calls for the scalar − vector contrast (with the seed
and the replicate count, never a level). On two rankings that differ — the first aligned with the classes, the second
not — its numbers are checked against independent computations: each ranking's pooled AUC counted pair by pair, the
difference taken first − second, its interval against :func:`scipy.stats.bootstrap` at 95 % over the classes (the same
draws) of a statistic written out pair by pair (a class drawn w times weighs its same-class pairs by w and its pairs
with a class drawn v times by w·v), and the 1-NN hit difference's interval against scipy's 95 % bootstrap over images.
:func:`experiment_4.summary.alignment_block`'s 1-NN accuracy interval likewise. A 90 % interval reported as 95 %, or a
swapped subtraction, fails here."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

from experiment_1.report import CANNOT_TELL, HOLDS, by_id
from experiment_4 import contrast
from experiment_4 import verdicts as e4
from experiment_4.inference import label_permutations, prepare_view
from experiment_4.signatures import core_share, global_core, membership_counts
from experiment_4.summary import alignment_block, contrast_block, core_block
from tests.experiment_4.test_experiment_4_verdict_entries import summary_of

CLASSES, PER_CLASS = 8, 3
RESAMPLES = 499


def test_the_family_and_the_replicates_written_out() -> None:
    assert contrast.NUM_RESAMPLES == 9999
    assert e4.ALIGNMENT_RANKINGS == ("vector", "scalar", "class_control")
    assert e4.FAMILY_EXTRA == ("scalar_minus_vector", "vector_global_core")  # with the 3 × 3 alignment tests: 11


def two_rankings() -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Labels (8 classes of 3, labels 0, 10, …), every pair ``(P, 2)``, and each ranking's pair similarities on the
    levels of a top-4 Jaccard (0, 1/7, 1/3, 3/5, 1): the first higher on same-class pairs, the second unrelated."""
    rng = np.random.default_rng(44)
    labels = np.repeat(np.arange(CLASSES) * 10, PER_CLASS)
    first, second = np.triu_indices(len(labels), 1)
    pairs = np.stack([first, second], axis=1)
    same = labels[first] == labels[second]
    levels = np.array([0.0, 1 / 7, 1 / 3, 3 / 5, 1.0])
    aligned = levels[np.clip(rng.integers(0, 3, len(pairs)) + 2 * same, 0, 4)]
    unrelated = levels[rng.integers(0, 5, len(pairs))]
    return labels, pairs, {"scalar": aligned, "vector": unrelated}


def pair_auc(values: np.ndarray, same_weights: np.ndarray, different_weights: np.ndarray) -> float:
    """Σ_s Σ_d w_s w_d ([v_s > v_d] + ½ [v_s = v_d]) / (Σ w_s · Σ w_d) over same-class pairs s, different-class d."""
    same, different = values[same_weights > 0], values[different_weights > 0]
    ws, wd = same_weights[same_weights > 0], different_weights[different_weights > 0]
    wins = (same[:, None] > different[None, :]) + 0.5 * (same[:, None] == different[None, :])
    return float(ws @ wins @ wd / (ws.sum() * wd.sum()))


def class_weighted_auc_difference(labels: np.ndarray, pairs: np.ndarray, values: dict[str, np.ndarray]):
    """The statistic over a resample of class positions: first − second pooled AUC under the drawn class weights."""
    _, classes = np.unique(labels, return_inverse=True)
    a, b = classes[pairs[:, 0]], classes[pairs[:, 1]]

    def statistic(drawn: np.ndarray) -> float:
        w = np.bincount(drawn, minlength=CLASSES).astype(np.float64)
        same_weights = np.where(a == b, w[a], 0.0)
        different_weights = np.where(a != b, w[a] * w[b], 0.0)
        return pair_auc(values["scalar"], same_weights, different_weights) - pair_auc(
            values["vector"], same_weights, different_weights
        )

    return statistic


def raw_runs(labels: np.ndarray, pairs: np.ndarray, values: dict[str, np.ndarray]) -> dict:
    """What the analysis hands :func:`contrast_block`: per ranking its pairs and similarities, per-image 1-NN hit rates
    (the first ranking hits more often) and its statistics under the observed labelling and two permutations."""
    rng = np.random.default_rng(45)
    hits = {
        "scalar": (rng.random(len(labels)) < 0.8).astype(float),
        "vector": (rng.random(len(labels)) < 0.3).astype(float),
    }
    statistics = {
        "scalar": {"auc": np.array([0.8, 0.5, 0.52]), "nn_accuracy": np.array([0.75, 0.3, 0.35])},
        "vector": {"auc": np.array([0.5, 0.49, 0.55]), "nn_accuracy": np.array([0.25, 0.3, 0.2])},
    }
    return {
        name: {
            "pairs": pairs[::-1].copy(),
            "values": values[name][::-1].copy(),
            "hit_rates": hits[name],
            "statistics": statistics[name],
        }
        for name in ("scalar", "vector")
    }


def test_the_auc_contrast_is_first_minus_second_with_scipys_95_percent_class_bootstrap() -> None:
    labels, pairs, values = two_rankings()
    contrast = contrast_block(raw_runs(labels, pairs, values), 5, labels, RESAMPLES)
    auc = contrast["auc_bootstrap"]
    statistic = class_weighted_auc_difference(labels, pairs, values)
    same = labels[pairs[:, 0]] == labels[pairs[:, 1]]
    first = pair_auc(values["scalar"], same.astype(float), (~same).astype(float))
    second = pair_auc(values["vector"], same.astype(float), (~same).astype(float))
    assert (auc["first"], auc["second"]) == (pytest.approx(first, rel=1e-12), pytest.approx(second, rel=1e-12))
    assert auc["observed"] == pytest.approx(first - second, rel=1e-12)
    assert statistic(np.arange(CLASSES)) == pytest.approx(first - second, rel=1e-12)  # every class once
    assert first - second > 0.2  # runs that differ: a swapped difference changes sign
    assert auc["undefined_resamples"] == 0 and auc["num_resamples"] == RESAMPLES
    reference = stats.bootstrap(
        (np.arange(CLASSES),),
        statistic,
        vectorized=False,
        n_resamples=RESAMPLES,
        method="percentile",
        confidence_level=0.95,
        rng=np.random.default_rng(5),
    )
    assert auc["confidence"] == 0.95
    assert (auc["ci_low"], auc["ci_high"]) == (
        pytest.approx(reference.confidence_interval.low, rel=1e-9),
        pytest.approx(reference.confidence_interval.high, rel=1e-9),
    )
    replicates = reference.bootstrap_distribution
    below, above = int((replicates <= 0).sum()), int((replicates >= 0).sum())
    assert auc["p_value"] == pytest.approx(min(1.0, 2 * (1 + min(below, above)) / (RESAMPLES + 1)))
    # the record's words and the replicates' spread, written out
    assert {key: auc[key] for key in ("statistic", "method", "resampled", "alternative", "seed", "num_classes")} == {
        "statistic": "pooled AUC (same > different pair), first − second",
        "method": "percentile bootstrap over classes (scipy.stats.bootstrap), paired",
        "resampled": "classes",
        "alternative": "two-sided",
        "seed": 5,
        "num_classes": CLASSES,
    }
    assert auc["bootstrap_mean"] == pytest.approx(replicates.mean(), rel=1e-9)
    assert auc["bootstrap_std"] == pytest.approx(replicates.std(), rel=1e-9)


def test_the_nn_hit_difference_is_first_minus_second_with_scipys_95_percent_image_bootstrap() -> None:
    labels, pairs, values = two_rankings()
    raw = raw_runs(labels, pairs, values)
    contrast = contrast_block(raw, 5, labels, RESAMPLES)
    difference = raw["scalar"]["hit_rates"] - raw["vector"]["hit_rates"]
    reference = stats.bootstrap(
        (difference,),
        np.mean,
        n_resamples=2000,
        method="percentile",
        confidence_level=0.95,
        rng=np.random.default_rng(5),
    ).confidence_interval
    block = contrast["nn_hit_difference"]
    assert block["mean"] == pytest.approx(difference.mean(), rel=1e-12) and block["mean"] > 0.2
    assert (block["ci_low"], block["ci_high"]) == (
        pytest.approx(reference.low, rel=1e-12),
        pytest.approx(reference.high, rel=1e-12),
    )
    hits = contrast["nn_hits"]
    assert (hits["first_hits"], hits["second_hits"]) == (
        int(raw["scalar"]["hit_rates"].sum()),
        int(raw["vector"]["hit_rates"].sum()),
    )
    first_only = int(((raw["scalar"]["hit_rates"] == 1) & (raw["vector"]["hit_rates"] == 0)).sum())
    assert hits["first_only"] == first_only and hits["first_only"] > hits["second_only"]
    tests = contrast["tests"]
    assert tests["auc"]["observed"] == pytest.approx(0.8 - 0.5) and tests["nn_accuracy"]["observed"] == pytest.approx(
        0.5
    )
    # the null rows (0.01, −0.03) and (0, 0.15): neither reaches 0.3 or 0.5; on the other side both do
    assert (tests["auc"]["p_greater"], tests["auc"]["p_less"]) == (pytest.approx(1 / 3), pytest.approx(1.0))


def test_the_1nn_accuracy_interval_is_scipys_95_percent_bootstrap_over_images() -> None:
    labels, _, values = two_rankings()
    similarity = np.zeros((len(labels), len(labels)))
    first, second = np.triu_indices(len(labels), 1)
    similarity[first, second] = similarity[second, first] = values["scalar"]
    view = prepare_view(similarity, None, 0, True)
    block = alignment_block([view], labels, label_permutations(len(labels), 19, 3), [None], True, 9)
    hit_rates = np.empty(len(labels))
    for image in range(len(labels)):  # the most similar other image, ties to the lowest index
        others = np.where(np.arange(len(labels)) == image, -np.inf, similarity[image])
        hit_rates[image] = labels[int(np.argmax(others))] == labels[image]
    reference = stats.bootstrap(
        (hit_rates,),
        np.mean,
        n_resamples=2000,
        method="percentile",
        confidence_level=0.95,
        rng=np.random.default_rng(9),
    ).confidence_interval
    ci = block["nn_accuracy_ci"]
    assert ci["mean"] == pytest.approx(hit_rates.mean(), rel=1e-12)
    assert block["tests"]["nn_accuracy"]["observed"] == pytest.approx(hit_rates.mean(), rel=1e-12)
    assert (ci["ci_low"], ci["ci_high"]) == (
        pytest.approx(reference.low, rel=1e-12),
        pytest.approx(reference.high, rel=1e-12),
    )


def test_the_global_core_share_interval_is_scipys_95_percent_bootstrap_over_images() -> None:
    rng = np.random.default_rng(51)
    indices = torch.from_numpy(np.stack([rng.choice(20, 6, replace=False) for _ in range(30)]))
    block = core_block(indices, 64, 6, 8, np.full(99, 0.1))
    shares = core_share(indices, global_core(membership_counts(indices, 64), 6)).numpy()

    def scipy_ci(level: float) -> tuple[float, float]:
        interval = stats.bootstrap(
            (shares,),
            np.mean,
            n_resamples=2000,
            method="percentile",
            confidence_level=level,
            rng=np.random.default_rng(8),
        ).confidence_interval
        return float(interval.low), float(interval.high)

    share = block["share"]
    assert share["mean"] == pytest.approx(shares.mean(), rel=1e-12)
    low, high = scipy_ci(0.95)
    assert (share["ci_low"], share["ci_high"]) == (pytest.approx(low, rel=1e-12), pytest.approx(high, rel=1e-12))
    assert scipy_ci(0.90) != pytest.approx((low, high), rel=1e-3)  # the shares tell the two levels apart


# ---- Holm over Experiment 4's family of 11, where Holm, Bonferroni and no correction decide differently


def family_with_scalar_nn(p_nn: float) -> dict:
    """Five tests at 0.001 (the contrast, the core, the scalar ranking's difference and AUC, the control's difference),
    the scalar ranking's 1-NN at ``p_nn`` (sixth smallest), five at 0.2 … 0.7."""
    return summary_of(
        {"vector": (0.5, 0.6, 0.7), "scalar": (0.001, 0.001, p_nn), "class_control": (0.001, 0.2, 0.3)},
        p_contrast=0.001,
        p_core=0.001,
    )


@pytest.mark.parametrize(
    ("p_nn", "adjusted", "decision"),
    [
        (0.006, 0.036, HOLDS),  # Holm 6 × 0.006 = 0.036 < α; Bonferroni 11 × 0.006 = 0.066 would not reject
        (0.009, 0.054, CANNOT_TELL),  # the raw 0.009 < α; Holm 6 × 0.009 = 0.054 does not reject
    ],
    ids=["holm-rejects-where-bonferroni-would-not", "raw-ps-would-reject-where-holm-does-not"],
)
def test_holm_over_the_family_where_the_corrections_decide_differently(
    p_nn: float, adjusted: float, decision: str
) -> None:
    entry = by_id(e4.alignment_verdicts(family_with_scalar_nn(p_nn)))["class_alignment.scalar"]
    assert entry["test"]["p_adjusted"] == pytest.approx(adjusted, rel=1e-12)
    assert entry["test"]["family_size"] == 11 and entry["decision"] == decision
    held, _ = e4.family_adjusted(family_with_scalar_nn(p_nn))
    # the five at 0.001: 11 × 0.001 = 0.011, then the running maximum; from the seventh on 5 × 0.2 and above: 1
    assert held["scalar", "difference"] == held["scalar_minus_vector", ""] == pytest.approx(0.011, rel=1e-12)
    assert held["class_control", "auc"] == 1.0 and held["vector", "difference"] == 1.0


def test_the_mcnemar_record_of_two_hit_vectors_written_out() -> None:
    # 7 images: both hit 2, only the first 3, only the second 1, neither 1
    first = np.array([1, 1, 1, 1, 1, 0, 0])
    second = np.array([1, 1, 0, 0, 0, 1, 0])
    assert contrast.nn_hit_mcnemar(first, second) == {
        "first_hits": 5,
        "second_hits": 3,
        "first_only": 3,
        "second_only": 1,
        "p_value": 0.625,  # 2 · P(Bin(4, ½) ≤ 1) = 2 · 5/16
        "best_attainable_p": 0.125,  # 2 · 0.5⁴
        "best_attainable_p_at_these_totals": 0.5,  # 2 · 0.5²: |3 − 1| discordant at the least
        "test": "exact two-sided McNemar (binomial on the discordant images)",
    }


def test_the_auc_contrast_p_of_a_negative_difference_counts_the_upper_tail() -> None:
    labels, pairs, values = two_rankings()
    swapped = contrast.auc_difference_bootstrap(pairs, values["vector"], values["scalar"], labels, 5, RESAMPLES)
    reference = stats.bootstrap(
        (np.arange(CLASSES),),
        class_weighted_auc_difference(labels, pairs, {"scalar": values["vector"], "vector": values["scalar"]}),
        vectorized=False,
        n_resamples=RESAMPLES,
        method="percentile",
        rng=np.random.default_rng(5),
    ).bootstrap_distribution
    below, above = int((reference <= 0).sum()), int((reference >= 0).sum())
    assert swapped["observed"] < -0.2 and above < below
    assert swapped["p_value"] == pytest.approx(2 * (1 + above) / (RESAMPLES + 1), rel=1e-12)


def test_class_weights_and_level_histograms_written_out() -> None:
    assert contrast.class_weights(np.array([[0, 2, 2], [1, 1, 1]]), 3).tolist() == [[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]
    # three images of classes 0, 0, 1; pairs (0, 1) same class at level 0.5, (0, 2) and (1, 2) different at 0.2 and 0.5
    same, different = contrast.level_histograms(
        np.array([[0, 1], [0, 2], [1, 2]]), np.array([0.5, 0.2, 0.5]), np.array([0, 0, 1]), 2
    )
    assert same.dtype == different.dtype == np.float64
    assert same.tolist() == [[0.0, 1.0], [0.0, 0.0]]
    assert different.tolist() == [[[0.0, 1.0], [1.0, 0.0]], [[0.0, 1.0], [1.0, 0.0]]]
    same, different = contrast.level_histograms(np.zeros((0, 2), dtype=int), np.zeros(0), np.array([0, 1]), 2)
    assert same.shape == (2, 0) and different.shape == (0, 2, 2)
