"""Experiment 2, step 12 — how the observable low-order ratios change with depth, read from step 8's runs.

Question: from one depth to the next (e.g. ResNet-50, L = 16 → ResNet-101, L = 33 → ResNet-152, L = 50), does the
exact order-j Möbius energy at the all-off corner fall relative to the variance of the function (E_j / Var h), and does
the low-degree Walsh share (W_1 + W_2 + W_3) / Var h fall? Each change is decided by the paired bootstrap CI over the
images both runs evaluated of the mean change (of log10 E_j / Var h; of the share itself, whose estimate may be ≤ 0),
widened to cover every image's own interval of the change (from the two runs' per-image 95 % intervals: Var h's, the
share's), since one seeded design serves every image of a run and its sampling error is shared by them (experiment_2/past_exhaustive/verdicts.py,
depth_change_verdict); where the CI straddles 0 it cannot tell. A share change is saturated where either run's own
low-degree-share verdict is (estimates at or beyond a bound of the share). Reads only the runs' summary.json (their
per-image ratios and verdicts), evaluates nothing.

Inputs:  --runs: two or more step-8 output folders (summary.json each), any order (sorted by L).
Outputs: <output-dir>/summary.json, REPORT.md.

    python -m experiment_2.step_12_depth_trend --runs experiment_2/results_low_orders_resnet50_random_64px \\
        experiment_2/results_low_orders_resnet101_random_64px experiment_2/results_low_orders_resnet152_random_64px \\
        --output-dir experiment_2/results_low_orders_depth_trend_random_64px
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.errors import PipelineError, run_cli
from experiment_1.files import atomic_write_json, atomic_write_text, read_json
from experiment_1.report import SATURATED, bootstrap_mean_ci_rows, format_number, markdown_table, verdict_lines
from experiment_1.run import Command, flag, run_config
from experiment_2.past_exhaustive.low_orders import PROJECTIONS
from experiment_2.past_exhaustive.verdicts import NULL_NOTE, depth_change_verdict

STEP = "experiment_2.step_12_depth_trend"
PRODUCER = "experiment_2_low_orders"
QUESTION = (
    "Does the exact order-j Möbius energy at the all-off network fall relative to Var h from one depth to the next, "
    "and does the low-degree Walsh share?"
)


@dataclass(frozen=True)
class DepthTrendFlags:
    """The step's flags: two or more step-8 folders, where the trend goes, the bootstrap's seed."""

    runs: list[Path] = flag(
        "step-8 output folders (two or more)",
        nargs="+",
        path="folder",
        what="step-8 output folder",
        fix="run python -m experiment_2.step_8_low_orders into it first",
    )
    output_dir: Path = flag("where summary.json and REPORT.md go", path="output")
    seed: int = flag("the bootstrap's seed (default: %(default)s)", type=run_config.seed, default=0)

    def problems(self) -> list[str]:
        """Fewer than two runs."""
        if len(self.runs) < 2:
            return [f"--runs: a change with depth needs two or more step-8 folders, got {len(self.runs)}"]
        return []


COMMAND = Command(__doc__, DepthTrendFlags, None)


def load_run(folder: Path) -> dict[str, Any]:
    """A step-8 summary with the all-off family, its per-image ratios and the Walsh shares; one line otherwise."""
    path = folder / "summary.json"
    if not path.is_file():
        raise PipelineError(f"{path}: no summary; run python -m experiment_2.step_8_low_orders into {folder} first")
    summary = read_json(path, fix="rerun python -m experiment_2.step_8_low_orders")
    if summary.get("experiment") != PRODUCER or "off" not in summary.get("bases", {}) or "walsh" not in summary:
        raise PipelineError(
            f"{path}: not a step-8 summary with the all-off family and the Walsh summaries; rerun "
            "python -m experiment_2.step_8_low_orders (with --bases off) into it"
        )
    return {"folder": str(folder), "summary": summary}


def per_image(summary: dict[str, Any], projection: str, order: int) -> dict[str, np.ndarray]:
    """Per image (by sample-list position): E_j / Var h at the all-off corner and the low-degree Walsh share, each
    with its interval from the run's per-image 95 % intervals (E_j exact, Var h's interval; the share's own)."""
    ratios = np.asarray(summary["bases"]["off"]["projections"][projection]["ratio_to_variance_per_image"])[:, order - 1]
    walsh = summary["walsh"]["projections"][projection]
    variance = np.asarray(walsh["variance"]["per_image"])[:, 0]
    share = walsh["low_degree_share"]
    energy = ratios * variance
    variance_low = np.asarray(walsh["variance"]["per_image_ci_low"], dtype=np.float64)
    variance_high = np.asarray(walsh["variance"]["per_image_ci_high"], dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):  # a variance interval reaching 0: the ratio's bound is 0 or ∞
        ratio_low = np.where(variance_high > 0, energy / variance_high, 0.0)
        ratio_high = np.where(variance_low > 0, energy / variance_low, np.inf)
    return {
        "index": np.asarray(summary["image_index"]),
        "ratio": ratios,
        "ratio_low": ratio_low,
        "ratio_high": ratio_high,
        "share": np.asarray(share["per_image"])[:, 0],
        "share_low": np.asarray(share["per_image_ci_low"]),
        "share_high": np.asarray(share["per_image_ci_high"]),
    }


