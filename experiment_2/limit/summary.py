"""What a 3C summary keeps of one λ sweep (a variant: the network's own activations or the smooth swap), shared by
step 5 (both variants of one network) and step 7 (the a priori law test)."""

from __future__ import annotations

from typing import Any

from experiment_2.limit.laws import is_post_hoc, scored

# what a sweep's limit block must hold before a step reads it (load_summary's keys): a missing one is one line, never a KeyError
LIMIT_KEYS = ("limit.method", "limit.limit_points", "limit.slope_tolerance", "limit.floor_margin", "limit.projections")

EXPECTED_LAWS = {"native": ("kink", "kink_chain"), "smooth": ("lambda_k",)}
PROJECTION = "vector"


def variant_block(summary: dict[str, Any], variant: str, convergence_tolerance: float | None = None) -> dict[str, Any]:
    """What the 3C summary keeps of one sweep: configuration differences, λs, the limit block of the vector projection,
    its convergence and laws re-scored by the current rule (the refined law post hoc on its own data, :func:`is_post_hoc`;
    ``convergence_tolerance`` as in :func:`experiment_2.limit.laws.scored`)."""
    config = summary["config"]
    block = summary["limit"]["projections"][PROJECTION]
    return {
        "expected_laws": list(EXPECTED_LAWS[variant]),
        "gated_recursion": config["gated_recursion"],
        "smooth_activations": config.get("smooth_activations"),
        **(
            {"smooth_swap": config["smooth_swap"]} if "smooth_swap" in config else {}
        ),  # what the swap replaced, by type (runs since it was recorded)
        "lambdas": summary["lambdas"],
        "num_valid": summary["num_valid"],
        **block,
        **scored(
            block,
            summary["limit"]["slope_tolerance"],
            post_hoc=is_post_hoc(config),
            convergence_tolerance=convergence_tolerance,
        ),
    }


def floor_headroom(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Per λ of a sweep: the smallest ratio, over orders k ≥ 1, of the mean energy (vector projection) to its round-off
    floor, and the order it is at — how far the smallest λ still lies above the floor the limit rule resolves against."""
    rows = []
    for entry in summary["per_lambda"]:
        energies = entry["projections"][PROJECTION]["mean_energy"]["mean"]
        floors = entry["roundoff_floor"][PROJECTION]
        ratios = [(energy / floor, order) for order, (energy, floor) in enumerate(zip(energies, floors)) if order >= 1]
        ratio, order = min(ratios)
        rows.append({"lambda": entry["lambda"], "smallest_energy_over_floor": ratio, "order": order})
    return rows
