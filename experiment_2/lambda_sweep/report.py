"""The 3A/3B REPORT blocks, from summary_all.json only: the per-λ overview and spectra, the λ^k slopes, the seed's
numbers beside ours, and the method text."""

from __future__ import annotations

from typing import Any

from experiment_1.report import by_id, figure, format_number, format_percent, format_stat, markdown_table
from experiment_2.lambda_sweep.figures import SEED_AGREEMENT_LAMBDAS, format_lambdas, seed_numbers

WALSH_NOTE = (
    "κ and the spectrum are read in the Möbius basis (the original study's); κ_W, in the Walsh (±1 Fourier) basis, is "
    "the total influence over the variance of h over masks, W_k the variance at degree k (Experiment 2's Walsh control). "
    "The migration claim is decided in each basis and the two read together (verdicts `walsh.migration.*`, "
    "`basis.migration.*`)."
)


def entry_at(summary: dict[str, Any], value: float) -> dict[str, Any] | None:
    """The per-λ entry at ``value``, or None if that λ was not evaluated."""
    return next((entry for entry in summary["per_lambda"] if abs(entry["lambda"] - value) < 1e-12), None)


def agreement_range(summary: dict[str, Any]) -> tuple[float, float] | None:
    """Min and max mean top-1 agreement over our λs in the seed's range [0.8, 1], or None if we have none there."""
    values = [
        entry["top1_agreement_with_lambda_1"]["mean"]
        for entry in summary["per_lambda"]
        if SEED_AGREEMENT_LAMBDAS[0] <= entry["lambda"] <= SEED_AGREEMENT_LAMBDAS[1]
    ]
    return (min(values), max(values)) if values else None


def seed_rows(summary: dict[str, Any]) -> list[list[str]]:
    """The seed's numbers beside ours."""
    seed = seed_numbers(summary)
    rows = []
    for value, key in ((1.0, "kappa_at_lambda_1"), (0.1, "kappa_at_lambda_0.1")):
        entry = entry_at(summary, value)
        rows.append(
            [
                f"κ^v at λ = {value:g}",
                format_number(seed[key]),
                format_stat(entry["projections"]["vector"]["kappa"]) if entry else "— (λ not evaluated)",
            ]
        )
    rows.append(
        [
            "κ^v falls at every step (ours: the monotone verdict)",
            "yes" if seed["kappa_monotonic"] else "no",
            by_id(summary["verdicts"])["monotone.vector"]["decision"],
        ]
    )
    ours = agreement_range(summary)
    low, high = seed["agreement_range_lambda_0.8_to_1"]
    rows.append(
        [
            "top-1 agreement, λ ∈ [0.8, 1]",
            f"{format_percent(low, 0)} – {format_percent(high, 0)}",
            f"{format_percent(ours[0])} – {format_percent(ours[1])}" if ours else "— (no λ in range)",
        ]
    )
    return rows


def method_text(summary: dict[str, Any]) -> str:
    """What is computed at each λ, how the λ^k law is fitted, and when an order counts as resolved."""
    law = summary["power_law"]
    return (
        "For each λ every image is evaluated under all 2^L gate masks. Experiment 2's statistics follow per image (order energies E_k, "
        "spectrum p_k = E_k / Σ_{j≥1} E_j over k ≥ 1, κ = Σ_{k≥1} k·p_k, C_{≤3}, trunk share E_0 / Σ_{j≥0} E_j; vector and scalar projections), "
        "as means with 95 % bootstrap CIs. 3B: top-1 agreement of argmax h_λ(full) with argmax h_1(full). λ^k law: "
        + law["method"]
        + ". "
        f"An order is *resolved* when its mean energy is at least {format_number(law['floor_margin'])}× the round-off floor (C(L,k)·2^k times "
        "the variance of rounding the logits to the network's arithmetic, a lower bound on the noise) at every fitted λ."
    )


def results_blocks(summary: dict[str, Any], figures: dict[str, str]) -> list[str]:
    """The Result section: per-λ overview and spectra, the λ^k slopes, the four figures."""
    law = summary["power_law"]
    num_blocks = summary["binomial_null"]["num_blocks"]
    walsh = [entry["projections"] for entry in summary["walsh"]["per_lambda"]] if "walsh" in summary else None
    overview = []
    for position, entry in enumerate(summary["per_lambda"]):
        vector, scalar = entry["projections"]["vector"], entry["projections"]["scalar"]
        overview.append(
            [
                f"{entry['lambda']:g}",
                format_stat(vector["kappa"]),
                format_stat(scalar["kappa"]),
                *(
                    []
                    if walsh is None
                    else [format_stat(walsh[position][name]["kappa"]) for name in ("vector", "scalar")]
                ),
                str(vector["mean_spectrum_peak_order"]),
                format_stat(vector["c_le3"], percent=True),
                format_stat(vector["trunk_share"], percent=True),
                format_stat(entry["top1_agreement_with_lambda_1"], percent=True),
            ]
        )
    spectra = [
        [f"{entry['lambda']:g}"]
        + [format_percent(value) for value in entry["projections"]["vector"]["mean_spectrum"]["mean"]]
        for entry in summary["per_lambda"]
    ]
    spectra.append(["binomial null"] + [format_percent(value) for value in summary["binomial_null"]["spectrum"]])
    slopes = []
    for vector_row, scalar_row in zip(law["projections"]["vector"], law["projections"]["scalar"]):
        slopes.append(
            [
                str(vector_row["order"]),
                format_stat(
                    {"mean": vector_row["slope"], "ci_low": vector_row["ci_low"], "ci_high": vector_row["ci_high"]}
                ),
                "yes" if vector_row["within_tolerance"] else "no",
                "yes" if vector_row["ci_contains_expected"] else "no",
                format_number(vector_row["min_floor_ratio"]),
                format_stat(
                    {"mean": scalar_row["slope"], "ci_low": scalar_row["ci_low"], "ci_high": scalar_row["ci_high"]}
                ),
                "yes" if scalar_row["within_tolerance"] else "no",
            ]
        )
    return [
        "### 3A/3B — spectrum and agreement per λ",
        markdown_table(
            [
                "λ",
                "κ^v",
                "κ^s",
                *([] if walsh is None else ["κ_W^v (Walsh)", "κ_W^s (Walsh)"]),
                "peak k (vector)",
                "C_{≤3} (vector)",
                "trunk share (vector)",
                "top-1 agreement with λ = 1",
            ],
            overview,
        ),
        *([] if walsh is None else [WALSH_NOTE]),
        figure("κ vs λ", figures["kappa"]),
        "Mean vector spectrum p_k per λ:",
        markdown_table(["λ"] + [f"k = {order}" for order in range(1, num_blocks + 1)], spectra),
        figure("spectra per λ", figures["spectra"]),
        figure("top-1 agreement vs λ", figures["agreement"]),
        "### The λ^k law",
        f"Slope of log sqrt(Ē_k) against log λ over λ ∈ {{{format_lambdas(law['fit_lambdas'])}}}; \"follows\" means "
        f"|slope − k| ≤ {format_number(law['slope_tolerance'])}.",
        markdown_table(
            [
                "k",
                "slope, vector [95 % CI]",
                "follows",
                "CI contains k",
                "min Ē_k / round-off floor",
                "slope, scalar [95 % CI]",
                "follows (scalar)",
            ],
            slopes,
        ),
        figure("λ^k law", figures["law"]),
    ]