def paired_change(
    shallow: dict[str, np.ndarray], deep: dict[str, np.ndarray], name: str, log: bool
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Per shared image, the deeper run's value (its log10 with ``log``) minus the shallower's, and that change's
    interval from the two runs' per-image intervals (deeper low − shallower high, deeper high − shallower low)."""
    common, first, second = np.intersect1d(shallow["index"], deep["index"], return_indices=True)
    if not len(common):
        raise PipelineError("the runs share no image; evaluate the same sample list (--sample-index, --limit)")
    scale = np.log10 if log else np.asarray
    with np.errstate(divide="ignore", invalid="ignore"):
        change = scale(deep[name][second]) - scale(shallow[name][first])
        low = scale(deep[f"{name}_low"][second]) - scale(shallow[f"{name}_high"][first])
        high = scale(deep[f"{name}_high"][second]) - scale(shallow[f"{name}_low"][first])
    return change, (low, high)


def share_decision(summary: dict[str, Any], projection: str) -> str | None:
    """The run's own low-degree-share verdict for ``projection`` (holds / fails / cannot tell / saturated …), if any."""
    return next(
        (own["decision"] for own in summary["verdicts"] if own["id"] == f"walsh_low_degree_share.{projection}"), None
    )


def saturated_by_runs(entry: dict[str, Any], projection: str, summaries: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    """A share-change verdict with the saturation clause in its rule, made ``saturated`` where either run's own
    low-degree-share verdict is (its estimates at or beyond a bound of the share: noise there, so a change from it says
    nothing)."""
    saturated = [
        f"L = {summary['num_blocks']}" for summary in summaries if share_decision(summary, projection) == SATURATED
    ]
    entry = {**entry, "rule": f"{entry['rule']}; saturated when either run's own low-degree-share verdict is"}
    if not saturated:
        return entry
    note = (
        f"saturated: the low-degree share of the run at {' and '.join(saturated)} is saturated (its estimates sit at "
        f"or beyond a bound of the share; that run's REPORT); the rule alone would have said {entry['decision']}"
    )
    return {**entry, "decision": SATURATED, "notes": [*entry["notes"], note]}


def build_summary(runs: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    summaries = [run["summary"] for run in runs]
    order = min(summary["order_max"] for summary in summaries)
    verdicts, levels = [], []
    for projection in PROJECTIONS:
        for shallow, deep in zip(summaries, summaries[1:]):
            depths = (shallow["num_blocks"], deep["num_blocks"])
            for j in range(1, order + 1):
                change, own = paired_change(
                    per_image(shallow, projection, j), per_image(deep, projection, j), "ratio", log=True
                )
                verdicts.append(
                    depth_change_verdict(
                        f"ratio_to_variance.{projection}.order_{j}.L{depths[0]}_to_L{depths[1]}",
                        f"E_{j} / Var h ({projection})",
                        depths,
                        change,
                        seed,
                        own=own,
                    )
                )
            change, own = paired_change(
                per_image(shallow, projection, 1), per_image(deep, projection, 1), "share", log=False
            )
            share_change = depth_change_verdict(
                f"low_degree_share.{projection}.L{depths[0]}_to_L{depths[1]}",
                f"(W_1 + W_2 + W_3) / Var h ({projection})",
                depths,
                change,
                seed,
                log=False,
                own=own,
            )
            verdicts.append(saturated_by_runs(share_change, projection, (shallow, deep)))
        for summary in summaries:
            values = per_image(summary, projection, 1)
            ratios = np.asarray(summary["bases"]["off"]["projections"][projection]["ratio_to_variance_per_image"])
            levels.append(
                {
                    "projection": projection,
                    "num_blocks": summary["num_blocks"],
                    "arch": summary["config"]["arch"],
                    "log10_ratio_to_variance": bootstrap_mean_ci_rows(np.log10(ratios[:, :order]), seed=seed),
                    "low_degree_share": bootstrap_mean_ci_rows(values["share"][:, None], seed=seed),
                    "low_degree_share_decision": share_decision(summary, projection),
                }
            )
    return {
        "experiment": "experiment_2_depth_trend",
        "question": QUESTION,
        "runs": [
            {
                "folder": run["folder"],
                "arch": run["summary"]["config"]["arch"],
                "weights": run["summary"]["config"]["weights"],
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
        "notes": [NULL_NOTE] if all(run["summary"]["config"]["weights"] == "random" for run in runs) else [],
    }


def report_markdown(summary: dict[str, Any]) -> str:
    rows = [
        [
            level["projection"],
            level["arch"],
            level["num_blocks"],
            *(format_number(value) for value in level["log10_ratio_to_variance"]["mean"]),
            format_number(level["low_degree_share"]["mean"][0])
            + (
                " (saturated: at or beyond a bound of the share)"
                if level["low_degree_share_decision"] == SATURATED
                else ""
            ),
        ]
        for level in summary["levels"]
    ]
    headers = [
        "projection",
        "arch",
        "L",
        *(f"log10(E_{j} / Var h)" for j in summary["orders"]),
        "(W_1 + W_2 + W_3) / Var h",
    ]
    runs = ", ".join(
        f"`{run['folder']}` ({run['arch']}, L = {run['num_blocks']}, {run['weights']})" for run in summary["runs"]
    )
    return "\n".join(
        [
            "# Experiment 2 — the observable low-order ratios against depth",
            "",
            f"**Question.** {summary['question']}",
            "",
            f"**Data.** The summaries of step 8 in {runs}; means over images (bootstrap 95 % CIs in summary.json).",
            "",
            "## Result",
            "",
            markdown_table(headers, rows),
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


def main(argv: list[str] | None = None) -> None:
    args = COMMAND.parse(argv)
    runs = sorted((load_run(folder) for folder in args.runs), key=lambda run: run["summary"]["num_blocks"])
    summary = build_summary(runs, args.seed)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_json(args.output_dir / "summary.json", summary)
    atomic_write_text(args.output_dir / "REPORT.md", report_markdown(summary))
    print(f"wrote {args.output_dir / 'summary.json'} and REPORT.md")


if __name__ == "__main__":
    run_cli(main)
