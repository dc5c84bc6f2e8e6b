"""Experiment 5, step 1 — per-image difficulty and interaction complexity.

Question: do hard images use more, or higher-order, block interactions?
Per labelled image, all 2^L masks are evaluated and the Möbius coefficients taken (in
--mobius-dtype). From h(full) and the true label: five difficulty scores — cross-entropy,
1 − p(true), 1 − max softmax, softmax entropy, −(top-1 − top-2 logit margin) — and correct /
incorrect (experiment_5.difficulty). From the coefficients: k̄, κ and C_{≤3} (vector and scalar
projections), N_eff^v (order 0 excluded), K_τ^err for every τ and K_η^mass for every η (vector
magnitude ranking, order 0 included), and ‖h(full)‖ (experiment_5.complexity). Nothing of size
2^L × C is kept.

Inputs:  --sample-index with true labels (a per-class list of validation images from
         experiment_1.step_2_sample), shards in --data-dir, --arch/--weights, --tau/--extra-taus,
         --eta/--extra-etas.
Outputs: <output-dir>/per_image.pt (sample references, labels, scores, measures, configuration),
         <output-dir>/timing.json, <output-dir>/partial/experiment_5.step_1_evaluate/ (resume state).

    python -m experiment_5.step_1_evaluate --sample-index experiment_1/sample_index_val.json \\
        --batch-size 8 --mask-chunk 256 --num-workers 8 --seed 0 --output-dir experiment_5/results
"""
from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

import numpy as np

from experiment_1 import distributed
from experiment_1.errors import run_cli
from experiment_1.io_utils import atomic_torch_save
from experiment_1.pipeline import MOBIUS_DTYPES, EvaluationSetup, add_evaluation_arguments, build_setup, provenance, run_per_image, write_timing
from experiment_5.evaluation import DEFAULT_EXTRA_ETAS, DEFAULT_EXTRA_TAUS, batch_arrays, check_labelled, per_image_record, sample_pool, thresholds


def evaluate(setup: EvaluationSetup, taus: list[float], etas: list[float]) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Per-image difficulty scores and complexity measures of every image (:func:`experiment_5.evaluation.batch_arrays`), resumably."""
    compute = partial(batch_arrays, taus=taus, etas=etas, dtype=MOBIUS_DTYPES[setup.args.mobius_dtype], sample_index=str(setup.args.sample_index))
    return run_per_image(setup, "experiment_5.step_1_evaluate/all_masks", compute, description="Exp 5 difficulty/complexity")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_evaluation_arguments(parser, "experiment_5/results", default_sample_index="experiment_1/sample_index_val.json")
    parser.add_argument("--tau", type=float, default=0.1, help="relative-error threshold of K_τ^err, the headline one (default: %(default)s)")
    parser.add_argument("--extra-taus", type=float, nargs="*", default=list(DEFAULT_EXTRA_TAUS), help="further τ also recorded (default: %(default)s); where K_τ^err sits at 2^L on most images, "
                        "larger τ (e.g. 0.4 0.5 0.6 0.7) add the grid where it moves — another τ set is another run, not a resume")
    parser.add_argument("--eta", type=float, default=0.9, help="energy fraction of K_η^mass, the headline one (default: %(default)s)")
    parser.add_argument("--extra-etas", type=float, nargs="*", default=list(DEFAULT_EXTRA_ETAS), help="further η also recorded (default: %(default)s)")
    args = parser.parse_args(argv)
    taus = thresholds(args.tau, args.extra_taus, "--tau/--extra-taus", upper_inclusive=False)
    etas = thresholds(args.eta, args.extra_etas, "--eta/--extra-etas", upper_inclusive=True)
    setup = build_setup(args)
    check_labelled(setup)
    setup.config.update(taus=taus, etas=etas)  # part of the resume key: other thresholds never mix with these batches
    pool = sample_pool(setup)  # before evaluating: a pattern that matches no shard fails now, not after the last batch
    arrays, timing = evaluate(setup, taus, etas)
    if not distributed.is_main():  # under torchrun, rank 0 writes
        return
    config = provenance(setup)
    record = per_image_record(setup, arrays, config, pool)
    path = Path(args.output_dir) / "per_image.pt"
    atomic_torch_save(record, path)
    write_timing(setup, timing, config["device_name"])
    valid = arrays["valid"].astype(bool)
    print(f"wrote {path}: {record['num_valid']} images, top-1 {arrays['correct'][valid].mean():.1%}, "
          f"mean K_τ^err (τ = {taus[0]:g}) {arrays['k_err'][valid, 0].mean():.3g}, mean N_eff^v {np.nanmean(arrays['n_eff_vector'][valid]):.3g}")


if __name__ == "__main__":
    run_cli(main)
