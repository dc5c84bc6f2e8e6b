"""Experiment 2's figures and REPORT (experiment_2.step_2_plot), from step 1's summary and, where given, a random-init null."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.errors import PipelineError
from experiment_1.files import atomic_write_json, atomic_write_text, read_json, read_timing
from experiment_1.mobius import PROJECTIONS
from experiment_1.report import (
    COLOURS,
    ReportDocument,
    check_verdicts,
    figure,
    format_number,
    format_percent,
    format_stat,
    load_checked_summary,
    markdown_table,
    network_name,
    new_figure,
    new_figure_grid,
    published_value,
    save_figure,
)
from experiment_2.record import VERDICTS
from experiment_2.spectrum.null_networks import design_sentence, statistics_rows
from experiment_2.spectrum.verdicts import check_random_init_null, null_sources, null_verdicts
from experiment_2.step_2_plot import SpectrumPlotFlags


def element_stat(block: dict[str, list[float]], index: int) -> dict[str, float]:
    """Entry ``index`` of a :func:`experiment_1.report.stats.bootstrap_mean_ci_rows` block as a ``format_stat`` dict."""
    return {key: block[key][index] for key in ("mean", "ci_low", "ci_high")}


def weights_label(summary: dict[str, Any]) -> str:
    """The network as the text names it: ``EfficientNet-Lite0``, ``EfficientNet-Lite0 (random init)``."""
    return network_name(summary["config"]["arch"], summary["config"]["weights"])


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
            axes.errorbar(
                orders,
                other_mean,
                yerr=other_error,
                color=COLOURS["random"],
                marker="s",
                ms=4,
                lw=1,
                capsize=2,
                label="random-init null",
            )
        axes.plot(
            orders, null["spectrum"], color=COLOURS["binomial"], marker="o", ms=3, lw=1, ls="--", label="binomial null"
        )
        axes.set_xticks(orders)
        axes.set_xlabel(r"interaction order $k$")
        axes.set_title(f"{projection} projection", fontsize=9)
    axes_list[0].set_ylabel(r"$p_k = E_k / \Sigma_{j\geq 1}\,E_j$ (mean, 95 % CI)")
    axes_list[0].legend(fontsize=7)
    figure.suptitle(f"Interaction-order spectrum, N = {summary['num_valid']}", fontsize=10)
    return save_figure(figure, output)


def plot_kappa_histogram(summary: dict[str, Any], compare: dict[str, Any] | None, output: Path) -> Path:
    """Per-image κ histograms (stored in the JSON) per projection, with the binomial null κ."""
    figure, axes = new_figure(7.0, 3.6)
    sources = [
        (summary, projection, COLOURS[projection], f"{projection}, {weights_label(summary)}")
        for projection in PROJECTIONS
    ]
    if compare is not None:
        sources += [
            (compare, projection, COLOURS["random"], f"{projection}, random-init null") for projection in PROJECTIONS
        ]
    for source, projection, colour, label in sources:
        histogram = source["projections"][projection]["kappa_distribution"]["histogram"]
        counts = np.asarray(histogram["counts"], dtype=float)
        density = counts / max(counts.sum(), 1.0)
        style = "-" if projection == "vector" else ":"
        axes.stairs(density, histogram["edges"], color=colour, ls=style, lw=1.4, label=label)
    axes.axvline(
        summary["binomial_null"]["kappa"], color=COLOURS["binomial"], ls="--", lw=1, label=r"binomial null $\kappa$"
    )
    axes.set_xlabel(r"per-image $\kappa = \Sigma_{k\geq 1}\,k\,p_k$")
    axes.set_ylabel("fraction of images")
    axes.legend(fontsize=7)
    axes.set_title(f"Distribution of $\\kappa$ over images, N = {summary['num_valid']}", fontsize=9)
    return save_figure(figure, output)


def null_peak_text(null: dict[str, Any]) -> str:
    """The binomial null's peak order, every tied one named (``4 and 5 (tied)`` at L = 9)."""
    tied = null.get("peak_orders", [null["peak_order"]])
    return " and ".join(map(str, tied)) + (" (tied)" if len(tied) > 1 else "")


