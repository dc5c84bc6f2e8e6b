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

from typing import Any, Callable, Mapping

from experiment_1.mobius import RANKINGS
from experiment_1.report import (
    ALPHA,
    HOLDS,
    SATURATION_SHARE,
    Missing,
    Reading,
    Rule,
    ci_against,
    effect_from_stat,
    every_part,
    excludes_zero,
    holm,
    holm_sides,
    seed_comparison,
)

CONTROL_LABELS = {
    "random": "random K subsets",
    "order_matched": "order-matched random",
    "low_order_first": "low-order-first",
}
SAME_SUBSETS_SHARE = (
    0.01  # a control is named identical to the ranking at the K where it picks its subsets this often or more
)
SEED_QUANTITIES = {"vector": "captured_energy", "scalar": "captured_scalar_energy"}  # Γ_K on each ranking's own energy


def _row(summary: Mapping[str, Any], quantity: str, ranking: str) -> dict[str, Any]:
    return next(
        row for row in summary["beside_seed"]["rows"] if row["quantity"] == quantity and row["ranking"] == ranking
    )


def _place(row: Mapping[str, Any]) -> tuple[dict[str, Any], str] | None:
    """Our entry at the seed's fraction of 2^L, else at the seed's K; ``None`` when neither is on the grid."""
    for name, label in (
        ("at_matching_fraction", f"{100 * row['fraction']:.0f} % of 2^L"),
        ("at_seed_k", "the seed's K"),
    ):
        if row[name]["value"] is not None:
            return row[name], label
    return None


def _placed(reading: Reading, quantity: str) -> tuple[dict[str, Any], float]:
    """The entry's quantity at its place (:func:`_place`) in the summary's ``beside_seed`` rows, and the seed's number."""
    ranking = reading.parts[-1]
    try:
        row = _row(reading.summary, quantity, ranking)
        place = _place(row)
    except (KeyError, TypeError, StopIteration):
        place = None
    if place is None:
        raise Missing(f"beside_seed.rows[{quantity}, {ranking}] at the seed's fraction of 2^L or its K")
    return place[0], row["seed"]


def _read_seed(quantity: str | None = None) -> Callable[[Reading], dict[str, float]]:
    """Our CI at the seed's fraction of 2^L and the seed's number (``quantity``: the verdict id's first part if ``None``)."""

    def read(reading: Reading) -> dict[str, float]:
        place, seed = _placed(reading, quantity or reading.parts[0])
        reading.copied("effect", place["value"])
        return {"low": place["value"]["ci_low"], "high": place["value"]["ci_high"], "seed": seed}

    return read


SEED = Rule(
    "exp3.against_seed",
    "our 95 % CI against the seed's number (which has no CI): holds when the CI lies above it, fails when below, "
    "cannot tell when it contains it",
    _read_seed(),
    lambda low, high, seed: ci_against(low, high, seed, "above"),
)
BOUND = Rule(
    "exp3.below_seed_bound",
    "our 95 % CI against the bound the seed reports: holds when the CI lies below it, fails when above, cannot tell when it contains it",
    _read_seed("top1_agreement_controls_max"),
    lambda low, high, seed: ci_against(low, high, seed, "below"),
    "{ranking} ranking: the controls stay below the top-1 agreement bound the seed reports",
)


def _read_controls(reading: Reading) -> dict[str, Any]:
    """Every control's paired difference magnitude − control and its sign-flip p at the entry's K (the place of the
    best control's row), from the summary's ``improvement.<ranking>``."""
    place, _ = _placed(reading, "top1_agreement_controls_max")
    reading.copied("parameters", place, ("k",))
    ranking = reading.parts[-1]
    try:
        index = reading.at("ks").index(place["k"])
        agreement = [block["top1_agreement"] for block in reading.at("improvement", ranking).values()]
        intervals = [tuple(block["difference"][key][index] for key in ("ci_low", "ci_high")) for block in agreement]
        p_values = [block["sign_flip_p"][index] for block in agreement]
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        raise Missing(f"improvement.{ranking}.<control>.top1_agreement at K = {place['k']}") from None
    if not agreement:
        raise Missing(f"improvement.{ranking} (no control)")
    return {"intervals": intervals, "p_values": p_values}


