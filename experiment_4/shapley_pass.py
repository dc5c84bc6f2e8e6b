"""Experiment 4, step 4 — the blocks' Shapley values per image: which blocks carry each image's prediction.

Question: which residual blocks carry each image's prediction, and how much does that vary over images and classes?
Experiment 4's expert sets name each image's top-K subsets by |Δ_S h[c*]|; the Shapley value of a block nets every
coefficient it takes part in, φ_l = Σ_{S ∋ l} Δ_S / |S|, into one signed number per block, and the blocks' values sum
exactly to the predicted-class logit gain h(full)[c*] − h(∅)[c*]. This step evaluates every image of a labelled
sample list under all 2^L masks, takes the Möbius coefficients (in --mobius-dtype) and keeps per image the blocks'
Shapley and Banzhaf values in the scalar projection (the predicted class), the norms of their per-class Shapley vectors
(the vector projection), and each block's count in the image's top---nn-K subsets (experiment_4.shapley). The indices
need every order of Δ_S, so they exist for exhaustive runs only (L ≤ 14 here), never past 2^L.

Inputs:  --sample-index (a labelled list from experiment_1.step_2_sample), shards in --data-dir, --arch/--weights,
         --nn-K (default 32, step_2_overlap's).
Outputs: <output-dir>/shapley.json (per-block distributions over images, the between-class share of variance, the
         comparison with the expert sets; no verdict), <output-dir>/per_image.npz (shapley_scalar, banzhaf_scalar,
         shapley_vector_norm (N, L), gain_scalar, predicted, expert_set_membership (N, L), expert_set_top, index,
         label, valid), <output-dir>/timing.json, <output-dir>/partial/ (resume state). Then step_5_shapley_plot.

    python -m experiment_4.step_4_shapley --arch efficientnet_lite0 --weights pretrained \\
        --sample-index experiment_1/sample_index_sample_val_min6.json --data-dir imagenet-1k/sample-1750 \\
        --limit 300 --output-dir experiment_4/results_mine_shapley
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from experiment_1.errors import run_cli
from experiment_1.run import (
    MOBIUS_DTYPES,
    BatchFunction,
    EvaluationSetup,
    ExperimentPass,
    image_counts,
    provenance,
    run_config,
    run_step,
    valid_images,
    write_results,
)
from experiment_4.shapley import DEFAULT_NN_K, shapley_batch, summarize
from experiment_4.signatures_pass import check_labelled, resolve_store_k

STAGE = "experiment_4.step_4_shapley/shapley"
SUMMARY_NAME = "shapley.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--nn-K",
        dest="nn_k",
        type=run_config.positive_int,
        default=DEFAULT_NN_K,
        help="the expert-set size whose subsets' blocks are counted (default: %(default)s, step_2_overlap's --nn-K)",
    )


def prepare(setup: EvaluationSetup) -> dict[str, Any]:
    """Labels checked; --nn-K checked against 2^L: an option of the configuration (the resume key)."""
    check_labelled(setup)
    return {"nn_k": resolve_store_k("--nn-K", setup.args.nn_k, DEFAULT_NN_K, setup.model.num_blocks)}


def batch_function(setup: EvaluationSetup) -> BatchFunction:
    """:func:`experiment_4.shapley.shapley_batch` with the run's Möbius dtype and expert-set size."""
    dtype, nn_k = MOBIUS_DTYPES[setup.config.mobius_dtype], setup.config["nn_k"]

    def compute(logits: Any, labels: Any) -> dict[str, Any]:
        return shapley_batch(logits, dtype, nn_k)

    return compute


def finish(setup: EvaluationSetup, arrays: dict[str, np.ndarray], timing: dict[str, Any]) -> None:
    """Write shapley.json, per_image.npz and timing; one line on stdout."""
    counts = image_counts(valid_images(arrays))
    summary = summarize(arrays, provenance(setup), counts, setup.config["nn_k"])
    path = write_results(setup, arrays, summary, timing, summary_name=SUMMARY_NAME)
    top = max(summary["blocks"], key=lambda block: block["share_top"])
    print(
        f"wrote {path}: {summary['num_valid']} images; block {top['name']} carries the largest Shapley value of the "
        f"predicted class in {top['share_top']:.0%} of them"
    )


EXPERIMENT_4_SHAPLEY = ExperimentPass(4, STAGE, "Exp 4 Shapley", batch_function, finish, add_arguments, prepare)


def main(argv: list[str] | None = None) -> None:
    run_step(
        EXPERIMENT_4_SHAPLEY,
        argv,
        __doc__,
        "experiment_4/results_shapley",
        default_sample_index="experiment_1/sample_index_val.json",
    )


if __name__ == "__main__":
    run_cli(main)
