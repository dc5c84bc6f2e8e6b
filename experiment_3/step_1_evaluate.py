"""Experiment 3, step 1 — top-K sparse reconstruction.

Question: is the Möbius decomposition sparse at the level of individual subsets?
Per image, all 2^L masks are evaluated and the Möbius coefficients taken (in --mobius-dtype); the
2^L coefficients (order 0 included) are ranked by magnitude — vector ‖Δ_S h‖₂ and scalar
|Δ_S h[c]|, c = argmax h(full) — and ĥ_K = Σ_{S ∈ top-K} Δ_S h is compared with h(full) for every
K in --ks (default 1, 2, 4, …, 2^L): captured energy Γ_K (share of Σ_S ‖Δ_S h‖²; also of the
scalar energy), relative L2 error and top-1 agreement. The same curves are computed for the
controls — random K subsets, order-matched random (the magnitude top-K's order histogram, random
within each order) and low-order-first (by increasing order, random within an order) —, each
drawn --num-random-seeds times, seeded per (seed, control, draw, image). Also per image: K_eff
(participation ratio of the vector and of the scalar energies), the smallest K capturing 90 % /
99 % of the energy and reaching relative error ≤ 0.1 (single-subset resolution), and the order
histogram of the magnitude top-K. The (N, 2^L, C) coefficients are never stored.

Inputs:  --sample-index (experiment_1.step_2_sample), shards in --data-dir, --arch/--weights.
Outputs: <output-dir>/summary.json (curves with 95 % bootstrap CIs, improvement over each control,
         K_eff, order histograms, the seed's numbers beside ours, configuration),
         <output-dir>/per_image.npz, <output-dir>/timing.json, <output-dir>/partial/ (resume state).

    python -m experiment_3.step_1_evaluate --sample-index experiment_1/sample_index.json \\
        --batch-size 8 --mask-chunk 256 --num-workers 8 --seed 0 --num-random-seeds 5 \\
        --output-dir experiment_3/results
"""

from __future__ import annotations

from dataclasses import dataclass

from experiment_1.errors import run_cli
from experiment_1.run import Command, RunConfig, flag


@dataclass(frozen=True, kw_only=True)
class TopKConfig(RunConfig):
    """The evaluation flags and Experiment 3's own."""

    num_random_seeds: int = flag("draws of each random control per image (default: %(default)s)", low=1, default=5)
    ks: list[int] | None = flag("the K grid, each K in 1 … 2^L (default: 1 2 4 … 2^L)", low=1, nargs="+", default=None)


COMMAND = Command(__doc__, TopKConfig, "experiment_3.topk_pass:EXPERIMENT_3", {"output_dir": "experiment_3/results"})
main = COMMAND.main


if __name__ == "__main__":
    run_cli(main)
