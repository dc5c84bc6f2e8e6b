"""Experiment 2, step 2 — spectrum figures and REPORT.md from summary.json.

Question: how is the Möbius energy of the logits distributed across interaction orders?

Inputs:  --summary (experiment_2.step_1_evaluate's summary.json; timing.json beside it if present),
         optionally --compare-summary: the same step run with --weights random (the random-init null).
Outputs: spectrum.png/.pdf, kappa_histogram.png/.pdf and REPORT.md in the summary's folder. Every
         number in the REPORT is read from the JSON; the verdict is computed from those numbers.

    python -m experiment_2.step_2_plot --summary experiment_2/results/summary.json \\
        --compare-summary experiment_2/results_random/summary.json
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.errors import PipelineError, run_cli
from experiment_1.files import atomic_write_text, check_random_init_null, load_summary, read_json_if_exists
from experiment_1.report.plotting import COLOURS, new_figure, new_figure_grid, save_figure
from experiment_1.report.published import published_value
from experiment_1.report.markdown import ReportDocument, figure, format_number, format_percent, format_stat, markdown_table
from experiment_2.aggregate import PROJECTIONS

SUMMARY_KEYS = ("projections.vector", "projections.scalar", "binomial_null.num_blocks", "binomial_null.kappa", "binomial_null.spectrum", "published")


def element_stat(block: dict[str, list[float]], index: int) -> dict[str, float]:
    """Entry ``index`` of a :func:`experiment_1.report.stats.bootstrap_mean_ci_rows` block as a ``format_stat`` dict."""
    return {key: block[key][index] for key in ("mean", "ci_low", "ci_high")}


def ci_excludes(stat: dict[str, float], value: float) -> bool:
    """True when ``value`` lies outside the stat's 95 % CI."""
    return not stat["ci_low"] <= value <= stat["ci_high"]


def cis_disjoint(first: dict[str, float], second: dict[str, float]) -> bool:
    """True when two 95 % CIs do not overlap."""
    return first["ci_high"] < second["ci_low"] or second["ci_high"] < first["ci_low"]


def weights_label(summary: dict[str, Any]) -> str:
    """``arch (weights)`` of a summary."""
    return f"{summary['config']['arch']} ({summary['config']['weights']})"


def plot_spectrum(summary: dict[str, Any], compare: dict[str, Any] | None, output: Path) -> Path:
    """Mean interaction spectrum p_k (95 % CIs) per projection, binomial null and random-init overlaid."""
    null = summary["binomial_null"]
    orders = np.arange(1, null["num_blocks"] + 1)
    figure, axes_list = new_figure_grid(1, len(PROJECTIONS), 10.0, 3.8, sharey=True)
    for axes, projection in zip(axes_list, PROJECTIONS):
        block = summary["projections"][projection]["mean_spectrum"]
        mean = np.asarray(block["mean"])
        error = [mean - np.asarray(block["ci_low"]), np.asarray(block["ci_high"]) - mean]
        axes.bar(orders, mean, yerr=error, color=COLOURS[projection], capsize=2, label=weights_label(summary))
        if compare is not None:
            other = compare["projections"][projection]["mean_spectrum"]
            other_mean = np.asarray(other["mean"])
            other_error = [other_mean - np.asarray(other["ci_low"]), np.asarray(other["ci_high"]) - other_mean]
            axes.errorbar(orders, other_mean, yerr=other_error, color=COLOURS["random"], marker="s", ms=4, lw=1, capsize=2, label=f"{weights_label(compare)}, random-init null")
        axes.plot(orders, null["spectrum"], color=COLOURS["binomial"], marker="o", ms=3, lw=1, ls="--", label="binomial null")
        axes.set_xticks(orders)
        axes.set_xlabel("interaction order k")
        axes.set_title(f"{projection} projection", fontsize=9)
    axes_list[0].set_ylabel("p_k = E_k / Σ_{j≥1} E_j  (mean, 95 % CI)")
    axes_list[0].legend(fontsize=7)
    figure.suptitle(f"Interaction-order spectrum, N = {summary['num_valid']}", fontsize=10)
    return save_figure(figure, output)


