"""The REPORT of the random-init null over networks (experiment_2.step_10_null_compare), and the table of it that
Experiment 2's own REPORT shows — from the between-network summary only."""

from __future__ import annotations

from typing import Any

from experiment_1.report import format_number, markdown_table, verdict_lines
from experiment_2.spectrum.null_networks import STATISTICS, TESTED


def statistics_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Per statistic: basis, the trained network's value, the null networks' mean and range, the rank p, whether tested."""
    headers = [
        "statistic",
        "basis",
        "trained network",
        "random-init networks: mean [min, max]",
        "networks below the trained value",
        "rank p (one-sided, trained lower)",
        "role",
    ]
    rows = []
    for name, (label, basis, _) in STATISTICS.items():
        entry = summary["statistics"][name]
        spread = (
            f"{format_number(entry['mean'])} [{format_number(entry['min'])}, {format_number(entry['max'])}]"
            if entry["mean"] is not None
            else "—"
        )
        rows.append(
            [
                label,
                basis,
                format_number(entry["trained"]),
                spread,
                f"{entry['networks_below']} of {len(entry['networks'])}",
                format_number(entry["rank_p"]) if entry["rank_p"] is not None else "—",
                "tested (Holm)" if name in TESTED else "described (not tested)",
            ]
        )
    return headers, rows


def design_sentence(summary: dict[str, Any]) -> str:
    """How the null was made: networks, images, calibration images, the direction and why so few images."""
    config = summary["config"]
    positions, calibration = config["image_positions"], config["batchnorm_calibration"]
    first, stop = calibration["positions"]
    return (
        f"{summary['num_seeds']} random-init {config['arch']} networks (seeds {min(config['seeds'])}–{max(config['seeds'])}), "
        f"{summary['num_null_networks']} of them nulls by the input rule, each evaluated under all 2^{config['num_blocks']} masks on "
        f"the {len(positions)} images at positions {positions[0]}–{positions[-1]} of `{config['sample_index']}`, the same images the "
        f"trained network is read on; each network's batch-norm statistics were re-estimated on the {calibration['images']} images at "
        f"positions {first}–{stop - 1} of the same list, disjoint from the evaluated ones. Few images per network and many "
        f"networks: the question is between networks, and the rank test's smallest p, 1/(n + 1), must clear α after Holm over "
        f"{len(config['tested'])} tests, so at least n = {len(config['tested']) / config['alpha'] - 1:g} null networks were needed, "
        "within about 20 minutes of one CPU core. The direction (trained "
        f"{config['direction']}) was stated before the seeds ran, from {config['direction_source']}."
    )


def network_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """One row per seed: the input rule's numbers and the tested statistics."""
    headers = ["seed", "distinct predictions", "trunk-energy spread / trained", "resolved", "null"] + [
        STATISTICS[name][0] + f" ({STATISTICS[name][1]})" for name in TESTED
    ]
    rows = [
        [
            str(record["seed"]),
            str(record["distinct_predictions"]),
            format_number(record["spread_ratio"]),
            "yes" if record["resolved"] else "no",
            "yes" if record["null"] else "no",
        ]
        + [format_number(record["means"][name]) for name in TESTED]
        for record in summary["networks"]
    ]
    return headers, rows


def null_markdown(summary: dict[str, Any], generator: str, source: str, wall_seconds: float | None = None) -> str:
    """REPORT.md of the between-network null; ``wall_seconds``: the seeds' evaluation time summed (their timing.json)."""
    headers, rows = statistics_rows(summary)
    network_headers, network_table = network_rows(summary)
    lines = [
        "# Experiment 2 — the random-init null over networks",
        "",
        f"**Question.** {summary['question']}",
        "",
        f"**Data.** {design_sentence(summary)}",
        "",
        "**Method.** Every network is reduced to one number per statistic: its mean over the shared images. The trained "
        "network's number is ranked among the null networks' (exact one-sided rank test), Holm over the tested statistics.",
        "",
        "## Result",
        "",
        markdown_table(headers, rows),
        "",
        markdown_table(network_headers, network_table),
        "",
        "## Verdicts",
        "",
        *verdict_lines(summary["verdicts"]),
        "",
        *(
            [f"Wall time of the seeds' evaluation, summed over their timing.json: {format_number(wall_seconds)} s.", ""]
            if wall_seconds is not None
            else []
        ),
        f"_Generated by `python -m {generator}` from {source}; do not edit by hand._",
        "",
    ]
    return "\n".join(lines)
