"""The paper's own figures, rendered from committed JSON (no statistic is computed here): paper/generated/*.pdf.

- :func:`depth_spectra_figure` — how does the order spectrum change along the depth ladder once orders are put on a
  common scale? For every network of the depth ladder (``paper/results_depth*/depth.json``), the mean vector spectrum
  p_k of its Experiment 2 run (the record's summaries with that architecture and trained weights) against k / L, with
  its 95 % bootstrap band, and the binomial null of the same L dashed in the same colour.
- :func:`basis_spectra_figure` — does the basis decide where the energy lies? For the same networks, the Möbius
  spectrum p_k and the Walsh spectrum (W_k over Σ_{k≥1} W_k) of both projections side by side, with their bands and
  the binomial null (one row per network, one column per projection).
- :func:`null_strip_figure` — where does the trained network lie among the random-init ones? The random-init null's
  per-network means of κ in both bases and both projections as strips, the trained network's value as a line, and the
  effect size the null's summary records (trained − the networks' mean [95 % CI over networks], z).

Inputs: the depth ladder, the Experiment 2 summaries and the null's summary. Outputs: paper/generated/depth_spectra.pdf,
basis_spectra.pdf and null_strip.pdf (PDF metadata without dates, so a rerun on the same JSON rewrites the same
figures).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.report import COLOURS, format_number, format_stat, network_name, new_figure, new_figure_grid, plt
from paper.checks import checked_json
from paper.committed_runs import committed_glob
from paper.experiments import record_of

DEPTH_FIGURE = "paper/generated/depth_spectra.pdf"
BASIS_FIGURE = "paper/generated/basis_spectra.pdf"
NULL_FIGURE = "paper/generated/null_strip.pdf"
BASES = {"Möbius": "#2a6fb0", "Walsh": "#c0392b"}  # one colour per basis in the basis figure
NULL_PANELS = (  # the null's statistics drawn as strips: (key in its summary, label)
    ("kappa_vector", r"$\kappa^v$ (Möbius, vector)"),
    ("walsh_kappa_vector", r"$\kappa_W^v$ (Walsh, vector)"),
    ("kappa_scalar", r"$\kappa^s$ (Möbius, scalar)"),
    ("walsh_kappa_scalar", r"$\kappa_W^s$ (Walsh, scalar)"),
)
PDF_METADATA = {"Creator": None, "Producer": None, "CreationDate": None}  # no dates: the same JSON gives the same file
LADDER_COLOURS = ("#2a6fb0", "#e07b22", "#3a9a3a", "#b03a8a")


def save_paper_figure(figure: plt.Figure, output: Path) -> Path:
    """Write ``figure`` to ``output`` without dates in its metadata and close it (not plotting.save_figure: its
    tight_layout would lay the axes over a legend placed below them)."""
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output, metadata=PDF_METADATA)
    plt.close(figure)
    return output


def ladder_spectra(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """(arch, Experiment 2 summary) for every network of the depth ladder that has a trained-weights run."""
    ladders = committed_glob(root, record_of("depth").summaries)
    if not ladders:
        return []
    archs = [rung["arch"] for rung in checked_json(ladders[0])["rungs"] if not rung.get("label")]  # not the controls
    summaries = {}
    for path in committed_glob(root, record_of(2).summaries):
        summary = checked_json(path)
        config = summary.get("config", {}) if isinstance(summary, dict) else {}
        native = "resize" not in config  # a run at another --resolution records its resize: a control, not the rung
        if (
            summary.get("experiment") == 2
            and config.get("weights") == "pretrained"
            and native
            and config.get("arch") in archs
        ):
            summaries.setdefault(config["arch"], summary)
    return [(arch, summaries[arch]) for arch in archs if arch in summaries]


def depth_spectra_figure(root: Path, output: Path) -> Path | None:
    """Draw the depth ladder's spectra against k / L into ``output`` (a .pdf); None when there is no ladder."""
    spectra = ladder_spectra(root)
    if not spectra:
        return None
    figure, axes = new_figure(6.0, 4.2)
    for colour, (arch, summary) in zip(LADDER_COLOURS, spectra):
        spectrum, blocks = summary["projections"]["vector"]["mean_spectrum"], summary["config"]["num_blocks"]
        position = np.arange(1, blocks + 1) / blocks
        label = f"{network_name(arch)} (L = {blocks}, {summary['config']['input_size']} px, N = {summary['num_valid']})"
        axes.plot(position, spectrum["mean"], "o-", color=colour, markersize=3, label=label)
        axes.fill_between(position, spectrum["ci_low"], spectrum["ci_high"], color=colour, alpha=0.2, linewidth=0)
        axes.plot(position, summary["binomial_null"]["spectrum"], "--", color=colour, linewidth=1)
    axes.plot([], [], "--", color="black", linewidth=1, label="binomial null of the same L")
    axes.set_xlabel(r"relative order $k/L$")
    axes.set_ylabel(r"mean energy share $p_k$ (vector)")
    axes.set_ylim(bottom=0)
    figure.legend(loc="lower center", ncol=2, fontsize=7, frameon=False)  # below the axes, off the data
    figure.tight_layout(rect=(0, 0.16, 1, 1))
    return save_paper_figure(figure, output)


