"""Step 12's body (experiment_2/step_12_depth_trend.py states its question, inputs and outputs): read the step-8
runs, pair their images, decide each change with depth and the two bases side by side, write the summary and the
REPORT."""

from __future__ import annotations

from math import comb
from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.errors import PipelineError
from experiment_1.files import atomic_write_json, atomic_write_text, read_json
from experiment_1.report import SATURATED, bootstrap_mean_ci_rows, format_number, markdown_table, verdict_lines
from experiment_2.past_exhaustive.low_orders import PROJECTIONS
from experiment_2.past_exhaustive.sampled import EXHAUSTIVE_LIMIT, NOT_VALIDATED_AT_DEPTH, STRESS_REPORT
from experiment_2.past_exhaustive.sampling.walsh import statistic_range
from experiment_2.past_exhaustive.verdicts import (
    basis_verdict,
    count_outside,
    depth_change_verdict,
    outside_range,
    random_init_reading,
)
from experiment_2.step_12_depth_trend import DepthTrendFlags

STEP = "experiment_2.step_12_depth_trend"
PRODUCER = "experiment_2_low_orders"
QUESTION = (
    "Does the interaction order rise with depth — the mean order of the exact per-coefficient Möbius energies of the "
    "low orders, the mean Walsh degree per block κ_W / L — and does the low-degree Walsh share fall?"
)
CORNERS = {"off": "all-off network", "on": "full network"}
UNVALIDATED_KAPPA = (
    "κ_W / L is among the estimators step 15 does not validate at L = 50: its 95 % interval covers too little where h "
    f"is heavy-tailed or explodes over the masks ({STRESS_REPORT}); step 8's REPORT of each run gives its relative "
    "standard error of Var h to set beside step 15's families"
)


def load_run(folder: Path) -> dict[str, Any]:
    """A step-8 summary with the all-off family, each image's ē_j and the Walsh summaries, of a network that is
    evidence (trained, or random-init with calibrated batch norm); one line otherwise."""
    path = folder / "summary.json"
    if not path.is_file():
        raise PipelineError(f"{path}: no summary; run python -m experiment_2.step_8_low_orders into {folder} first")
    summary = read_json(path, fix="rerun python -m experiment_2.step_8_low_orders")
    off = summary.get("bases", {}).get("off", {}).get("projections", {}).get("vector", {})
    if summary.get("experiment") != PRODUCER or "per_coefficient_energy_per_image" not in off or "walsh" not in summary:
        raise PipelineError(
            f"{path}: not a step-8 summary with the all-off family, each image's ē_j and the Walsh summaries; rerun "
            "python -m experiment_2.step_8_low_orders (with --bases off) into it"
        )
    config = summary["config"]
    if config["weights"] == "random" and not config.get("batchnorm_calibration"):
        raise PipelineError(
            f"{path}: a random-init network with batch norm at its initial statistics, whose activations grow or vanish "
            "with depth; rerun python -m experiment_2.step_8_low_orders with --calibrate-batchnorm N into it"
        )
    return {"folder": str(folder), "summary": summary}


