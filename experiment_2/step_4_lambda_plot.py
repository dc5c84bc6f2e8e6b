"""Experiment 3A/3B, step 4 — residual-scaling figures and REPORT.md from summary_all.json.

Question: does the interaction spectrum migrate to low orders under residual scaling λ, what does
it cost in top-1 agreement, and does each order follow the λ^k law?

Inputs:  --summary (experiment_2.step_3_lambda_sweep's summary_all.json; timing.json beside it if present).
Outputs: kappa_vs_lambda, spectra_per_lambda, agreement_vs_lambda and lambda_law (each .png/.pdf) and
         REPORT.md in the summary's folder. Every number in the REPORT is read from the JSON; the
         verdict (monotonicity, agreement range, which orders follow λ^k) is computed from it.

    python -m experiment_2.step_4_lambda_plot --summary experiment_2/results_lambda/summary_all.json
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.errors import run_cli
from experiment_1.files import atomic_write_text, load_summary, read_json_if_exists
from experiment_1.report.plotting import COLOURS, new_figure, new_figure_grid, plt, run_title, save_figure
from experiment_1.report.markdown import ReportDocument, figure, format_number, format_percent, format_stat, markdown_table
from experiment_2.aggregate import PROJECTIONS

SEED_AGREEMENT_LAMBDAS = (0.8, 1.0)
SEED_ARCH = "resnet18"  # the seed reports 3A/3B for ResNet-18 only


def seed_numbers(summary: dict[str, Any]) -> dict[str, Any]:
    """The seed's 3A/3B numbers (ResNet-18) from the summary's ``published`` block."""
    return summary["published"][SEED_ARCH]


def series(summary: dict[str, Any], projection: str, statistic: str) -> dict[str, np.ndarray]:
    """``mean``/``ci_low``/``ci_high`` of one per-λ statistic, over the λs (largest first)."""
    stats = [entry["projections"][projection][statistic] for entry in summary["per_lambda"]]
    return {key: np.array([stat[key] for stat in stats]) for key in ("mean", "ci_low", "ci_high")}


def error_bars(stat: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Asymmetric error bars from a mean/CI series."""
    return [stat["mean"] - stat["ci_low"], stat["ci_high"] - stat["mean"]]


def plot_kappa(summary: dict[str, Any], output: Path) -> Path:
    """κ^v and κ^s against λ (95 % CIs), the binomial null κ and the seed's endpoints."""
    lambdas = np.array(summary["lambdas"])
    seed = seed_numbers(summary)
    figure, axes = new_figure(6.0, 3.8)
    for projection in PROJECTIONS:
        kappa = series(summary, projection, "kappa")
        axes.errorbar(lambdas, kappa["mean"], yerr=error_bars(kappa), color=COLOURS[projection], marker="o", ms=4, capsize=2, label=f"κ^{projection[0]} (ours)")
    axes.axhline(summary["binomial_null"]["kappa"], color=COLOURS["binomial"], ls="--", lw=1, label="binomial null κ")
    axes.plot([1.0, 0.1], [seed["kappa_at_lambda_1"], seed["kappa_at_lambda_0.1"]], ls="none", marker="*", ms=10, color="#c22", label="seed κ^v (λ = 1, 0.1)")
    axes.set_xlabel("residual scale λ")
    axes.set_ylabel("κ = Σ_{k≥1} k·p_k  (mean, 95 % CI)")
    axes.set_title(run_title(summary), fontsize=9)
    axes.legend(fontsize=7)
    return save_figure(figure, output)


