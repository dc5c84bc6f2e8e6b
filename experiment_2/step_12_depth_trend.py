"""Experiment 2, step 12 — does the interaction order rise with depth, in each basis, read from step 8's runs?

Question: from one depth to the next (e.g. ResNet-50, L = 16 → ResNet-101, L = 33 → ResNet-152, L = 50), does the
interaction order rise — in the Möbius basis, the mean order of the exact per-coefficient energies of orders 1 … k,
m̄ = Σ_j j·ē_j / Σ_j ē_j (ē_j = E_j / C(L, j), at the all-off network and about the full network); in the Walsh basis,
the mean degree per block κ_W / L, and the low-degree share (W_1 + W_2 + W_3) / Var h falling? Every quantity decided
here is a ratio of energies of one function, unchanged when the output is scaled: a ratio of a corner's low-order
energy to Var h or to ‖h(full) − h(∅)‖² is not (the corner's energies and the function's spread over all masks grow
differently when the activations grow with depth), so those are reported beside ē_j and decided nothing. Each change is
the paired bootstrap CI over the images both runs evaluated of the mean change, the Walsh ones widened to cover every
image's own interval of the change (from the two runs' per-image 95 % intervals: one seeded design serves every image
of a run, so its sampling error is shared by them; experiment_2/past_exhaustive/verdicts.py, depth_change_verdict);
where the CI straddles 0 it cannot tell, and where an estimate of either run lies outside its quantity's range
(κ_W / L in [1/L, 1], the share in [0, 1]) it is "cannot tell (estimator out of range)". A share change is saturated
where either run's own share verdict is. The two bases are set side by side (``basis.*``): both decided the same way,
"Möbius only" (the Walsh basis does not decide), "reverses in the Walsh basis" (decided the other way).

A random-init run whose batch norm kept its initial statistics is refused: its activations grow or vanish with depth,
so every change across depths measures that growth (step 8 with --calibrate-batchnorm N). Reads only the runs'
summary.json, evaluates nothing.

Inputs:  --runs: two or more step-8 output folders (summary.json each), any order (sorted by L).
Outputs: <output-dir>/summary.json, REPORT.md.

    python -m experiment_2.step_12_depth_trend --runs experiment_2/results_low_orders_resnet50_random_64px \\
        experiment_2/results_low_orders_resnet101_random_64px experiment_2/results_low_orders_resnet152_random_64px \\
        --output-dir experiment_2/results_low_orders_depth_trend_random_64px
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from experiment_1.errors import run_cli
from experiment_1.run import Command, flag, run_config


@dataclass(frozen=True)
class DepthTrendFlags:
    """The step's flags: two or more step-8 folders, where the trend goes, the bootstrap's seed."""

    runs: list[Path] = flag(
        "step-8 output folders (two or more)",
        nargs="+",
        path="folder",
        what="step-8 output folder",
        fix="run python -m experiment_2.step_8_low_orders into it first",
    )
    output_dir: Path = flag("where summary.json and REPORT.md go", path="output")
    seed: int = flag("the bootstrap's seed (default: %(default)s)", type=run_config.seed, default=0)

    def problems(self) -> list[str]:
        """Fewer than two runs."""
        if len(self.runs) < 2:
            return [f"--runs: a change with depth needs two or more step-8 folders, got {len(self.runs)}"]
        return []


COMMAND = Command(__doc__, DepthTrendFlags, "experiment_2.past_exhaustive.depth_trend:run")
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
