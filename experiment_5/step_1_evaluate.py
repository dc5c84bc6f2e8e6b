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

from experiment_1.errors import run_cli
from experiment_1.run import run_step
from experiment_5.difficulty_pass import EXPERIMENT_5


def main(argv: list[str] | None = None) -> None:
    run_step(
        EXPERIMENT_5, argv, __doc__, "experiment_5/results", default_sample_index="experiment_1/sample_index_val.json"
    )


if __name__ == "__main__":
    run_cli(main)