def plot_spectra(summary: dict[str, Any], output: Path) -> Path:
    """Mean interaction spectrum p_k for every λ, one line per λ, per projection."""
    num_blocks = summary["binomial_null"]["num_blocks"]
    orders = np.arange(1, num_blocks + 1)
    figure, axes_list = new_figure_grid(1, len(PROJECTIONS), 10.0, 3.8, sharey=True)
    colours = plt.cm.viridis(np.linspace(0.0, 0.9, len(summary["lambdas"])))
    for axes, projection in zip(axes_list, PROJECTIONS):
        for colour, entry in zip(colours, summary["per_lambda"]):
            axes.plot(orders, entry["projections"][projection]["mean_spectrum"]["mean"], color=colour, marker="o", ms=3, lw=1.2, label=f"λ = {entry['lambda']:g}")
        axes.plot(orders, summary["binomial_null"]["spectrum"], color=COLOURS["binomial"], ls="--", lw=1, label="binomial null")
        axes.set_xticks(orders)
        axes.set_xlabel("interaction order k")
        axes.set_title(f"{projection} projection", fontsize=9)
    axes_list[0].set_ylabel("p_k (mean over images)")
    axes_list[-1].legend(fontsize=7, ncol=2)
    return save_figure(figure, output)


def plot_agreement(summary: dict[str, Any], output: Path) -> Path:
    """Top-1 agreement of argmax h_λ(full) with argmax h_1(full) against λ, with the seed's range."""
    lambdas = np.array(summary["lambdas"])
    stats = [entry["top1_agreement_with_lambda_1"] for entry in summary["per_lambda"]]
    agreement = {key: np.array([stat[key] for stat in stats]) for key in ("mean", "ci_low", "ci_high")}
    low, high = seed_numbers(summary)["agreement_range_lambda_0.8_to_1"]
    figure, axes = new_figure(6.0, 3.6)
    axes.fill_between(list(SEED_AGREEMENT_LAMBDAS), [low, low], [high, high], color="#c22", alpha=0.15, label="seed range, λ ∈ [0.8, 1]")
    axes.errorbar(lambdas, agreement["mean"], yerr=error_bars(agreement), color=COLOURS["vector"], marker="o", ms=4, capsize=2, label="ours")
    axes.set_xlabel("residual scale λ")
    axes.set_ylabel("top-1 agreement with λ = 1")
    axes.set_ylim(-0.02, 1.02)
    axes.legend(fontsize=7)
    return save_figure(figure, output)


def plot_lambda_law(summary: dict[str, Any], output: Path) -> Path:
    """Left: sqrt(Ē_k) against λ (log-log, vector). Right: fitted slope vs k with CIs and the line y = k."""
    law = summary["power_law"]
    lambdas = np.array(summary["lambdas"])
    num_blocks = summary["binomial_null"]["num_blocks"]
    figure, (energy_axes, slope_axes) = new_figure_grid(1, 2, 10.5, 4.0)
    colours = plt.cm.plasma(np.linspace(0.0, 0.85, num_blocks + 1))
    energy = np.array([entry["projections"]["vector"]["mean_energy"]["mean"] for entry in summary["per_lambda"]])
    for order in range(num_blocks + 1):
        energy_axes.plot(lambdas, np.sqrt(energy[:, order]), color=colours[order], marker="o", ms=3, lw=1, label=f"k = {order}")
    energy_axes.axvspan(min(law["fit_lambdas"]), max(law["fit_lambdas"]), color="#999", alpha=0.15, label="fit range")
    energy_axes.set_xscale("log")
    energy_axes.set_yscale("log")
    energy_axes.set_xlabel("λ")
    energy_axes.set_ylabel("sqrt(Ē_k), vector projection")
    energy_axes.legend(fontsize=6, ncol=2)
    orders = np.arange(num_blocks + 1)
    slope_axes.plot(orders, orders, color=COLOURS["binomial"], ls="--", lw=1, label="y = k (λ^k law)")
    for offset, projection in zip((-0.1, 0.1), PROJECTIONS):
        rows = law["projections"][projection]
        slope = np.array([row["slope"] for row in rows])
        bars = [slope - np.array([row["ci_low"] for row in rows]), np.array([row["ci_high"] for row in rows]) - slope]
        resolved = np.array([row["resolved"] for row in rows])
        slope_axes.errorbar(orders + offset, slope, yerr=bars, color=COLOURS[projection], ls="none", marker="o", ms=4, capsize=2, label=f"{projection} projection")
        if (~resolved).any():
            slope_axes.plot(orders[~resolved] + offset, slope[~resolved], ls="none", marker="x", ms=8, color="k", label="at the round-off floor" if projection == "vector" else None)
    slope_axes.set_xticks(orders)
    slope_axes.set_xlabel("interaction order k")
    slope_axes.set_ylabel("slope of log sqrt(Ē_k) vs log λ (95 % CI)")
    slope_axes.set_title(f"fit over λ ∈ {{{format_lambdas(law['fit_lambdas'])}}}", fontsize=9)
    slope_axes.legend(fontsize=7)
    return save_figure(figure, output)