def basis_series(summary: dict[str, Any], projection: str) -> dict[str, dict[str, Any]]:
    """The two spectra the basis figure draws for one projection of one Experiment 2 summary, as recorded: ``Möbius``
    (``projections``) and ``Walsh`` (``walsh.projections``) mean spectra over k = 1 … L with their CIs."""
    return {
        "Möbius": summary["projections"][projection]["mean_spectrum"],
        "Walsh": summary["walsh"]["projections"][projection]["mean_spectrum"],
    }


def basis_spectra_figure(root: Path, output: Path) -> Path | None:
    """Draw each ladder network's Möbius and Walsh spectra into ``output``, one column per network, the vector
    projection above the scalar one; None without networks whose summary has the Walsh control."""
    spectra = [(arch, summary) for arch, summary in ladder_spectra(root) if "walsh" in summary]
    if not spectra:
        return None
    figure, axes = new_figure_grid(2, len(spectra), width=6.4, height=3.3, sharey=True)
    for column, (arch, summary) in enumerate(spectra):
        blocks = summary["config"]["num_blocks"]
        orders = np.arange(1, blocks + 1)
        for row, projection in enumerate(("vector", "scalar")):
            ax = axes[row * len(spectra) + column]
            for basis, series in basis_series(summary, projection).items():
                ax.plot(orders, series["mean"], "o-", color=BASES[basis], markersize=2, linewidth=1.1, label=basis)
                ax.fill_between(orders, series["ci_low"], series["ci_high"], color=BASES[basis], alpha=0.2, linewidth=0)
            ax.plot(orders, summary["binomial_null"]["spectrum"], "--", color=COLOURS["binomial"], linewidth=0.8)
            ax.set_title(f"{network_name(arch)} (L = {blocks}), {projection}", fontsize=7)
            ax.locator_params(axis="x", integer=True)
            ax.tick_params(labelsize=6.5)
            if row == 1:
                ax.set_xlabel("order $k$", fontsize=7.5)
            if column == 0:
                ax.set_ylabel("energy share", fontsize=7.5)
    axes[0].set_ylim(bottom=0)
    axes[0].plot([], [], "--", color=COLOURS["binomial"], linewidth=0.8, label="binomial null")
    figure.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=7, frameon=False)
    figure.tight_layout(rect=(0, 0.06, 1, 1), h_pad=0.6, w_pad=0.4)
    return save_paper_figure(figure, output)


def null_effect_text(entry: dict[str, Any]) -> str:
    """``trained − mean = d [low, high], z = …`` of one statistic of the null's summary (its recorded effect)."""
    effect = entry["effect"]
    z = "" if effect["z"] is None else f", z = {format_number(effect['z'])}"
    return f"trained − mean = {format_stat(effect['difference'])}{z}"


def null_strip_figure(root: Path, output: Path) -> Path | None:
    """Draw the random-init null's networks (dots) and the trained network (line) per statistic of :data:`NULL_PANELS`
    into ``output`` (a 2 × 2 grid: Möbius left, Walsh right; vector above, scalar below); None without a committed
    null summary."""
    paths = committed_glob(root, record_of("2N").primary)
    if not paths:
        return None
    null = checked_json(paths[0])
    figure, axes = new_figure_grid(2, 2, width=6.4, height=2.6)
    for ax, (name, label) in zip(axes, NULL_PANELS):
        entry = null["statistics"][name]
        values = np.asarray(entry["networks"], dtype=np.float64)
        ranks = np.argsort(np.argsort(values))
        offsets = (ranks % 5 - 2) * 0.15  # neighbours in value spread over five rows: no random jitter
        ax.scatter(values, offsets, s=7, color=COLOURS["random"], label=f"{len(values)} random-init networks")
        ax.axvline(entry["trained"], color=COLOURS["vector"], linewidth=1.5, label="trained network")
        ax.set_ylim(-0.6, 0.6)
        ax.set_yticks([])
        ax.tick_params(labelsize=6.5)
        ax.set_title(
            f"{label}: {entry['networks_below']} of {len(values)} below the trained\n{null_effect_text(entry)}",
            fontsize=7,
        )
    figure.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=7, frameon=False)
    figure.tight_layout(rect=(0, 0.07, 1, 1), h_pad=0.6)
    return save_paper_figure(figure, output)


def render_paper_figures(root: Path) -> list[Path]:
    """Every figure of paper/generated/, rendered from the committed JSON."""
    written = [
        depth_spectra_figure(root, root / DEPTH_FIGURE),
        basis_spectra_figure(root, root / BASIS_FIGURE),
        null_strip_figure(root, root / NULL_FIGURE),
    ]
    return [path for path in written if path]
