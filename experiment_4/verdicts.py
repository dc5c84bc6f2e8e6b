"""Experiment 4's verdicts, decided from overlap.json's numbers in the shared schema (experiment_1.report.verdicts).

- **Class alignment** of the vector ranking, the scalar ranking (predicted-class coordinate) and the
  leak-free class control, on binary top-K signatures and true labels. Each is judged by three
  one-sided label-permutation tests (same − different mean Jaccard, AUC, 1-NN accuracy), Holm across
  the 3 rankings × 3 statistics; the claim "class-aligned" asks all three to reject, so its p-value is
  the intersection–union one, the largest of the three. *holds* when all three reject at α after
  Holm, *cannot tell* otherwise: a test that detects nothing does not show that nothing is there
  (no equivalence margin), so it never reads *fails*. The true-class projection leaks the label and
  gets no verdict. When step 2 ran on sampled pairs (``--max-pairs``), each of these verdicts says so in a note
  (pairs and queries per view, from ``settings.pair_sampling``).
- **Scalar − vector**: is the scalar ranking more class-aligned than the vector one? Tested directly —
  the difference of the two 1-NN accuracies under the same label permutations, two-sided at α, with
  the paired image-level bootstrap CI of the per-image hit difference — not by setting two p-values side
  by side.
- **Near-global** vector ranking: the share of an image's top-K inside the global core against
  :data:`NEAR_GLOBAL_SHARE`, a threshold of this project's own (the seed states none), with the share,
  a random top-K's share and the decision at a simple-majority threshold beside it.
- **What the seed reports**: class alignment only in the predicted-class projection. Holds when the
  scalar ranking's alignment holds, the scalar − vector difference holds and the vector's alignment is
  not detected; fails when the difference fails (the vector is the more aligned), or when the vector's
  alignment holds and the scalar is not detectably more aligned; cannot tell otherwise. The seed's 24.2 %,
  240× chance is out of 1 000 classes, so our multiple (bounded by 1 / chance) is set beside it in a note,
  not compared.
"""

from __future__ import annotations

from typing import Any

from experiment_1.report import (
    ALPHA,
    CANNOT_TELL,
    FAILS,
    HOLDS,
    NON_FINITE,
    effect_from_stat,
    format_number,
    format_percent,
    holm,
    hypothesis_test,
    verdict,
)
from experiment_4.formats import CONTROL

