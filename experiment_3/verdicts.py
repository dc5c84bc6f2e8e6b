"""Experiment 3's verdicts (the :mod:`experiment_1.report.verdicts` schema), decided from the summary's numbers.

Per ranking (vector first: the seed's Γ_K is a vector energy):

- ``gamma`` — as sparse as the seed reports: Γ_K at the seed's fraction of 2^L against the seed's Γ
  (for the scalar ranking on its own, scalar energy, the vector-energy Γ beside it);
- ``top1`` — top-1 agreement at the seed's fraction against the seed's;
- ``controls`` — the magnitude top-K beats every control there (paired differences and a sign-flip
  permutation test over images, Holm over the controls), with the controls
  that pick the ranking's own subsets at small K named; ``controls_bound`` — the best control stays
  below the bound the seed reports;
- ``relative_error`` — the mean relative error of ĥ_K is ≥ 1 at every K < 2^L of the grid (on the mean over images,
  no top-K short of all subsets is closer to h(full) than the zero vector; a claim about the mean, not every image:
  the share of images with error ≥ 1 is in its note);
- ``orders`` — the magnitude top-K at the seed's Γ fraction sits at other orders than a uniform pick
  (mean order ≠ L/2; the direction in a note);
- ``empty_top1`` — the top-1 subset is the empty set (the trunk h(∅)) on ≥ 90 % of images, so agreement
  at small K is the trunk's.

A comparison with the seed's number reads our 95 % CI only (the seed gives none): holds when our CI lies
above what the seed reports (for a bound: below it), fails when on the other side, cannot tell when it
contains it. Each quantity is read at the same fraction of 2^L as the seed's K, or at the seed's K when
that fraction is not on the grid.
"""

from __future__ import annotations

from typing import Any

from experiment_1.mobius import RANKINGS
from experiment_1.report import (
    ALPHA,
    CANNOT_TELL,
    FAILS,
    HOLDS,
    SATURATION_SHARE,
    conjunction,
    decide_by_ci,
    effect_from_stat,
    holm,
    seed_comparison,
    verdict,
)

CONTROL_LABELS = {
    "random": "random K subsets",
    "order_matched": "order-matched random",
    "low_order_first": "low-order-first",
}
SAME_SUBSETS_SHARE = (
    0.01  # a control is named identical to the ranking at the K where it picks its subsets this often or more
)
RULES = {
    "seed": (
        "our 95 % CI against the seed's number (which has no CI): holds when the CI lies above it, fails when below, "
        "cannot tell when it contains it"
    ),
    "bound": "our 95 % CI against the bound the seed reports: holds when the CI lies below it, fails when above, cannot tell when it contains it",
    "controls": (
        "holds when the paired per-image difference magnitude − control has a 95 % CI above 0 and a two-sided paired sign-flip "
        "permutation test over images (Holm over the controls) with p ≤ 0.05 for every control, fails when one lies below 0 with p ≤ 0.05, else cannot tell "
        "(a few images cannot make a control win)"
    ),
    "relative_error": "holds when the 95 % CI of the mean relative error lies at or above 1 at every K < 2^L of the "
    "grid, fails when it lies below 1 at some K, else cannot tell",
    "orders": "holds when the 95 % CI of the top-K's mean order minus L/2 excludes 0, else cannot tell (no equivalence margin)",
    "share": f"holds when the 95 % CI of the share lies at or above {SATURATION_SHARE:.0%}, fails when below, else cannot tell",
}


def _row(summary: dict[str, Any], quantity: str, ranking: str) -> dict[str, Any]:
    return next(
        row for row in summary["beside_seed"]["rows"] if row["quantity"] == quantity and row["ranking"] == ranking
    )


