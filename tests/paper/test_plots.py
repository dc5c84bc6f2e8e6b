"""The paper's own figures (paper.plots) draw what the committed JSON records: the basis figure's curves are the
Experiment 2 summaries' Möbius and Walsh spectra, the null strip's points and line are the null summary's networks and
trained value with its recorded effect; a rerun on the same JSON writes the same bytes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from experiment_1.report import format_stat
from paper import plots
from paper.committed_runs import allow_all_runs

REPO = Path(__file__).resolve().parents[2]
NULL = REPO / "experiment_2/results_efficientnet_lite0_null_seeds/summary.json"


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list:
    """The figures the functions would save, kept open for inspection instead."""
    figures: list = []

    def keep(figure, output: Path) -> Path:
        figures.append(figure)
        return output

    monkeypatch.setattr(plots, "save_paper_figure", keep)
    yield figures
    for figure in figures:
        plots.plt.close(figure)


def test_the_basis_figure_draws_each_networks_recorded_spectra(drawn: list) -> None:
    assert plots.basis_spectra_figure(REPO, REPO / plots.BASIS_FIGURE) is not None
    networks = plots.ladder_spectra(REPO)
    axes = drawn[0].axes
    assert len(networks) >= 3 and len(axes) == 2 * len(networks)
    for column, (arch, summary) in enumerate(networks):
        for row, projection in enumerate(("vector", "scalar")):
            ax = axes[row * len(networks) + column]
            mobius, walsh, null = ax.lines[:3]
            recorded = summary["projections"][projection]["mean_spectrum"]["mean"]
            assert list(mobius.get_ydata()) == recorded
            assert list(walsh.get_ydata()) == summary["walsh"]["projections"][projection]["mean_spectrum"]["mean"]
            assert list(null.get_ydata()) == summary["binomial_null"]["spectrum"]
            assert list(mobius.get_xdata()) == list(range(1, summary["config"]["num_blocks"] + 1))
            assert ax.get_title().endswith(f"(L = {summary['config']['num_blocks']}), {projection}")
            # the two spectra are shares of their own energies: each sums to 1 over k ≥ 1
            assert abs(sum(recorded) - 1) < 1e-9 and abs(sum(walsh.get_ydata()) - 1) < 1e-9


def test_the_null_strip_draws_the_recorded_networks_trained_value_and_effect(drawn: list) -> None:
    null = json.loads(NULL.read_text())
    assert plots.null_strip_figure(REPO, REPO / plots.NULL_FIGURE) is not None
    axes = drawn[0].axes
    assert len(axes) == len(plots.NULL_PANELS)
    for ax, (name, _) in zip(axes, plots.NULL_PANELS):
        entry = null["statistics"][name]
        points = ax.collections[0].get_offsets()
        assert np.array_equal(np.asarray(points)[:, 0], np.asarray(entry["networks"]))
        assert set(np.round(np.asarray(points)[:, 1], 12)) <= {-0.3, -0.15, 0.0, 0.15, 0.3}
        assert list(ax.lines[0].get_xdata()) == [entry["trained"]] * 2
        title = ax.get_title()
        assert format_stat(entry["effect"]["difference"]) in title
        assert f"{entry['networks_below']} of {len(entry['networks'])} below the trained" in title


def test_a_rerun_writes_the_same_bytes(tmp_path: Path) -> None:
    first, second = tmp_path / "a.pdf", tmp_path / "b.pdf"
    plots.basis_spectra_figure(REPO, first)
    plots.basis_spectra_figure(REPO, second)
    assert first.read_bytes() == second.read_bytes()


def test_no_ladder_and_no_null_draw_nothing(tmp_path: Path) -> None:
    allow_all_runs(tmp_path)
    assert plots.basis_spectra_figure(tmp_path, tmp_path / "basis.pdf") is None
    assert plots.null_strip_figure(tmp_path, tmp_path / "null.pdf") is None
    assert not (tmp_path / "basis.pdf").exists() and not (tmp_path / "null.pdf").exists()
