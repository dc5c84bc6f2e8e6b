"""Display names and table cells shared by Experiment 5's REPORT (step 3) and tables.md (paper.make_tables)."""

from __future__ import annotations

from typing import Any

from experiment_1.report import format_number, format_stat

SCORE_LABELS = {
    "cross_entropy": "cross-entropy",
    "one_minus_p_true": "1 − p(true)",
    "one_minus_max_softmax": "1 − max softmax",
    "entropy": "softmax entropy",
    "negative_margin": "−(top-1 − top-2 margin)",
}
MEASURE_LABELS = {
    "kbar_vector": "k̄ (vector)",
    "kbar_scalar": "k̄ (scalar)",
    "kappa_vector": "κ (vector)",
    "kappa_scalar": "κ (scalar)",
    "c_le3_vector": "C≤3 (vector)",
    "c_le3_scalar": "C≤3 (scalar)",
    "walsh_kappa_vector": "κ_W (vector, Walsh)",
    "walsh_kappa_scalar": "κ_W (scalar, Walsh)",
    "n_eff_vector": "N_eff^v",
    "k_err": "K_τ^err",
    "k_mass": "K_η^mass",
}
PERCENT_MEASURES = ("c_le3_vector", "c_le3_scalar")
# the figures' labels, in the paper's notation (matplotlib mathtext); the tables keep MEASURE_LABELS
FIGURE_LABELS = {
    "kbar_vector": r"$\bar k^v$",
    "kbar_scalar": r"$\bar k^s$",
    "kappa_vector": r"$\kappa^v$",
    "kappa_scalar": r"$\kappa^s$",
    "c_le3_vector": r"$C_{\leq 3}^v$",
    "c_le3_scalar": r"$C_{\leq 3}^s$",
    "walsh_kappa_vector": r"$\kappa_W^v$",
    "walsh_kappa_scalar": r"$\kappa_W^s$",
    "n_eff_vector": r"$N_{\mathrm{eff}}^v$",
    "k_err": r"$K_\tau^{\mathrm{err}}$",
    "k_mass": r"$K_\eta^{\mathrm{mass}}$",
}


def measure_label(name: str) -> str:
    """A measure's display name; the extra thresholds read ``K_τ^err (τ = 0.05)``."""
    if name.startswith("k_err_tau_"):
        return f"K_τ^err (τ = {name.removeprefix('k_err_tau_')})"
    if name.startswith("k_mass_eta_"):
        return f"K_η^mass (η = {name.removeprefix('k_mass_eta_')})"
    return MEASURE_LABELS[name]


def measure_figure_label(name: str) -> str:
    """A measure's name in a figure, in the paper's notation: ``$K_\\tau^{\\mathrm{err}}$ ($\\tau$ = 0.05)``."""
    if name.startswith("k_err_tau_"):
        return FIGURE_LABELS["k_err"] + f" ($\\tau$ = {name.removeprefix('k_err_tau_')})"
    if name.startswith("k_mass_eta_"):
        return FIGURE_LABELS["k_mass"] + f" ($\\eta$ = {name.removeprefix('k_mass_eta_')})"
    return FIGURE_LABELS[name]


def stat_cell(stat: dict[str, Any], measure: str) -> str:
    """``mean [CI]`` of a measure (C≤3 in percent)."""
    return format_stat(stat, percent=measure in PERCENT_MEASURES)


def difference_cell(stat: dict[str, Any], measure: str) -> str:
    """A difference of means with its CI (C≤3 in percentage points)."""
    if measure in PERCENT_MEASURES:
        return f"{100 * stat['mean']:+.2f} pp [{100 * stat['ci_low']:+.2f}, {100 * stat['ci_high']:+.2f}]"
    return f"{format_number(stat['mean'])} [{format_number(stat['ci_low'])}, {format_number(stat['ci_high'])}]"


def rho_cell(entry: dict[str, Any], prefix: str = "") -> str:
    """``ρ [CI]`` of a Spearman entry (``prefix="partial_"`` for the partial ρ)."""
    return f"{format_number(entry[prefix + 'rho'])} [{format_number(entry[prefix + 'ci_low'])}, {format_number(entry[prefix + 'ci_high'])}]"


def decision_cell(verdict: dict[str, Any]) -> str:
    """``**decision**`` of a verdict (:mod:`experiment_1.report.verdicts`), with its Holm-adjusted p where a test was read."""
    test = verdict.get("test")
    adjusted = (
        f", Holm p = {format_number(test['p_adjusted'], 2)}" if test and test.get("p_adjusted") is not None else ""
    )
    return f"**{verdict['decision']}**{adjusted}"
