"""Statistics, decisions, Markdown reports, figures and the original study's published numbers (numpy and
matplotlib, no torch).

This face is the package's contract: experiments, paper/ and users' factories import these names from
``experiment_1.report``, never from its modules (tests/whole/test_layers.py). Each name is imported on first use, so
importing one light name does not import the heavy modules beside it. The package's own modules import each other
by module path, never through this face.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> the module of this package that defines it
_EXPORTS: dict[str, str] = {
    "NON_FINITE": "markdown",
    "ReportDocument": "markdown",
    "figure": "markdown",
    "format_number": "markdown",
    "format_percent": "markdown",
    "format_stat": "markdown",
    "markdown_table": "markdown",
    "original_study_wording": "markdown",
    "verdict_lines": "markdown",
    "verdict_sentence": "markdown",
    "COLOURS": "plotting",
    "new_figure": "plotting",
    "new_figure_grid": "plotting",
    "plt": "plotting",
    "run_title": "plotting",
    "save_figure": "plotting",
    "published_numbers": "markdown",
    "published_value": "markdown",
    "network_name": "markdown",
    "pretty_networks": "markdown",
    "ExperimentRecord": "record",
    "resolve": "record",
    "NUM_RESAMPLES": "stats",
    "bootstrap_mean_ci": "stats",
    "bootstrap_mean_ci_rows": "stats",
    "exact_proportion_ci": "stats",
    "exact_proportion_ci_rows": "stats",
    "sign_flip_p_rows": "stats",
    "check_verdicts": "verdict_check",
    "load_checked_summary": "verdict_check",
    "ALPHA": "verdicts",
    "CANNOT_TELL": "verdicts",
    "FAILS": "verdicts",
    "HOLDS": "verdicts",
    "NEAR_BOUND_MARGIN": "verdicts",
    "NOT_CONVERGED": "verdicts",
    "NO_POWER": "verdicts",
    "OUT_OF_RANGE": "verdicts",
    "POST_HOC": "verdicts",
    "POWER": "verdicts",
    "SATURATED": "verdicts",
    "SATURATION_SHARE": "verdicts",
    "UNRESOLVED": "verdicts",
    "by_id": "verdicts",
    "conjunction": "verdicts",
    "all_must_hold": "verdicts",
    "decide_by_ci": "verdicts",
    "decide_equivalence": "verdicts",
    "equivalence_margin": "verdicts",
    "parts_decision": "verdicts",
    "tost": "verdicts",
    "tost_two_sample": "verdicts",
    "TOST_NAME": "verdicts",
    "EQUIVALENCE_RULE": "verdicts",
    "PARTLY_CONTRADICTED": "verdicts",
    "effect_from_stat": "verdicts",
    "holm": "verdicts",
    "hypothesis_test": "verdicts",
    "power_guard": "verdicts",
    "proportion_effect": "verdicts",
    "saturation": "verdicts",
    "seed_comparison": "verdicts",
    "sign_test_power": "verdicts",
    "verdict": "verdicts",
}
# modules of this package that callers import whole (``from experiment_1.report import markdown``)
_SUBMODULES = ('markdown',)

__all__ = sorted([*_EXPORTS, *_SUBMODULES])


def __getattr__(name: str) -> Any:
    """The exported ``name``, imported from its module on first use (and kept on the package)."""
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
