"""The 3A/3B figures, drawn from summary_all.json only: κ against λ, the spectra per λ, top-1 agreement against λ,
and the λ^k law (sqrt(Ē_k) against λ, fitted slope against k)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.mobius import PROJECTIONS
from experiment_1.report import COLOURS, new_figure, new_figure_grid, plt, run_title, save_figure

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
    """κ^v and κ^s against λ (95 % CIs), κ_W^v and κ_W^s beside them where the sweep recorded the Walsh basis, the
    binomial null κ and the seed's endpoints."""
    lambdas = np.array(summary["lambdas"])
    seed = seed_numbers(summary)
    figure, axes = new_figure(6.0, 3.8)
    for projection in PROJECTIONS:
        kappa = series(summary, projection, "kappa")
        axes.errorbar(
            lambdas,
            kappa["mean"],
            yerr=error_bars(kappa),
            color=COLOURS[projection],
            marker="o",
            ms=4,
            capsize=2,
            label=f"$\\kappa^{projection[0]}$ (this project)",
        )
        if "walsh" in summary:  # the same κ in the Walsh basis, dashed
            walsh = series(summary["walsh"], projection, "kappa")
            axes.errorbar(
                lambdas,
                walsh["mean"],
                yerr=error_bars(walsh),
                color=COLOURS[projection],
                marker="s",
                ms=3,
                capsize=2,
                ls="--",
                label=f"$\\kappa_W^{projection[0]}$ (Walsh basis)",
            )
    axes.axhline(
        summary["binomial_null"]["kappa"], color=COLOURS["binomial"], ls="--", lw=1, label=r"binomial null $\kappa$"
    )
    axes.plot(
        [1.0, 0.1],
        [seed["kappa_at_lambda_1"], seed["kappa_at_lambda_0.1"]],
        ls="none",
        marker="*",
        ms=10,
        color="#c22",
        label=r"the original study's $\kappa^v$ ($\lambda$ = 1, 0.1)",
    )
    axes.set_xlabel(r"residual scale $\lambda$")
    axes.set_ylabel(r"$\kappa = \Sigma_{k\geq 1}\,k\,p_k$ (mean, 95 % CI)")
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
            axes.plot(
                orders,
                entry["projections"][projection]["mean_spectrum"]["mean"],
                color=colour,
                marker="o",
                ms=3,
                lw=1.2,
                label=f"$\\lambda$ = {entry['lambda']:g}",
            )
        axes.plot(
            orders,
            summary["binomial_null"]["spectrum"],
            color=COLOURS["binomial"],
            ls="--",
            lw=1,
            label="binomial null",
        )
        axes.set_xticks(orders)
        axes.set_xlabel(r"interaction order $k$")
        axes.set_title(f"{projection} projection", fontsize=9)
    axes_list[0].set_ylabel(r"$p_k$ (mean over images)")
    axes_list[-1].legend(fontsize=7, ncol=2)
    return save_figure(figure, output)


def plot_agreement(summary: dict[str, Any], output: Path) -> Path:
    """Top-1 agreement of argmax h_λ(full) with argmax h_1(full) against λ, with the seed's range."""
    lambdas = np.array(summary["lambdas"])
    stats = [entry["top1_agreement_with_lambda_1"] for entry in summary["per_lambda"]]
    agreement = {key: np.array([stat[key] for stat in stats]) for key in ("mean", "ci_low", "ci_high")}
    low, high = seed_numbers(summary)["agreement_range_lambda_0.8_to_1"]
    figure, axes = new_figure(6.0, 3.6)
    axes.fill_between(
        list(SEED_AGREEMENT_LAMBDAS),
        [low, low],
        [high, high],
        color="#c22",
        alpha=0.15,
        label=r"the original study's range, $\lambda \in [0.8, 1]$",
    )
    axes.errorbar(
        lambdas,
        agreement["mean"],
        yerr=error_bars(agreement),
        color=COLOURS["vector"],
        marker="o",
        ms=4,
        capsize=2,
        label="this project",
    )
    axes.set_xlabel(r"residual scale $\lambda$")
    axes.set_ylabel(r"top-1 agreement with $\lambda = 1$")
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
        energy_axes.plot(
            lambdas, np.sqrt(energy[:, order]), color=colours[order], marker="o", ms=3, lw=1, label=f"$k$ = {order}"
        )
    energy_axes.axvspan(min(law["fit_lambdas"]), max(law["fit_lambdas"]), color="#999", alpha=0.15, label="fit range")
    energy_axes.set_xscale("log")
    energy_axes.set_yscale("log")
    energy_axes.set_xlabel(r"$\lambda$")
    energy_axes.set_ylabel(r"$\sqrt{\bar E_k}$, vector projection")
    energy_axes.legend(fontsize=6, ncol=2)
    orders = np.arange(num_blocks + 1)
    slope_axes.plot(orders, orders, color=COLOURS["binomial"], ls="--", lw=1, label=r"$y = k$ ($\lambda^k$ law)")
    for offset, projection in zip((-0.1, 0.1), PROJECTIONS):
        rows = law["projections"][projection]
        slope = np.array([row["slope"] for row in rows])
        bars = [slope - np.array([row["ci_low"] for row in rows]), np.array([row["ci_high"] for row in rows]) - slope]
        resolved = np.array([row["resolved"] for row in rows])
        slope_axes.errorbar(
            orders + offset,
            slope,
            yerr=bars,
            color=COLOURS[projection],
            ls="none",
            marker="o",
            ms=4,
            capsize=2,
            label=f"{projection} projection",
        )
        if (~resolved).any():
            slope_axes.plot(
                orders[~resolved] + offset,
                slope[~resolved],
                ls="none",
                marker="x",
                ms=8,
                color="k",
                label="at the round-off floor" if projection == "vector" else None,
            )
    slope_axes.set_xticks(orders)
    slope_axes.set_xlabel(r"interaction order $k$")
    slope_axes.set_ylabel(r"slope of $\log\sqrt{\bar E_k}$ vs $\log\lambda$ (95 % CI)")
    slope_axes.set_title(f"fit over $\\lambda \\in$ {{{format_lambdas(law['fit_lambdas'])}}}", fontsize=9)
    slope_axes.legend(fontsize=7)
    return save_figure(figure, output)


def format_lambdas(values: list[float]) -> str:
    """``1, 0.5, 0.1``."""
    return ", ".join(f"{value:g}" for value in values)
