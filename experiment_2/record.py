"""Experiments 2, 3A/3B and 3C as paper/ sees them (:class:`experiment_1.report.record.ExperimentRecord`): declared
once, read by ``paper/experiments.py``."""

from __future__ import annotations

from experiment_1.report import ExperimentRecord, VerdictTable

RESULTS = "experiment_2/results_efficientnet_lite0_sample"
SWEEP = "experiment_2/results_lambda_efficientnet_lite0_sample"
NULL_SEEDS = "experiment_2/results_efficientnet_lite0_null_seeds"
_SPECTRUM = "experiment_2.spectrum.verdicts"
_NULLS = "experiment_2.spectrum.null_networks"
_SWEEP = "experiment_2.lambda_sweep.verdicts"
_LAWS = "experiment_2.limit.verdicts"
_PAST = "experiment_2.past_exhaustive.verdicts"
VERDICTS: dict[int | str, VerdictTable] = {
    2: (
        ("resolved.*", f"{_SPECTRUM}:RESOLVED"),
        ("walsh.resolved.*", f"{_SPECTRUM}:WALSH_RESOLVED"),
        ("shape.*", f"{_SPECTRUM}:SHAPE"),
        ("walsh.shape.*", f"{_SPECTRUM}:SHAPE"),
        ("peak.*", f"{_SPECTRUM}:PEAK"),
        ("walsh.peak.*", f"{_SPECTRUM}:PEAK"),
        ("middle_peak.*", f"{_SPECTRUM}:MIDDLE_PEAK"),
        ("basis.*", f"{_SPECTRUM}:BASIS"),
        ("projections_differ", f"{_SPECTRUM}:DIFFER"),
        ("input_dependent", f"{_SPECTRUM}:INPUT"),
        ("null.*", f"{_SPECTRUM}:NULL"),
    ),
    "2N": (
        ("null_input_function", f"{_NULLS}:NULL_INPUT"),
        ("null_networks.*", f"{_NULLS}:RANK"),
    ),
    "3A/3B": (
        ("migration.*", f"{_SWEEP}:MIGRATION"),
        ("walsh.migration.*", f"{_SWEEP}:MIGRATION"),
        ("basis.migration.*", f"{_SWEEP}:SWEEP_BASIS"),
        ("monotone.*", f"{_SWEEP}:MONOTONE"),
        ("seed_endpoint", f"{_SWEEP}:SEED_ENDPOINT"),
        ("cost", f"{_SWEEP}:COST"),
        ("power_law.*", f"{_SWEEP}:POWER_LAW"),
    ),
    "3C": (
        ("exp3c.*.*.k*", f"{_LAWS}:DECIDING_ORDER"),
        ("exp3c.*.*", f"{_LAWS}:LAW"),
        ("swap_lowers_top1", "experiment_2.limit.swap_cost:SWAP"),
        ("replications.*", "experiment_2.limit.law_replications:ALL_MUST_HOLD"),
    ),
    "experiment_2_low_orders": (
        ("walsh_low_degree_share.*", f"{_PAST}:LOW_DEGREE"),
        ("surrogate_r2.*", f"{_PAST}:SURROGATE"),
    ),
    "experiment_2_depth_trend": (
        ("basis.*", f"{_PAST}:BASIS_CHANGE"),
        ("*", f"{_PAST}:DEPTH_CHANGE"),
    ),
}
"""The rule of each verdict id its summaries carry, by their ``experiment`` value (experiment_1.report.rules)."""


RECORDS = (
    ExperimentRecord(
        experiment=2,
        title="Experiment 2 — interaction-order spectrum",
        macro="ExpTwo",
        summaries="experiment_2/results*/summary.json",
        primary=f"{RESULTS}/summary.json",
        tables=("experiment_2",),
        figures=(
            ("FigExpTwoSpectrum", f"{RESULTS}/spectrum.pdf"),
            ("FigExpTwoKappa", f"{RESULTS}/kappa_histogram.pdf"),
            ("FigExpTwoBases", "paper/generated/basis_spectra.pdf"),  # every network's; rendered by paper.plots
        ),
        single_pass="experiment_2.step_1_evaluate:COMMAND",
        rebuild="experiment_2.spectrum.evaluation:rebuild",
    ),
    ExperimentRecord(
        experiment="2N",
        title="Experiment 2 — the random-init null over networks",
        macro="ExpTwoNull",
        summaries="experiment_2/results_*_null_seeds/summary.json",
        primary=f"{NULL_SEEDS}/summary.json",
        tables=("experiment_2_null",),
        figures=(("FigExpTwoNullStrip", "paper/generated/null_strip.pdf"),),  # rendered by paper.plots
    ),
    ExperimentRecord(
        experiment="3A/3B",
        title="Experiment 3A/3B — residual scaling",
        macro="ExpThreeAB",
        summaries="experiment_2/results_lambda*/summary_all.json",
        primary=f"{SWEEP}/summary_all.json",
        tables=("experiment_3ab",),
        figures=(
            ("FigExpThreeABKappa", f"{SWEEP}/kappa_vs_lambda.pdf"),
            ("FigExpThreeABSpectra", f"{SWEEP}/spectra_per_lambda.pdf"),
            ("FigExpThreeABAgreement", f"{SWEEP}/agreement_vs_lambda.pdf"),
            ("FigExpThreeABLaw", f"{SWEEP}/lambda_law.pdf"),
        ),
        rebuild="experiment_2.lambda_sweep.summary:rebuild",
        rebuild_keys=("lambdas", "lambdas_requested", "power_law.fit_lambdas", "power_law.slope_tolerance"),
    ),
    ExperimentRecord(
        experiment="3C",
        title="Experiment 3C — the small-λ limit: native vs smooth activations",
        macro="ExpThreeC",
        summaries="experiment_2/results_3c_*/summary_3c.json",
        primary="experiment_2/results_3c_*/summary_3c.json",
        tables=("experiment_3c", "experiment_3c_swap"),
        figures=(
            ("FigExpThreeCSlopeLite", "experiment_2/results_3c_efficientnet_lite0/slope_vs_k.pdf"),
            ("FigExpThreeCSlopeResNet", "experiment_2/results_3c_resnet18/slope_vs_k.pdf"),
        ),
    ),
)
