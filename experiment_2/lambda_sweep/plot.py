"""Experiment 3A/3B's figures and REPORT (experiment_2.step_4_lambda_plot), from the λ sweep's summary."""

from __future__ import annotations

from typing import Any

from experiment_1.files import atomic_write_text, read_timing
from experiment_1.report import ReportDocument, load_checked_summary
from experiment_2.lambda_sweep.figures import format_lambdas, plot_agreement, plot_kappa, plot_lambda_law, plot_spectra
from experiment_2.lambda_sweep.report import method_text, results_blocks, seed_rows
from experiment_2.record import VERDICTS
from experiment_2.step_4_lambda_plot import LambdaPlotFlags


def report_markdown(summary: dict[str, Any], timing: dict[str, Any] | None, figures: dict[str, str]) -> str:
    """REPORT.md text, generated from summary_all.json (and timing.json)."""
    added = [value for value in summary["lambdas"] if value not in summary["lambdas_requested"]]
    lambdas = f"λ ∈ {{{format_lambdas(summary['lambdas'])}}}"
    return ReportDocument(
        title="Experiment 3A/3B — residual scaling",
        summary=summary,
        method=method_text(summary),
        results=results_blocks(summary, figures),
        seed_rows=seed_rows(summary),
        generator="experiment_2.step_4_lambda_plot",
        timing=timing,
        data_extra=f"; {lambdas}"
        + (f" (λ = {format_lambdas(added)} added as the agreement reference)" if added else ""),
        source="summary_all.json",
        residual_scale=lambdas,
    ).render()


def run(args: LambdaPlotFlags) -> None:
    """The four figures and REPORT.md beside the sweep's summary."""
    summary = load_checked_summary(
        args.summary,
        "3A/3B",
        "experiment_2.step_3_lambda_sweep",
        keys=(
            "per_lambda",
            "lambdas",
            "lambdas_requested",
            "kappa_monotonic.vector",
            "power_law.fit_lambdas",
            "binomial_null.num_blocks",
            "binomial_null.kappa",
            "binomial_null.spectrum",
            "published",
            "verdicts",
        ),
        rules=VERDICTS["3A/3B"],
    )
    timing = read_timing(args.summary.parent / "timing.json", summary.get("num_images"))
    folder = args.summary.parent
    figures = {
        "kappa": plot_kappa(summary, folder / "kappa_vs_lambda"),
        "spectra": plot_spectra(summary, folder / "spectra_per_lambda"),
        "agreement": plot_agreement(summary, folder / "agreement_vs_lambda"),
        "law": plot_lambda_law(summary, folder / "lambda_law"),
    }
    report = folder / "REPORT.md"
    atomic_write_text(report, report_markdown(summary, timing, {name: path.name for name, path in figures.items()}))
    print(f"wrote {', '.join(str(path) for path in figures.values())} and {report}")
