"""Experiment 4's verdicts, decided from overlap.json's numbers in the shared schema (experiment_1.report.verdicts).

- **Class alignment** of the vector ranking, the scalar ranking (predicted-class coordinate) and the
  leak-free class control, on binary top-K signatures and true labels. Each is judged by three
  one-sided label-permutation tests (same − different mean Jaccard, AUC, 1-NN accuracy); the claim
  "class-aligned" asks all three to reject, so its p-value is the intersection–union one, the largest of
  the three. *holds* when all three reject at α after Holm, *cannot tell* otherwise: a test that detects
  nothing does not show that nothing is there (no equivalence margin), so it never reads *fails*. The
  true-class projection leaks the label and gets no verdict. When step 2 ran on sampled pairs
  (``--max-pairs``), each of these verdicts says so in a note.
- **Scalar − vector**: is the scalar ranking more class-aligned than the vector one? Decided on the pooled
  AUC difference by a paired bootstrap over classes (experiment_4.contrast), which tests equality of the
  two AUCs. The 1-NN hits' exact McNemar test and the label-permutation differences are notes beside it.
- **Global core** of the vector ranking: the share of each image's top-K in the K most frequent subsets
  against random top-K sets' (experiment_4.core_null); no threshold on the share.
- **Multiplicity and power**: one Holm family over the 3 × 3 alignment tests, the contrast and the core
  test (:func:`family_adjusted`); a test whose best attainable adjusted p exceeds α reads
  ``cannot tell (no power)`` (experiment_4.power).
- **What the seed reports**: class alignment only in the predicted-class projection. Holds when the
  scalar ranking's alignment holds, the scalar − vector difference holds and the vector's alignment is
  not detected; fails when the difference fails (the vector is the more aligned), or when the vector's
  alignment holds and the scalar is not detectably more aligned; cannot tell otherwise. The seed's 24.2 %,
  240× chance is out of 1 000 classes, so our multiple (bounded by 1 / chance) is set beside it in a note,
  not compared.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from experiment_1.report import (
    ALPHA,
    CANNOT_TELL,
    FAILS,
    HOLDS,
    NO_POWER,
    NON_FINITE,
    Missing,
    Reading,
    Rule,
    effect_from_stat,
    format_number,
    format_percent,
    holm,
    hypothesis_test,
)
from experiment_4.formats import CONTROL
from experiment_4.power import bootstrap_best_p, no_power, permutation_best_p, power_note

ALIGNMENT_RANKINGS = ("vector", "scalar", CONTROL)
STATISTIC_NAMES = {
    "difference": "same − different mean Jaccard",
    "auc": "AUC (same > different pair)",
    "nn_accuracy": "1-NN accuracy",
}
CLAIMS = {
    "vector": "top-{k} vector-ranking signatures are class-aligned",
    "scalar": "top-{k} scalar signatures (each image in its predicted class's coordinate) are class-aligned",
    CONTROL: "top-{k} scalar signatures are class-aligned with every pair compared in one class coordinate that is neither image's label (leak-free control)",
}
FAMILY_EXTRA = ("scalar_minus_vector", "vector_global_core")  # beside the 3 × 3 alignment tests


def family_tests(summary: Mapping[str, Any]) -> dict[tuple[str, str], tuple[float, float]]:
    """Experiment 4's family of tests, keyed ``(ranking, statistic)`` for the alignment tests and ``(name, "")`` for
    :data:`FAMILY_EXTRA`: each test's raw p and its best attainable raw p."""
    floor = summary["settings"]["p_value_floor"]
    family = {
        (ranking, name): (summary["rankings"][ranking]["binary"]["true_label"]["tests"][name]["p_value"], floor)
        for ranking in ALIGNMENT_RANKINGS
        for name in STATISTIC_NAMES
    }
    auc = summary["scalar_minus_vector"]["auc_bootstrap"]
    core = summary["rankings"]["vector"]["global_core"]["test"]
    family["scalar_minus_vector", ""] = (auc["p_value"], auc["p_value_floor"])
    family["vector_global_core", ""] = (core["p_value"], core["p_value_floor"])
    return family


