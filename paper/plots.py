"""The paper's own figures, rendered from committed JSON (no statistic is computed here): paper/generated/*.pdf.

Question: how does the order spectrum change along the depth ladder once orders are put on a common
scale? :func:`depth_spectra_figure` draws, for every network of the depth ladder
(``paper/results_depth*/depth.json``), the mean vector spectrum p_k of its Experiment 2 run (the record's
summaries with that architecture and trained weights) against k / L, with its 95 % bootstrap band, and the
binomial null of the same L (equal energy on every subset) dashed in the same colour.

Inputs: the depth ladder and the Experiment 2 summaries. Outputs: paper/generated/depth_spectra.pdf (PDF
metadata without dates, so a rerun on the same JSON rewrites the same figure).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.report import network_name, new_figure, plt
from paper.checks import checked_json
from paper.committed_runs import committed_glob
from paper.experiments import record_of

DEPTH_FIGURE = "paper/generated/depth_spectra.pdf"
PDF_METADATA = {"Creator": None, "Producer": None, "CreationDate": None}  # no dates: the same JSON gives the same file
LADDER_COLOURS = ("#2a6fb0", "#e07b22", "#3a9a3a", "#b03a8a")


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
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(
        output, metadata=PDF_METADATA
    )  # not plotting.save_figure: its tight_layout would lay the axes over the legend
    plt.close(figure)
    return output


def render_paper_figures(root: Path) -> list[Path]:
    """Every figure of paper/generated/, rendered from the committed JSON."""
    written = depth_spectra_figure(root, root / DEPTH_FIGURE)
    return [written] if written else []