def format_orders(orders: list[int]) -> str:
    """``k ∈ {1, 2}`` or ``none``."""
    return "k ∈ {" + ", ".join(str(order) for order in orders) + "}" if orders else "none"


def law_verdict(summary: dict[str, Any], projection: str) -> str:
    """Which orders follow the λ^k law, which deviate (and how), which are below the round-off floor."""
    law = summary["power_law"]
    rows = [row for row in law["projections"][projection] if row["order"] >= 1]
    unresolved = [row["order"] for row in rows if not row["resolved"]]
    follow = [row["order"] for row in rows if row["resolved"] and row["within_tolerance"]]
    deviate = [row for row in rows if row["resolved"] and not row["within_tolerance"]]
    text = f"{projection} projection: slope within ±{format_number(law['slope_tolerance'])} of k for {format_orders(follow)}"
    if deviate:
        slopes = [row["slope"] for row in deviate]
        shallower = sum(row["slope"] < row["order"] for row in deviate)
        text += (f"; deviates for {format_orders([row['order'] for row in deviate])} with slopes {format_number(min(slopes))}–{format_number(max(slopes))} "
                 f"({shallower} of {len(deviate)} shallower than k)")
    if unresolved:
        text += f"; {format_orders(unresolved)} not resolved (Ē_k within {format_number(law['floor_margin'])}× the round-off floor at some fitted λ)"
    return text + "."


def agreement_range(summary: dict[str, Any]) -> tuple[float, float] | None:
    """Min and max mean top-1 agreement over our λs in the seed's range [0.8, 1], or None if we have none there."""
    values = [entry["top1_agreement_with_lambda_1"]["mean"] for entry in summary["per_lambda"] if SEED_AGREEMENT_LAMBDAS[0] <= entry["lambda"] <= SEED_AGREEMENT_LAMBDAS[1]]
    return (min(values), max(values)) if values else None


def entry_at(summary: dict[str, Any], value: float) -> dict[str, Any] | None:
    """The per-λ entry at ``value``, or None if that λ was not evaluated."""
    return next((entry for entry in summary["per_lambda"] if abs(entry["lambda"] - value) < 1e-12), None)


def seed_rows(summary: dict[str, Any]) -> list[list[str]]:
    """The seed's numbers beside ours."""
    seed = seed_numbers(summary)
    rows = []
    for value, key in ((1.0, "kappa_at_lambda_1"), (0.1, "kappa_at_lambda_0.1")):
        entry = entry_at(summary, value)
        rows.append([f"κ^v at λ = {value:g}", format_number(seed[key]), format_stat(entry["projections"]["vector"]["kappa"]) if entry else "— (λ not evaluated)"])
    rows.append(["κ^v monotonic in λ", "yes" if seed["kappa_monotonic"] else "no", "yes" if summary["kappa_monotonic"]["vector"]["monotonic"] else "no"])
    ours = agreement_range(summary)
    low, high = seed["agreement_range_lambda_0.8_to_1"]
    rows.append(["top-1 agreement, λ ∈ [0.8, 1]", f"{format_percent(low, 0)} – {format_percent(high, 0)}", f"{format_percent(ours[0])} – {format_percent(ours[1])}" if ours else "— (no λ in range)"])
    return rows


