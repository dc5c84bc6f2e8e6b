"""Experiment 3A/3B, step 3 — residual scaling: the spectrum, κ and top-1 agreement as λ shrinks.

Question: does the interaction spectrum migrate to low orders when every residual branch is
scaled by λ < 1 (3A), what does that cost in predictions (3B), and does each order's energy follow
the λ^k law proved for smooth residual stacks?
For every λ in --lambdas (λ = 1 is always evaluated as the reference) all 2^L masks of every image
are evaluated with every residual branch scaled by λ (the model's own recursion, recorded in the
summary's config as gated_recursion) and Experiment 2's per-image statistics taken (order energies,
spectra, κ^v, κ^s, C_{≤3}, trunk share, both projections), plus the top-1 agreement of argmax
h_λ(full) with argmax h_1(full). The λ^k law: per order k, the slope of log sqrt(Ē_k(λ)) against
log λ over --fit-lambdas (default: the 3 smallest λs), Ē_k the mean over images of E_k, with a
bootstrap-over-images CI (experiment_2.scaling). Experiment 3C, the small-λ limit (experiment_2.limit):
per order the slope between successive λs and the limit slope over the smallest λs at which the
order clears the round-off floor of the network's arithmetic (float32 or --dtype float64), tested
against the λ^k law and the kink law of piecewise-linear activations; --smooth-activations runs
the same sweep on the smooth swap of the network (experiment_1.network.gating).

Inputs:  --sample-index (experiment_1.step_2_sample), shards in --data-dir, --arch/--weights.
Outputs: <output-dir>/summary_all.json (per-λ statistics with 95 % bootstrap CIs, κ monotonicity,
         slopes vs k, the small-λ limit block, configuration), <output-dir>/per_image.npz (arrays stacked over λ on axis 1),
         <output-dir>/timing.json, <output-dir>/partial/experiment_2.step_3_lambda_sweep/lambda_<λ>/ (resume state per λ and batch).

    python -m experiment_2.step_3_lambda_sweep --sample-index experiment_1/sample_index.json \\
        --batch-size 8 --mask-chunk 256 --num-workers 8 --seed 0 --output-dir experiment_2/results_lambda
"""

from __future__ import annotations

from experiment_1.errors import run_cli
from experiment_2.lambda_sweep.sweep import main

__all__ = ["main"]

if __name__ == "__main__":
    run_cli(main)
