"""Experiment 3C's limit report (experiment_2.step_5_limit_report): the native and the smooth sweep side by side."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.errors import PipelineError
from experiment_1.files import atomic_write_json, atomic_write_text, inside, load_run_arrays, name_from_file, read_json
from experiment_1.report import (
    COLOURS,
    bootstrap_mean_ci,
    figure,
    format_number,
    format_percent,
    format_stat,
    load_checked_summary,
    markdown_table,
    new_figure,
    new_figure_grid,
    plt,
    run_title,
    save_figure,
)
from experiment_2.lambda_sweep.figures import format_lambdas
from experiment_2.limit.laws import LAWS
from experiment_2.limit.report import limit_document, slope_cell, successive_table
from experiment_2.limit.summary import LIMIT_KEYS, variant_block
from experiment_2.limit.verdicts import law_verdict
from experiment_2.record import VERDICTS
from experiment_2.step_5_limit_report import LimitReportFlags

QUESTION = (
    "Is it the smoothness assumption that breaks the λ^k law, and does each order of the network with its own (piecewise-linear) "
    "activations follow the kink law min(k, s) derived in experiment_2/README.md instead?"
)
VARIANTS = ("native", "smooth")
EXPERIMENT_DIR = Path("experiment_2")  # where the default results folder results_3c_<arch> goes
SAME_RUN_KEYS = (
    "arch",
    "weights",
    "network_sha256",
    "num_blocks",
    "sample_index",
    "sample_list_sha256",
    "num_images",
    "limit",
    "seed",
    "dtype",
    "mobius_dtype",
    "input_size",
)


def load_variants(native: Path, smooth: Path) -> dict[str, dict[str, Any]]:
    """Both sweeps' summaries, checked to be the same network, images and λs, without and with the swap."""
    summaries = {
        variant: load_checked_summary(
            path,
            "3A/3B",
            "experiment_2.step_3_lambda_sweep",
            keys=("config", "lambdas", *LIMIT_KEYS),
            rules=VERDICTS["3A/3B"],
        )
        for variant, path in zip(VARIANTS, (native, smooth))
    }
    if "smooth_activations" in summaries["native"]["config"]:
        raise PipelineError(f"--native {native}: this sweep ran with --smooth-activations; pass the run without it")
    if "smooth_activations" not in summaries["smooth"]["config"]:
        raise PipelineError(f"--smooth {smooth}: this sweep ran without --smooth-activations; pass the run with it")
    for key in SAME_RUN_KEYS:
        values = [summaries[variant]["config"].get(key) for variant in VARIANTS]
        if values[0] != values[1]:
            raise PipelineError(
                f"--native and --smooth differ in {key} ({values[0]} vs {values[1]}); rerun both sweeps with the same flags"
            )
    if summaries["native"]["lambdas"] != summaries["smooth"]["lambdas"]:
        raise PipelineError("--native and --smooth evaluated different λs; rerun both sweeps with the same --lambdas")
    return summaries


def swap_agreement(
    native: Path, smooth: Path, seed: int, previous: Path | None = None, run_id: str | None = None
) -> dict[str, Any]:
    """Top-1 agreement of the smooth network's full-mask prediction at λ = 1 with the native one's, and each one's top-1 on labelled images.

    The per-image arrays are not committed: without them, the agreement an earlier report computed from these
    very sweeps (``previous`` summary_3c.json with the same native ``run_id``) is kept rather than recomputed.
    """
    arrays_paths = [path.parent / "per_image.npz" for path in (native, smooth)]
    missing = [path for path in arrays_paths if not path.is_file()]
    if missing:
        kept = read_json(previous) if previous is not None and previous.is_file() else None
        if kept is None or kept.get("config", {}).get("run_id") != run_id or "swap_at_lambda_1" not in kept:
            raise PipelineError(
                f"{missing[0]} is missing and {previous} holds no swap agreement of this run; rerun the sweep to write it"
            )
        return kept["swap_at_lambda_1"]
    arrays = {
        variant: load_run_arrays(path, read_json(summary), summary)
        for variant, path, summary in zip(VARIANTS, arrays_paths, (native, smooth))
    }  # each of its summary's run
    column = list(arrays["native"]["lambdas"]).index(1.0)
    valid = arrays["native"]["valid"].astype(bool) & arrays["smooth"]["valid"].astype(bool)
    predictions = {variant: arrays[variant]["full_prediction"][:, column] for variant in VARIANTS}
    labels = arrays["native"]["label"]
    labelled = valid & (labels >= 0)
    result = {
        "agreement": bootstrap_mean_ci(
            (predictions["native"] == predictions["smooth"])[valid].astype(np.float64), seed=seed
        )
    }
    for variant in VARIANTS:
        result[f"top1_{variant}"] = (
            bootstrap_mean_ci((predictions[variant] == labels)[labelled].astype(np.float64), seed=seed)
            if labelled.any()
            else None
        )
    return result


