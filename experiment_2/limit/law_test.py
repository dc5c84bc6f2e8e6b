"""The λ-law test of one sweep (experiment_2.step_7_law_test): the law, its prediction and the verdicts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from experiment_1.errors import PipelineError
from experiment_1.files import atomic_write_json, atomic_write_text
from experiment_1.report import load_checked_summary
from experiment_2.lambda_sweep.figures import format_lambdas
from experiment_2.limit.laws import (
    FIRST_COUNTED_ORDER,
    LAW_TEST_CONVERGENCE_TOLERANCE,
    LAWS,
    after_prediction,
    is_post_hoc,
)
from experiment_2.limit.prediction import (
    check_rule,
    check_run,
    check_slopes,
    code_rule,
    committed_before,
    load_prediction,
    run_started,
)
from experiment_2.limit.report import limit_document, successive_table, successive_trend, variant_limit_table
from experiment_2.limit.summary import LIMIT_KEYS, floor_headroom, variant_block
from experiment_2.limit.verdicts import deciding_order_verdict, law_verdict
from experiment_2.record import VERDICTS
from experiment_2.step_7_law_test import REPORT_NAME, LawTestFlags

QUESTION = (
    "Does the exact-zero-chain law (slope 1 for k ≤ R, 3/2 above), derived after measuring the random-init ResNet-18, "
    "hold on a network it was not fitted to, with its prediction stated before running?"
)
PREDICTION = {  # the first held-block test's, stated in the README before its run
    "source": "experiment_2/README.md, Experiment 3C, \"A test of the refined law on data it was not fitted to\"",
    "law": "kink_chain",
    "deciding_order": 2,
    "fitted_run_slope_at_deciding_order": 1.10,
}


def checked_prediction(
    sweep: dict[str, Any], prediction: dict[str, Any] | None, path: Path | None, started: str | None
) -> tuple[dict[str, Any], float]:
    """The prediction the sweep is judged against and the convergence tolerance it fixed: the file's, checked against
    the run and its commit (:mod:`experiment_2.limit.prediction`), or — without one — the README's of the first test,
    whose run must descend from :data:`experiment_2.limit.laws.PREDICTION_COMMIT`, under the rule it ran with."""
    limit = sweep["limit"]
    if prediction is None:
        not_after = after_prediction(sweep["config"])
        if not_after:
            raise PipelineError(
                f"--sweep: not an a priori test of the refined law: {not_after}; rerun the sweep on a checkout that holds the prediction"
            )
        return dict(PREDICTION), limit["slope_tolerance"]
    check_run(prediction, sweep, path)
    check_rule(
        prediction,
        code_rule(limit["slope_tolerance"], LAW_TEST_CONVERGENCE_TOLERANCE, limit["floor_margin"], FIRST_COUNTED_ORDER),
        path,
    )
    committed = committed_before(path, sweep["config"], started)
    return {
        "source": f"{path.as_posix()} (committed at {committed['commit'][:12]}, {committed['date']})",
        "file": path.as_posix(),
        "commit": committed["commit"],
        "law": prediction["law"],
        "deciding_order": prediction["deciding_order"],
        "predicted_slopes": prediction["predicted_slopes"],
        "rule": prediction["rule"],
        **({"replicates": prediction["replicates"]} if "replicates" in prediction else {}),
    }, prediction["rule"]["convergence_tolerance"]


def summarize(
    sweep: dict[str, Any],
    prediction: dict[str, Any] | None = None,
    prediction_path: Path | None = None,
    started: str | None = None,
) -> dict[str, Any]:
    """summary_3c.json of the test: the sweep's configuration, its native limit block re-scored, the laws' verdicts
    (``prediction``: a prediction file's content, from ``prediction_path``; ``started``: when the run began)."""
    if is_post_hoc(sweep["config"]):
        raise PipelineError(
            "--sweep: this run is the refined law's own data (experiment_2.limit.laws.REFINED_LAW_FITTED_TO); "
            "score it with experiment_2.step_5_limit_report, where the law reads consistent (post hoc)"
        )
    if "smooth_activations" in sweep["config"]:
        raise PipelineError(
            "--sweep: this sweep ran with --smooth-activations; the law concerns the network's own activations"
        )
    stated, settled = checked_prediction(sweep, prediction, prediction_path, started)
    block = variant_block(sweep, "native", convergence_tolerance=settled)
    if "kink_chain" not in block["laws"]:
        raise PipelineError(
            f"--sweep: R = {block['exact_zero_chain']} here, so the refined law predicts what the first law does; nothing new to test"
        )
    if prediction is not None:
        check_slopes(
            prediction,
            sweep["config"]["num_blocks"],
            block["kink_exponent"],
            block["exact_zero_chain"],
            prediction_path,
        )
    limit = sweep["limit"]
    law, order = stated["law"], stated["deciding_order"]
    return {
        "experiment": "3C",
        "question": QUESTION,
        "config": sweep["config"],
        "num_images": sweep["num_images"],
        "num_valid": sweep["num_valid"],
        "num_skipped_corrupt": sweep["num_skipped_corrupt"],
        "lambdas": sweep["lambdas"],
        "method": limit["method"],
        "limit_points": limit["limit_points"],
        "slope_tolerance": limit["slope_tolerance"],
        "floor_margin": limit["floor_margin"],
        "convergence_tolerance": settled,
        "prediction": {
            **stated,
            "exact_zero_chain": block["exact_zero_chain"],
            "predicted": block["laws"][law]["predicted"],
        },
        "floor_headroom": floor_headroom(sweep),
        "variants": {"native": block},
        "verdicts": [
            law_verdict("native", name, block, name == law, limit["slope_tolerance"], limit["floor_margin"], settled)
            for name in LAWS
            if name in block["laws"]
        ]
        + [
            deciding_order_verdict(
                "native", law, block, order, limit["slope_tolerance"], settled, limit["floor_margin"]
            )
        ],
    }


def report_markdown(summary: dict[str, Any]) -> str:
    """REPORT_law_test.md of the test, generated from its summary_3c.json."""
    block, config = summary["variants"]["native"], summary["config"]
    lambdas = format_lambdas(summary["lambdas"])
    stated = summary["prediction"]
    fitted = (
        f"; the fitted ResNet-18 had {stated['fitted_run_slope_at_deciding_order']:g} at k = {stated['deciding_order']}"
        if "fitted_run_slope_at_deciding_order" in stated
        else ""
    )
    replicates = f" It replicates the first held-block test: {stated['replicates']}." if "replicates" in stated else ""
    method = (
        f"One λ sweep, λ ∈ {{{lambdas}}}, network arithmetic `{config['dtype']}`, of `{config['arch']}` (`{config['weights']}`, seed {config['seed']}), "
        f"which computes `{config['gated_recursion']}`; R = {block['exact_zero_chain']}. The prediction — slope 1 at k = 1, 3/2 at every k > R, "
        f"deciding order k = {stated['deciding_order']} — was committed before the run ({stated['source']}){fitted}.{replicates} "
        f"{summary['method']}. Tolerance ±{summary['slope_tolerance']:g}; an order counts only once converged: its window's "
        f"successive slopes differ by at most {summary['convergence_tolerance']:g} (the tolerance this run's rule fixed before it ran). "
        "Vector projection."
    )
    headroom = "; ".join(
        f"λ = {row['lambda']:g}: {row['smallest_energy_over_floor']:.2g} (k = {row['order']})"
        for row in summary["floor_headroom"]
    )
    results = [
        "### Limit slopes against the laws",
        variant_limit_table(block, config["num_blocks"]),
        "### Slope between successive λs (convergence to the limit)",
        successive_table(block, config["num_blocks"]),
        successive_trend(block, stated["deciding_order"], summary["prediction"]["predicted"][stated["deciding_order"]]),
        "### Headroom above the round-off floor",
        f"Smallest mean energy ÷ round-off floor over the orders k ≥ 1, per λ (an order is resolved at ≥ "
        f"{summary['floor_margin']:g}): {headroom}.",
    ]
    return limit_document(
        f"Experiment 3C — the exact-zero-chain law on a network it was not fitted to ({config['arch']})",
        summary,
        method,
        results,
        [],
        "experiment_2.step_7_law_test",
    )


def run(args: LawTestFlags) -> None:
    """The law test's summary_3c.json and its REPORT."""
    sweep = load_checked_summary(
        args.sweep,
        "3A/3B",
        "experiment_2.step_3_lambda_sweep",
        flag="--sweep",
        keys=("config", "lambdas", "per_lambda", *LIMIT_KEYS),
        rules=VERDICTS["3A/3B"],
    )
    prediction = None if args.prediction is None else load_prediction(args.prediction)
    summary = summarize(sweep, prediction, args.prediction, run_started(args.sweep.parent / "timing.json"))
    folder = args.output_dir or args.sweep.parent
    atomic_write_json(folder / "summary_3c.json", summary)
    atomic_write_text(folder / REPORT_NAME, report_markdown(summary))
    print(
        f"wrote {folder / 'summary_3c.json'} and {folder / REPORT_NAME}: "
        + "; ".join(f"{entry['id']} {entry['decision']}" for entry in summary["verdicts"])
    )
