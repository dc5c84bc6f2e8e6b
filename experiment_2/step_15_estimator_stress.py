"""Experiment 2, step 15 — do step 8's interval estimators hold where step 8 uses them, at L = 33 and 50?

Question: at the depths of the runs past the exhaustive pass (--depths, default L = 33 and 50) and at step 8's budgets
(--walsh-samples 1024 base masks; --subcube-draws 120 sub-cubes of --subcube-size 8 blocks), does every interval step 8
reports — the Walsh summaries (variance, influence, κ_W, κ_W / L, the stabilities, W_1 … W_3, the low-degree share)
and the sub-cube ē_j, j ≤ u — cover the exact value at its nominal 95 % without bias? Step 11 answers it on exhaustive
tables at L ≤ 16; here the functions are synthetic, with a spectrum known exactly at any L
(experiment_2/past_exhaustive/validation/synthetic.py): four families — low-degree, spread, heavy-tailed, and a product
that explodes with the blocks on as the uncalibrated random-init ResNets do — each with --columns outputs (the vector
projection) and its first output alone (the scalar one). Each (family, L, projection) is replicated --replications
times by the machinery of step 11 (experiment_2/past_exhaustive/validation/replications.py), judged with the coverage
band [90 %, 99 %] (a coverage read off 300 replications is within ±2.5 % of the true one) and |bias| < 1 SE; an estimator holds at a
depth when every family and projection passes.

Inputs:  none (the families are drawn by --seed).
Outputs: <output-dir>/summary.json, REPORT.md, partial/ (each function's cells, keyed by content; not committed).

    python -m experiment_2.step_15_estimator_stress --replications 300 --workers 1 --seed 0 \\
        --output-dir experiment_2/results_estimator_stress
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from experiment_1.errors import run_cli
from experiment_1.run import Command, flag, run_config


@dataclass(frozen=True)
class StressFlags:
    """The step's flags: the depths, the functions' outputs, the replications, step 8's budgets, the workers, the seed."""

    output_dir: Path = flag("where summary.json, REPORT.md and partial/ go", path="output")
    depths: list[int] = flag("L (default: %(default)s)", low=1, nargs="+", factory=lambda: [33, 50])
    columns: int = flag("outputs of the vector projection (default: %(default)s)", low=1, default=4)
    replications: int = flag("replications per cell (default: %(default)s)", low=2, default=300)
    walsh_samples: int = flag("m, step 8's default (default: %(default)s)", low=1, default=1024)
    subcube_size: int = flag("u, step 8's committed runs' (default: %(default)s)", low=1, default=8)
    subcube_draws: int = flag("step 8's default (default: %(default)s)", low=1, default=120)
    workers: int = flag("processes (same cells for any count; default: %(default)s)", low=1, default=1)
    seed: int = flag("the families' and replications' seed (default: %(default)s)", type=run_config.seed, default=0)

    def problems(self) -> list[str]:
        """A depth below the sub-cube size or past 62 (a mask is a 64-bit integer)."""
        if min(self.depths) < self.subcube_size or max(self.depths) > 62:
            return [f"--depths {' '.join(map(str, self.depths))}: every depth must lie between --subcube-size and 62"]
        return []


COMMAND = Command(__doc__, StressFlags, "experiment_2.past_exhaustive.validation.stress:run")
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