def law_verdicts(variants: dict[str, dict[str, Any]], tolerance: float, floor_margin: float) -> list[dict[str, Any]]:
    """One verdict per (variant, law), in that order (:func:`experiment_2.limit.verdicts.law_verdict`)."""
    return [
        law_verdict(variant, law, block, law in block["expected_laws"], tolerance, floor_margin)
        for variant, block in variants.items()
        for law in LAWS
        if law in block["laws"]
    ]


def summarize(summaries: dict[str, dict[str, Any]], agreement: dict[str, Any]) -> dict[str, Any]:
    """summary_3c.json: the native run's configuration, both variants' limit blocks and the verdicts."""
    native = summaries["native"]
    tolerance = native["limit"]["slope_tolerance"]
    variants = {variant: variant_block(summaries[variant], variant) for variant in VARIANTS}
    return {
        "experiment": "3C",
        "question": QUESTION,
        "config": native["config"],
        "num_images": native["num_images"],
        "num_valid": min(summaries[variant]["num_valid"] for variant in VARIANTS),
        "num_skipped_corrupt": max(summaries[variant]["num_skipped_corrupt"] for variant in VARIANTS),
        "lambdas": native["lambdas"],
        "method": native["limit"]["method"],
        "limit_points": native["limit"]["limit_points"],
        "slope_tolerance": tolerance,
        "floor_margin": native["limit"]["floor_margin"],
        "swap_at_lambda_1": agreement,
        "variants": variants,
        "verdicts": law_verdicts(variants, tolerance, native["limit"]["floor_margin"]),
    }


def plot_slopes(summary: dict[str, Any], output: Path) -> Path:
    """Limit slope vs k (95 % CI) for both variants, with the λ^k line y = k and the kink law y = min(k, s)."""
    figure_, axes = new_figure(6.0, 4.0)
    num_blocks = summary["config"]["num_blocks"]
    orders = np.arange(1, num_blocks + 1)
    axes.plot(orders, orders, color=COLOURS["binomial"], ls="--", lw=1, label=r"$\lambda^k$ law: slope $k$")
    exponent = summary["variants"]["native"]["kink_exponent"]
    axes.plot(
        orders,
        np.minimum(orders, exponent),
        color="#c22",
        ls=":",
        lw=1.5,
        label=f"kink law (before the 3C runs): $\\min(k, {format_number(exponent)})$",
    )
    refined = summary["variants"]["native"]["laws"].get("kink_chain")
    if refined and refined["predicted"] != summary["variants"]["native"]["laws"]["kink"]["predicted"]:
        axes.plot(
            orders,
            refined["predicted"][1:],
            color="#c22",
            ls="-.",
            lw=1,
            label=f"kink law refined after measuring (R = {summary['variants']['native']['exact_zero_chain']})",
        )
    for offset, (variant, colour) in zip(
        (-0.08, 0.08), ((VARIANTS[0], COLOURS["vector"]), (VARIANTS[1], COLOURS["scalar"]))
    ):
        rows = [row for row in summary["variants"][variant]["limit_slopes"] if row["order"] >= 1 and row["resolved"]]
        if not rows:
            continue
        order = np.array([row["order"] for row in rows])
        slope = np.array([row["slope"] for row in rows])
        bars = [slope - np.array([row["ci_low"] for row in rows]), np.array([row["ci_high"] for row in rows]) - slope]
        axes.errorbar(
            order + offset,
            slope,
            yerr=bars,
            color=colour,
            ls="none",
            marker="o",
            ms=4,
            capsize=2,
            label=f"{variant} activations",
        )
    axes.set_xticks(orders)
    axes.set_xlabel(r"interaction order $k$")
    axes.set_ylabel(r"limit slope of $\log\sqrt{\bar E_k}$ vs $\log\lambda$ (95 % CI)")
    axes.set_title(run_title(summary), fontsize=9)
    axes.legend(fontsize=7)
    return save_figure(figure_, output)


