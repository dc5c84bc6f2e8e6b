"""Experiment 3C, step 6 — the top-1 cost of the smooth activation swap.

Question: what does --smooth-activations (every ReLU → Softplus_β, every ReLU6 → Softplus_β(x) −
Softplus_β(x − 6), weights kept; experiment_1/network/gating.py) cost the network in top-1 accuracy?
The full mask at λ = 1 is evaluated once with the network's own activations and once with the swap
(β from --smooth-activations, default 10 when the flag is absent), on the same labelled images;
both accuracies, their paired difference (bootstrap over images) and the exact McNemar test.
One mask per image is evaluated by the naive engine (a plain forward), so --engine is not used and
the configuration records engine naive.

Inputs:  --sample-index (labelled images, e.g. experiment_1/sample_index_sample_val_min6.json),
         shards in --data-dir, --arch/--weights; the other evaluation flags as every step.
Outputs: <output-dir>/swap_cost.json (both top-1s and the difference with 95 % CIs, the 2 × 2
         counts, prediction agreement, the verdict, configuration), REPORT.md, per_image.npz
         (both predictions), timing.json, partial/ (resume state).

    python -m experiment_2.step_6_swap_cost --arch efficientnet_lite0 --weights pretrained \\
        --data-dir imagenet-1k/sample-1750 --sample-index experiment_1/sample_index_sample_val_min6.json \\
        --num-workers 0 --seed 0 --output-dir experiment_2/results_3c_efficientnet_lite0_swap_cost
"""

from __future__ import annotations

from experiment_1.errors import run_cli
from experiment_1.run import Command, RunConfig

COMMAND = Command(
    __doc__, RunConfig, "experiment_2.limit.swap_cost_pass:run", {"output_dir": "experiment_2/results_3c_swap_cost"}
)
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