def plot_kappa_histogram(summary: dict[str, Any], compare: dict[str, Any] | None, output: Path) -> Path:
    """Per-image κ histograms (stored in the JSON) per projection, with the binomial null κ."""
    figure, axes = new_figure(7.0, 3.6)
    sources = [(summary, projection, COLOURS[projection], f"{projection}, {weights_label(summary)}") for projection in PROJECTIONS]
    if compare is not None:
        sources += [(compare, projection, COLOURS["random"], f"{projection}, {weights_label(compare)}, random-init null") for projection in PROJECTIONS]
    for source, projection, colour, label in sources:
        histogram = source["projections"][projection]["kappa_distribution"]["histogram"]
        counts = np.asarray(histogram["counts"], dtype=float)
        density = counts / max(counts.sum(), 1.0)
        style = "-" if projection == "vector" else ":"
        axes.stairs(density, histogram["edges"], color=colour, ls=style, lw=1.4, label=label)
    axes.axvline(summary["binomial_null"]["kappa"], color=COLOURS["binomial"], ls="--", lw=1, label="binomial null κ")
    axes.set_xlabel("per-image κ = Σ_{k≥1} k·p_k")
    axes.set_ylabel("fraction of images")
    axes.legend(fontsize=7)
    axes.set_title(f"Distribution of κ over images, N = {summary['num_valid']}", fontsize=9)
    return save_figure(figure, output)


def headline_rows(summary: dict[str, Any], compare: dict[str, Any] | None) -> tuple[list[str], list[list[str]]]:
    """Table of the headline statistics: ours per projection, random-init per projection, binomial null."""
    sources = [(summary, "ours")] + ([(compare, "random-init")] if compare is not None else [])
    headers = ["statistic"] + [f"{name} {projection}" for _, name in sources for projection in PROJECTIONS] + ["binomial null"]
    null = summary["binomial_null"]

    def cells(getter: Any) -> list[str]:
        return [getter(source["projections"][projection]) for source, _ in sources for projection in PROJECTIONS]

    rows = [
        ["peak order of the mean spectrum"] + cells(lambda block: str(block["mean_spectrum_peak_order"])) + [str(null["peak_order"])],
        ["per-image peak order, mean [95 % CI]"] + cells(lambda block: format_stat(block["peak_order"])) + [str(null["peak_order"])],
        ["κ = Σ_{k≥1} k·p_k, mean [95 % CI]"] + cells(lambda block: format_stat(block["kappa"])) + [format_number(null["kappa"])],
        ["C_{≤3} = Σ_{k≤3} p_k (k ≥ 1)"] + cells(lambda block: format_stat(block["c_le3"], percent=True)) + [format_percent(null["c_le3"])],
        ["trunk share E_0 / Σ_{j≥0} E_j"] + cells(lambda block: format_stat(block["trunk_share"], percent=True)) + [format_percent(null["trunk_share"])],
    ]
    return headers, rows


def spectrum_rows(summary: dict[str, Any], compare: dict[str, Any] | None) -> tuple[list[str], list[list[str]]]:
    """Per-order table: mean p_k with CIs per projection, share of images peaking there, binomial p_k."""
    projections = summary["projections"]
    headers = ["k", "p_k vector", "p_k scalar", "images peaking at k (vector)", "images peaking at k (scalar)"]
    if compare is not None:
        headers += ["random-init p_k vector", "random-init p_k scalar"]
    headers.append("binomial p_k")
    rows = []
    for index, order in enumerate(projections["vector"]["peak_order_distribution"]["orders"]):
        row = [str(order)]
        row += [format_stat(element_stat(projections[projection]["mean_spectrum"], index), percent=True) for projection in PROJECTIONS]
        row += [format_percent(projections[projection]["peak_order_distribution"]["fraction"][index]) for projection in PROJECTIONS]
        if compare is not None:
            row += [format_stat(element_stat(compare["projections"][projection]["mean_spectrum"], index), percent=True) for projection in PROJECTIONS]
        row.append(format_percent(summary["binomial_null"]["spectrum"][index]))
        rows.append(row)
    return headers, rows


