"""Step 8's body (experiment_2/step_8_low_orders.py states its question, inputs and outputs): the passes — the
corners and the Walsh design's masks, the families of low-order masks at each corner, the random sub-cubes — their
per-image reductions, the summary and the REPORT."""

from __future__ import annotations

from dataclasses import replace
from math import comb
from pathlib import Path
from typing import Any

import numpy as np
import torch

from experiment_1.errors import PipelineError
from experiment_1.files import atomic_write_text, read_json_if_exists
from experiment_1.network import MaskFamily, held_off_view
from experiment_1.report import ReportDocument, bootstrap_mean_ci_rows, format_number, markdown_table
from experiment_1.run import (
    MOBIUS_DTYPES,
    build_setup,
    image_counts,
    provenance,
    run_per_image,
    valid_images,
    write_results,
)
from experiment_2.past_exhaustive.cost import describe_cost, step_cost
from experiment_2.past_exhaustive.low_orders import (
    PROJECTIONS,
    Surrogate,
    corner_reductions,
    family_reductions,
    largest_sets,
    order_energies,
    per_coefficient,
    random_pass_ids,
    reported_sizes,
)
from experiment_2.past_exhaustive.sampled import (
    EXHAUSTIVE_LIMIT,
    NOT_VALIDATED_AT_DEPTH,
    STRESS_REPORT,
    over_images,
    subcube_per_image,
    subcube_reductions,
    walsh_per_image,
)
from experiment_2.past_exhaustive.sampling.subcubes import INTERVAL as SUBCUBE_INTERVAL
from experiment_2.past_exhaustive.sampling.subcubes import MIN_COEFFICIENTS as SUBCUBE_MIN_COEFFICIENTS
from experiment_2.past_exhaustive.sampling.subcubes import NO_INTERVAL as SUBCUBE_NO_INTERVAL
from experiment_2.past_exhaustive.sampling.subcubes import VALIDATED_DRAWS as SUBCUBE_VALIDATED_DRAWS
from experiment_2.past_exhaustive.sampling.subcubes import draw_subcubes
from experiment_2.past_exhaustive.sampling.walsh import INTERVALS as WALSH_INTERVALS
from experiment_2.past_exhaustive.sampling.walsh import estimate_names, statistic_range, walsh_design
from experiment_2.past_exhaustive.verdicts import (
    count_outside,
    low_degree_share_verdict,
    out_of_reach,
    random_init_reading,
    surrogate_verdict,
)
from experiment_2.step_8_low_orders import LowOrdersConfig

STEP = "experiment_2.step_8_low_orders"
LARGEST = 5  # sets listed per order
SIZE_LEAST = 10  # a mask size's surrogate R² is reported when the design holds at least this many masks of it
SUBCUBE_SEED_OFFSET = 1  # the sub-cubes are drawn with --seed + 1, the Walsh design with --seed: independent draws
QUESTION = (
    "What are the exact low-order Möbius coefficients of the logits at the all-off network and about the full network "
    "(single blocks, pairs, triples) for a network too deep for all 2^L masks — and what do random masks and random "
    "sub-cubes say about the rest of its spectrum?"
)


