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

from dataclasses import dataclass

from experiment_1.errors import run_cli
from experiment_1.run import Command, RunConfig, flag


@dataclass(frozen=True, kw_only=True)
class DifficultyConfig(RunConfig):
    """The evaluation flags and Experiment 5's thresholds: τ in (0, 1), η in (0, 1]."""

    tau: float = flag(
        "relative-error threshold of K_τ^err, the headline one (default: %(default)s)", type=float, default=0.1
    )
    extra_taus: list[float] = flag(
        "further τ also recorded (default: %(default)s); where K_τ^err sits at 2^L on most images, larger τ "
        "(e.g. 0.4 0.5 0.6 0.7) add the grid where it moves — another τ set is another run, not a resume",
        type=float,
        nargs="*",
        factory=lambda: [0.05, 0.2, 0.3],
    )
    eta: float = flag("energy fraction of K_η^mass, the headline one (default: %(default)s)", type=float, default=0.9)
    extra_etas: list[float] = flag(
        "further η also recorded (default: %(default)s)", type=float, nargs="*", factory=lambda: [0.5, 0.75, 0.95]
    )

    def problems(self) -> list[str]:
        """A threshold outside its range."""
        return [
            f"{flags} {value:g}: must lie in (0, 1{']' if closed else ')'}"
            for flags, values, closed in (
                ("--tau/--extra-taus", [self.tau, *self.extra_taus], False),
                ("--eta/--extra-etas", [self.eta, *self.extra_etas], True),
            )
            for value in values
            if not (0 < value < 1 or (closed and value == 1))
        ]


COMMAND = Command(
    __doc__,
    DifficultyConfig,
    "experiment_5.difficulty_pass:EXPERIMENT_5",
    {"output_dir": "experiment_5/results", "sample_index": "experiment_1/sample_index_val.json"},
)
main = COMMAND.main


if __name__ == "__main__":
    run_cli(main)
