"""Experiment 2, step 1 — the interaction-order spectrum.

Question: how is the Möbius energy of the logits distributed across interaction orders?
Per image, all 2^L masks are evaluated and the Möbius coefficients taken (in --mobius-dtype);
for the vector projection (‖Δ_S h‖² over classes) and the scalar one ((Δ_S h[c])², c = argmax
h(full)) the order energies E_k = Σ_{|S|=k} energy(Δ_S h), k = 0 … L, give the interaction
spectrum p_k = E_k / Σ_{j≥1} E_j (k ≥ 1), its peak order, κ = Σ_{k≥1} k·p_k, C_{≤3} = Σ_{k≤3} p_k
and the trunk share E_0 / Σ_j E_j. The binomial null (every coefficient the same energy) is
reported beside them; the random-init null is this same step with --weights random.

Inputs:  --sample-index (experiment_1.step_2_sample), shards in --data-dir, --arch/--weights.
Outputs: <output-dir>/summary.json (means with 95 % bootstrap CIs, distributions, binomial null,
         configuration), <output-dir>/per_image.npz, <output-dir>/timing.json,
         <output-dir>/partial/ (resume state).

    python -m experiment_2.step_1_evaluate --sample-index experiment_1/sample_index.json \\
        --batch-size 8 --mask-chunk 256 --num-workers 8 --seed 0 --output-dir experiment_2/results
    python -m experiment_2.step_1_evaluate --weights random --output-dir experiment_2/results_random
"""

from __future__ import annotations

from experiment_1.errors import run_cli
from experiment_1.run import Command, RunConfig

COMMAND = Command(
    __doc__, RunConfig, "experiment_2.spectrum.evaluation:EXPERIMENT_2", {"output_dir": "experiment_2/results"}
)
main = COMMAND.main


if __name__ == "__main__":
    run_cli(main)
