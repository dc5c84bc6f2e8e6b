"""Experiment 4's verdict entries (experiment_4/verdicts.py) on a hand-built overlap summary holding only what the rules
read: the whole block compared to hand-written dicts (Holm over the family of 11 worked by hand), each threshold at, just
below and just above α (the Holm-adjusted p, the best attainable p of the power rule, the contrast's CI at 0), the seed
claim's decision table, and the sampled-pairs notes. Written against the survivors of
`make mutation MODULES=experiment_4/verdicts.py`."""

from __future__ import annotations

import copy

import pytest

from experiment_1.report import ALPHA, CANNOT_TELL, FAILS, HOLDS, NO_POWER, NON_FINITE, by_id
from experiment_4 import verdicts as e4

EPS = 1e-9
# raw p of the 3 × 3 alignment tests (difference, AUC, 1-NN), the contrast and the core: the family of 11
P_VALUES = {
    "vector": (0.5, 0.6, 0.7),
    "scalar": (0.001, 0.001, 0.002),
    "class_control": (0.003, 0.2, 0.3),
}
P_CONTRAST, P_CORE = 0.0004, 0.001
# Holm by hand: sorted 0.0004, 0.001 (×3), 0.002, 0.003, 0.2, 0.3, 0.5, 0.6, 0.7 times 11, 10, …, 1, running max, cap 1:
# 0.0044, 0.01, max(0.01, 0.009), max(0.01, 0.008), 0.014, 0.018, then 1 from 5 · 0.2 on
HOLM = {
    "vector": (1.0, 1.0, 1.0),
    "scalar": (0.01, 0.01, 0.014),
    "class_control": (0.018, 1.0, 1.0),
}
HOLM_CONTRAST, HOLM_CORE = 0.0044, 0.01


def alignment_block(p_values: tuple[float, ...], nn: float, chance: float, over_chance: float) -> dict:
    observed = {"difference": (0.02, 0.0), "auc": (0.55, 0.5), "nn_accuracy": (nn, chance)}
    return {
        "binary": {
            "true_label": {
                "tests": {
                    name: {"observed": observed[name][0], "null": {"mean": observed[name][1]}, "p_value": p}
                    for name, p in zip(observed, p_values)
                },
                "chance": chance,
                "over_chance": over_chance,
                "nn_accuracy_ci": {"ci_low": nn - 0.025, "ci_high": nn + 0.025},
            }
        }
    }


def summary_of(
    p_values: dict[str, tuple[float, ...]] = P_VALUES,
    p_contrast: float = P_CONTRAST,
    p_core: float = P_CORE,
    num_permutations: int = 999,
    contrast_ci: tuple[float, float] = (0.02, 0.06),
) -> dict:
    rankings = {
        "vector": alignment_block(p_values["vector"], 0.125, 0.0625, 2.0),
        "scalar": alignment_block(p_values["scalar"], 0.15, 0.05, 3.0),
        "class_control": alignment_block(p_values["class_control"], 0.06, 0.04, 1.5),
    }
    rankings["vector"]["global_core"] = {
        "test": {
            "p_value": p_core,
            "p_value_floor": 0.001,
            "num_draws": 999,
            "null": {"mean": 0.075, "q975": 0.08, "max": 0.085},
        },
        "share": {"mean": 0.5, "ci_low": 0.45, "ci_high": 0.55},
        "random_share": 0.125,
    }
    return {
        "settings": {"p_value_floor": 0.001, "num_permutations": num_permutations, "nn_k": 32},
        "rankings": rankings,
        "scalar_minus_vector": {
            "auc_bootstrap": {
                "p_value": p_contrast,
                "p_value_floor": 0.0002,
                "num_resamples": 9999,
                "ci_low": contrast_ci[0],
                "ci_high": contrast_ci[1],
                "observed": 0.04,
                "first": 0.58,
                "second": 0.54,
                "num_classes": 150,
                "seed": 0,
            },
            "nn_hits": {
                "first_hits": 30,
                "second_hits": 20,
                "first_only": 15,
                "second_only": 5,
                "p_value": 0.0414,
                "best_attainable_p": 1.9e-6,
                "best_attainable_p_at_these_totals": 0.002,
            },
            "tests": {
                "auc": {"observed": 0.04, "p_greater": 0.001, "p_less": 1.0},
                "nn_accuracy": {"observed": 0.05, "p_greater": 0.02, "p_less": 0.99},
            },
        },
        "published": {"resnet18": {"nn_accuracy_scalar_k32": 0.242, "nn_accuracy_over_chance": 240}},
        "num_classes": 150,
        "num_valid": 900,
    }


