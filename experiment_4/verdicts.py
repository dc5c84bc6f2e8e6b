"""Experiment 4's verdicts, decided from overlap.json's numbers (the rules are stated in each verdict).

- **Class alignment** of the vector ranking, the scalar ranking (predicted-class coordinate) and the
  leak-free class control: binary top-K signatures, true labels; three permutation tests each
  (same − different mean Jaccard, AUC, 1-NN accuracy), Holm across the 3 rankings × 3 statistics.
  *class-aligned* when all three reject at α after Holm, *no class alignment detected* when none
  does, *mixed evidence* otherwise. The true-class projection leaks the label and gets no verdict.
- **Near-global** vector ranking: the share of an image's top-K inside the global core; near-global
  when its CI lies at or above 75 %, not near-global when it lies below, *cannot tell* otherwise.
- **Shared coordinate**: does the scalar ranking's alignment survive the leak-free control?
- **The seed reports** 24.2 % 1-NN accuracy, 240× chance with 1 000 classes: set beside ours with
  the bound on "× chance" that our class count allows.
"""
from __future__ import annotations

from typing import Any

from experiment_4.analysis import CONTROL

ALPHA = 0.05
NEAR_GLOBAL_SHARE = 0.75
ALIGNMENT_RANKINGS = ("vector", "scalar", CONTROL)
STATISTIC_NAMES = {"difference": "same − different mean Jaccard", "auc": "AUC (same > different pair)", "nn_accuracy": "leave-one-out 1-NN accuracy"}


def holm(p_values: list[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (step-down, monotone, capped at 1), in the input order."""
    order = sorted(range(len(p_values)), key=lambda index: p_values[index])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def alignment_verdicts(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """One verdict per ranking of :data:`ALIGNMENT_RANKINGS`, Holm across all their tests."""
    k = summary["settings"]["nn_k"]
    family = [(ranking, name) for ranking in ALIGNMENT_RANKINGS for name in STATISTIC_NAMES]
    blocks = {ranking: summary["rankings"][ranking]["binary"]["true_label"] for ranking in ALIGNMENT_RANKINGS}
    adjusted = dict(zip(family, holm([blocks[ranking]["tests"][name]["p_value"] for ranking, name in family])))
    verdicts = []
    for ranking in ALIGNMENT_RANKINGS:
        block = blocks[ranking]
        rejected = [name for name in STATISTIC_NAMES if adjusted[ranking, name] < ALPHA]
        decision = "class-aligned" if len(rejected) == len(STATISTIC_NAMES) else "no class alignment detected" if not rejected else "mixed evidence"
        ci = block["nn_accuracy_ci"]
        verdicts.append({
            "id": f"class_alignment_{ranking}",
            "claim": f"top-{k} signatures of the {ranking} ranking are class-aligned",
            "statistic": f"1-NN accuracy (true label), binary top-{k} signatures",
            "effect": {"value": block["tests"]["nn_accuracy"]["observed"], "ci_low": ci["ci_low"], "ci_high": ci["ci_high"], "chance": block["chance"]},
            "tests": [{"statistic": STATISTIC_NAMES[name], "observed": block["tests"][name]["observed"], "null_mean": block["tests"][name]["null"]["mean"],
                       "p_value": block["tests"][name]["p_value"], "p_holm": adjusted[ranking, name]} for name in STATISTIC_NAMES],
            "test": f"one-sided label permutation over images ({summary['settings']['num_permutations']} permutations, p ≥ {summary['settings']['p_value_floor']:.2g}); Holm over {len(family)} tests",
            "decision": decision,
            "rule": f"class-aligned when all {len(STATISTIC_NAMES)} tests reject at Holm-adjusted p < {ALPHA}; none → no class alignment detected; otherwise mixed evidence",
        })
    return verdicts


def near_global_verdict(summary: dict[str, Any]) -> dict[str, Any]:
    """Is the vector ranking near-global (most of every image's top-K in one global core)?"""
    share = summary["rankings"]["vector"]["global_core"]["share"]
    decision = "near-global" if share["ci_low"] >= NEAR_GLOBAL_SHARE else "not near-global" if share["ci_high"] < NEAR_GLOBAL_SHARE else "cannot tell"
    return {
        "id": "vector_near_global",
        "claim": "the vector ranking is near-global",
        "statistic": f"share of an image's top-{summary['settings']['nn_k']} inside the global core (mean over images)",
        "effect": {"value": share["mean"], "ci_low": share["ci_low"], "ci_high": share["ci_high"], "random": summary["rankings"]["vector"]["global_core"]["random_share"]},
        "test": "bootstrap CI over images",
        "decision": decision,
        "rule": f"near-global when the CI lies at or above {NEAR_GLOBAL_SHARE:.0%}, not near-global when below, cannot tell when it straddles",
    }


def shared_coordinate_verdict(alignment: list[dict[str, Any]]) -> dict[str, Any]:
    """Does the predicted-class projection's alignment survive the leak-free class control?"""
    decisions = {verdict["id"].removeprefix("class_alignment_"): verdict["decision"] for verdict in alignment}
    scalar, control = decisions["scalar"], decisions[CONTROL]
    if control == "class-aligned":
        decision = "class alignment survives the leak-free control"
    elif scalar == "class-aligned":
        decision = "the scalar ranking's alignment is not shown beyond the shared coordinate"
    else:
        decision = "neither shows class alignment" if control == scalar == "no class alignment detected" else "cannot tell"
    return {
        "id": "shared_coordinate",
        "claim": "scalar signatures are class-aligned beyond sharing the predicted class's coordinate",
        "statistic": "the class-alignment decisions of the scalar ranking and of the leak-free class control",
        "effect": {"scalar": scalar, CONTROL: control},
        "test": "the two Holm-corrected class-alignment verdicts",
        "decision": decision,
        "rule": "survives when the control is class-aligned; not shown beyond the shared coordinate when only the scalar ranking is; cannot tell when either is mixed",
    }


def seed_verdict(summary: dict[str, Any]) -> dict[str, Any]:
    """The seed's 1-NN multiple of chance beside ours, with the bound our class count allows."""
    seed = summary["published"]["resnet18"]
    block = summary["rankings"]["scalar"]["binary"]["true_label"]
    return {
        "id": "seed_nn_multiple",
        "claim": f"the seed reports 1-NN accuracy {seed['nn_accuracy_scalar_k32']:.1%} on 32-subset scalar signatures, {seed['nn_accuracy_over_chance']}× chance (1 000 classes)",
        "statistic": "1-NN accuracy over the exact chance, scalar ranking",
        "effect": {"value": block["over_chance"], "bound": 1 / block["chance"], "seed": seed["nn_accuracy_over_chance"]},
        "test": "none (the seed gives no CI; multiples of chance depend on the class count)",
        "decision": "not comparable",
        "rule": f"× chance is at most 1 / chance = {1 / block['chance']:.0f}× with {summary['num_classes']} classes, against 1 000× for the seed's 1 000 classes",
    }


def experiment_4_verdicts(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Every Experiment 4 verdict, in REPORT order."""
    alignment = alignment_verdicts(summary)
    return [*alignment, near_global_verdict(summary), shared_coordinate_verdict(alignment), seed_verdict(summary)]
