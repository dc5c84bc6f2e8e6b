"""Experiment 3A/3B's sweep (experiment_2.step_3_lambda_sweep): every λ's all-mask pass, summarised over λ."""

from __future__ import annotations

import numpy as np

from experiment_1.run import (
    MOBIUS_DTYPES,
    build_setup,
    check_lambdas,
    provenance,
    write_results,
)
from experiment_2.lambda_sweep.summary import stack_over_lambdas, summarize
from experiment_2.limit.laws import exact_zero_chain
from experiment_2.spectrum.evaluation import evaluate_spectrum
from experiment_2.step_3_lambda_sweep import LambdaSweepConfig, choose_fit_lambdas, sweep_lambdas


def run(config: LambdaSweepConfig) -> None:
    """Evaluate every λ (checked before the first batch), summarise and write the sweep's results."""
    lambdas = sweep_lambdas(config.lambdas)
    fit_lambdas = choose_fit_lambdas(lambdas, config.fit_lambdas)
    setup = build_setup(config)
    check_lambdas(lambdas, setup.model.num_blocks, MOBIUS_DTYPES[setup.config.mobius_dtype])  # before the first batch
    results, timings = [], {}
    for value in lambdas:
        arrays, timing = evaluate_spectrum(
            setup,
            residual_scale=value,
            stage=f"experiment_2.step_3_lambda_sweep/lambda_{value}",
            description=f"Exp 3A λ={value:g}",
        )
        results.append(arrays)
        timings[f"{value:g}"] = timing
    stacked = stack_over_lambdas(results)
    recorded = {
        **provenance(setup),
        "exact_zero_chain": exact_zero_chain(setup.model),
    }  # not in the resume key: read off the built model
    summary = summarize(
        stacked, lambdas, list(config.lambdas), fit_lambdas, recorded, config.seed, config.slope_tolerance
    )
    sweep_timing = {
        "wall_seconds": sum(timing["wall_seconds"] for timing in timings.values()),
        "images_evaluated": sum(timing["images_evaluated"] for timing in timings.values()),
        "per_lambda": timings,
    }
    path = write_results(
        setup, {**stacked, "lambdas": np.array(lambdas)}, summary, sweep_timing, summary_name="summary_all.json"
    )
    kappas = " → ".join(f"{entry['projections']['vector']['kappa']['mean']:.3g}" for entry in summary["per_lambda"])
    print(f"wrote {path}: κ^v over λ = {' → '.join(f'{value:g}' for value in lambdas)}: {kappas}")