def alignment_entry(ranking: str, decision: str, nn: float, chance: str, over_chance: float, extra: list[str]) -> dict:
    names = (
        "same − different mean Jaccard 0.02 against the null's 0",
        "AUC (same > different pair) 0.55 against the null's 0.5",
    )
    nn_null = {"vector": "0.0625", "scalar": "0.05", "class_control": "0.04"}[ranking]
    observed = (*names, f"1-NN accuracy {nn:g} against the null's {nn_null}")
    return {
        "id": f"class_alignment.{ranking}",
        "claim": e4.CLAIMS[ranking].format(k=32),
        "decision": decision,
        "rule": e4.ALIGNMENT.text,
        "parameters": {"alpha": ALPHA, "family_size": 11, "num_permutations": 999},
        "statistic": {"name": "1-NN accuracy / chance", "value": over_chance},
        "effect": {
            "name": "1-NN accuracy (true label)",
            "value": nn,
            "ci_low": nn - 0.025,
            "ci_high": nn + 0.025,
            "confidence": 1 - ALPHA,
            "percent": True,
        },
        "test": {
            "name": "one-sided label permutation over images, intersection–union of the three statistics",
            "p_value": max(P_VALUES[ranking]),
            "p_adjusted": pytest.approx(max(HOLM[ranking])),
            "correction": "Holm",
            "family_size": 11,
            "p_floor": 0.001,
        },
        "seed": None,
        "notes": [
            *(f"{text}, p = {p:g}, Holm p = {q:g}" for text, p, q in zip(observed, P_VALUES[ranking], HOLM[ranking])),
            f"chance (exact for the class counts) {chance}",
            "the best attainable p of this test on these data is 0.011, which is at most α = 0.05",
            *extra,
        ],
    }