def floor_rows(summary: dict[str, Any], compare: dict[str, Any] | None) -> tuple[list[str], list[list[str]]]:
    """Per order: mean E_k over its round-off floor, per projection and run (resolved: ≥ the floor margin)."""
    sources = [(summary, "ours")] + ([(compare, "random-init")] if compare is not None else [])
    headers = ["k"] + [f"Ē_k / floor, {name} {projection}" for _, name in sources for projection in PROJECTIONS]
    rows = [
        [str(order)]
        + [
            format_number(source["roundoff"][projection]["floor_ratio"][order])
            for source, _ in sources
            for projection in PROJECTIONS
        ]
        for order in range(1, summary["binomial_null"]["num_blocks"] + 1)
    ]
    return headers, rows


def headline_rows(summary: dict[str, Any], compare: dict[str, Any] | None) -> tuple[list[str], list[list[str]]]:
    """Table of the headline statistics: ours per projection, random-init per projection, binomial null."""
    sources = [(summary, "ours")] + ([(compare, "random-init")] if compare is not None else [])
    headers = (
        ["statistic"]
        + [f"{name} {projection}" for _, name in sources for projection in PROJECTIONS]
        + ["binomial null"]
    )
    null = summary["binomial_null"]

    def cells(getter: Any) -> list[str]:
        return [getter(source["projections"][projection]) for source, _ in sources for projection in PROJECTIONS]

    rows = [
        ["peak order of the mean spectrum"]
        + cells(lambda block: str(block["mean_spectrum_peak_order"]))
        + [null_peak_text(null)],
        ["per-image peak order, mean [95 % CI]"]
        + cells(lambda block: format_stat(block["peak_order"]))
        + [null_peak_text(null)],
        ["κ = Σ_{k≥1} k·p_k, mean [95 % CI]"]
        + cells(lambda block: format_stat(block["kappa"]))
        + [format_number(null["kappa"])],
        ["C_{≤3} = Σ_{k≤3} p_k (k ≥ 1)"]
        + cells(lambda block: format_stat(block["c_le3"], percent=True))
        + [format_percent(null["c_le3"])],
        ["trunk share E_0 / Σ_{j≥0} E_j"]
        + cells(lambda block: format_stat(block["trunk_share"], percent=True))
        + [format_percent(null["trunk_share"])],
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
        row += [
            format_stat(element_stat(projections[projection]["mean_spectrum"], index), percent=True)
            for projection in PROJECTIONS
        ]
        row += [
            format_percent(projections[projection]["peak_order_distribution"]["fraction"][index])
            for projection in PROJECTIONS
        ]
        if compare is not None:
            row += [
                format_stat(element_stat(compare["projections"][projection]["mean_spectrum"], index), percent=True)
                for projection in PROJECTIONS
            ]
        row.append(format_percent(summary["binomial_null"]["spectrum"][index]))
        rows.append(row)
    return headers, rows


def ratio_cell(ratio: dict[str, Any] | None) -> str:
    """The cancellation ratio's cell: mean [CI], and on how many images it is undefined (h(full) = h(∅))."""
    if ratio is None:
        return "undefined (h(full) = h(∅) on every image)"
    undefined = ratio.get("num_undefined", 0)
    return format_stat(ratio) + (f" ({undefined} image(s) with h(full) = h(∅) left out)" if undefined else "")


def basis_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The basis control: the same statistics of the Möbius spectrum (E_k) and of the Walsh spectrum (W_k), per projection."""
    walsh = summary["walsh"]
    headers = ["statistic"] + [f"{basis} {projection}" for projection in PROJECTIONS for basis in ("Möbius", "Walsh")]

    def cells(getter: Any) -> list[str]:
        return [getter(source["projections"][projection]) for projection in PROJECTIONS for source in (summary, walsh)]

    rows = [
        ["peak order of the mean spectrum"] + cells(lambda block: str(block["mean_spectrum_peak_order"])),
        ["κ (Walsh: κ_W, total influence / variance), mean [95 % CI]"]
        + cells(lambda block: format_stat(block["kappa"])),
        ["C_{≤3} (Walsh: low-degree share of the variance)"]
        + cells(lambda block: format_stat(block["c_le3"], percent=True)),
        ["cancellation ratio Σ_{k≥1} E_k / ‖h(full) − h(∅)‖²"]
        + [cell for projection in PROJECTIONS for cell in (ratio_cell(walsh["cancellation_ratio"][projection]), "—")],
    ]
    return headers, rows


def walsh_spectrum_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Per order: the mean Walsh spectrum W_k / Σ_{j≥1} W_j with CIs per projection, beside the Möbius p_k."""
    walsh, projections = summary["walsh"]["projections"], summary["projections"]
    headers = ["k"] + [
        f"{name} {projection}" for projection in PROJECTIONS for name in ("p_k (Möbius)", "W_k share (Walsh)")
    ]
    rows = [
        [str(order)]
        + [
            format_stat(element_stat(source[projection]["mean_spectrum"], index), percent=True)
            for projection in PROJECTIONS
            for source in (projections, walsh)
        ]
        for index, order in enumerate(projections["vector"]["peak_order_distribution"]["orders"])
    ]
    return headers, rows


def seed_rows(summary: dict[str, Any]) -> list[list[str]]:
    """The seed's (and paper's) numbers beside ours: peak order per published architecture, κ^v and C_{≤3} of ResNet-18."""
    published, arch = summary["published"], summary["config"]["arch"]
    vector = summary["projections"]["vector"]
    peak = str(vector["mean_spectrum_peak_order"])
    seed_archs = [
        name for name in published if name != "source" and published_value(published, name, "peak_order") is not None
    ]
    rows = [
        [f"peak order, {name}", str(published_value(published, name, "peak_order")), peak if name == arch else "—"]
        for name in seed_archs
    ]
    if arch not in seed_archs:
        rows.append([f"peak order, {arch} (L = {summary['config']['num_blocks']})", "—", peak])
    rows.append(
        [
            "κ^v (seed: resnet18)",
            format_number(published_value(published, "resnet18", "kappa_vector")),
            format_stat(vector["kappa"]),
        ]
    )
    rows.append(
        [
            "C_{≤3}, vector (seed: resnet18)",
            format_percent(published_value(published, "resnet18", "c_le3")),
            format_stat(vector["c_le3"], percent=True),
        ]
    )
    return rows


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
    quantile_headers = ["per-image κ"] + [
        f"q{key}" for key in summary["projections"]["vector"]["kappa_distribution"]["quantiles"]
    ]
    floor_headers, floor_table = floor_rows(summary, compare)
    blocks = [
        markdown_table(headers, rows),
        markdown_table(spectrum_headers, spectrum_table),
        f"Round-off floor per order (an order is resolved at ≥ {format_number(summary['roundoff']['floor_margin'])}× its floor C(L,k)·2^k·rounding variance):",
        markdown_table(floor_headers, floor_table),
        markdown_table(quantile_headers, quantile_rows),
        figure("interaction-order spectrum", figures["spectrum"]),
        figure("per-image κ", figures["kappa"]),
    ]
    if "walsh" in summary:
        basis_headers, basis_table = basis_rows(summary)
        walsh_headers, walsh_table = walsh_spectrum_rows(summary)
        blocks += [
            "The basis control: the same set functions in the Walsh (±1 Fourier) basis, ĥ(S) = 2^{−L} Σ_T (−1)^{|S∩T|} h(T), whose energies "
            "W_k add up to the variance of h over masks. A Möbius spectrum that peaks at middle orders while the Walsh spectrum does not is "
            "mostly cancellation: large coefficients that sum to a small change (the cancellation ratio).",
            markdown_table(basis_headers, basis_table),
            markdown_table(walsh_headers, walsh_table),
        ]
    return blocks


SUMMARY_KEYS = (
    "projections.vector",
    "projections.scalar",
    "binomial_null.num_blocks",
    "binomial_null.kappa",
    "binomial_null.spectrum",
    "published",
    "roundoff",
    "verdicts",
)


def null_label(compare: dict[str, Any]) -> str:
    """How the null was made, for the method text."""
    calibration = compare["config"].get("batchnorm_calibration")
    if not calibration:
        return "the same architecture with random-init weights"
    where = "after the evaluated ones" if "positions" in calibration else "at the start of the list"
    return (
        f"the same architecture with random-init weights and batch-norm statistics re-estimated on {calibration['images']} "
        f"sample images {where} (experiment_2/README.md, The random-init null over networks)"
    )


def null_networks_blocks(nulls: dict[str, Any], source: Path) -> list[str]:
    """The random-init null over networks in Experiment 2's REPORT: its design and its table (its own REPORT beside it)."""
    headers, rows = statistics_rows(nulls)
    return [
        f"The random-init null over networks ([`{source.parent.as_posix()}`]({Path('..') / source.parent.name}/REPORT.md)): "
        + design_sentence(nulls),
        markdown_table(headers, rows),
    ]


def report_markdown(
    summary: dict[str, Any],
    compare: dict[str, Any] | None,
    comparison: list[dict[str, Any]],
    timing: dict[str, Any] | None,
    figures: dict[str, str],
    nulls: tuple[dict[str, Any], Path] | None = None,
) -> str:
    """REPORT.md text, generated from the summary JSON(s)."""
    null = (
        f" and {null_label(compare)}."
        if compare is not None
        else " and random-init networks of the same architecture over many initialisation seeds, batch-norm statistics "
        "re-estimated on images disjoint from the evaluated ones (experiment_2/README.md, The random-init null over networks)."
        if nulls is not None
        else "; run experiment_2.step_13_null_seeds and step_14_null_compare and pass `--null-seeds` for the random-init null."
    )
    return ReportDocument(
        title="Experiment 2 — the interaction-order spectrum",
        summary=summary,
        method=METHOD + null,
        results=results_blocks(summary, compare, figures) + (null_networks_blocks(*nulls) if nulls is not None else []),
        seed_rows=seed_rows(summary),
        verdicts=summary["verdicts"] + comparison,
        generator="experiment_2.step_2_plot",
        timing=timing,
        data_extra=f"; random-init null: {compare['num_valid']} images, weights `{compare['config']['weights']}`, seed {compare['config']['seed']}"
        if compare is not None
        else f"; random-init null: {nulls[0]['num_null_networks']} networks × {nulls[0]['num_images_per_network']} images"
        if nulls is not None
        else "",
        seed_headers=["quantity", "the original study (README / paper)", f"ours ({summary['config']['arch']})"],
    ).render()


def run(args: SpectrumPlotFlags) -> None:
    """The spectrum and κ figures and REPORT.md beside the summary (with the null's comparison where one is given)."""
    summary = load_checked_summary(
        args.summary, 2, "experiment_2.step_1_evaluate", "--summary", SUMMARY_KEYS, rules=VERDICTS[2]
    )
    compare = (
        load_checked_summary(
            args.compare_summary,
            2,
            "experiment_2.step_1_evaluate",
            "--compare-summary",
            SUMMARY_KEYS,
            rules=VERDICTS[2],
        )
        if args.compare_summary
        else None
    )
    comparison: list[dict[str, Any]] = []
    folder = args.summary.parent
    if compare is not None:
        check_random_init_null(summary, args.summary, compare, args.compare_summary)
        if compare["binomial_null"]["num_blocks"] != summary["binomial_null"]["num_blocks"]:
            raise PipelineError(
                f"{args.compare_summary}: has L = {compare['binomial_null']['num_blocks']} blocks but {args.summary} "
                f"has L = {summary['binomial_null']['num_blocks']}; compare the same architecture"
            )
        comparison = null_verdicts(summary, compare)
        atomic_write_json(
            folder / "null_comparison.json",
            {
                "run_id": summary["config"]["run_id"],
                "null_run_id": compare["config"]["run_id"],
                "null_summary": str(args.compare_summary),
                **null_sources(summary, compare),
                "verdicts": comparison,
            },
        )
    nulls = None
    if args.null_seeds is not None:
        between = read_json(args.null_seeds, fix="rerun `python -m experiment_2.step_14_null_compare`")
        check_verdicts(
            between, args.null_seeds, VERDICTS["2N"], fix="rerun `python -m experiment_2.step_14_null_compare`"
        )
        if between.get("config", {}).get("trained_run_id") != summary["config"]["run_id"]:
            raise PipelineError(
                f"{args.null_seeds}: ranks another run than {args.summary}; rerun experiment_2.step_14_null_compare "
                f"--summary {args.summary}"
            )
        comparison, nulls = between["verdicts"], (between, args.null_seeds)
    overlay = compare if compare is not None else nulls[0]["random_init"] if nulls is not None else None
    timing = read_timing(folder / "timing.json", summary.get("num_images"))
    spectrum = plot_spectrum(summary, overlay, folder / "spectrum")
    kappa = plot_kappa_histogram(summary, overlay, folder / "kappa_histogram")
    report = folder / "REPORT.md"
    atomic_write_text(
        report,
        report_markdown(summary, compare, comparison, timing, {"spectrum": spectrum.name, "kappa": kappa.name}, nulls),
    )
    print(f"wrote {spectrum}, {kappa} and {report}")
