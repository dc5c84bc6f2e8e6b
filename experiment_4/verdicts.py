"""Experiment 4's verdicts, decided from overlap.json's numbers in the shared schema (experiment_1.report.verdicts).

- **Class alignment** of the vector ranking, the scalar ranking (predicted-class coordinate) and the
  leak-free class control, on binary top-K signatures and true labels. Each is judged by three
  one-sided label-permutation tests (same − different mean Jaccard, AUC, 1-NN accuracy), Holm across
  the 3 rankings × 3 statistics; the claim "class-aligned" asks all three to reject, so its p-value is
  the intersection–union one, the largest of the three. *holds* when all three reject at α after
  Holm, *fails* when none does (no alignment detected), *cannot tell* otherwise. The true-class
  projection leaks the label and gets no verdict.
- **Near-global** vector ranking: the share of an image's top-K inside the global core; holds when
  its CI lies at or above 75 %, fails when below, cannot tell when it straddles.
- **What the seed reports**: class alignment only in the predicted-class projection (scalar aligned,
  vector not); the seed's 24.2 %, 240× chance is out of 1 000 classes, so our multiple (bounded by
  1 / chance) is set beside it in a note, not compared.
"""
from __future__ import annotations

from typing import Any

from experiment_1.report.markdown import format_number, format_percent
from experiment_1.report.verdicts import ALPHA, CANNOT_TELL, FAILS, HOLDS, NON_FINITE, effect_from_stat, holm, hypothesis_test, verdict
from experiment_4.records import CONTROL

NEAR_GLOBAL_SHARE = 0.75
ALIGNMENT_RANKINGS = ("vector", "scalar", CONTROL)
STATISTIC_NAMES = {"difference": "same − different mean Jaccard", "auc": "AUC (same > different pair)", "nn_accuracy": "1-NN accuracy"}
CLAIMS = {
    "vector": "top-{k} vector-ranking signatures are class-aligned",
    "scalar": "top-{k} scalar signatures (each image in its predicted class's coordinate) are class-aligned",
    CONTROL: "top-{k} scalar signatures are class-aligned with every pair compared in one class coordinate that is neither image's label (leak-free control)",
}
ALIGNMENT_RULE = (f"holds when the same − different mean Jaccard, the AUC and the 1-NN accuracy all beat the label-permutation null at "
                  f"Holm-adjusted p < {ALPHA} (Holm over 3 rankings × 3 statistics; the claim's p is the largest of the three); "
                  "fails when none does (no alignment detected); cannot tell otherwise")


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
        decision = HOLDS if all(rejected) else FAILS if not any(rejected) else CANNOT_TELL
        notes = [f"{STATISTIC_NAMES[name]} {format_number(tests[name]['observed'])} against the null's {format_number(tests[name]['null']['mean'])}, "
                 f"p = {format_number(tests[name]['p_value'])}, Holm p = {format_number(adjusted[ranking, name])}" for name in STATISTIC_NAMES]
        notes.append(f"chance (exact for the class counts) {format_percent(block['chance'], 2)}")
        verdicts.append(verdict(
            f"class_alignment.{ranking}",
            CLAIMS[ranking].format(k=settings["nn_k"]),
            decision,
            ALIGNMENT_RULE,
            parameters={"alpha": ALPHA, "family_size": len(family), "num_permutations": settings["num_permutations"]},
            statistic={"name": "1-NN accuracy / chance", "value": block["over_chance"]},
            effect=effect_from_stat("1-NN accuracy (true label)", {**block["nn_accuracy_ci"], "mean": tests["nn_accuracy"]["observed"]}, percent=True),
            test=hypothesis_test("one-sided label permutation over images, intersection–union of the three statistics",
                                 max(test["p_value"] for test in tests.values()), p_adjusted=max(adjusted[ranking, name] for name in STATISTIC_NAMES),
                                 correction="Holm", family_size=len(family), p_floor=settings["p_value_floor"]),
            notes=notes,
        ))
    return verdicts


def near_global_verdict(summary: dict[str, Any]) -> dict[str, Any]:
    """Is the vector ranking near-global (most of every image's top-K in one global core)?"""
    core = summary["rankings"]["vector"]["global_core"]
    share = core["share"]
    decision = HOLDS if share["ci_low"] >= NEAR_GLOBAL_SHARE else FAILS if share["ci_high"] < NEAR_GLOBAL_SHARE else CANNOT_TELL
    return verdict(
        "vector_near_global",
        "the vector ranking is near-global",
        decision,
        f"holds when the CI of the share lies at or above {NEAR_GLOBAL_SHARE:.0%}, fails when it lies below, cannot tell when it straddles",
        parameters={"threshold": NEAR_GLOBAL_SHARE},
        effect=effect_from_stat(f"share of an image's top-{summary['settings']['nn_k']} in the global core", share, percent=True),
        notes=[f"a random top-K would share {format_percent(core['random_share'])}"],
    )


def seed_claim_verdict(summary: dict[str, Any], alignment: list[dict[str, Any]]) -> dict[str, Any]:
    """What the seed reports: class-aligned in the predicted-class projection only (scalar aligned, vector not)."""
    decisions = {entry["id"].removeprefix("class_alignment."): entry["decision"] for entry in alignment}
    scalar, vector = decisions["scalar"], decisions["vector"]
    if NON_FINITE in (scalar, vector):
        decision = NON_FINITE
    elif scalar == HOLDS and vector == FAILS:
        decision = HOLDS
    elif scalar == FAILS or vector == HOLDS:
        decision = FAILS
    else:
        decision = CANNOT_TELL
    seed = summary["published"]["resnet18"]
    block = summary["rankings"]["scalar"]["binary"]["true_label"]
    return verdict(
        "seed_claim",
        "the seed reports class alignment only in the predicted-class projection (scalar signatures aligned, the vector ranking not)",
        decision,
        "holds when the scalar ranking's class alignment holds and the vector ranking's fails; fails when the scalar one fails or the vector one holds; cannot tell otherwise",
        notes=[f"the seed reports 1-NN {format_percent(seed['nn_accuracy_scalar_k32'])}, {format_number(seed['nn_accuracy_over_chance'])}× chance, with 1 000 classes; "
               f"here {format_number(block['over_chance'])}× out of at most {format_number(1 / block['chance'])}× ({summary['num_classes']} classes): multiples of chance are not comparable",
               f"the leak-free control's decision: {decisions[CONTROL]}"],
    )


def experiment_4_verdicts(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Every Experiment 4 verdict, in REPORT order."""
    alignment = alignment_verdicts(summary)
    return [*alignment, near_global_verdict(summary), seed_claim_verdict(summary, alignment)]