def test_the_whole_block_by_hand() -> None:
    block = e4.experiment_4_verdicts(summary_of())
    assert block[:3] == [
        alignment_entry(
            "vector",
            CANNOT_TELL,
            0.125,
            "6.25 %",
            2.0,
            ["no statistic detects alignment; without an equivalence margin that does not show there is none"],
        ),
        alignment_entry("scalar", HOLDS, 0.15, "5.00 %", 3.0, []),
        alignment_entry("class_control", CANNOT_TELL, 0.06, "4.00 %", 1.5, []),  # one of three rejects: no "none" note
    ]
    assert block[3] == {
        "id": "scalar_minus_vector",
        "claim": "top-32 scalar signatures are more class-aligned than the vector ranking's",
        "decision": HOLDS,
        "rule": e4.CONTRAST.text,
        "parameters": {"alpha": ALPHA, "num_resamples": 9999, "family_size": 11},
        "statistic": None,
        "effect": {
            "name": "pooled AUC, scalar − vector (paired class bootstrap)",
            "value": 0.04,
            "ci_low": 0.02,
            "ci_high": 0.06,
            "confidence": 1 - ALPHA,
            "percent": False,
        },
        "test": {
            "name": "paired percentile bootstrap over classes of the AUC difference, two-sided",
            "p_value": P_CONTRAST,
            "p_adjusted": pytest.approx(HOLM_CONTRAST),
            "correction": "Holm",
            "family_size": 11,
            "p_floor": 0.0002,
        },
        "seed": None,
        "notes": [
            "pooled AUC: scalar 0.58, vector 0.54; 9999 replicates over 150 classes, seed 0",
            "1-NN hits: scalar 30, vector 20 of 900; 15 scalar-only and 5 vector-only images; exact McNemar p = 0.0414, "
            "best attainable on 20 discordant images 1.90e-06 (has power); with these two totals no split gets below "
            "p = 0.002",
            "AUC (same > different pair) under the same label permutations (null: neither aligned, not equality): "
            "scalar − vector 0.04, p(scalar > vector) = 0.001, p(vector > scalar) = 1",
            "1-NN accuracy under the same label permutations (null: neither aligned, not equality): scalar − vector "
            "0.05, p(scalar > vector) = 0.02, p(vector > scalar) = 0.99",
            # 2 · 11 / (9999 + 1)
            "the best attainable p of this test on these data is 0.0022, which is at most α = 0.05",
        ],
    }
    assert block[4] == {
        "id": "vector_global_core",
        "claim": "the vector ranking's top-32 sets vary around one shared global core (more of each lies in the 32 most "
        "frequent subsets than random top-K sets put in theirs)",
        "decision": HOLDS,
        "rule": e4.CORE.text,
        "parameters": {"alpha": ALPHA, "random_share": 0.125, "num_draws": 999, "family_size": 11},
        "statistic": {"name": "core share / a random top-K's share", "value": 4.0},
        "effect": {
            "name": "share of an image's top-32 in the global core",
            "value": 0.5,
            "ci_low": 0.45,
            "ci_high": 0.55,
            "confidence": 1 - ALPHA,
            "percent": True,
        },
        "test": {
            "name": "one-sided Monte Carlo permutation of each image's subset ids, the core recomputed per draw",
            "p_value": P_CORE,
            "p_adjusted": pytest.approx(HOLM_CORE),
            "correction": "Holm",
            "family_size": 11,
            "p_floor": 0.001,
        },
        "seed": None,
        "notes": [
            "random top-K sets: 7.5 % in their own core (97.5 % quantile 8.0 %, largest 8.5 %); a fixed core would get 12.5 %",
            "no threshold on the share is set (the original study states none; the earlier 75 % of this project's own is "
            "dropped)",
            "the best attainable p of this test on these data is 0.011, which is at most α = 0.05",
        ],
    }
    assert block[5] == {
        "id": "seed_claim",
        "claim": "the seed reports class alignment only in the predicted-class projection (scalar signatures aligned, the "
        "vector ranking not)",
        "decision": HOLDS,
        "rule": "holds when the scalar ranking's alignment holds, scalar − vector holds and the vector's alignment is not "
        "detected; fails when scalar − vector fails, or when the vector's alignment holds and scalar − vector does not; "
        "cannot tell otherwise",
        "parameters": {},
        "statistic": None,
        "effect": None,
        "test": None,
        "seed": None,
        "notes": [
            "parts: scalar alignment holds; vector alignment cannot tell; scalar − vector holds",
            "the seed reports 1-NN 24.2 %, 240× chance, with 1 000 classes; here 3× out of at most 20× (150 classes): "
            "multiples of chance are not comparable",
            "the leak-free control's decision: cannot tell",
            "the original study's shared global core (vector ranking): holds",
        ],
    }
    assert len(block) == 6


def test_the_family_is_keyed_by_ranking_and_statistic() -> None:
    adjusted, size = e4.family_adjusted(summary_of())
    assert size == 11
    expected = {
        (ranking, name): q for ranking in HOLM for name, q in zip(("difference", "auc", "nn_accuracy"), HOLM[ranking])
    }
    expected["scalar_minus_vector", ""], expected["vector_global_core", ""] = HOLM_CONTRAST, HOLM_CORE
    assert adjusted == pytest.approx(expected)
    floors = e4.family_tests(summary_of())
    assert floors["scalar", "auc"] == (0.001, 0.001) and floors["scalar_minus_vector", ""] == (P_CONTRAST, 0.0002)
    assert floors["vector_global_core", ""] == (P_CORE, 0.001)


