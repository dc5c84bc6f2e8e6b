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

import argparse

from experiment_1.errors import run_cli
from experiment_1.pipeline import add_evaluation_arguments, build_setup, provenance, run_per_image, write_results
from experiment_1.reconstruction import reconstruction_metrics
from experiment_1.reconstruction_summary import summarize


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_evaluation_arguments(parser, "experiment_1/results")
    args = parser.parse_args(argv)
    setup = build_setup(args)
    arrays, timing = run_per_image(setup, "experiment_1.step_3_evaluate/all_masks", reconstruction_metrics, description="Exp 1 all masks")
    summary = summarize(arrays, provenance(setup), args.seed)
    path = write_results(setup, arrays, summary, timing)
    mobius = summary["metrics"]["mobius_rel_error_float32"]["mean"]
    naive = summary["metrics"]["naive_sum_rel_error"]["mean"]
    print(f"wrote {path}: Möbius rel. error {mobius:.2e} (float32), naive-sum rel. error {naive:.3g}")


if __name__ == "__main__":
    run_cli(main)
