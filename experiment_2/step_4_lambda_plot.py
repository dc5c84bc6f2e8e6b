"""Experiment 3A/3B, step 4 — residual-scaling figures and REPORT.md from summary_all.json.

Question: does the interaction spectrum migrate to low orders under residual scaling λ, what does
it cost in top-1 agreement, and does each order follow the λ^k law?

Inputs:  --summary (experiment_2.step_3_lambda_sweep's summary_all.json; timing.json beside it if present).
Outputs: kappa_vs_lambda, spectra_per_lambda, agreement_vs_lambda and lambda_law (each .png/.pdf) and
         REPORT.md in the summary's folder. Every number in the REPORT is read from the JSON; the
         verdicts are the summary's block (decided by experiment_2.lambda_sweep.verdicts), rendered.

    python -m experiment_2.step_4_lambda_plot --summary experiment_2/results_lambda/summary_all.json
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from experiment_1.errors import run_cli
from experiment_1.files import atomic_write_text, read_timing
from experiment_1.report import ReportDocument, load_checked_summary
from experiment_2.lambda_sweep.figures import format_lambdas, plot_agreement, plot_kappa, plot_lambda_law, plot_spectra
from experiment_2.lambda_sweep.report import method_text, results_blocks, seed_rows
from experiment_2.record import VERDICTS


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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--summary",
        type=Path,
        default=Path("experiment_2/results_lambda/summary_all.json"),
        help="summary_all.json of step_3_lambda_sweep (default: %(default)s)",
    )
    args = parser.parse_args(argv)
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


if __name__ == "__main__":
    run_cli(main)
