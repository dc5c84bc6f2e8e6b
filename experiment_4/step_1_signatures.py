"""Experiment 4, step 1 — per-image subset rankings (the raw material of expert-set signatures).

Question: do the dominant subsets depend on the input and on its class? This step evaluates every
image of a labelled sample list under all 2^L masks, takes the Möbius coefficients (in
--mobius-dtype) and ranks the 2^L subsets (the empty mask included) three ways: vector
‖Δ_S h‖₂, scalar |Δ_S h[c*]| at the full-mask predicted class c*, and scalar |Δ_S h[y]| at the
true label y (the earlier class control, which leaks the label; step 2 shows it beside the
leak-free one). Ties go to the lower mask index. It keeps the first
--store-K subsets of each ranking with their magnitudes (default: all 2^L when L ≤ 12, else the top
1024), the first --class-store-K subsets (ids only, default 64) of the scalar ranking in **every
class coordinate present in the sample list** (step 2's leak-free class control compares two images
in one coordinate), plus each image's full-mask logits and predicted class; step_2_overlap builds
the signatures from them.

Inputs:  --sample-index (a labelled per-class list from experiment_1.step_2_sample), shards in
         --data-dir, --arch/--weights.
Outputs: <output-dir>/signatures.pt (torch.save of a dict: per-image tensors index, label, valid,
         predicted, full_logits (N, C) float32, ranked_<ranking> (N, store_K) int16/int32 mask
         indices, magnitude_<ranking> (N, store_K) float32, ranked_class (N, M, class_store_K)
         int16/int32 mask indices in the M class coordinates; plus config, samples (source, row,
         label), rankings, num_subsets, store_k, class_coordinates (the M sorted labels),
         class_store_k), <output-dir>/signatures.npz (its compact, committed form: the prefixes step 2
         reads, small integer arrays; experiment_4.compact), <output-dir>/timing.json,
         <output-dir>/partial/ (resume state). Under torchrun, rank 0 writes.

    python -m experiment_4.step_1_signatures --sample-index experiment_1/sample_index_val.json \\
        --batch-size 8 --mask-chunk 256 --num-workers 8 --seed 0 --output-dir experiment_4/results
"""

from __future__ import annotations

from dataclasses import dataclass

from experiment_1.errors import run_cli
from experiment_1.run import Command, RunConfig, flag


@dataclass(frozen=True, kw_only=True)
class SignatureConfig(RunConfig):
    """The evaluation flags and Experiment 4's own."""

    store_k: int | None = flag(
        "ranked subsets kept per image and ranking (default: all 2^L when L ≤ 12, else 1024)",
        low=1,
        option="--store-K",
        default=None,
    )
    class_store_k: int | None = flag(
        "ranked subsets kept per image and class coordinate, for the class control (default: 64, or 2^L when smaller)",
        low=1,
        option="--class-store-K",
        default=None,
    )


COMMAND = Command(
    __doc__,
    SignatureConfig,
    "experiment_4.signatures_pass:EXPERIMENT_4",
    {"output_dir": "experiment_4/results", "sample_index": "experiment_1/sample_index_val.json"},
)
main = COMMAND.main


if __name__ == "__main__":
    run_cli(main)