def tiny_but(ranking: str, index: int, largest: float) -> dict[str, tuple[float, ...]]:
    """Every alignment p 1e-6 (adjusted at most 1.1e-5) but one, the family's largest: Holm leaves that one as it is."""
    p_values = {name: [1e-6] * 3 for name in P_VALUES}
    p_values[ranking][index] = largest
    return {name: tuple(values) for name, values in p_values.items()}


@pytest.mark.parametrize("largest, decision", [(ALPHA - EPS, HOLDS), (ALPHA, CANNOT_TELL), (ALPHA + EPS, CANNOT_TELL)])
@pytest.mark.parametrize("index", [0, 1, 2])
def test_alignment_at_alpha_after_holm(largest: float, decision: str, index: int) -> None:
    summary = summary_of(tiny_but("scalar", index, largest), p_contrast=1e-6, p_core=1e-6)
    entry = by_id(e4.alignment_verdicts(summary))["class_alignment.scalar"]
    assert entry["decision"] == decision and entry["test"]["p_adjusted"] == largest


@pytest.mark.parametrize(
    "num_permutations, decision",
    [(219, HOLDS), (218, NO_POWER), (220, HOLDS)],  # 11 / (n + 1): exactly α at n = 219
)
def test_alignment_power_at_the_family_size_over_the_permutations(num_permutations: int, decision: str) -> None:
    entry = by_id(e4.alignment_verdicts(summary_of(num_permutations=num_permutations)))["class_alignment.scalar"]
    assert entry["decision"] == decision
    relation = "exceeds" if decision == NO_POWER else "is at most"
    assert f"{11 / (num_permutations + 1):.3g}, which {relation} α = 0.05" in entry["notes"][4]


@pytest.mark.parametrize("p_core, decision", [(ALPHA - EPS, HOLDS), (ALPHA, CANNOT_TELL), (ALPHA + EPS, CANNOT_TELL)])
def test_core_at_alpha_after_holm(p_core: float, decision: str) -> None:
    summary = summary_of(tiny_but("vector", 0, 1e-6), p_contrast=1e-6, p_core=p_core)
    assert e4.core_verdict(summary)["decision"] == decision


def test_core_power_reads_its_own_draws() -> None:
    summary = summary_of()
    summary["rankings"]["vector"]["global_core"]["test"]["num_draws"] = 218  # 11 / 219 > α; the permutations stay 999
    entry = e4.core_verdict(summary)
    assert entry["decision"] == NO_POWER and entry["parameters"]["num_draws"] == 218


@pytest.mark.parametrize(
    "p_contrast, ci, decision",
    [
        (ALPHA - EPS, (EPS, 0.1), HOLDS),
        (ALPHA, (EPS, 0.1), CANNOT_TELL),  # p at α: not below it
        (ALPHA - EPS, (0.0, 0.1), CANNOT_TELL),  # the CI touches 0
        (ALPHA - EPS, (-0.1, -EPS), FAILS),
        (ALPHA, (-0.1, -EPS), CANNOT_TELL),
        (ALPHA - EPS, (-0.1, 0.0), CANNOT_TELL),
        (ALPHA - EPS, (-0.1, 0.1), CANNOT_TELL),
    ],
)
def test_contrast_at_alpha_and_zero(p_contrast: float, ci: tuple[float, float], decision: str) -> None:
    summary = summary_of(tiny_but("vector", 0, 1e-6), p_contrast=p_contrast, p_core=1e-6, contrast_ci=ci)
    assert e4.contrast_verdict(summary)["decision"] == decision