def plot_renormalised(summary: dict[str, Any], output: Path) -> Path:
    """Per variant, the mean spectrum renormalised over k ≥ 2 (q_k = E_k / Σ_{j≥2} E_j) at every λ."""
    figure_, axes_list = new_figure_grid(1, 2, 10.5, 3.8, sharey=True)
    orders = np.arange(2, summary["config"]["num_blocks"] + 1)
    colours = plt.cm.viridis(np.linspace(0.0, 0.9, len(summary["lambdas"])))
    for axes, variant in zip(axes_list, VARIANTS):
        for colour, value, spectrum in zip(
            colours, summary["lambdas"], summary["variants"][variant]["renormalised_spectrum"]
        ):
            axes.plot(orders, spectrum["mean"], color=colour, marker="o", ms=3, lw=1, label=f"$\\lambda$ = {value:g}")
        axes.set_xticks(orders)
        axes.set_xlabel(r"interaction order $k$")
        axes.set_title(f"{variant} activations", fontsize=9)
    axes_list[0].set_ylabel(r"$q_k = E_k / \Sigma_{j\geq 2}\,E_j$ (mean over images)")
    axes_list[-1].legend(fontsize=7)
    return save_figure(figure_, output)


def limit_table(summary: dict[str, Any]) -> str:
    """k, both laws' predictions, each variant's limit slope with CI and fitted λs, and the expected law's verdict."""
    native, smooth = (summary["variants"][variant] for variant in VARIANTS)
    refined = native["laws"].get("kink_chain")
    rows = []
    for order in range(1, summary["config"]["num_blocks"] + 1):
        row = [
            str(order),
            format_number(smooth["laws"]["lambda_k"]["predicted"][order]),
            format_number(native["laws"]["kink"]["predicted"][order]),
        ]
        row += [format_number(refined["predicted"][order])] if refined else []
        row += [slope_cell(native["limit_slopes"][order]), native["laws"]["kink"]["per_order"][order - 1]]
        row += [refined["per_order"][order - 1]] if refined else []
        row += [slope_cell(smooth["limit_slopes"][order]), smooth["laws"]["lambda_k"]["per_order"][order - 1]]
        rows.append(row)
    headers = ["k", "λ^k law", "kink law"] + (
        ["refined kink law (after measuring; post hoc)" if refined["post_hoc"] else "refined kink law (a priori test)"]
        if refined
        else []
    )
    headers += ["native: limit slope [95 % CI] (fitted λs)", "kink law at k"] + (["refined at k"] if refined else [])
    headers += ["smooth: limit slope [95 % CI] (fitted λs)", "λ^k law at k"]
    return markdown_table(headers, rows)


def renormalised_table(summary: dict[str, Any], variant: str) -> str:
    rows = [
        [f"{value:g}"] + [format_percent(share) for share in spectrum["mean"]]
        for value, spectrum in zip(summary["lambdas"], summary["variants"][variant]["renormalised_spectrum"])
    ]
    return markdown_table(["λ"] + [f"k = {order}" for order in range(2, summary["config"]["num_blocks"] + 1)], rows)


def swap_line(summary: dict[str, Any]) -> str:
    """What the swap does to the full-mask prediction at λ = 1."""
    swap = summary["swap_at_lambda_1"]
    return (
        f"The swap's cost at λ = 1, full mask: top-1 agreement with the native network {format_stat(swap['agreement'], percent=True)}"
        + (
            f"; top-1 {format_stat(swap['top1_native'], percent=True)} native vs {format_stat(swap['top1_smooth'], percent=True)} smooth."
            if swap["top1_native"]
            else " (the images are unlabelled)."
        )
    )


