"""Experiment 2, step 8 — exact low interaction orders at both corners, at any depth.

Question: what are the low-order Möbius coefficients of the logits — at the all-off network and about the full
network (the lesion view: one block deleted, pairs, triples) — for a network too deep for all 2^L masks?
Per image the masks within k gates (--order, default 3) of a corner are evaluated by the family walk of the prefix
tree (experiment_1/network/engines.py, evaluate_family_tree), and the Möbius transform on that family gives every
Δ_S, |S| ≤ k, exactly. Reported per projection (vector ‖·‖² over classes; scalar, the class argmax h(full)): the
order energies E_1 … E_k, the per-coefficient means ē_j = E_j / C(L, j), the largest single blocks, pairs and
triples, and only ratios that are observable here: E_j / ‖h(full) − h(∅)‖² (exact) and E_j / Var h, Var h the
variance of h over a uniformly random mask, estimated from --random-masks masks (unbiased sample variance).
The spectrum p_j, C≤k, κ and the peak order need every order's energy (all 2^L coefficients) and are not computed.

Inputs:  --sample-index, shards in --data-dir, --arch/--weights (resnet101, resnet152 …), --resolution.
Outputs: <output-dir>/summary.json, REPORT.md, per_image.npz, timing.json, partial/ (resume state).

    python -m experiment_2.step_8_low_orders --arch resnet152 --weights random --resolution 64 --order 3 \\
        --data-dir imagenet-1k/sample-1750 --sample-index experiment_1/sample_index_sample_test.json --limit 2 \\
        --batch-size 1 --num-workers 0 --seed 0 --output-dir experiment_2/results_low_orders_resnet152_random_64px
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from math import comb
from pathlib import Path
from typing import Any

import numpy as np
import torch

from experiment_1.errors import PipelineError, run_cli
from experiment_1.files import atomic_write_text, read_json_if_exists
from experiment_1.network import MaskFamily
from experiment_1.report import ReportDocument, bootstrap_mean_ci_rows, format_number, markdown_table
from experiment_1.run import (
    MOBIUS_DTYPES,
    RunConfig,
    add_evaluation_arguments,
    build_setup,
    image_counts,
    provenance,
    run_per_image,
    valid_images,
    write_results,
)
from experiment_2.low_orders import (
    PROJECTIONS,
    corner_reductions,
    family_reductions,
    largest_sets,
    order_energies,
    per_coefficient,
    random_mask_ids,
)

STEP = "experiment_2.step_8_low_orders"
BASES = ("off", "on")
LARGEST = 5  # sets listed per order
EXHAUSTIVE_LIMIT = 16  # the depth up to which the exhaustive step 1 gives p_k, C≤3, κ and the peak order
QUESTION = (
    "What are the exact low-order Möbius coefficients of the logits at the all-off network and about the full network "
    "(single blocks, pairs, triples) for a network too deep for all 2^L masks?"
)


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_evaluation_arguments(parser, "experiment_2/results_low_orders")
    parser.add_argument(
        "--order", type=positive_int, default=3, help="k: every Δ_S with |S| ≤ k (default: %(default)s)"
    )
    parser.add_argument(
        "--bases",
        nargs="+",
        choices=BASES,
        default=list(BASES),
        help="corners: off (the all-off network), on (the full network) (default: both)",
    )
    parser.add_argument(
        "--random-masks",
        type=positive_int,
        default=256,
        help="uniformly random masks per image for Var h (at least 2; default: %(default)s)",
    )
    args = parser.parse_args(argv)
    if args.random_masks < 2:
        raise PipelineError(f"--random-masks {args.random_masks}: the sample variance needs at least 2 masks")
    return args


def projection_summary(
    energies: np.ndarray, gap: np.ndarray, variance: np.ndarray, num_blocks: int, seed: int
) -> dict[str, Any]:
    """E_j, ē_j and the two observable ratios for j = 1 … k (means over images, bootstrap CIs)."""
    low = energies[:, 1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        to_gap, to_variance = low / gap[:, None], low / variance[:, None]
    return {
        "order_0_energy": bootstrap_mean_ci_rows(energies[:, :1], seed=seed),
        "order_energy": bootstrap_mean_ci_rows(low, seed=seed),
        "per_coefficient_energy": bootstrap_mean_ci_rows(per_coefficient(energies, num_blocks)[:, 1:], seed=seed),
        "ratio_to_corner_gap": bootstrap_mean_ci_rows(to_gap, seed=seed),
        "ratio_to_variance": bootstrap_mean_ci_rows(to_variance, seed=seed),
    }


def build_summary(
    config: dict[str, Any],
    arrays: dict[str, np.ndarray],
    tables: dict[str, dict[str, Any]],
    order: int,
    num_blocks: int,
    random_masks: int,
    seed: int,
) -> dict[str, Any]:
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
    return {
        "experiment": "experiment_2_low_orders",
        "question": QUESTION,
        **image_counts(valid),
        "num_blocks": num_blocks,
        "order_max": order,
        "orders": list(range(1, order + 1)),
        "binomial": [comb(num_blocks, j) for j in range(1, order + 1)],
        "random_masks_per_image": random_masks,
        "corner_gap": {
            name: bootstrap_mean_ci_rows(corners[name]["corner_gap"][:, None], seed=seed) for name in PROJECTIONS
        },
        "variance": {
            name: bootstrap_mean_ci_rows(corners[name]["variance"][:, None], seed=seed) for name in PROJECTIONS
        },
        "bases": bases,
        "exact": [
            "every Möbius coefficient Δ_S with |S| ≤ k at each evaluated corner (the family walk and the transform on the family)",
            "E_j and ē_j = E_j / C(L, j) for j ≤ k",
            "‖h(full) − h(∅)‖² and E_j / ‖h(full) − h(∅)‖²",
        ],
        "estimated": [
            f"Var h, the variance of h over a uniformly random mask: unbiased sample variance of {random_masks} seeded random masks per image "
            "(E_j / Var h is a ratio to that estimate)"
        ],
        "out_of_reach": [
            f"p_j = E_j / Σ_(i≥1) E_i, C≤k, κ and the peak order: their denominator is the energy of all 2^L − 1 coefficients, "
            f"which no family of low orders contains (at L ≤ {EXHAUSTIVE_LIMIT} the exhaustive step 1 gives them; here L = {num_blocks})",
            f"orders above k = {order}: not evaluated",
        ],
        "config": config,
    }


def report_markdown(summary: dict[str, Any], timing: dict[str, Any] | None) -> str:
    """REPORT.md, generated from summary.json."""
    config, orders = summary["config"], summary["orders"]
    results = []
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
    results.append(
        "Exact: "
        + "; ".join(summary["exact"])
        + ". Estimated: "
        + "; ".join(summary["estimated"])
        + ". Out of reach: "
        + "; ".join(summary["out_of_reach"])
        + "."
    )
    method = (
        f"Masks within k = {summary['order_max']} gates of each corner, evaluated by the family walk of the prefix tree at {config['input_size']} px "
        f"(L = {summary['num_blocks']}); Möbius coefficients by the bit-by-bit transform on the family (exact on a down-closed set), in "
        f"`{config['mobius_dtype']}`; Var h from {summary['random_masks_per_image']} seeded uniformly random masks per image. Means over images "
        "with percentile-bootstrap 95 % CIs in summary.json."
    )
    weights = (
        "random-init weights: a null, not a finding about the trained network"
        if config["weights"] == "random"
        else f"weights {config['weights']}"
    )
    return ReportDocument(
        title=f"Experiment 2 — exact low orders at both corners ({config['arch']}, L = {summary['num_blocks']}, {config['input_size']} px)",
        summary=summary,
        method=method,
        results=results,
        seed_rows=[],
        seed_source="the seed reports no low-order table past the exhaustive limit",
        verdict=[f"No verdict: a measurement ({weights})."],
        generator=STEP,
        timing=timing,
        verdicts=[],
    ).render()


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    families = [MaskFamily(args.order, base) for base in args.bases]
    costliest = max(
        families, key=lambda family: family.base == "on"
    )  # the full-network base runs whole blocks on its saturated states
    setup = build_setup(args, replace(RunConfig.from_flags(args), mask_family=costliest))
    num_blocks = setup.model.num_blocks
    if args.order > num_blocks:
        raise PipelineError(
            f"--order {args.order}: the network has L = {num_blocks} gated blocks; use --order {num_blocks} or less"
        )
    setup = replace(
        setup,
        config=setup.config.with_options(
            low_orders={"order_max": args.order, "bases": list(args.bases), "random_masks": args.random_masks}
        ),
    )
    dtype = MOBIUS_DTYPES[setup.config.mobius_dtype]
    random_ids = random_mask_ids(num_blocks, args.random_masks, args.seed)
    corners, timing = run_per_image(
        setup,
        f"{STEP}/corners",
        lambda logits, labels: corner_reductions(logits),
        description=f"∅, full and {args.random_masks} random masks",
        mask_indices=random_ids,
    )
    predicted = torch.as_tensor(corners["predicted"])
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
            return family_reductions(logits, ids, num_blocks, base, predicted[index.cpu()], dtype)

        part, part_timing = run_per_image(
            setup, f"{STEP}/{family.base}", reduce, description=family.describe(), pass_indices=True, mask_family=family
        )
        timing = {name: timing[name] + part_timing[name] for name in ("wall_seconds", "images_evaluated")}
        arrays["valid"] = arrays["valid"] & part["valid"]
        energies = order_energies(part, set_ids, args.order)
        for name in PROJECTIONS:
            arrays[f"order_energy_{name}_{family.base}"] = energies[name]
        valid = part["valid"].astype(bool)
        tables[family.base] = {
            str(size): largest_sets(part["energy_vector"][valid], set_ids, setup.model.block_names, size, LARGEST)
            for size in range(1, min(args.order, 3) + 1)
        }
    summary = build_summary(provenance(setup), arrays, tables, args.order, num_blocks, args.random_masks, args.seed)
    path = write_results(setup, arrays, summary, timing)
    report = Path(setup.config.output_dir) / "REPORT.md"
    atomic_write_text(
        report, report_markdown(summary, read_json_if_exists(Path(setup.config.output_dir) / "timing.json"))
    )
    print(f"wrote {path} and {report}")


if __name__ == "__main__":
    run_cli(main)