def family_adjusted(summary: Mapping[str, Any]) -> tuple[dict[tuple[str, str], float], int]:
    """Holm-adjusted p of every test of :func:`family_tests`, and the family's size."""
    family = family_tests(summary)
    return dict(zip(family, holm([p for p, _ in family.values()]))), len(family)


def _family(reading: Reading) -> tuple[dict[tuple[str, str], float], int]:
    try:
        return family_adjusted(reading.summary)
    except (KeyError, TypeError):
        raise Missing(
            "the p-values of Experiment 4's family (rankings.*.binary.true_label.tests, scalar_minus_vector, global_core)"
        ) from None


def _read_alignment(reading: Reading) -> dict[str, Any]:
    """The three statistics' Holm-adjusted p of the ranking, and the best attainable adjusted p."""
    adjusted, size = _family(reading)
    ranking = reading.parts[-1]
    if (ranking, "auc") not in adjusted:
        raise Missing(f"rankings.{ranking}.binary.true_label.tests")
    p_adjusted = [adjusted[ranking, name] for name in STATISTIC_NAMES]
    reading.copied("test", {"p_adjusted": max(p_adjusted)}, ("p_adjusted",))
    return {"p_adjusted": p_adjusted, "best": permutation_best_p(reading.at("settings", "num_permutations"), size)}


def _powered(decide: Callable[..., str]) -> Callable[..., str]:
    """``decide`` under Experiment 4's power rule: ``cannot tell (no power)`` when the best attainable p exceeds α."""
    return lambda best, **inputs: NO_POWER if no_power(best) else decide(**inputs)


ALIGNMENT = Rule(
    "exp4.class_alignment",
    f"holds when the same − different mean Jaccard, the AUC and the 1-NN accuracy all beat the label-permutation null at "
    f"Holm-adjusted p < {ALPHA} (Holm over Experiment 4's family: 3 rankings × 3 statistics, the scalar − vector AUC "
    "contrast and the global-core test; the claim's p is the largest of the three); cannot tell (no power) when the best "
    "attainable adjusted p (family size / (permutations + 1)) exceeds α; cannot tell otherwise (no alignment detected is "
    "not evidence of none: never fails)",
    _read_alignment,
    _powered(lambda p_adjusted: HOLDS if all(p < ALPHA for p in p_adjusted) else CANNOT_TELL),
)


def _read_contrast(reading: Reading) -> dict[str, Any]:
    adjusted, size = _family(reading)
    auc = reading.at("scalar_minus_vector", "auc_bootstrap")
    reading.copied("effect", auc)
    reading.copied("test", {"p_adjusted": adjusted["scalar_minus_vector", ""]}, ("p_adjusted",))
    return {
        "low": reading.number("scalar_minus_vector", "auc_bootstrap", "ci_low"),
        "high": reading.number("scalar_minus_vector", "auc_bootstrap", "ci_high"),
        "p_adjusted": adjusted["scalar_minus_vector", ""],
        "best": bootstrap_best_p(reading.at("scalar_minus_vector", "auc_bootstrap", "num_resamples"), size),
    }


def _decide_contrast(low: float, high: float, p_adjusted: float) -> str:
    if p_adjusted < ALPHA and low > 0:
        return HOLDS
    return FAILS if p_adjusted < ALPHA and high < 0 else CANNOT_TELL


CONTRAST = Rule(
    "exp4.scalar_minus_vector",
    "the scalar − vector difference of the pooled AUC (same > different pair; binary top-K, true labels), paired "
    f"percentile bootstrap over classes: holds when its 95 % CI lies above 0 and the two-sided bootstrap p is below {ALPHA} "
    "after Holm over Experiment 4's family, fails (the vector ranking is the more class-aligned) when the CI lies below 0 "
    "with that p, cannot tell otherwise; cannot tell (no power) when the best attainable adjusted p (family size × "
    "2 / (replicates + 1)) exceeds α",
    _read_contrast,
    _powered(_decide_contrast),
    "top-{k} scalar signatures are more class-aligned than the vector ranking's",
)