def seed_rows(summary: dict[str, Any]) -> list[list[str]]:
    """The seed's (and paper's) numbers beside ours: peak order per published architecture, κ^v and C_{≤3} of ResNet-18."""
    published, arch = summary["published"], summary["config"]["arch"]
    vector = summary["projections"]["vector"]
    peak = str(vector["mean_spectrum_peak_order"])
    seed_archs = [name for name in published if name != "source" and published_value(published, name, "peak_order") is not None]
    rows = [[f"peak order, {name}", str(published_value(published, name, "peak_order")), peak if name == arch else "—"] for name in seed_archs]
    if arch not in seed_archs:
        rows.append([f"peak order, {arch} (L = {summary['config']['num_blocks']})", "—", peak])
    rows.append(["κ^v (seed: resnet18)", format_number(published_value(published, "resnet18", "kappa_vector")), format_stat(vector["kappa"])])
    rows.append(["C_{≤3}, vector (seed: resnet18)", format_percent(published_value(published, "resnet18", "c_le3")), format_stat(vector["c_le3"], percent=True)])
    return rows


def verdict_lines(summary: dict[str, Any], compare: dict[str, Any] | None) -> list[str]:
    """The verdict, every clause decided by comparing numbers from the JSON."""
    published, config, null = summary["published"], summary["config"], summary["binomial_null"]
    vector = summary["projections"]["vector"]
    kappa, c_le3, peak = vector["kappa"], vector["c_le3"], vector["mean_spectrum_peak_order"]
    lines = []
    seed_peak = published_value(published, config["arch"], "peak_order")
    if seed_peak is None:
        lines.append(f"- The seed and paper give no peak order for `{config['arch']}`.")
    else:
        relation = "matches" if peak == seed_peak else f"differs from (by {peak - seed_peak:+d})"
        lines.append(f"- Peak order: our mean vector spectrum peaks at k = {peak}, which {relation} the published k = {seed_peak} for `{config['arch']}`.")
    seed_kappa = published_value(published, config["arch"], "kappa_vector")
    if seed_kappa is not None:
        inside = "inside" if not ci_excludes(kappa, seed_kappa) else "outside"
        lines.append(f"- κ^v = {format_stat(kappa)}; the seed's {format_number(seed_kappa)} is {inside} our 95 % CI. "
                     f"C_{{≤3}} = {format_stat(c_le3, percent=True)} against the seed's {format_percent(published_value(published, config['arch'], 'c_le3'))}.")
    if ci_excludes(kappa, null["kappa"]):
        direction = "above" if kappa["mean"] > null["kappa"] else "below"
        lines.append(f"- Against the binomial null (κ = {format_number(null['kappa'])}, peak k = {null['peak_order']}, C_{{≤3}} = {format_percent(null['c_le3'])}): "
                     f"our κ^v is {direction} it with a CI that excludes it, so the energy is not spread evenly over subsets: it sits at "
                     f"{'higher' if direction == 'above' else 'lower'} orders than subset counting alone predicts.")
    else:
        lines.append(f"- Against the binomial null (κ = {format_number(null['kappa'])}): our κ^v CI contains it, so by κ the trained spectrum is indistinguishable from every subset carrying equal energy.")
    low_order = "more" if c_le3["mean"] > null["c_le3"] else "less"
    significance = "" if ci_excludes(c_le3, null["c_le3"]) else " (not significant: the CI contains the null value)"
    lines.append(f"- Low orders: C_{{≤3}} is {low_order} than the null's {format_percent(null['c_le3'])}{significance}, i.e. "
                 f"{'a' if low_order == 'more' else 'no'} low-order bias beyond subset counting.")
    scalar = summary["projections"]["scalar"]
    same = "agrees with" if not cis_disjoint(scalar["kappa"], kappa) else "differs from"
    lines.append(f"- The scalar (predicted-class) projection has κ^s = {format_stat(scalar['kappa'])}, which {same} κ^v (CIs {'overlap' if same == 'agrees with' else 'disjoint'}), peak k = {scalar['mean_spectrum_peak_order']}.")
    if compare is not None:
        other = compare["projections"]["vector"]
        differs = cis_disjoint(kappa, other["kappa"])
        lines.append(f"- Against the random-init null ({weights_label(compare)}): κ^v {format_stat(other['kappa'])}, peak k = {other['mean_spectrum_peak_order']}; "
                     f"{'the CIs are disjoint, so training changes the spectrum' if differs else 'the CIs overlap, so κ^v does not separate trained from random-init weights'}"
                     f" (ours − random-init = {format_number(kappa['mean'] - other['kappa']['mean'])}).")
    return lines


