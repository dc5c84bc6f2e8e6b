"""Statistics, decisions, Markdown reports, figures and the original study's published numbers (numpy and
matplotlib, no torch).

Its names load lazily, on first use (:mod:`experiment_1.faces`); import them from this face, never from its
modules (tests/whole/test_layers.py).
"""

from __future__ import annotations

from experiment_1.faces import lazy_face

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
    "resolve": "rules",
    "NUM_RESAMPLES": "stats",
    "bootstrap_mean_ci": "stats",
    "bootstrap_mean_ci_rows": "stats",
    "exact_proportion_ci": "stats",
    "exact_proportion_ci_rows": "stats",
    "sign_flip_p_rows": "stats",
    "Contradiction": "rules",
    "Missing": "rules",
    "Reading": "rules",
    "Rule": "rules",
    "VerdictTable": "rules",
    "check_verdicts": "rules",
    "rule_of": "rules",
    "ci_against": "rules",
    "every_part": "rules",
    "excludes_zero": "rules",
    "holm_sides": "rules",
    "load_checked_summary": "rules",
    "same": "rules",
    "side": "rules",
    "significant_side": "rules",
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
    "bounded": "verdicts",
    "by_id": "verdicts",
    "all_must_hold": "verdicts",
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

__all__, __getattr__, __dir__ = lazy_face(__name__, _EXPORTS, _SUBMODULES)