def mean_order(ebar: np.ndarray) -> np.ndarray:
    """Per image, ``Σ_j j·ē_j / Σ_j ē_j`` over the orders ``j = 1 … k`` of ``ebar`` ``(N, k)``."""
    orders = np.arange(1, ebar.shape[1] + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (ebar * orders).sum(axis=1) / ebar.sum(axis=1)


def per_image(summary: dict[str, Any], projection: str, order: int) -> dict[str, Any]:
    """Per image (by sample-list position) of one run: ē_1 … ē_order and their mean order at each corner, the Walsh
    κ_W / L and low-degree share with their own intervals and ranges, Var h and ‖h(full) − h(∅)‖²."""
    walsh = summary["walsh"]["projections"][projection]
    values: dict[str, Any] = {"index": np.asarray(summary["image_index"]), "num_blocks": summary["num_blocks"]}
    for base, entry in summary["bases"].items():
        ebar = np.asarray(entry["projections"][projection]["per_coefficient_energy_per_image"])[:, :order]
        values[f"ebar_{base}"], values[f"mean_order_{base}"] = ebar, mean_order(ebar)
    for name, stat in (("kappa", "kappa_w_per_block"), ("share", "low_degree_share")):
        values[name] = np.asarray(walsh[stat]["per_image"], dtype=np.float64)[:, 0]
        values[f"{name}_low"] = np.asarray(walsh[stat]["per_image_ci_low"], dtype=np.float64)
        values[f"{name}_high"] = np.asarray(walsh[stat]["per_image_ci_high"], dtype=np.float64)
        values[f"{name}_range"] = statistic_range(stat, summary["num_blocks"])[:2]
    values["variance"] = np.asarray(walsh["variance"]["per_image"], dtype=np.float64)[:, 0]
    values["corner_gap"] = np.asarray(summary["corner_gap"][projection]["per_image"], dtype=np.float64)
    values["energy_off"] = values["ebar_off"] * [comb(summary["num_blocks"], j) for j in range(1, order + 1)]
    return values


def paired_change(
    shallow: dict[str, Any], deep: dict[str, Any], name: str, own: bool
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    """Per shared image, the deeper run's value minus the shallower's, and with ``own`` that change's interval from the
    two runs' per-image intervals (deeper low − shallower high, deeper high − shallower low)."""
    common, first, second = np.intersect1d(shallow["index"], deep["index"], return_indices=True)
    if not len(common):
        raise PipelineError("the runs share no image; evaluate the same sample list (--sample-index, --limit)")
    change = deep[name][second] - shallow[name][first]
    if not own:
        return change, None
    low = deep[f"{name}_low"][second] - shallow[f"{name}_high"][first]
    high = deep[f"{name}_high"][second] - shallow[f"{name}_low"][first]
    return change, (low, high)


def range_note(runs: tuple[dict[str, Any], dict[str, Any]], name: str, quantity: str) -> str | None:
    """The out-of-range note of either run's estimates of ``name`` (each against its own range), or ``None``."""
    notes = [
        f"L = {values['num_blocks']}: {note}"
        for values in runs
        if (note := outside_range(values[name], *values[f"{name}_range"], quantity)) is not None
    ]
    return "; ".join(notes) or None


def share_decision(summary: dict[str, Any], projection: str) -> str | None:
    """The run's own low-degree-share verdict for ``projection`` (holds / fails / cannot tell / saturated …), if any."""
    return next(
        (own["decision"] for own in summary["verdicts"] if own["id"] == f"walsh_low_degree_share.{projection}"), None
    )


def change_verdicts(
    shallow: dict[str, Any],
    deep: dict[str, Any],
    projection: str,
    levels: list[dict[str, Any]],
    seed: int,
    random: bool,
) -> list[dict[str, Any]]:
    """The verdicts of one projection from one depth to the next (module docstring); ``levels``: the runs' levels,
    whose out-of-range counts and own share decisions the sampled quantities' rule reads."""
    depths = (shallow["num_blocks"], deep["num_blocks"])
    pair = f"{projection}.L{depths[0]}_to_L{depths[1]}"
    verdicts = []
    for base in CORNERS:
        if f"mean_order_{base}" in shallow and f"mean_order_{base}" in deep:
            change, _ = paired_change(shallow, deep, f"mean_order_{base}", own=False)
            verdicts.append(
                depth_change_verdict(
                    f"mobius_mean_order.{base}.{pair}",
                    f"the mean order of ē_1 … ē_k at the {CORNERS[base]} (Möbius, {projection})",
                    depths,
                    change,
                    seed,
                    log=False,
                    direction="rises",
                    random_init=random,
                )
            )
    change, own = paired_change(shallow, deep, "kappa", own=True)
    kappa = depth_change_verdict(
        f"walsh_kappa_per_block.{pair}",
        f"κ_W / L (Walsh, {projection})",
        depths,
        change,
        seed,
        log=False,
        own=own,
        direction="rises",
        estimate="kappa_w_per_block",
        levels=levels,
        outside=range_note((shallow, deep), "kappa", "κ_W / L"),
        random_init=random,
    )
    if depths[1] > EXHAUSTIVE_LIMIT and "kappa_w_per_block" in NOT_VALIDATED_AT_DEPTH:
        kappa["notes"].insert(-1 if random else len(kappa["notes"]), UNVALIDATED_KAPPA)
    change, own = paired_change(shallow, deep, "share", own=True)
    share = depth_change_verdict(
        f"low_degree_share.{pair}",
        f"(W_1 + W_2 + W_3) / Var h (Walsh, {projection})",
        depths,
        change,
        seed,
        log=False,
        own=own,
        estimate="low_degree_share",
        levels=levels,
        outside=range_note((shallow, deep), "share", "the share"),
        random_init=random,
    )
    return [*verdicts, kappa, share, basis_verdict(verdicts[0], kappa, projection, depths)]


def level(values: dict[str, Any], summary: dict[str, Any], projection: str, seed: int) -> dict[str, Any]:
    """One run's means over images (bootstrap CIs) of what the REPORT's table shows, how many of its Walsh estimates
    lie outside their range (``<statistic>_outside_range``) and its own share decision: what the changes' rule reads."""
    rows = {name: values[name] for base in CORNERS for name in (f"ebar_{base}",) if name in values}
    rows |= {name: values[name][:, None] for base in CORNERS for name in (f"mean_order_{base}",) if name in values}
    with np.errstate(divide="ignore", invalid="ignore"):
        rows["ratio_to_variance"] = values["energy_off"] / values["variance"][:, None]
        rows["ratio_to_corner_gap"] = values["energy_off"] / values["corner_gap"][:, None]
    rows |= {
        "variance": values["variance"][:, None],
        "corner_gap": values["corner_gap"][:, None],
        "kappa_w_per_block": values["kappa"][:, None],
        "low_degree_share": values["share"][:, None],
    }
    return {
        "projection": projection,
        "num_blocks": summary["num_blocks"],
        "arch": summary["config"]["arch"],
        **{name: bootstrap_mean_ci_rows(array, seed=seed) for name, array in rows.items()},
        **{
            f"{stat}_outside_range": count_outside(values[name], *values[f"{name}_range"])
            for name, stat in (("kappa", "kappa_w_per_block"), ("share", "low_degree_share"))
        },
        "low_degree_share_decision": share_decision(summary, projection),
    }


def build_summary(runs: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    summaries = [run["summary"] for run in runs]
    order = min(summary["order_max"] for summary in summaries)
    random = all(summary["config"]["weights"] == "random" for summary in summaries)
    verdicts, levels = [], []
    for projection in PROJECTIONS:
        values = [per_image(summary, projection, order) for summary in summaries]
        ours = [level(item, summary, projection, seed) for item, summary in zip(values, summaries)]
        for shallow, deep in zip(values, values[1:]):
            verdicts += change_verdicts(shallow, deep, projection, ours, seed, random)
        levels += ours
    reading = random_init_reading(summaries[0]["config"])
    return {
        "experiment": "experiment_2_depth_trend",
        "question": QUESTION,
        "runs": [
            {
                "folder": run["folder"],
                "arch": run["summary"]["config"]["arch"],
                "weights": run["summary"]["config"]["weights"],
                "batchnorm_calibration": run["summary"]["config"].get("batchnorm_calibration"),
                "num_blocks": run["summary"]["num_blocks"],
                "input_size": run["summary"]["config"]["input_size"],
                "num_images": run["summary"]["num_images"],
                "run_id": run["summary"]["config"]["run_id"],
            }
            for run in runs
        ],
        "orders": list(range(1, order + 1)),
        "levels": levels,
        "verdicts": verdicts,
        "notes": [reading] if random and reading else [],
    }


def report_markdown(summary: dict[str, Any]) -> str:
    orders = summary["orders"]
    top = orders[-1]

    def mean(level: dict[str, Any], name: str, position: int = 0) -> str:
        return format_number(level[name]["mean"][position]) if name in level else "—"

    rows = [
        [
            level["projection"],
            level["arch"],
            level["num_blocks"],
            *(mean(level, "ebar_off", j - 1) for j in orders),
            mean(level, "mean_order_off"),
            mean(level, "mean_order_on"),
            mean(level, "ratio_to_variance"),
            mean(level, "ratio_to_corner_gap"),
            mean(level, "variance"),
            mean(level, "kappa_w_per_block"),
            mean(level, "low_degree_share")
            + (" (saturated)" if level["low_degree_share_decision"] == SATURATED else ""),
        ]
        for level in summary["levels"]
    ]
    headers = [
        "projection",
        "arch",
        "L",
        *(f"ē_{j} (∅)" for j in orders),
        f"m̄ (∅), orders 1–{top}",
        f"m̄ (full), orders 1–{top}",
        "E_1 / Var h",
        "E_1 / ‖h(full) − h(∅)‖²",
        "Var h",
        "κ_W / L",
        "(W_1 + W_2 + W_3) / Var h",
    ]
    runs = ", ".join(
        f"`{run['folder']}` ({run['arch']}, L = {run['num_blocks']}, {run['weights']}"
        + (
            f", batch norm calibrated on {run['batchnorm_calibration']['images']} images"
            if run["batchnorm_calibration"]
            else ""
        )
        + f", {run['num_images']} images)"
        for run in summary["runs"]
    )
    readings = [
        f"{entry['projection']} from L = {entry['depths'][0]} to {entry['depths'][1]}: {entry['notes'][0]}"
        for entry in summary["verdicts"]
        if "reading" in entry
    ]
    return "\n".join(
        [
            "# Experiment 2 — the interaction order against depth, in both bases",
            "",
            "## Short answer",
            "",
            "Does the interaction order rise with depth? The Möbius basis (the mean order of the exact per-coefficient "
            "energies at the all-off network) and the Walsh basis (κ_W / L) side by side: " + "; ".join(readings) + ".",
            "",
            f"**Question.** {summary['question']}",
            "",
            f"**Data.** The summaries of step 8 in {runs}; means over images (bootstrap 95 % CIs in summary.json).",
            "",
            "## Result",
            "",
            markdown_table(headers, rows),
            "",
            "m̄ = Σ_j j·ē_j / Σ_j ē_j, the mean order of the exact per-coefficient Möbius energies of the low orders at a "
            "corner, and κ_W / L and the share are ratios of one function's energies: scaling the output leaves them. "
            "E_1 / Var h and E_1 / ‖h(full) − h(∅)‖² divide a corner's energy by the function's spread over all masks, "
            "which grows otherwise when the activations grow with depth: they are shown beside ē_j and decide nothing.",
            "",
            "## Verdict",
            "",
            *[f"- {note}" for note in summary["notes"]],
            *verdict_lines(summary["verdicts"]),
            "",
            f"Generated by `python -m {STEP}` from summary.json.",
            "",
        ]
    )


def run(args: DepthTrendFlags) -> None:
    """The step on its checked flags (module docstring)."""
    runs = sorted((load_run(folder) for folder in args.runs), key=lambda run: run["summary"]["num_blocks"])
    summary = build_summary(runs, args.seed)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_json(args.output_dir / "summary.json", summary)
    atomic_write_text(args.output_dir / "REPORT.md", report_markdown(summary))
    print(f"wrote {args.output_dir / 'summary.json'} and REPORT.md")
