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

from dataclasses import dataclass

from experiment_1.errors import run_cli
from experiment_1.run import Command, RunConfig, flag
from experiment_4.step_2_overlap import DEFAULT_NN_K


@dataclass(frozen=True, kw_only=True)
class ShapleyConfig(RunConfig):
    """The evaluation flags and the expert-set size (checked against 2^L once the network is built)."""

    nn_k: int = flag(
        "the expert-set size whose subsets' blocks are counted (default: %(default)s, step_2_overlap's --nn-K)",
        low=1,
        option="--nn-K",
        default=DEFAULT_NN_K,
    )


COMMAND = Command(
    __doc__,
    ShapleyConfig,
    "experiment_4.shapley_pass:EXPERIMENT_4_SHAPLEY",
    {"output_dir": "experiment_4/results_shapley", "sample_index": "experiment_1/sample_index_val.json"},
)
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