def _place(row: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """Our entry at the seed's fraction of 2^L, else at the seed's K; ``None`` when neither is on the grid."""
    for name, label in (
        ("at_matching_fraction", f"{100 * row['fraction']:.0f} % of 2^L"),
        ("at_seed_k", "the seed's K"),
    ):
        if row[name]["value"] is not None:
            return row[name], label
    return None


def _by_seed(reported: float, effect: dict[str, Any], bound: bool = False) -> str:
    relation = seed_comparison(reported, effect)["relation"]
    if relation is None or relation == "inside":
        return CANNOT_TELL
    return HOLDS if (relation == "below") != bound else FAILS


def seed_verdict(
    summary: dict[str, Any], quantity: str, ranking: str, claim: str, name: str, notes: list[str]
) -> dict[str, Any] | None:
    """Our ``quantity`` at the seed's fraction of 2^L against the seed's number."""
    row = _row(summary, quantity, ranking)
    place = _place(row)
    if place is None:
        return None
    entry, label = place
    effect = effect_from_stat(
        f"{name}, K = {entry['k']} of {summary['num_masks']} ({label})", entry["value"], percent=True
    )
    return verdict(
        f"{quantity}.{ranking}",
        claim,
        _by_seed(row["seed"], effect),
        RULES["seed"],
        effect=effect,
        seed=seed_comparison(row["seed"], effect),
        parameters={"k": entry["k"], "seed_k": row["seed_k"]},
        notes=notes,
    )


def _same_subsets_note(summary: dict[str, Any], ranking: str) -> list[str]:
    """Which controls pick the ranking's own subsets at small K, and how often."""
    notes = []
    for control, shares in summary["small_k"][ranking]["control_is_the_ranking"].items():
        where = [
            f"K = {k}: {100 * share:.1f} %"
            for k, share in zip(summary["ks"], shares)
            if k < summary["num_masks"] and share >= SAME_SUBSETS_SHARE
        ]
        if where:
            notes.append(
                f"{CONTROL_LABELS[control]} picks the ranking's own subsets ({', '.join(where)} of image-draws), "
                "so there it is no control"
            )
    return notes


def controls_verdicts(summary: dict[str, Any], ranking: str) -> list[dict[str, Any]]:
    """The magnitude top-K against every control, and the best control against the seed's bound."""
    row = _row(summary, "top1_agreement_controls_max", ranking)
    place = _place(row)
    if place is None:
        return []
    entry, label = place
    index = summary["ks"].index(entry["k"])
    decisions, notes = [], []
    blocks = summary["improvement"][ranking]
    adjusted = holm([block["top1_agreement"]["sign_flip_p"][index] for block in blocks.values()])
    for (control, block), p_adjusted in zip(blocks.items(), adjusted):
        difference = {key: block["top1_agreement"]["difference"][key][index] for key in ("mean", "ci_low", "ci_high")}
        decisions.append(decide_by_ci(difference, "positive") if p_adjusted <= ALPHA else CANNOT_TELL)
        notes.append(
            f"{CONTROL_LABELS[control]}: {100 * difference['mean']:+.1f} points [{100 * difference['ci_low']:+.1f}, {100 * difference['ci_high']:+.1f}], "
            f"paired sign-flip test over images, Holm p = {p_adjusted:.3g}"
        )
    beats = verdict(
        f"controls.{ranking}",
        f"{ranking} ranking: the magnitude top-K agrees with h(full) more often than every control "
        f"(K = {entry['k']}, {label})",
        conjunction(decisions),
        RULES["controls"],
        parameters={"k": entry["k"], "alpha": ALPHA},
        notes=notes + _same_subsets_note(summary, ranking),
    )
    effect = effect_from_stat(
        f"best control's top-1 agreement, K = {entry['k']} ({label})", entry["value"], percent=True
    )
    bound = verdict(
        f"controls_bound.{ranking}",
        f"{ranking} ranking: the controls stay below the top-1 agreement bound the seed reports",
        _by_seed(row["seed"], effect, bound=True),
        RULES["bound"],
        effect=effect,
        seed=seed_comparison(row["seed"], effect),
    )
    return [beats, bound]


def relative_error_verdict(summary: dict[str, Any], ranking: str) -> dict[str, Any]:
    """Is the mean relative error of ĥ_K ≥ 1 at every K < 2^L of the grid?"""
    curve = summary["sources"][f"magnitude_{ranking}"]["curves"]["relative_error"]
    below_all = [index for index, k in enumerate(summary["ks"]) if k < summary["num_masks"]]
    lows = [curve["ci_low"][index] for index in below_all]
    highs = [curve["ci_high"][index] for index in below_all]
    decision = HOLDS if below_all and min(lows) >= 1 else FAILS if any(high < 1 for high in highs) else CANNOT_TELL
    best = min(below_all, key=lambda index: curve["mean"][index]) if below_all else None
    effect = (
        None
        if best is None
        else effect_from_stat(
            f"smallest mean relative error, at K = {summary['ks'][best]}",
            {key: curve[key][best] for key in ("mean", "ci_low", "ci_high")},
        )
    )
    shares = summary["small_k"][ranking]["relative_error_at_least_1"]
    notes = (
        []
        if best is None
        else [
            f"images with relative error ≥ 1 there: {100 * shares[best]:.1f} %"
            + (
                " (a claim about the mean over images, not about every image: on the others ĥ_K is closer than zero)"
                if shares[best] < 1
                else ""
            )
        ]
    )
    return verdict(
        f"relative_error.{ranking}",
        f"{ranking} ranking: on the mean over images, ĥ_K is no closer to h(full) than the zero vector "
        "(mean relative error ≥ 1) at every K < 2^L",
        decision,
        RULES["relative_error"],
        effect=effect,
        notes=notes,
    )


def orders_verdict(summary: dict[str, Any], ranking: str) -> dict[str, Any] | None:
    """Does the magnitude top-K (at the seed's Γ fraction of 2^L) sit at other orders than all subsets?"""
    place = _place(_row(summary, "captured_energy", ranking))
    if place is None:
        return None
    k = place[0]["k"]
    block, index = summary["order_histograms"][ranking], summary["ks"].index(k)
    centre = block["binomial_mean_order"]
    shifted = {key: block["mean_order"][key][index] - centre for key in ("mean", "ci_low", "ci_high")}
    moved = shifted["ci_low"] > 0 or shifted["ci_high"] < 0
    notes = [f"the top-{k} sits {'above' if shifted['mean'] > 0 else 'below'} L/2"] if moved else []
    return verdict(
        f"orders.{ranking}",
        f"{ranking} ranking: the top-{k} sits at other orders than all subsets (mean order ≠ L/2 = {centre:g})",
        HOLDS if moved else CANNOT_TELL,
        RULES["orders"],
        effect=effect_from_stat(f"mean order of the top-{k} − L/2", shifted),
        parameters={"k": k},
        notes=notes,
    )


def empty_top1_verdict(summary: dict[str, Any], ranking: str) -> dict[str, Any] | None:
    """Is the top-1 subset the empty set on ≥ 90 % of images?"""
    share = summary["small_k"][ranking]["top1_is_empty_set"]
    if share is None:
        return None
    effect = effect_from_stat("share of images whose top-1 subset is ∅", share, percent=True)
    low, high = share["ci_low"], share["ci_high"]
    decision = HOLDS if low >= SATURATION_SHARE else FAILS if high < SATURATION_SHARE else CANNOT_TELL
    return verdict(
        f"empty_top1.{ranking}",
        f"{ranking} ranking: the top-1 subset is the empty set (the trunk h(∅)) on ≥ "
        f"{SATURATION_SHARE:.0%} of images, so top-1 agreement at small K is the trunk's",
        decision,
        RULES["share"],
        effect=effect,
        parameters={"share": SATURATION_SHARE},
    )


def verdicts(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The verdicts block (see the module docstring); verdicts whose K is not on the grid are left out."""
    block: list[dict[str, Any] | None] = []
    for ranking in RANKINGS:
        notes = []
        if ranking == "scalar":
            vector = _place(_row(summary, "captured_energy", ranking))
            if vector is not None:
                notes.append(
                    f"on vector energy the scalar ranking's Γ is {100 * vector[0]['value']['mean']:.1f} % (the vector ranking maximises that one)"
                )
        quantity = "captured_energy" if ranking == "vector" else "captured_scalar_energy"
        energy = "vector" if ranking == "vector" else "scalar"
        block.append(
            seed_verdict(
                summary,
                quantity,
                ranking,
                f"{ranking} ranking: Γ_K on its own ({energy}) energy is as high as the seed reports",
                f"Γ_K ({energy} energy)",
                notes,
            )
        )
        block.append(
            seed_verdict(
                summary,
                "top1_agreement_magnitude",
                ranking,
                f"{ranking} ranking: top-1 agreement is as high as the seed reports",
                "top-1 agreement",
                [],
            )
        )
        block += controls_verdicts(summary, ranking)
        block += [
            relative_error_verdict(summary, ranking),
            orders_verdict(summary, ranking),
            empty_top1_verdict(summary, ranking),
        ]
    return [entry for entry in block if entry is not None]