NEAR_GLOBAL_SHARE = (
    0.75  # this project's own reading of "near-global" (three quarters of every top-K); the seed states no threshold
)
MAJORITY_SHARE = 0.5  # beside it: the decision at a simple majority
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
ALIGNMENT_RULE = (
    f"holds when the same − different mean Jaccard, the AUC and the 1-NN accuracy all beat the label-permutation null at "
    f"Holm-adjusted p < {ALPHA} (Holm over 3 rankings × 3 statistics; the claim's p is the largest of the three); "
    "cannot tell otherwise (no alignment detected is not evidence of none: never fails)"
)
CONTRAST_RULE = (
    f"the difference of the scalar and vector 1-NN accuracies under the same label permutations over images, two-sided at α = {ALPHA} "
    f"(each one-sided p against α/2): holds when scalar > vector is significant and the paired bootstrap CI of the per-image hit "
    "difference lies above 0, fails when vector > scalar is significant and the CI lies below 0, cannot tell otherwise"
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
    family = [(ranking, name) for ranking in ALIGNMENT_RANKINGS for name in STATISTIC_NAMES]
    blocks = {ranking: summary["rankings"][ranking]["binary"]["true_label"] for ranking in ALIGNMENT_RANKINGS}
    adjusted = dict(zip(family, holm([blocks[ranking]["tests"][name]["p_value"] for ranking, name in family])))
    verdicts = []
    for ranking in ALIGNMENT_RANKINGS:
        block, tests = blocks[ranking], blocks[ranking]["tests"]
        rejected = [adjusted[ranking, name] < ALPHA for name in STATISTIC_NAMES]
        decision = HOLDS if all(rejected) else CANNOT_TELL
        notes = [
            f"{STATISTIC_NAMES[name]} {format_number(tests[name]['observed'])} against the null's {format_number(tests[name]['null']['mean'])}, "
            f"p = {format_number(tests[name]['p_value'])}, Holm p = {format_number(adjusted[ranking, name])}"
            for name in STATISTIC_NAMES
        ]
        notes.append(f"chance (exact for the class counts) {format_percent(block['chance'], 2)}")
        if not any(rejected):
            notes.append(
                "no statistic detects alignment; without an equivalence margin that does not show there is none"
            )
        if "pair_sampling" in settings:
            notes.append(sampling_note(settings["pair_sampling"], ranking))
        verdicts.append(
            verdict(
                f"class_alignment.{ranking}",
                CLAIMS[ranking].format(k=settings["nn_k"]),
                decision,
                ALIGNMENT_RULE,
                parameters={
                    "alpha": ALPHA,
                    "family_size": len(family),
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
                    family_size=len(family),
                    p_floor=settings["p_value_floor"],
                ),
                notes=notes,
            )
        )
    return verdicts


def _share_decision(share: dict[str, Any], threshold: float) -> str:
    return HOLDS if share["ci_low"] >= threshold else FAILS if share["ci_high"] < threshold else CANNOT_TELL


def near_global_verdict(summary: dict[str, Any]) -> dict[str, Any]:
    """Is the vector ranking near-global (most of every image's top-K in one global core)? Against this project's own threshold."""
    core = summary["rankings"]["vector"]["global_core"]
    share = core["share"]
    return verdict(
        "vector_near_global",
        f"the vector ranking is near-global (at least {NEAR_GLOBAL_SHARE:.0%} of an image's top-{summary['settings']['nn_k']} in one global core)",
        _share_decision(share, NEAR_GLOBAL_SHARE),
        f"holds when the CI of the share lies at or above {NEAR_GLOBAL_SHARE:.0%}, fails when it lies below, cannot tell when it straddles; "
        f"{NEAR_GLOBAL_SHARE:.0%} is this project's own threshold (the seed states none)",
        parameters={
            "threshold": NEAR_GLOBAL_SHARE,
            "threshold_source": "this project's choice; the seed states none",
            "majority_threshold": MAJORITY_SHARE,
        },
        effect=effect_from_stat(
            f"share of an image's top-{summary['settings']['nn_k']} in the global core", share, percent=True
        ),
        notes=[
            f"a random top-K would share {format_percent(core['random_share'])}",
            f"{format_number(share['mean'] / core['random_share'])}× a random top-K's share",
            f"at a simple majority ({MAJORITY_SHARE:.0%}) the rule would read {_share_decision(share, MAJORITY_SHARE)}",
        ],
    )


def contrast_verdict(summary: dict[str, Any]) -> dict[str, Any]:
    """Is the scalar ranking more class-aligned than the vector one? The direct test of the difference (:data:`CONTRAST_RULE`)."""
    contrast = summary["scalar_minus_vector"]
    test, hits = contrast["tests"]["nn_accuracy"], contrast["nn_hit_difference"]
    if test["p_greater"] < ALPHA / 2 and hits["ci_low"] > 0:
        decision = HOLDS
    elif test["p_less"] < ALPHA / 2 and hits["ci_high"] < 0:
        decision = FAILS
    else:
        decision = CANNOT_TELL
    notes = [
        f"{STATISTIC_NAMES[name]}: scalar − vector {format_number(entry['observed'])}, null {format_number(entry['null']['mean'])} "
        f"[{format_number(entry['null']['q025'])}, {format_number(entry['null']['q975'])}], p(scalar > vector) = {format_number(entry['p_greater'])}, "
        f"p(vector > scalar) = {format_number(entry['p_less'])}"
        for name, entry in contrast["tests"].items()
    ]
    return verdict(
        "scalar_minus_vector",
        f"top-{summary['settings']['nn_k']} scalar signatures are more class-aligned than the vector ranking's",
        decision,
        CONTRAST_RULE,
        parameters={"alpha": ALPHA, "num_permutations": summary["settings"]["num_permutations"]},
        effect=effect_from_stat("per-image 1-NN hit, scalar − vector (paired)", hits, percent=True),
        test=hypothesis_test(
            "label permutation over images applied to both rankings, difference of 1-NN accuracies, two-sided",
            min(1.0, 2 * min(test["p_greater"], test["p_less"])),
            p_floor=min(1.0, 2 * test["p_value_floor"]),
        ),
        notes=notes,
    )


def seed_claim_verdict(
    summary: dict[str, Any], alignment: list[dict[str, Any]], contrast: dict[str, Any]
) -> dict[str, Any]:
    """What the seed reports: class-aligned in the predicted-class projection only (scalar aligned, vector not), decided on the
    scalar's alignment, the direct scalar − vector test and the vector's alignment."""
    decisions = {entry["id"].removeprefix("class_alignment."): entry["decision"] for entry in alignment}
    scalar, vector, difference = decisions["scalar"], decisions["vector"], contrast["decision"]
    if NON_FINITE in (scalar, vector, difference):
        decision = NON_FINITE
    elif scalar == HOLDS and difference == HOLDS and vector != HOLDS:
        decision = HOLDS
    elif difference == FAILS or (vector == HOLDS and difference != HOLDS):
        decision = FAILS
    else:
        decision = CANNOT_TELL
    seed = summary["published"]["resnet18"]
    block = summary["rankings"]["scalar"]["binary"]["true_label"]
    return verdict(
        "seed_claim",
        "the seed reports class alignment only in the predicted-class projection (scalar signatures aligned, the vector ranking not)",
        decision,
        "holds when the scalar ranking's alignment holds, scalar − vector holds and the vector's alignment is not detected; fails when scalar − vector "
        "fails, or when the vector's alignment holds and scalar − vector does not; cannot tell otherwise",
        notes=[
            f"parts: scalar alignment {scalar}; vector alignment {vector}; scalar − vector {difference}",
            f"the seed reports 1-NN {format_percent(seed['nn_accuracy_scalar_k32'])}, "
            f"{format_number(seed['nn_accuracy_over_chance'])}× chance, with 1 000 classes; "
            f"here {format_number(block['over_chance'])}× out of at most {format_number(1 / block['chance'])}× "
            f"({summary['num_classes']} classes): multiples of chance are not comparable",
            f"the leak-free control's decision: {decisions[CONTROL]}",
        ],
    )


def experiment_4_verdicts(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Every Experiment 4 verdict, in REPORT order."""
    alignment = alignment_verdicts(summary)
    contrast = contrast_verdict(summary)
    return [*alignment, contrast, near_global_verdict(summary), seed_claim_verdict(summary, alignment, contrast)]