def projection_summary(
    energies: np.ndarray, gap: np.ndarray, variance: np.ndarray, num_blocks: int, seed: int
) -> dict[str, Any]:
    """E_j, ē_j and the two observable ratios for j = 1 … k (means over images, bootstrap CIs); each image's ē_j and
    E_j / Var h beside them (step 12 pairs them across depths)."""
    low = energies[:, 1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        to_gap, to_variance = low / gap[:, None], low / variance[:, None]
    per_coefficient_low = per_coefficient(energies, num_blocks)[:, 1:]
    return {
        "order_0_energy": bootstrap_mean_ci_rows(energies[:, :1], seed=seed),
        "order_energy": bootstrap_mean_ci_rows(low, seed=seed),
        "per_coefficient_energy": bootstrap_mean_ci_rows(per_coefficient_low, seed=seed),
        "per_coefficient_energy_per_image": per_coefficient_low.tolist(),
        "ratio_to_corner_gap": bootstrap_mean_ci_rows(to_gap, seed=seed),
        "ratio_to_variance": bootstrap_mean_ci_rows(to_variance, seed=seed),
        "ratio_to_variance_per_image": to_variance.tolist(),
    }


def walsh_summary(arrays: dict[str, np.ndarray], valid: np.ndarray, design: Any, seed: int) -> dict[str, Any]:
    """Each Walsh statistic per projection: its mean over images (one shared set of bootstrap resamples per
    projection) and each image's estimate, interval and standard error."""
    names = estimate_names(design.rhos)
    projections = {}
    for name in PROJECTIONS:
        estimate, low, high, error = (
            arrays[f"walsh_{field}_{name}"][valid] for field in ("estimate", "ci_low", "ci_high", "se")
        )
        means = bootstrap_mean_ci_rows(estimate, seed=seed)
        projections[name] = {
            stat: {
                "mean": [means["mean"][position]],
                "ci_low": [means["ci_low"][position]],
                "ci_high": [means["ci_high"][position]],
                "n": means["n"],
                "per_image": estimate[:, [position]].tolist(),
                "per_image_ci_low": low[:, position].tolist(),
                "per_image_ci_high": high[:, position].tolist(),
                "per_image_se": error[:, position].tolist(),
            }
            for position, stat in enumerate(names)
        }
    return {"design": design.describe(), "interval": WALSH_INTERVALS, "names": list(names), "projections": projections}


def subcube_summary(
    arrays: dict[str, np.ndarray], valid: np.ndarray, draws: np.ndarray, exact: dict[str, np.ndarray], seed: int
) -> dict[str, Any]:
    """ē_j, j ≤ u, per projection: means over images of the per-image sub-cube estimates, each image's interval over
    draws, and the exact ē_j of the family beside them where j ≤ k."""
    result: dict[str, Any] = {
        "design": {
            "size": int(draws.shape[1]),
            "draws": int(draws.shape[0]),
            "seed": seed + SUBCUBE_SEED_OFFSET,
            "seed_offset": SUBCUBE_SEED_OFFSET,
            "blocks": draws.tolist(),
            "masks_per_draw": 2 ** int(draws.shape[1]),
            "validated_draws": SUBCUBE_VALIDATED_DRAWS,
            "draws_validated": bool(draws.shape[0] >= SUBCUBE_VALIDATED_DRAWS),
            "engine": "tree pass over the held-off view (experiment_1.network.held_off_view)",
        },
        "interval": SUBCUBE_INTERVAL,
        "orders": list(range(1, draws.shape[1] + 1)),
        "projections": {},
    }
    for name in PROJECTIONS:
        estimates = subcube_per_image(arrays[f"order_means_{name}"][valid])
        result["projections"][name] = {
            "per_coefficient_energy": over_images(estimates["mean"], estimates["ci_low"], estimates["ci_high"], seed),
            "exact_per_coefficient_energy": bootstrap_mean_ci_rows(exact[name][:, 1:], seed=seed)
            if name in exact
            else None,
        }
    return result


def build_summary(
    config: dict[str, Any],
    arrays: dict[str, np.ndarray],
    tables: dict[str, dict[str, Any]],
    args: LowOrdersConfig,
    num_blocks: int,
    design: Any,
    draws: np.ndarray | None,
    sizes: tuple[int, ...],
) -> dict[str, Any]:
    order, seed = args.order, args.seed
    valid = valid_images(arrays)
    corners = {
        name: {"corner_gap": arrays[f"corner_gap_{name}"][valid], "variance": arrays[f"variance_{name}"][valid]}
        for name in PROJECTIONS
    }
    bases = {}
    for base, table in tables.items():
        bases[base] = {
            "family": MaskFamily(order, base).descriptor(),
            "masks_per_image": MaskFamily(order, base).size(num_blocks),
            "projections": {
                name: projection_summary(
                    arrays[f"order_energy_{name}_{base}"][valid],
                    corners[name]["corner_gap"],
                    corners[name]["variance"],
                    num_blocks,
                    seed,
                )
                for name in PROJECTIONS
            },
            "largest_sets_vector": table,
        }
    walsh = walsh_summary(arrays, valid, design, seed)
    verdicts = []
    for name in PROJECTIONS:
        share = walsh["projections"][name]["low_degree_share"]
        verdicts.append(
            low_degree_share_verdict(
                name,
                np.asarray(share["per_image"])[:, 0],
                np.asarray(share["per_image_ci_low"]),
                np.asarray(share["per_image_ci_high"]),
                seed,
                config["weights"],
                errors=np.asarray(share["per_image_se"]),
                num_samples=int(walsh["design"]["num_samples"]),
            )
        )
    surrogate = None
    if "off" in tables:
        surrogate = {
            "order_max": order,
            "masks": "every mask of the Walsh design (base, flipped and ρ-correlated: each marginally uniform)",
            "sizes": [*sizes, "all"],
            "counts": [int(count) for count in _size_counts(design, sizes)],
            "projections": {
                name: bootstrap_mean_ci_rows(arrays[f"surrogate_r2_{name}"][valid], seed=seed) for name in PROJECTIONS
            },
        }
        verdicts += [
            surrogate_verdict(name, arrays[f"surrogate_r2_{name}"][valid][:, -1], order, seed, config["weights"])
            for name in PROJECTIONS
        ]
    exact_per_coefficient = {
        name: per_coefficient(arrays[f"order_energy_{name}_off"][valid], num_blocks)
        for name in PROJECTIONS
        if "off" in tables
    }
    subcubes = subcube_summary(arrays, valid, draws, exact_per_coefficient, seed) if draws is not None else None
    subcube_size = 0 if draws is None else int(draws.shape[1])
    return {
        "experiment": "experiment_2_low_orders",
        "question": QUESTION,
        **image_counts(valid),
        "image_index": arrays["index"][valid].tolist(),
        "num_blocks": num_blocks,
        "order_max": order,
        "orders": list(range(1, order + 1)),
        "binomial": [comb(num_blocks, j) for j in range(1, order + 1)],
        "random_masks_per_image": args.random_masks,
        "corner_gap": {
            name: {
                **bootstrap_mean_ci_rows(corners[name]["corner_gap"][:, None], seed=seed),
                "per_image": corners[name]["corner_gap"].tolist(),
            }
            for name in PROJECTIONS
        },
        "variance": {
            name: bootstrap_mean_ci_rows(corners[name]["variance"][:, None], seed=seed) for name in PROJECTIONS
        },
        "bases": bases,
        "walsh": walsh,
        "surrogate_r2_by_size": surrogate,
        "subcubes": subcubes,
        "exact": [
            "every Möbius coefficient Δ_S with |S| ≤ k at each evaluated corner (the family walk and the transform on the family)",
            "E_j and ē_j = E_j / C(L, j) for j ≤ k",
            "‖h(full) − h(∅)‖² and E_j / ‖h(full) − h(∅)‖²",
        ],
        "estimated": [
            f"Var h, the variance of h over a uniformly random mask: unbiased sample variance of the {args.random_masks} seeded "
            "uniform base masks of the Walsh design per image (E_j / Var h is a ratio to that estimate)",
            "the Walsh summaries (variance, influence, κ_W, κ_W / L, noise stability, W_1 … W_3, the low-degree share) "
            f"per image with 95 % intervals ({WALSH_INTERVALS})",
            "the order-≤k surrogate's R² on the design's masks by mask size (exact coefficients, sampled masks)",
            *(
                [
                    f"ē_j for j ≤ u = {subcube_size} from {draws.shape[0]} random sub-cubes per image, unbiased, "
                    f"95 % intervals over draws ({SUBCUBE_INTERVAL}) for the orders with C(u, j) ≥ {SUBCUBE_MIN_COEFFICIENTS} "
                    f"coefficients per draw; the others without one ({SUBCUBE_NO_INTERVAL}); step 11 validates the "
                    f"intervals at {SUBCUBE_VALIDATED_DRAWS} draws or more"
                    + ("" if subcubes["design"]["draws_validated"] else f", this run has {draws.shape[0]}")
                ]
                if subcubes is not None
                else []
            ),
        ],
        "out_of_reach": [
            f"{entry['quantity']}: {entry['reason']}"
            for entry in out_of_reach(num_blocks, EXHAUSTIVE_LIMIT, order, subcube_size)
        ]
        + [f"orders above k = {order}: not evaluated exactly"],
        "undecided": out_of_reach(num_blocks, EXHAUSTIVE_LIMIT, order, subcube_size),
        "verdicts": verdicts,
        "config": config,
    }


def _size_counts(design: Any, sizes: tuple[int, ...]) -> list[int]:
    popcounts = np.bitwise_count(design.all_ids())
    return [int((popcounts == size).sum()) for size in sizes] + [len(popcounts)]


def report_markdown(summary: dict[str, Any], timing: dict[str, Any] | None) -> str:
    """REPORT.md, generated from summary.json."""
    config, orders = summary["config"], summary["orders"]
    results = [short_answer(summary)]
    for base, entry in summary["bases"].items():
        corner = "the all-off network (base ∅)" if base == "off" else "the full network (sets of gates turned off)"
        rows = []
        for name in PROJECTIONS:
            block = entry["projections"][name]
            for position, order in enumerate(orders):
                rows.append(
                    [
                        name,
                        order,
                        format_number(block["order_energy"]["mean"][position]),
                        format_number(block["per_coefficient_energy"]["mean"][position]),
                        format_number(block["ratio_to_corner_gap"]["mean"][position]),
                        format_number(block["ratio_to_variance"]["mean"][position]),
                    ]
                )
        results.append(
            f"### About {corner}: {entry['masks_per_image']} masks per image\n\n"
            + markdown_table(
                [
                    "projection",
                    "order j",
                    "E_j (mean)",
                    "ē_j = E_j / C(L, j)",
                    "E_j / ‖h(full) − h(∅)‖²",
                    "E_j / Var h",
                ],
                rows,
            )
        )
        largest = [
            [order, ", ".join(item["blocks"]), format_number(item["mean_energy"])]
            for order, items in entry["largest_sets_vector"].items()
            for item in items
        ]
        results.append(markdown_table(["order", "blocks", "mean ‖Δ‖² (vector)"], largest))
    results.append(scale_sentence(summary))
    results += sampled_sections(summary)
    results.append(
        "Exact: "
        + "; ".join(summary["exact"])
        + ". Estimated: "
        + "; ".join(summary["estimated"])
        + ". Out of reach: "
        + "; ".join(summary["out_of_reach"])
        + "."
    )
    if timing and "cost_estimate" in timing:
        results.append(cost_section(timing, summary["order_max"]))
    method = (
        f"Masks within k = {summary['order_max']} gates of each corner, evaluated by the family walk of the prefix tree at {config['input_size']} px "
        f"(L = {summary['num_blocks']}); Möbius coefficients by the bit-by-bit transform on the family (exact on a down-closed set), in "
        f"`{config['mobius_dtype']}`; Var h from {summary['random_masks_per_image']} seeded uniformly random masks per image, "
        "the base masks of the Walsh design (each also evaluated with a one-block flip and one ρ-correlated copy per ρ, "
        "by the naive engine on the explicit id list)"
        + (
            f"; {summary['subcubes']['design']['draws']} random sub-cubes of u = {summary['subcubes']['design']['size']} "
            "blocks, each the tree pass over the held-off view (the other blocks run their gate-off path)"
            if summary["subcubes"]
            else ""
        )
        + ". Means over images with percentile-bootstrap 95 % CIs in summary.json, each image's own interval beside them."
    )
    reading = random_init_reading(config)
    undecided = [f"{entry['quantity']}: {entry['status']} — {entry['reason']}." for entry in summary["undecided"]]
    return ReportDocument(
        title=f"Experiment 2 — exact low orders at both corners ({config['arch']}, L = {summary['num_blocks']}, {config['input_size']} px)",
        summary=summary,
        method=method,
        results=results,
        seed_rows=[],
        seed_source="the seed reports no low-order table past the exhaustive limit",
        verdict=[reading or f"The verdicts below are drawn from weights {config['weights']}.", *undecided],
        generator=STEP,
        timing=timing,
    ).render()


def short_answer(summary: dict[str, Any]) -> str:
    """What the run decides, in a few sentences: the exact low orders it gives and each verdict's decision."""
    decided = "; ".join(f"{entry['claim']}: {entry['decision']}" for entry in summary["verdicts"])
    return (
        f"### Short answer\n\nEvery Möbius coefficient of order ≤ {summary['order_max']} at "
        + " and ".join("the all-off network" if base == "off" else "the full network" for base in summary["bases"])
        + f" is exact at L = {summary['num_blocks']} (the tables below, ē_j beside every ratio); the spectrum's peak, κ "
        f"and C≤k are out of reach. {decided[0].upper() + decided[1:] if decided else 'No verdict'}."
    )


def scale_sentence(summary: dict[str, Any]) -> str:
    """The two denominators of the ratios, per projection: their scale against the per-coefficient energies beside
    them says whether a ratio moves with the function or with the output's scale."""
    parts = [
        f"{name}: ‖h(full) − h(∅)‖² {format_number(summary['corner_gap'][name]['mean'][0])} and Var h "
        f"{format_number(summary['variance'][name]['mean'][0])}"
        for name in PROJECTIONS
    ]
    return (
        "The ratios' denominators (means over images) — "
        + "; ".join(parts)
        + ". A ratio moves with them as well as with E_j, so across networks read it beside ē_j, the absolute mean "
        "coefficient energy."
        + (
            " Var h is an unbiased estimate whose interval is not given at this depth (under the Walsh table)."
            if "variance" in withheld(summary)
            else ""
        )
    )


def out_of_range_count(stat: str, block: dict[str, Any], num_blocks: int) -> str:
    """How many images' estimates of the Walsh statistic lie outside its range (:func:`statistic_range`), in words,
    or "" when none does."""
    estimates = np.asarray(block["per_image"], dtype=np.float64)[:, 0]
    outside = count_outside(estimates, *statistic_range(stat, num_blocks)[:2])
    return f" ({outside} of {len(estimates)} out of range: cannot tell)" if outside else ""


def own_bound(pick: Any, bounds: Any) -> float | None:
    """``min`` or ``max`` of the images' own interval limits, ``None`` (shown as "—") where no image has one (a
    sub-cube order with too few coefficients per draw has no interval)."""
    finite = [float(value) for value in bounds if value is not None]
    return pick(finite) if finite else None


def shared_design_note(walsh: dict[str, Any]) -> str:
    """What the Walsh table's two intervals hold: every image is read on the one design, so the CI over images leaves
    out the masks' sampling error, which the images share and their own intervals hold; the intervals are cut to each
    statistic's range and the estimates are not, so a mean outside the span of the images' own intervals is that
    shared error (named, with its projection)."""
    outside = []
    for name, projection in walsh["projections"].items():
        for stat, block in projection.items():
            mean = block["mean"][0]
            low, high = own_bound(min, block["per_image_ci_low"]), own_bound(max, block["per_image_ci_high"])
            if (low is not None and mean < low) or (high is not None and mean > high):
                outside.append(f"{stat} ({name}, mean {format_number(mean)})")
    note = (
        f"Every image is read on the same {walsh['design']['num_samples']} base masks (seed "
        f"{walsh['design']['seed']}): the CI over images holds how the images differ, not the masks' sampling error, "
        "which they share and each image's own interval holds. The images' intervals are cut to their statistic's "
        "range; the estimates are not (each is unbiased, or a ratio of unbiased ones)"
    )
    if not outside:
        return note + "."
    return (
        note
        + ", so a mean outside the span of the images' own intervals is that shared error: "
        + ", ".join(outside)
        + "."
    )


def draws_sentence(design: dict[str, Any]) -> str:
    """Whether the run's draws reach those at which step 11 validates the intervals over draws."""
    validated = design["validated_draws"]
    if design["draws_validated"]:
        return f"The intervals over draws: {design['draws']} draws, at or above the {validated} at which step 11 validates them."
    return (
        f"The intervals over draws: **{design['draws']} draws, fewer than the {validated} at which step 11 validates "
        "them**; with fewer draws a sample often misses the heavy tail of the per-draw means, and the interval then "
        "misses above (under-coverage of the middle orders, experiment_2/README.md)."
    )


def withheld(summary: dict[str, Any]) -> tuple[str, ...]:
    """The estimators the REPORT does not give: past the exhaustive limit, those step 15 does not validate at depth."""
    return NOT_VALIDATED_AT_DEPTH if summary["num_blocks"] > EXHAUSTIVE_LIMIT else ()


def withheld_sentence(summary: dict[str, Any]) -> str:
    """Which estimates the REPORT leaves out and why, with the run's own check of the regime: the relative standard
    error of its Var h estimate (median over images, per projection), which step 15 reports for its families."""
    names = ", ".join(withheld(summary))
    errors = "; ".join(
        f"{name} {format_number(float(np.median(np.divide(block['variance']['per_image_se'], np.asarray(block['variance']['per_image'])[:, 0]))))}"
        for name, block in summary["walsh"]["projections"].items()
    )
    return (
        f"Not given at L = {summary['num_blocks']}: {names}. Step 15 finds their 95 % intervals covering less than "
        f"90 % at L = 50 on some synthetic functions — where h is heavy-tailed or explodes over the masks ({STRESS_REPORT}, "
        "which gives each family's relative standard error of Var h); their estimates stay in summary.json. This run's "
        f"relative standard error of Var h (median over images): {errors}."
    )


def sampled_sections(summary: dict[str, Any]) -> list[str]:
    """The Walsh, surrogate and sub-cube tables of REPORT.md (means over images, 95 % CIs), without the estimators it
    withholds (:func:`withheld`)."""
    hidden = withheld(summary)
    walsh = {
        **summary["walsh"],
        "projections": {
            name: {stat: block for stat, block in projection.items() if stat not in hidden}
            for name, projection in summary["walsh"]["projections"].items()
        },
    }
    rows = [
        [
            name,
            stat,
            format_number(block["mean"][0]) + out_of_range_count(stat, block, summary["num_blocks"]),
            f"[{format_number(block['ci_low'][0])}, {format_number(block['ci_high'][0])}]",
            f"[{format_number(min(block['per_image_ci_low']))}, {format_number(max(block['per_image_ci_high']))}]",
        ]
        for name, projection in walsh["projections"].items()
        for stat, block in projection.items()
    ]
    sections = [
        f"### Walsh summaries from {walsh['design']['num_samples']} random base masks per image "
        f"({walsh['design']['num_ids']} distinct masks)\n\n"
        + markdown_table(
            ["projection", "statistic", "mean over images", "95 % CI over images", "images' own 95 % intervals span"],
            rows,
        )
        + "\n\n"
        + shared_design_note(walsh)
        + (f"\n\n{withheld_sentence(summary)}" if hidden else "")
    ]
    surrogate = summary["surrogate_r2_by_size"]
    if surrogate:
        rows = [
            [str(size), count]
            + [format_number(surrogate["projections"][name]["mean"][position]) for name in PROJECTIONS]
            for position, (size, count) in enumerate(zip(surrogate["sizes"], surrogate["counts"]))
        ]
        sections.append(
            f"### The order-≤{surrogate['order_max']} Möbius surrogate (base ∅) on the design's masks: R² by mask size\n\n"
            + markdown_table(["mask size |T|", "masks", "R² vector (mean)", "R² scalar (mean)"], rows)
        )
    subcubes = summary["subcubes"]
    if subcubes:
        rows = []
        for name, block in subcubes["projections"].items():
            estimate, exact = block["per_coefficient_energy"], block["exact_per_coefficient_energy"]
            for position, order in enumerate(subcubes["orders"]):
                if f"ebar_{order}" in hidden:
                    continue
                exact_text = format_number(exact["mean"][position]) if exact and position < len(exact["mean"]) else "—"
                own_low = own_bound(min, (image[position] for image in estimate["per_image_ci_low"]))
                own_high = own_bound(max, (image[position] for image in estimate["per_image_ci_high"]))
                rows.append(
                    [
                        name,
                        order,
                        format_number(estimate["mean"][position]),
                        f"[{format_number(estimate['ci_low'][position])}, {format_number(estimate['ci_high'][position])}]",
                        f"none (C(u, j) < {SUBCUBE_MIN_COEFFICIENTS})"
                        if own_low is None
                        else f"[{format_number(own_low)}, {format_number(own_high)}]",
                        exact_text,
                    ]
                )
        sections.append(
            f"### Random sub-cubes: ē_j from {subcubes['design']['draws']} draws of u = {subcubes['design']['size']} blocks per image\n\n"
            + f"{draws_sentence(subcubes['design'])}\n\n"
            + markdown_table(
                [
                    "projection",
                    "order j",
                    "ē_j sampled (mean)",
                    "95 % CI over images",
                    "images' own intervals over draws span",
                    "ē_j exact (family)",
                ],
                rows,
            )
            + (
                f"\n\nNot given: {', '.join(name for name in hidden if name.startswith('ebar_'))} (above, under the Walsh table)."
                if any(name.startswith("ebar_") for name in hidden)
                else ""
            )
        )
    return sections


def cost_section(timing: dict[str, Any], order: int) -> str:
    """The step's cost estimate (of the call that wrote timing.json) beside the run's wall time, and what order
    ``order + 1`` would cost."""
    cost = timing["cost_estimate"]
    wall = timing["wall_seconds"]  # every call and process of the run: a resumed run's first evaluation counts
    rows = [
        [
            part["pass"],
            part["masks"],
            format_number(part["gmac"]),
            format_number(part["gmac_per_s"]),
            part["rate_from"],
            format_number(part["seconds"]),
        ]
        for part in cost["parts"]
    ]
    verdict = "within" if wall <= cost["estimated_seconds"] else "over"
    further = "; ".join(
        f"{part['pass']} at k = {order + 1} would cost {format_number(part['gmac_next_order'])} GMAC per image "
        f"({format_number(part['gmac_next_order'] / part['gmac'])}× this run's, about "
        f"{format_number(part['gmac_next_order'] * cost['num_images'] / part['gmac_per_s'])} s at its rate)"
        for part in cost["parts"]
        if part.get("gmac_next_order")
    )
    return (
        "Cost estimate (before the first batch, each pass at the rate measured for its kind on this machine): "
        f"{format_number(cost['estimated_seconds'])} s for {cost['num_images']} image(s); the evaluation took "
        f"{format_number(wall)} s — {verdict} the estimate. Why the families stop at k = {order}: {further}.\n\n"
        + markdown_table(
            ["pass", "masks per image", "GMAC per image", "GMAC/s", "rate measured on", "estimated s"], rows
        )
    )


def check_budget(cost: dict[str, Any], budget: int | None) -> None:
    """One line when the step's masks per image exceed ``--budget``."""
    if budget is not None and cost["masks_per_image"] > budget:
        parts = ", ".join(f"{part['pass']} {part['masks']}" for part in cost["parts"])
        raise PipelineError(
            f"--budget {budget}: the run evaluates {cost['masks_per_image']} masks per image ({parts}); "
            "lower --order, --random-masks, --subcubes or --subcube-size, or raise --budget"
        )


def run(args: LowOrdersConfig) -> None:
    """The step on its checked flags (module docstring)."""
    families = [MaskFamily(args.order, base) for base in args.bases]
    costliest = max(
        families, key=lambda family: family.base == "on"
    )  # the full-network base runs whole blocks on its saturated states
    setup = build_setup(replace(args, mask_family=costliest))
    num_blocks = setup.model.num_blocks
    if args.order > num_blocks:
        raise PipelineError(
            f"--order {args.order}: the network has L = {num_blocks} gated blocks; use --order {num_blocks} or less"
        )
    if args.subcube_size > num_blocks:
        raise PipelineError(
            f"--subcube-size {args.subcube_size}: the network has L = {num_blocks} gated blocks; use {num_blocks} or less"
        )
    design = walsh_design(num_blocks, args.random_masks, args.seed)
    random_ids, base_positions = random_pass_ids(design)
    draws = (
        draw_subcubes(num_blocks, args.subcube_size, args.subcubes, args.seed + SUBCUBE_SEED_OFFSET)
        if args.subcube_size
        else None
    )
    cost = step_cost(
        setup.model,
        setup.model.preprocess.crop,
        len(setup.samples),
        families,
        len(random_ids),
        [] if draws is None else draws.tolist(),
        setup.config.mask_chunk,
    )
    print(describe_cost(cost), flush=True)
    check_budget(cost, args.budget)
    if args.dry_run:
        return
    setup = replace(
        setup,
        config=setup.config.with_options(
            low_orders={"order_max": args.order, "bases": list(args.bases), "random_masks": args.random_masks}
        ),
    )
    dtype = MOBIUS_DTYPES[setup.config.mobius_dtype]
    corners, timing = run_per_image(
        setup,
        f"{STEP}/corners",
        lambda logits, labels: corner_reductions(logits, base_positions),
        description=f"∅, full and {len(random_ids) - 2} Walsh-design masks",
        mask_indices=random_ids,
    )
    predicted = torch.as_tensor(corners["predicted"])
    design_logits = torch.as_tensor(corners["design_logits"])
    arrays = {
        name: corners[name]
        for name in (
            "index",
            "label",
            "valid",
            "predicted",
            *(f"{kind}_{name}" for kind in ("corner_gap", "variance") for name in PROJECTIONS),
        )
    }
    arrays.update(walsh_per_image(design, corners["design_logits"], corners["predicted"]))
    sizes = reported_sizes(design.all_ids(), SIZE_LEAST)

    def add(part_timing: dict[str, float]) -> None:
        for name in ("wall_seconds", "images_evaluated"):
            timing[name] += part_timing[name]

    tables = {}
    for family in families:
        ids = family.mask_ids(num_blocks)
        set_ids = (ids if family.base == "off" else torch.sort(((1 << num_blocks) - 1) ^ ids).values).tolist()

        def reduce(
            logits: torch.Tensor,
            labels: torch.Tensor,
            index: torch.Tensor,
            ids: torch.Tensor = ids,
            base: str = family.base,
        ) -> dict[str, torch.Tensor]:
            surrogate = Surrogate(design.all_ids(), design_logits[index.cpu()], sizes) if base == "off" else None
            return family_reductions(logits, ids, num_blocks, base, predicted[index.cpu()], dtype, surrogate)

        part, part_timing = run_per_image(
            setup, f"{STEP}/{family.base}", reduce, description=family.describe(), pass_indices=True, mask_family=family
        )
        add(part_timing)
        arrays["valid"] = arrays["valid"] & part["valid"]
        energies = order_energies(part, set_ids, args.order)
        for name in PROJECTIONS:
            arrays[f"order_energy_{name}_{family.base}"] = energies[name]
            if family.base == "off":
                arrays[f"surrogate_r2_{name}"] = part[f"surrogate_r2_{name}"]
        valid = part["valid"].astype(bool)
        tables[family.base] = {
            str(size): largest_sets(part["energy_vector"][valid], set_ids, setup.model.block_names, size, LARGEST)
            for size in range(1, min(args.order, 3) + 1)
        }
    if draws is not None:
        means: dict[str, list[np.ndarray]] = {name: [] for name in PROJECTIONS}
        for number, blocks in enumerate(draws.tolist()):
            view = replace(
                setup,
                model=held_off_view(setup.model, blocks),
                config=setup.config.with_options(subcube={"blocks": blocks}),
            )
            part, part_timing = run_per_image(
                view,
                f"{STEP}/subcube_{number}",
                lambda logits, labels, index: subcube_reductions(logits, predicted[index.cpu()]),
                description=f"sub-cube {number + 1} of {len(draws)}: 2^{len(blocks)} masks of a held-off view",
                pass_indices=True,
            )
            add(part_timing)
            arrays["valid"] = arrays["valid"] & part["valid"]
            for name in PROJECTIONS:
                means[name].append(part[f"order_means_{name}"])
        for name in PROJECTIONS:
            arrays[f"order_means_{name}"] = np.stack(means[name], axis=1)  # (N, draws, u + 1)
    summary = build_summary(provenance(setup), arrays, tables, args, num_blocks, design, draws, sizes)
    previous = read_json_if_exists(Path(setup.config.output_dir) / "timing.json") or {}
    if not timing["images_evaluated"] and "cost_estimate" in previous:
        cost = previous["cost_estimate"]  # the estimate made before the images were evaluated, not a later call's
    path = write_results(setup, arrays, summary, {**timing, "cost_estimate": cost})
    report = Path(setup.config.output_dir) / "REPORT.md"
    atomic_write_text(
        report, report_markdown(summary, read_json_if_exists(Path(setup.config.output_dir) / "timing.json"))
    )
    print(f"wrote {path} and {report}")
