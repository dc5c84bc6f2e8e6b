"""The 3C REPORT blocks shared by step 5 (the limit, native vs smooth) and step 7 (the a priori law test): the
per-order slope tables and the report skeleton of a 3C summary, from summary_3c.json only."""

from __future__ import annotations

from typing import Any

from experiment_1.report import ReportDocument, format_number, format_stat, markdown_table
from experiment_2.lambda_sweep.figures import format_lambdas
from experiment_2.limit.laws import LAWS


def slope_cell(row: dict[str, Any]) -> str:
    if not row["resolved"]:
        return "unresolved"
    return f"{format_stat({'mean': row['slope'], 'ci_low': row['ci_low'], 'ci_high': row['ci_high']})} ({format_lambdas(row['fit_lambdas'])})"


def variant_limit_table(block: dict[str, Any], num_blocks: int) -> str:
    """One variant: k, its limit slope with CI and fitted λs, whether it converged, and each law's slope and verdict at k."""
    laws = [law for law in LAWS if law in block["laws"]]
    rows = [
        [
            str(order),
            slope_cell(block["limit_slopes"][order]),
            "yes" if block["convergence"][order]["converged"] else (block["convergence"][order]["reason"] or ""),
        ]
        + [
            f"{format_number(block['laws'][law]['predicted'][order])}: {block['laws'][law]['per_order'][order - 1]}"
            for law in laws
        ]
        for order in range(1, num_blocks + 1)
    ]
    return markdown_table(
        ["k", "limit slope [95 % CI] (fitted λs)", "converged"] + [f"{law} (slope: verdict)" for law in laws], rows
    )


def successive_table(block: dict[str, Any], num_blocks: int) -> str:
    """Slope between successive λs per order (point estimates; '·' where an order is unresolved at either λ)."""
    rows = [
        [f"{pair['lambdas'][0]:g} → {pair['lambdas'][1]:g}"]
        + [
            format_number(slope) if resolved else "·"
            for slope, resolved in zip(pair["slope"][1:], pair["resolved"][1:])
        ]
        for pair in block["successive_slopes"]
    ]
    return markdown_table(["λ pair"] + [f"k = {order}" for order in range(1, num_blocks + 1)], rows)


def limit_document(
    title: str, summary: dict[str, Any], method: str, results: list[str], verdict: list[str], generator: str
) -> str:
    """REPORT.md of a 3C summary: the shared skeleton, no numbers of the original study (it reports no Experiment 3C)."""
    lambdas = format_lambdas(summary["lambdas"])
    return ReportDocument(
        title=title,
        summary=summary,
        method=method,
        results=results,
        seed_rows=[],
        seed_source="the original study reports no Experiment 3C",
        verdict=verdict,
        generator=generator,
        data_extra=f"; λ ∈ {{{lambdas}}}",
        source="summary_3c.json",
        residual_scale=f"λ ∈ {{{lambdas}}}",
    ).render()