METHOD = (
    "Every image is evaluated under all 2^L residual-gate masks and the Möbius coefficients Δ_S h are taken. Per image, the order energies "
    "E_k = Σ_{|S|=k} energy(Δ_S h) (k = 0 … L) use the squared L2 norm over classes (vector projection) or the square of the predicted-class "
    "component Δ_S h[c], c = argmax h(full) (scalar projection). The interaction spectrum p_k = E_k / Σ_{j≥1} E_j is over k ≥ 1 (order 0, the "
    "trunk h(∅), is reported alone as the trunk share E_0 / Σ_{j≥0} E_j); κ = Σ_{k≥1} k·p_k and C_{≤3} = Σ_{k=1..3} p_k. Every statistic is a "
    "mean over images with a 95 % bootstrap CI. Nulls: the binomial spectrum p_k ∝ C(L, k) (every coefficient equal energy)"
)


def results_blocks(summary: dict[str, Any], compare: dict[str, Any] | None, figures: dict[str, str]) -> list[str]:
    """The Result section: headline statistics, the per-order table, per-image κ quantiles, both figures."""
    headers, rows = headline_rows(summary, compare)
    spectrum_headers, spectrum_table = spectrum_rows(summary, compare)
    quantile_rows = []
    for source, name in [(summary, "ours")] + ([(compare, "random-init")] if compare is not None else []):
        for projection in PROJECTIONS:
            quantiles = source["projections"][projection]["kappa_distribution"]["quantiles"]
            quantile_rows.append([f"{name} {projection}"] + [format_number(value) for value in quantiles.values()])
    quantile_headers = ["per-image κ"] + [f"q{key}" for key in summary["projections"]["vector"]["kappa_distribution"]["quantiles"]]
    return [
        markdown_table(headers, rows),
        markdown_table(spectrum_headers, spectrum_table),
        markdown_table(quantile_headers, quantile_rows),
        figure("interaction-order spectrum", figures["spectrum"]),
        figure("per-image κ", figures["kappa"]),
    ]


def report_markdown(summary: dict[str, Any], compare: dict[str, Any] | None, timing: dict[str, Any] | None, figures: dict[str, str]) -> str:
    """REPORT.md text, generated from the summary JSON(s)."""
    null = (" and the same architecture with random-init weights." if compare is not None
            else "; run step_1 with `--weights random` and pass `--compare-summary` for the random-init null.")
    return ReportDocument(
        title="Experiment 2 — the interaction-order spectrum",
        summary=summary,
        method=METHOD + null,
        results=results_blocks(summary, compare, figures),
        seed_rows=seed_rows(summary),
        seed_source=summary["published"]["source"],
        verdict=verdict_lines(summary, compare),
        generator="experiment_2.step_2_plot",
        timing=timing,
        data_extra=f"; random-init null: {compare['num_valid']} images, weights `{compare['config']['weights']}`, seed {compare['config']['seed']}" if compare is not None else "",
        seed_headers=["quantity", "seed / paper", f"ours ({summary['config']['arch']})"],
    ).render()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--summary", type=Path, default=Path("experiment_2/results/summary.json"), help="summary.json of step_1_evaluate (default: %(default)s)")
    parser.add_argument("--compare-summary", type=Path, default=None, help="summary.json of step_1_evaluate run with --weights random, the random-init null (optional)")
    args = parser.parse_args(argv)
    summary = load_summary(args.summary, 2, "experiment_2.step_1_evaluate", "--summary", SUMMARY_KEYS)
    compare = load_summary(args.compare_summary, 2, "experiment_2.step_1_evaluate", "--compare-summary", SUMMARY_KEYS) if args.compare_summary else None
    if compare is not None:
        check_random_init_null(summary, args.summary, compare, args.compare_summary)
    if compare is not None and compare["binomial_null"]["num_blocks"] != summary["binomial_null"]["num_blocks"]:
        raise PipelineError(f"{args.compare_summary}: has L = {compare['binomial_null']['num_blocks']} blocks but {args.summary} has L = {summary['binomial_null']['num_blocks']}; compare the same architecture")
    timing = read_json_if_exists(args.summary.parent / "timing.json")
    spectrum = plot_spectrum(summary, compare, args.summary.parent / "spectrum")
    kappa = plot_kappa_histogram(summary, compare, args.summary.parent / "kappa_histogram")
    report = args.summary.parent / "REPORT.md"
    atomic_write_text(report, report_markdown(summary, compare, timing, {"spectrum": spectrum.name, "kappa": kappa.name}))
    print(f"wrote {spectrum}, {kappa} and {report}")


if __name__ == "__main__":
    run_cli(main)
