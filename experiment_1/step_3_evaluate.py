"""Experiment 1, step 3 — naive subset summation vs Möbius reconstruction.

Question: does adding up subnetwork outputs reconstruct the network, or do we need Möbius?
Per image, all 2^L masks are evaluated, the Möbius coefficients taken, and three readings of the
set function are compared with the full network h(full): the Möbius sum Σ_S Δ_S h (exact up to
round-off, checked in float32 and float64), the naive sum Σ_S h(S) over all subnetworks, and the
first-order additive model h(∅) + Σ_l [h({l}) − h(∅)] — relative L2 error and top-1 agreement
each — plus the worst subset max_S ‖Σ_{T⊆S} Δ_T h − h(S)‖ / ‖h(S)‖, and full-mask top-1
accuracy where labels exist.

Inputs:  --sample-index (experiment_1.step_2_sample), shards in --data-dir, --arch/--weights.
Outputs: <output-dir>/summary.json (means with 95 % bootstrap CIs + configuration),
         <output-dir>/per_image.npz, <output-dir>/timing.json, <output-dir>/partial/ (resume state).

    python -m experiment_1.step_3_evaluate --sample-index experiment_1/sample_index.json \\
        --batch-size 8 --mask-chunk 256 --num-workers 8 --seed 0 --output-dir experiment_1/results
"""

from __future__ import annotations

from experiment_1.errors import run_cli
from experiment_1.run import Command, RunConfig

COMMAND = Command(
    __doc__, RunConfig, "experiment_1.reconstruction.single_pass:EXPERIMENT_1", {"output_dir": "experiment_1/results"}
)
main = COMMAND.main


if __name__ == "__main__":
    run_cli(main)