def law_assumption(config: dict[str, Any]) -> str:
    """Whether this network meets the λ^k law's assumption (smoothness in λ), and which assumption fails if not."""
    if "smooth_activations" in config:
        return "λ^k law (proved for residual stacks smooth in λ; every activation here is smooth — the Experiment 3C swap — so its assumption holds):"
    kink = ("a ReLU follows every sum" if "ReLU" in config.get("post_activation", [])
            else "nothing follows the sum, but ReLU/ReLU6 sit inside the branches and on the fixed path")
    return (f"λ^k law — its assumption, smoothness in λ, does not hold here ({kink}: piecewise-linear activations), so deviations from slope k "
            "measure that assumption, not the theorem; Experiment 3C (experiment_2/README.md) derives the law such activations follow "
            "(slope min(k, s)) and tests both against a smooth swap:")


def verdict_lines(summary: dict[str, Any]) -> list[str]:
    """The verdict, every clause decided by numbers from the JSON."""
    seed, per_lambda = seed_numbers(summary), summary["per_lambda"]
    first, last = per_lambda[0], per_lambda[-1]
    lines = []
    for projection in PROJECTIONS:
        monotonic = summary["kappa_monotonic"][projection]
        start, end = first["projections"][projection]["kappa"]["mean"], last["projections"][projection]["kappa"]["mean"]
        shape = "strictly decreasing at every step" if monotonic["monotonic"] else "not monotonic (no decrease at " + ", ".join(f"λ {a:g} → {b:g}" for a, b in monotonic["violations"]) + ")"
        lines.append(f"- κ^{projection[0]} goes {format_number(start)} → {format_number(end)} as λ goes {first['lambda']:g} → {last['lambda']:g}, {shape}.")
    kappa_start, kappa_end = first["projections"]["vector"]["kappa"]["mean"], last["projections"]["vector"]["kappa"]["mean"]
    lines.append(f"- Low-order migration (3A): {'yes' if kappa_end < kappa_start else 'no'} — the seed reports {format_number(seed['kappa_at_lambda_1'])} → {format_number(seed['kappa_at_lambda_0.1'])}"
                 f" ({'monotonic' if seed['kappa_monotonic'] else 'not monotonic'}); our C_{{≤3}} goes {format_stat(first['projections']['vector']['c_le3'], percent=True)} → {format_stat(last['projections']['vector']['c_le3'], percent=True)}.")
    ours = agreement_range(summary)
    low, high = seed["agreement_range_lambda_0.8_to_1"]
    if ours:
        inside = low <= ours[0] and ours[1] <= high
        lines.append(f"- Cost (3B): top-1 agreement with λ = 1 stays within {format_percent(ours[0])} – {format_percent(ours[1])} for λ ∈ [0.8, 1] "
                     f"({'inside' if inside else 'outside'} the seed's {format_percent(low, 0)} – {format_percent(high, 0)}) and is {format_stat(last['top1_agreement_with_lambda_1'], percent=True)} at λ = {last['lambda']:g}.")
    else:
        lines.append(f"- Cost (3B): no evaluated λ lies in [0.8, 1]; top-1 agreement is {format_stat(last['top1_agreement_with_lambda_1'], percent=True)} at λ = {last['lambda']:g}.")
    lines.append("- " + law_assumption(summary["config"]) + " " + law_verdict(summary, "vector") + " " + law_verdict(summary, "scalar")
                 + " The scalar projection follows the class c = argmax h_λ(full), which may change with λ, so its slopes (order 0 included) need not be integers.")
    return lines


def method_text(summary: dict[str, Any]) -> str:
    """What is computed at each λ, how the λ^k law is fitted, and when an order counts as resolved."""
    law = summary["power_law"]
    return ("For each λ every image is evaluated under all 2^L gate masks. Experiment 2's statistics follow per image (order energies E_k, "
            "spectrum p_k = E_k / Σ_{j≥1} E_j over k ≥ 1, κ = Σ_{k≥1} k·p_k, C_{≤3}, trunk share E_0 / Σ_{j≥0} E_j; vector and scalar projections), "
            "as means with 95 % bootstrap CIs. 3B: top-1 agreement of argmax h_λ(full) with argmax h_1(full). λ^k law: " + law["method"] + ". "
            f"An order is *resolved* when its mean energy is at least {format_number(law['floor_margin'])}× the round-off floor (C(L,k)·2^k times "
            "the variance of rounding the logits to the network's arithmetic, a lower bound on the noise) at every fitted λ.")