def report_markdown(summary: dict[str, Any], figures: dict[str, str]) -> str:
    """REPORT.md of one network, generated from summary_3c.json."""
    native, smooth = (summary["variants"][variant] for variant in VARIANTS)
    num_blocks = summary["config"]["num_blocks"]
    lambdas = format_lambdas(summary["lambdas"])
    method = (
        f"Two λ sweeps of the same network on the same images, λ ∈ {{{lambdas}}}, network arithmetic `{summary['config']['dtype']}`, "
        f"Möbius transform `{summary['config']['mobius_dtype']}`: its own activations, and the smooth swap, which computes `{smooth['gated_recursion']}`. "
        f"{summary['method']}. Tolerance ±{format_number(summary['slope_tolerance'])}; resolved means at least "
        f"{format_number(summary['floor_margin'])}× the round-off floor. "
        f"Predictions (experiment_2/README.md, stated before the 3C runs; Lite0's float32 3A/3B slopes were already known): λ^k law slope k (smooth stacks); "
        f"kink law slope min(k, s) with s = {format_number(native['kink_exponent'])} "
        "for this network (s = 1 with a post-sum activation on the gated blocks, 3/2 without). "
        + (
            f"Refined after the ResNet-18 measurement (README, \"After measuring\"): slope 1 for k ≤ R, 3/2 above, R = {native['exact_zero_chain']} "
            "the longest run of identity-shortcut blocks with a post-sum ReLU"
            + (
                "; these are the data it was fitted to, so it is scored consistent (post hoc), never holds. "
                if native["laws"]["kink_chain"]["post_hoc"]
                else ". "
            )
            if "kink_chain" in native["laws"]
            else "The law refined after the ResNet-18 measurement predicts the same here (R = 0), so it is not tested twice. "
        )
        + "An order counts only once its limit has converged (rule below); order 1 has slope 1 in any network and is not counted. Vector projection throughout."
    )
    results = [
        "### Limit slopes against both laws",
        limit_table(summary),
        figure("limit slope vs k", figures["slopes"]),
        "### Slope between successive λs (convergence to the limit)",
        "Native activations:",
        successive_table(native, num_blocks),
        "Smooth swap:",
        successive_table(smooth, num_blocks),
        "### Spectrum renormalised over k ≥ 2, per λ",
        "The kink law predicts a λ-independent shape at small λ; the λ^k law predicts q_2 → 1 with q_k/q_2 ∝ λ^{2(k−2)}. Native activations:",
        renormalised_table(summary, "native"),
        "Smooth swap:",
        renormalised_table(summary, "smooth"),
        figure("spectrum over k ≥ 2 per λ", figures["spectra"]),
    ]
    return limit_document(
        f"Experiment 3C — the small-λ limit, native vs smooth activations ({summary['config']['arch']})",
        summary,
        method,
        results,
        [swap_line(summary)],
        "experiment_2.step_5_limit_report",
    )


def run(args: LimitReportFlags) -> None:
    """The 3C summary, its two figures and REPORT.md."""
    summaries = load_variants(args.native, args.smooth)
    config = summaries["native"]["config"]
    folder = args.output_dir or inside(
        EXPERIMENT_DIR / f"results_3c_{name_from_file(config['arch'], 'config.arch', args.native)}", EXPERIMENT_DIR
    )
    summary = summarize(
        summaries,
        swap_agreement(args.native, args.smooth, config["seed"], folder / "summary_3c.json", config["run_id"]),
    )
    atomic_write_json(folder / "summary_3c.json", summary)
    figures = {
        "slopes": plot_slopes(summary, folder / "slope_vs_k"),
        "spectra": plot_renormalised(summary, folder / "spectrum_above_order_1"),
    }
    atomic_write_text(
        folder / "REPORT.md", report_markdown(summary, {name: path.name for name, path in figures.items()})
    )
    print(
        f"wrote {folder / 'summary_3c.json'}, {', '.join(str(path) for path in figures.values())} and {folder / 'REPORT.md'}: "
        + "; ".join(f"{entry['id']} {entry['decision']}" for entry in summary["verdicts"])
    )
