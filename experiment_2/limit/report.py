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


def successive_trend(block: dict[str, Any], order: int, predicted: float) -> str:
    """One sentence on the successive slopes of ``order`` (point estimates, largest λ pair first): their values, and —
    where they move one way at every step — whether they are still moving towards the law's ``predicted`` slope or
    have passed it (a limit read off them then marks a crossing, not a plateau)."""
    slopes = [pair["slope"][order] for pair in block["successive_slopes"] if pair["resolved"][order]]
    if len(slopes) < 2:
        return ""
    steps = [later - earlier for earlier, later in zip(slopes, slopes[1:])]
    said = (
        f"At the deciding order k = {order} the successive slopes, from the largest λ pair to the smallest, are "
        f"{', '.join(format_number(slope) for slope in slopes)}"
    )
    if not (all(step < 0 for step in steps) or all(step > 0 for step in steps)):
        return said + "."
    direction = "fall" if steps[0] < 0 else "rise"
    if min(slopes[0], slopes[-1]) < predicted < max(slopes[0], slopes[-1]):
        return (
            f"{said}: they {direction} at every step and pass the law's {format_number(predicted)} rather than level at "
            "it, so the limit slope's agreement with the law may mark where they cross it, not a level; whether they settle there "
            "needs more images or smaller λ."
        )
    return f"{said}: they still {direction} at every step, towards the law's {format_number(predicted)}."


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