def results_blocks(summary: dict[str, Any], figures: dict[str, str]) -> list[str]:
    """The Result section: per-λ overview and spectra, the λ^k slopes, the four figures."""
    law = summary["power_law"]
    num_blocks = summary["binomial_null"]["num_blocks"]
    overview = []
    for entry in summary["per_lambda"]:
        vector, scalar = entry["projections"]["vector"], entry["projections"]["scalar"]
        overview.append([f"{entry['lambda']:g}", format_stat(vector["kappa"]), format_stat(scalar["kappa"]), str(vector["mean_spectrum_peak_order"]),
                         format_stat(vector["c_le3"], percent=True), format_stat(vector["trunk_share"], percent=True), format_stat(entry["top1_agreement_with_lambda_1"], percent=True)])
    spectra = [[f"{entry['lambda']:g}"] + [format_percent(value) for value in entry["projections"]["vector"]["mean_spectrum"]["mean"]] for entry in summary["per_lambda"]]
    spectra.append(["binomial null"] + [format_percent(value) for value in summary["binomial_null"]["spectrum"]])
    slopes = []
    for vector_row, scalar_row in zip(law["projections"]["vector"], law["projections"]["scalar"]):
        slopes.append([str(vector_row["order"]), format_stat({"mean": vector_row["slope"], "ci_low": vector_row["ci_low"], "ci_high": vector_row["ci_high"]}),
                       "yes" if vector_row["within_tolerance"] else "no", "yes" if vector_row["ci_contains_expected"] else "no", format_number(vector_row["min_floor_ratio"]),
                       format_stat({"mean": scalar_row["slope"], "ci_low": scalar_row["ci_low"], "ci_high": scalar_row["ci_high"]}), "yes" if scalar_row["within_tolerance"] else "no"])
    return [
        "### 3A/3B — spectrum and agreement per λ",
        markdown_table(["λ", "κ^v", "κ^s", "peak k (vector)", "C_{≤3} (vector)", "trunk share (vector)", "top-1 agreement with λ = 1"], overview),
        figure("κ vs λ", figures["kappa"]),
        "Mean vector spectrum p_k per λ:",
        markdown_table(["λ"] + [f"k = {order}" for order in range(1, num_blocks + 1)], spectra),
        figure("spectra per λ", figures["spectra"]),
        figure("top-1 agreement vs λ", figures["agreement"]),
        "### The λ^k law",
        f"Slope of log sqrt(Ē_k) against log λ over λ ∈ {{{format_lambdas(law['fit_lambdas'])}}}; \"follows\" means |slope − k| ≤ {format_number(law['slope_tolerance'])}.",
        markdown_table(["k", "slope, vector [95 % CI]", "follows", "CI contains k", "min Ē_k / round-off floor", "slope, scalar [95 % CI]", "follows (scalar)"], slopes),
        figure("λ^k law", figures["law"]),
    ]


def format_lambdas(values: list[float]) -> str:
    """``1, 0.5, 0.1``."""
    return ", ".join(f"{value:g}" for value in values)


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
        seed_source=summary["published"]["source"],
        verdict=verdict_lines(summary),
        generator="experiment_2.step_4_lambda_plot",
        timing=timing,
        data_extra=f"; {lambdas}" + (f" (λ = {format_lambdas(added)} added as the agreement reference)" if added else ""),
        source="summary_all.json",
        residual_scale=lambdas,
    ).render()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--summary", type=Path, default=Path("experiment_2/results_lambda/summary_all.json"), help="summary_all.json of step_3_lambda_sweep (default: %(default)s)")
    args = parser.parse_args(argv)
    summary = load_summary(args.summary, "3A/3B", "experiment_2.step_3_lambda_sweep", keys=("per_lambda", "lambdas", "lambdas_requested", "kappa_monotonic.vector", "power_law.fit_lambdas", "binomial_null.num_blocks", "binomial_null.kappa", "binomial_null.spectrum", "published"))
    timing = read_json_if_exists(args.summary.parent / "timing.json")
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