def _read_core(reading: Reading) -> dict[str, Any]:
    adjusted, size = _family(reading)
    reading.copied("test", {"p_adjusted": adjusted["vector_global_core", ""]}, ("p_adjusted",))
    return {
        "p_adjusted": adjusted["vector_global_core", ""],
        "best": permutation_best_p(reading.at("rankings", "vector", "global_core", "test", "num_draws"), size),
    }


CORE = Rule(
    "exp4.global_core",
    "holds when more of each image's top-K lies in the global core than random top-K sets put in theirs (the mean share "
    "against a null that permutes each image's subset ids and recomputes the core; one-sided Monte Carlo p) at "
    f"Holm-adjusted p < {ALPHA} over Experiment 4's family; cannot tell (no power) when the best attainable adjusted p "
    "(family size / (draws + 1)) exceeds α; cannot tell otherwise (never fails: no threshold on the share is set)",
    _read_core,
    _powered(lambda p_adjusted: HOLDS if p_adjusted < ALPHA else CANNOT_TELL),
    "the vector ranking's top-{k} sets vary around one shared global core (more of each lies in the {k} most frequent "
    "subsets than random top-K sets put in theirs)",
)


def _decide_seed_claim(scalar: str, vector: str, difference: str) -> str:
    if NON_FINITE in (scalar, vector, difference):
        return NON_FINITE
    if scalar == HOLDS and difference == HOLDS and vector != HOLDS:
        return HOLDS
    return FAILS if difference == FAILS or (vector == HOLDS and difference != HOLDS) else CANNOT_TELL


SEED_CLAIM = Rule(
    "exp4.seed_claim",
    "holds when the scalar ranking's alignment holds, scalar − vector holds and the vector's alignment is not detected; fails when scalar − vector "
    "fails, or when the vector's alignment holds and scalar − vector does not; cannot tell otherwise",
    lambda reading: {
        "scalar": reading.decision_of("class_alignment.scalar"),
        "vector": reading.decision_of("class_alignment.vector"),
        "difference": reading.decision_of("scalar_minus_vector"),
    },
    _decide_seed_claim,
    "the seed reports class alignment only in the predicted-class projection (scalar signatures aligned, the vector ranking not)",
)


def sampling_note(sampling: dict[str, Any], ranking: str) -> str:
    """The verdict's note when step 2 ran on sampled pairs (``--max-pairs``)."""
    if ranking == CONTROL:
        return (
            f"sampled (--max-pairs {sampling['max_pairs']}): {sampling['class_control_pairs_per_coordinate']} pairs and "
            f"{sampling['class_control_queries_per_coordinate']} 1-NN queries per class coordinate, label-blind, fixed under the permutations"
        )
    return (
        f"sampled (--max-pairs {sampling['max_pairs']}): the pair statistics over {sampling['per_image_ranking_pairs']} of the "
        f"{sampling['all_pairs']} pairs, label-blind, fixed under the permutations; 1-NN over all images"
    )