CONTROLS = Rule(
    "exp3.beats_controls",
    "holds when the paired per-image difference magnitude − control has a 95 % CI above 0 and a two-sided paired sign-flip "
    "permutation test over images (Holm over the controls) with p ≤ 0.05 for every control, fails when one lies below 0 with p ≤ 0.05, else cannot tell "
    "(a few images cannot make a control win)",
    _read_controls,
    lambda intervals, p_values: holm_sides(intervals, p_values, ALPHA),
    "{ranking} ranking: the magnitude top-K agrees with h(full) more often than every control (K = {k}, {label})",
)


def _relative_error_curve(summary: Mapping[str, Any], ranking: str) -> tuple[dict[str, Any], list[int]]:
    """The ranking's per-K mean relative error and the grid positions of every K < 2^L."""
    curve = summary["sources"][f"magnitude_{ranking}"]["curves"]["relative_error"]
    return curve, [index for index, k in enumerate(summary["ks"]) if k < summary["num_masks"]]


def _read_relative_error(reading: Reading) -> dict[str, Any]:
    """The CIs at every K < 2^L of the summary's per-K curve; the entry's effect must be the one at the smallest mean."""
    ranking = reading.parts[-1]
    try:
        curve, below_all = _relative_error_curve(reading.summary, ranking)
        lows, highs = ([curve[key][index] for index in below_all] for key in ("ci_low", "ci_high"))
        best = min(below_all, key=lambda index: curve["mean"][index]) if below_all else None
    except (KeyError, IndexError, TypeError):
        raise Missing(f"sources.magnitude_{ranking}.curves.relative_error at every K < 2^L") from None
    if best is not None:
        reading.copied("effect", {key: curve[key][best] for key in ("ci_low", "ci_high")})
    return {"lows": lows, "highs": highs}


RELATIVE_ERROR = Rule(
    "exp3.relative_error",
    "holds when the 95 % CI of the mean relative error lies at or above 1 at every K < 2^L of the "
    "grid, fails when it lies below 1 at some K, else cannot tell",
    _read_relative_error,
    lambda lows, highs: every_part([ci_against(low, high, 1.0, at_or=True) for low, high in zip(lows, highs)]),
    "{ranking} ranking: on the mean over images, ĥ_K is no closer to h(full) than the zero vector "
    "(mean relative error ≥ 1) at every K < 2^L",
)


def _order_shift(summary: Mapping[str, Any], ranking: str, k: int) -> dict[str, float]:
    """The top-K's mean order minus L/2 (the binomial mean order), with its CI."""
    block, index = summary["order_histograms"][ranking], summary["ks"].index(k)
    return {
        key: block["mean_order"][key][index] - block["binomial_mean_order"] for key in ("mean", "ci_low", "ci_high")
    }


def _read_orders(reading: Reading) -> dict[str, float]:
    place, _ = _placed(reading, "captured_energy")
    reading.copied("parameters", place, ("k",))
    try:
        shifted = _order_shift(reading.summary, reading.parts[-1], place["k"])
    except (KeyError, IndexError, TypeError, ValueError):
        raise Missing(f"order_histograms.{reading.parts[-1]}.mean_order at K = {place['k']}") from None
    reading.copied("effect", shifted)
    return {"low": shifted["ci_low"], "high": shifted["ci_high"]}


ORDERS = Rule(
    "exp3.orders",
    "holds when the 95 % CI of the top-K's mean order minus L/2 excludes 0, else cannot tell (no equivalence margin)",
    _read_orders,
    excludes_zero,
    "{ranking} ranking: the top-{k} sits at other orders than all subsets (mean order ≠ L/2 = {centre:g})",
)


def _read_share(reading: Reading) -> dict[str, float]:
    low, high = reading.interval("small_k", reading.parts[-1], "top1_is_empty_set")
    reading.copied("effect", reading.at("small_k", reading.parts[-1], "top1_is_empty_set"))
    return {"low": low, "high": high}


