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

import argparse
from functools import partial

import numpy as np

from experiment_1 import arg_types
from experiment_1.errors import run_cli
from experiment_1.pipeline import MOBIUS_DTYPES, EvaluationSetup, add_evaluation_arguments, build_setup, provenance, run_per_image, write_results
from experiment_3.aggregate import summarize
from experiment_3.evaluation import ERROR_THRESHOLDS, MASS_FRACTIONS, batch_arrays, check_ks


def evaluate_topk(setup: EvaluationSetup) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Per-image top-K arrays (:func:`experiment_3.evaluation.batch_arrays`) of every image, resumably."""
    compute = partial(batch_arrays, config=setup.config, dtype=MOBIUS_DTYPES[setup.args.mobius_dtype])
    return run_per_image(setup, "experiment_3.step_1_evaluate/all_masks", compute, description="Exp 3 top-K", pass_indices=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_evaluation_arguments(parser, "experiment_3/results")
    parser.add_argument("--num-random-seeds", type=arg_types.positive_int, default=5, help="draws of each random control per image (default: %(default)s)")
    parser.add_argument("--ks", type=arg_types.positive_int, nargs="+", default=None, help="the K grid, each K in 1 … 2^L (default: 1 2 4 … 2^L)")
    args = parser.parse_args(argv)
    setup = build_setup(args)
    setup.config.update(
        ks=check_ks(args.ks, setup.model.num_blocks),
        num_random_seeds=args.num_random_seeds,
        mass_fractions=list(MASS_FRACTIONS),
        error_thresholds=list(ERROR_THRESHOLDS),
    )
    arrays, timing = evaluate_topk(setup)
    summary = summarize(arrays, provenance(setup), args.seed)
    path = write_results(setup, arrays, summary, timing)
    grid = summary["sources"]["magnitude_vector"]["grid_k_reaching"]
    print(f"wrote {path}: vector ranking — mean Γ_K ≥ 90 % from K = {grid['captured_energy_0.9']}, "
          f"top-1 agreement ≥ 90 % from K = {grid['top1_agreement_0.9']} (of {summary['num_masks']} subsets)")


if __name__ == "__main__":
    run_cli(main)