def alignment_verdicts(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """One verdict per ranking of :data:`ALIGNMENT_RANKINGS`, Holm across all their tests."""
    settings = summary["settings"]
    adjusted, family_size = family_adjusted(summary)
    best = permutation_best_p(settings["num_permutations"], family_size)
    blocks = {ranking: summary["rankings"][ranking]["binary"]["true_label"] for ranking in ALIGNMENT_RANKINGS}
    verdicts = []
    for ranking in ALIGNMENT_RANKINGS:
        block, tests = blocks[ranking], blocks[ranking]["tests"]
        rejected = [adjusted[ranking, name] < ALPHA for name in STATISTIC_NAMES]
        notes = [
            f"{STATISTIC_NAMES[name]} {format_number(tests[name]['observed'])} against the null's {format_number(tests[name]['null']['mean'])}, "
            f"p = {format_number(tests[name]['p_value'])}, Holm p = {format_number(adjusted[ranking, name])}"
            for name in STATISTIC_NAMES
        ]
        notes.append(f"chance (exact for the class counts) {format_percent(block['chance'], 2)}")
        notes.append(power_note(best))
        if not any(rejected):
            notes.append(
                "no statistic detects alignment; without an equivalence margin that does not show there is none"
            )
        if "pair_sampling" in settings:
            notes.append(sampling_note(settings["pair_sampling"], ranking))
        verdicts.append(
            ALIGNMENT.verdict(
                f"class_alignment.{ranking}",
                summary,
                CLAIMS[ranking].format(k=settings["nn_k"]),
                parameters={
                    "alpha": ALPHA,
                    "family_size": family_size,
                    "num_permutations": settings["num_permutations"],
                },
                statistic={"name": "1-NN accuracy / chance", "value": block["over_chance"]},
                effect=effect_from_stat(
                    "1-NN accuracy (true label)",
                    {**block["nn_accuracy_ci"], "mean": tests["nn_accuracy"]["observed"]},
                    percent=True,
                ),
                test=hypothesis_test(
                    "one-sided label permutation over images, intersection–union of the three statistics",
                    max(test["p_value"] for test in tests.values()),
                    p_adjusted=max(adjusted[ranking, name] for name in STATISTIC_NAMES),
                    correction="Holm",
                    family_size=family_size,
                    p_floor=settings["p_value_floor"],
                ),
                notes=notes,
            )
        )
    return verdicts


def core_verdict(summary: dict[str, Any]) -> dict[str, Any]:
    """Does the vector ranking vary around one shared global core? Its core share against random top-K sets' (:data:`CORE_RULE`)."""
    core, k = summary["rankings"]["vector"]["global_core"], summary["settings"]["nn_k"]
    test, share = core["test"], core["share"]
    adjusted, family_size = family_adjusted(summary)
    p_adjusted = adjusted["vector_global_core", ""]
    best = permutation_best_p(test["num_draws"], family_size)
    return CORE.verdict(
        "vector_global_core",
        summary,
        fields={"k": k},
        parameters={
            "alpha": ALPHA,
            "random_share": core["random_share"],
            "num_draws": test["num_draws"],
            "family_size": family_size,
        },
        statistic={"name": "core share / a random top-K's share", "value": share["mean"] / core["random_share"]},
        effect=effect_from_stat(f"share of an image's top-{k} in the global core", share, percent=True),
        test=hypothesis_test(
            "one-sided Monte Carlo permutation of each image's subset ids, the core recomputed per draw",
            test["p_value"],
            p_adjusted=p_adjusted,
            correction="Holm",
            family_size=family_size,
            p_floor=test["p_value_floor"],
        ),
        notes=[
            f"random top-K sets: {format_percent(test['null']['mean'])} in their own core (97.5 % quantile "
            f"{format_percent(test['null']['q975'])}, largest {format_percent(test['null']['max'])}); a fixed core would "
            f"get {format_percent(core['random_share'])}",
            "no threshold on the share is set (the original study states none; the earlier 75 % of this project's own is dropped)",
            power_note(best),
        ],
    )


def contrast_verdict(summary: dict[str, Any]) -> dict[str, Any]:
    """Is the scalar ranking more class-aligned than the vector one? The paired AUC difference (:data:`CONTRAST_RULE`)."""
    contrast = summary["scalar_minus_vector"]
    auc, hits = contrast["auc_bootstrap"], contrast["nn_hits"]
    adjusted, family_size = family_adjusted(summary)
    p_adjusted = adjusted["scalar_minus_vector", ""]
    best = bootstrap_best_p(auc["num_resamples"], family_size)
    mcnemar_power = NO_POWER if no_power(hits["best_attainable_p"]) else "has power"
    notes = [
        f"pooled AUC: scalar {format_number(auc['first'])}, vector {format_number(auc['second'])}; {auc['num_resamples']} "
        f"replicates over {auc['num_classes']} classes, seed {auc['seed']}",
        f"1-NN hits: scalar {hits['first_hits']}, vector {hits['second_hits']} of {summary['num_valid']}; "
        f"{hits['first_only']} scalar-only and {hits['second_only']} vector-only images; exact McNemar p = "
        f"{format_number(hits['p_value'])}, best attainable on {hits['first_only'] + hits['second_only']} discordant "
        f"images {format_number(hits['best_attainable_p'])} ({mcnemar_power}); with these two totals no split "
        f"gets below p = {format_number(hits['best_attainable_p_at_these_totals'])}",
        *(
            f"{STATISTIC_NAMES[name]} under the same label permutations (null: neither aligned, not equality): scalar − vector "
            f"{format_number(entry['observed'])}, p(scalar > vector) = {format_number(entry['p_greater'])}, "
            f"p(vector > scalar) = {format_number(entry['p_less'])}"
            for name, entry in contrast["tests"].items()
        ),
        power_note(best),
    ]
    return CONTRAST.verdict(
        "scalar_minus_vector",
        summary,
        fields={"k": summary["settings"]["nn_k"]},
        parameters={"alpha": ALPHA, "num_resamples": auc["num_resamples"], "family_size": family_size},
        effect=effect_from_stat(
            "pooled AUC, scalar − vector (paired class bootstrap)", {**auc, "mean": auc["observed"]}
        ),
        test=hypothesis_test(
            "paired percentile bootstrap over classes of the AUC difference, two-sided",
            auc["p_value"],
            p_adjusted=p_adjusted,
            correction="Holm",
            family_size=family_size,
            p_floor=auc["p_value_floor"],
        ),
        notes=notes,
    )


def seed_claim_verdict(
    summary: dict[str, Any],
    alignment: list[dict[str, Any]],
    contrast: dict[str, Any],
    alignment_context: list[dict[str, Any]],
) -> dict[str, Any]:
    """What the seed reports: class-aligned in the predicted-class projection only (scalar aligned, vector not), decided on the
    scalar's alignment, the direct scalar − vector test and the vector's alignment."""
    decisions = {entry["id"].removeprefix("class_alignment."): entry["decision"] for entry in alignment}
    scalar, vector, difference = decisions["scalar"], decisions["vector"], contrast["decision"]
    seed = summary["published"]["resnet18"]
    block = summary["rankings"]["scalar"]["binary"]["true_label"]
    core = next(entry["decision"] for entry in alignment_context if entry["id"] == "vector_global_core")
    return SEED_CLAIM.verdict(
        "seed_claim",
        {**summary, "verdicts": [*alignment, contrast]},  # the parts it reads, as the summary will hold them
        notes=[
            f"parts: scalar alignment {scalar}; vector alignment {vector}; scalar − vector {difference}",
            f"the seed reports 1-NN {format_percent(seed['nn_accuracy_scalar_k32'])}, "
            f"{format_number(seed['nn_accuracy_over_chance'])}× chance, with 1 000 classes; "
            f"here {format_number(block['over_chance'])}× out of at most {format_number(1 / block['chance'])}× "
            f"({summary['num_classes']} classes): multiples of chance are not comparable",
            f"the leak-free control's decision: {decisions[CONTROL]}",
            f"the original study's shared global core (vector ranking): {core}",
        ],
    )


def experiment_4_verdicts(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Every Experiment 4 verdict, in REPORT order."""
    alignment = alignment_verdicts(summary)
    contrast = contrast_verdict(summary)
    core = core_verdict(summary)
    return [*alignment, contrast, core, seed_claim_verdict(summary, alignment, contrast, [core])]