SHARE = Rule(
    "exp3.empty_top1",
    f"holds when the 95 % CI of the share lies at or above {SATURATION_SHARE:.0%}, fails when below, else cannot tell",
    _read_share,
    lambda low, high: ci_against(low, high, SATURATION_SHARE, at_or=True),
    "{ranking} ranking: the top-1 subset is the empty set (the trunk h(∅)) on ≥ {share:.0%} of images, so top-1 agreement "
    "at small K is the trunk's",
)


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
    return SEED.verdict(
        f"{quantity}.{ranking}",
        summary,
        claim,
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
    blocks = summary["improvement"][ranking]
    adjusted = holm([block["top1_agreement"]["sign_flip_p"][index] for block in blocks.values()])
    notes = []
    for (control, block), p_adjusted in zip(blocks.items(), adjusted):
        difference = {key: block["top1_agreement"]["difference"][key][index] for key in ("mean", "ci_low", "ci_high")}
        notes.append(
            f"{CONTROL_LABELS[control]}: {100 * difference['mean']:+.1f} points [{100 * difference['ci_low']:+.1f}, {100 * difference['ci_high']:+.1f}], "
            f"paired sign-flip test over images, Holm p = {p_adjusted:.3g}"
        )
    beats = CONTROLS.verdict(
        f"controls.{ranking}",
        summary,
        fields={"ranking": ranking, "k": entry["k"], "label": label},
        parameters={"k": entry["k"], "alpha": ALPHA},
        notes=notes + _same_subsets_note(summary, ranking),
    )
    effect = effect_from_stat(
        f"best control's top-1 agreement, K = {entry['k']} ({label})", entry["value"], percent=True
    )
    bound = BOUND.verdict(
        f"controls_bound.{ranking}",
        summary,
        fields={"ranking": ranking},
        effect=effect,
        seed=seed_comparison(row["seed"], effect),
    )
    return [beats, bound]


def relative_error_verdict(summary: dict[str, Any], ranking: str) -> dict[str, Any]:
    """Is the mean relative error of ĥ_K ≥ 1 at every K < 2^L of the grid?"""
    curve, below_all = _relative_error_curve(summary, ranking)
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
    return RELATIVE_ERROR.verdict(
        f"relative_error.{ranking}", summary, fields={"ranking": ranking}, effect=effect, notes=notes
    )


def orders_verdict(summary: dict[str, Any], ranking: str) -> dict[str, Any] | None:
    """Does the magnitude top-K (at the seed's Γ fraction of 2^L) sit at other orders than all subsets?"""
    place = _place(_row(summary, "captured_energy", ranking))
    if place is None:
        return None
    k = place[0]["k"]
    shifted = _order_shift(summary, ranking, k)
    return ORDERS.verdict(
        f"orders.{ranking}",
        summary,
        fields={"ranking": ranking, "k": k, "centre": summary["order_histograms"][ranking]["binomial_mean_order"]},
        effect=effect_from_stat(f"mean order of the top-{k} − L/2", shifted),
        parameters={"k": k},
        notes=lambda decision: (
            [f"the top-{k} sits {'above' if shifted['mean'] > 0 else 'below'} L/2"] if decision == HOLDS else []
        ),
    )


def empty_top1_verdict(summary: dict[str, Any], ranking: str) -> dict[str, Any] | None:
    """Is the top-1 subset the empty set on ≥ 90 % of images?"""
    share = summary["small_k"][ranking]["top1_is_empty_set"]
    if share is None:
        return None
    return SHARE.verdict(
        f"empty_top1.{ranking}",
        summary,
        fields={"ranking": ranking, "share": SATURATION_SHARE},
        effect=effect_from_stat("share of images whose top-1 subset is ∅", share, percent=True),
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
        energy = "vector" if ranking == "vector" else "scalar"
        block.append(
            seed_verdict(
                summary,
                SEED_QUANTITIES[ranking],
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
