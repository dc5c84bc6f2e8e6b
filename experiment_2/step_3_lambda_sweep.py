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

import math
from dataclasses import dataclass

from experiment_1.errors import PipelineError, run_cli
from experiment_1.run import UNSCALED, Command, RunConfig, flag

DEFAULT_FIT_COUNT = 3
DEFAULT_SLOPE_TOLERANCE = 0.25  # an order follows the λ^k law when |slope − k| ≤ this


def sweep_lambdas(requested: list[float]) -> list[float]:
    """The λs to evaluate: the requested ones plus λ = 1, largest first; one-line errors for bad values."""
    bad = [value for value in requested if not value > 0 or not math.isfinite(value)]
    if bad:
        raise PipelineError(f"--lambdas {bad[0]:g}: every λ must be a positive finite number (log λ is fitted)")
    if len(set(requested)) != len(requested):
        raise PipelineError(f"--lambdas {' '.join(f'{value:g}' for value in requested)}: contains duplicates")
    return sorted(set(requested) | {UNSCALED}, reverse=True)


def choose_fit_lambdas(evaluated: list[float], requested: list[float] | None) -> list[float]:
    """The λs of the slope fit: ``requested`` (each must be evaluated), else the smallest three; at least two."""
    if requested is None:
        chosen = sorted(evaluated)[:DEFAULT_FIT_COUNT]
    else:
        missing = [value for value in requested if value not in evaluated]
        if missing:
            raise PipelineError(
                f"--fit-lambdas {missing[0]:g} is not among the evaluated λs ({' '.join(f'{value:g}' for value in evaluated)}); add it to --lambdas"
            )
        chosen = sorted(set(requested))
    if len(chosen) < 2:
        raise PipelineError(
            f"the slope fit needs at least two distinct λs; got {' '.join(f'{value:g}' for value in chosen)} (set --lambdas / --fit-lambdas)"
        )
    return sorted(chosen, reverse=True)


@dataclass(frozen=True, kw_only=True)
class LambdaSweepConfig(RunConfig):
    """The evaluation flags and the sweep's own."""

    lambdas: list[float] = flag(
        "residual scales λ to sweep; λ = 1 is always added (default: %(default)s)",
        type=float,
        nargs="+",
        factory=lambda: [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.2, 0.1],
    )
    fit_lambdas: list[float] | None = flag(
        f"λs of the λ^k slope fit, each in --lambdas (default: the {DEFAULT_FIT_COUNT} smallest)",
        type=float,
        nargs="+",
        default=None,
    )
    slope_tolerance: float = flag(
        "an order follows the λ^k law when |slope − k| ≤ this (default: %(default)s)",
        type=float,
        default=DEFAULT_SLOPE_TOLERANCE,
    )

    def problems(self) -> list[str]:
        """A λ that cannot be fitted, or a fit without two evaluated λs."""
        try:
            choose_fit_lambdas(sweep_lambdas(self.lambdas), self.fit_lambdas)
        except PipelineError as error:
            return [str(error)]
        return []


COMMAND = Command(
    __doc__, LambdaSweepConfig, "experiment_2.lambda_sweep.sweep:run", {"output_dir": "experiment_2/results_lambda"}
)
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
