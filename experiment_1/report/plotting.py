"""Matplotlib set-up shared by the plot steps: headless backend, consistent style, PNG (+PDF) output.

Figures are written atomically (a temporary file beside the target, then renamed), so a signal or a
full disk during a plot never leaves a half-written PDF at its final path."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

from experiment_1.report.markdown import network_name  # noqa: E402


def new_figure(width: float = 6.0, height: float = 4.0) -> tuple[plt.Figure, plt.Axes]:
    """A figure with one axes."""
    figure, axes = plt.subplots(figsize=(width, height), dpi=120)
    return figure, axes


def save_figure(figure: plt.Figure, path_without_suffix: Path, pdf: bool = True) -> Path:
    """Save as ``.png`` (and ``.pdf`` for the paper); return the PNG path."""
    path_without_suffix.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    png = path_without_suffix.with_suffix(".png")
    try:
        _atomic_savefig(figure, png, {"Software": None})
        if pdf:
            _atomic_savefig(
                figure,
                path_without_suffix.with_suffix(".pdf"),
                {"Creator": None, "Producer": None, "CreationDate": None},
            )
    finally:
        plt.close(figure)
    return png


def _atomic_savefig(figure: plt.Figure, path: Path, metadata: dict[str, Any]) -> None:
    """``figure.savefig(path)`` through a temporary file in the same folder, renamed into place."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:200]}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            figure.savefig(stream, format=path.suffix.lstrip("."), metadata=metadata)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(temporary, 0o666 & ~mask)  # mkstemp's 0600 would hide figures from a shared group
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def new_figure_grid(
    rows: int, columns: int, width: float = 6.0, height: float = 4.0, sharey: bool = False
) -> tuple[plt.Figure, list[plt.Axes]]:
    """A figure with a ``rows × columns`` grid of axes, returned as a flat list in row order."""
    figure, axes = plt.subplots(rows, columns, figsize=(width, height), dpi=120, squeeze=False, sharey=sharey)
    return figure, list(axes.ravel())


# One colour per role, so that a quantity looks the same in every figure of every experiment.
COLOURS = {"vector": "#2a6fb0", "scalar": "#e07b22", "random": "#888888", "binomial": "#000000"}


def run_title(summary: dict[str, Any]) -> str:
    """A figure title naming the run as the text does: ``EfficientNet-Lite0, N = 250``, ``ResNet-18 (random init), N = 6``."""
    return f"{network_name(summary['config']['arch'], summary['config']['weights'])}, N = {summary['num_valid']}"