@pytest.mark.parametrize("num_resamples, decision", [(439, HOLDS), (438, NO_POWER)])  # 2 · 11 / (B + 1): α at B = 439
def test_contrast_power_at_twice_the_family_size_over_the_replicates(num_resamples: int, decision: str) -> None:
    summary = summary_of()
    summary["scalar_minus_vector"]["auc_bootstrap"]["num_resamples"] = num_resamples
    assert e4.contrast_verdict(summary)["decision"] == decision


@pytest.mark.parametrize("best, power", [(0.05, "has power"), (0.0625, "cannot tell (no power)")])
def test_the_mcnemar_note_names_its_power(best: float, power: str) -> None:
    summary = summary_of()
    summary["scalar_minus_vector"]["nn_hits"]["best_attainable_p"] = best
    note = e4.contrast_verdict(summary)["notes"][1]
    assert f"best attainable on 20 discordant images {best:g} ({power});" in note


def decided(decision: str, name: str) -> dict:
    return {"id": name, "decision": decision}


@pytest.mark.parametrize(
    "scalar, vector, difference, decision",
    [
        (HOLDS, CANNOT_TELL, HOLDS, HOLDS),
        (HOLDS, NO_POWER, HOLDS, HOLDS),
        (HOLDS, HOLDS, HOLDS, CANNOT_TELL),  # both aligned, the scalar more so: not "only"
        (CANNOT_TELL, CANNOT_TELL, HOLDS, CANNOT_TELL),
        (HOLDS, CANNOT_TELL, CANNOT_TELL, CANNOT_TELL),
        (HOLDS, CANNOT_TELL, FAILS, FAILS),  # the vector is the more aligned
        (CANNOT_TELL, HOLDS, CANNOT_TELL, FAILS),  # the vector aligned, the scalar not detectably more
        (CANNOT_TELL, HOLDS, NO_POWER, FAILS),
        (NON_FINITE, HOLDS, CANNOT_TELL, NON_FINITE),
        (HOLDS, NON_FINITE, HOLDS, NON_FINITE),
        (HOLDS, CANNOT_TELL, NON_FINITE, NON_FINITE),
    ],
)
def test_the_seed_claims_decision_table(scalar: str, vector: str, difference: str, decision: str) -> None:
    alignment = [
        decided(vector, "class_alignment.vector"),
        decided(scalar, "class_alignment.scalar"),
        decided(FAILS, "class_alignment.class_control"),
    ]
    core = [decided(HOLDS, "some_other"), decided(CANNOT_TELL, "vector_global_core")]
    entry = e4.seed_claim_verdict(summary_of(), alignment, decided(difference, "scalar_minus_vector"), core)
    assert entry["decision"] == decision
    assert (
        entry["notes"][0]
        == f"parts: scalar alignment {scalar}; vector alignment {vector}; scalar − vector {difference}"
    )
    assert entry["notes"][2:] == [
        "the leak-free control's decision: fails",
        "the original study's shared global core (vector ranking): cannot tell",
    ]


def test_sampled_pairs_are_named_in_every_alignment_verdict() -> None:
    summary = copy.deepcopy(summary_of())
    summary["settings"]["pair_sampling"] = {
        "max_pairs": 1000,
        "class_control_pairs_per_coordinate": 50,
        "class_control_queries_per_coordinate": 20,
        "per_image_ranking_pairs": 1000,
        "all_pairs": 404550,
    }
    notes = {entry["id"]: entry["notes"][-1] for entry in e4.alignment_verdicts(summary)}
    ranking_note = (
        "sampled (--max-pairs 1000): the pair statistics over 1000 of the 404550 pairs, label-blind, fixed under the "
        "permutations; 1-NN over all images"
    )
    assert notes == {
        "class_alignment.vector": ranking_note,
        "class_alignment.scalar": ranking_note,
        "class_alignment.class_control": "sampled (--max-pairs 1000): 50 pairs and 20 1-NN queries per class coordinate, "
        "label-blind, fixed under the permutations",
    }
