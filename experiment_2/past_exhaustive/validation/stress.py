"""Step 15's body (experiment_2/step_15_estimator_stress.py states its question, inputs and outputs): the synthetic
functions of known spectrum replicated at step 8's budgets, the verdict per estimator and depth, the summary and the
REPORT."""

from __future__ import annotations

import sys
import time
from typing import Any

from experiment_1.files import atomic_write_json, atomic_write_text, git_commit
from experiment_1.report import format_number, markdown_table
from experiment_2.past_exhaustive.validation import replications as rep
from experiment_2.past_exhaustive.validation import resume
from experiment_2.past_exhaustive.validation.synthetic import FAMILIES, synthetic_function
from experiment_2.step_15_estimator_stress import StressFlags

STEP = "experiment_2.step_15_estimator_stress"
BAND = (0.90, 0.99)
PROJECTIONS = ("vector", "scalar")
QUESTION = (
    "Do step 8's interval estimators (the Walsh summaries from random masks and the sub-cube ē_j) cover the exact value "
    "at their nominal 95 % without bias at L = 33 and 50, at step 8's budgets, on synthetic functions of known "
    "spectrum — low-degree, spread, heavy-tailed and exploding?"
)
HOLDS_AT, FAILS_AT = "holds", "fails"


def statistic_verdicts(verdicts: list[dict[str, Any]], depths: list[int]) -> list[dict[str, Any]]:
    """Per statistic and depth: ``holds`` when every (family, projection) is validated (or estimate only and
    unbiased), ``fails`` otherwise, with the failing (family, projection) pairs and their coverages."""
    rows = []
    for statistic in dict.fromkeys(entry["statistic"] for entry in verdicts):
        row: dict[str, Any] = {"statistic": statistic, "estimator": None, "depths": {}}
        for depth in depths:
            chosen = [entry for entry in verdicts if entry["statistic"] == statistic and entry["num_blocks"] == depth]
            row["estimator"] = chosen[0]["estimator"]
            failing = [entry for entry in chosen if entry["verdict"] not in (rep.VALIDATED, rep.ESTIMATE_ONLY)]
            row["depths"][str(depth)] = {
                "decision": FAILS_AT if failing else HOLDS_AT,
                "interval": any(entry["budgets_with_interval"] for entry in chosen),
                "failing": [
                    {
                        "family": entry["family"],
                        "projection": entry["projection"],
                        "verdict": entry["verdict"],
                        "coverage": entry["failing"][0]["coverage"],
                        "bias_in_se": entry["failing"][0]["bias_in_se"],
                    }
                    for entry in failing
                ],
            }
        rows.append(row)
    return rows


def build_summary(
    args: StressFlags,
    functions: list[dict[str, Any]],
    cells: list[dict[str, Any]],
    verdicts: list[dict[str, Any]],
    seconds: float,
    commit: str,
) -> dict[str, Any]:
    by_statistic = statistic_verdicts(verdicts, args.depths)
    deepest = str(max(args.depths))
    return {
        "experiment": "experiment_2_estimator_stress",
        "question": QUESTION,
        "design": {
            "families": list(FAMILIES),
            "depths": args.depths,
            "columns_vector": args.columns,
            "replications": args.replications,
            "nominal": rep.NOMINAL,
            "band": list(BAND),
            "budgets": rep.budget_list([args.subcube_size], [args.subcube_draws], [args.walsh_samples]),
            "chance_failure_per_cell": rep.chance_failure(args.replications, BAND),
            "rule": rep.rule(BAND),
        },
        "functions": functions,
        "cells": cells,
        "estimator_verdicts": verdicts,
        "statistics": by_statistic,
        "failing_at_deepest": [
            row["statistic"] for row in by_statistic if row["depths"][deepest]["decision"] == FAILS_AT
        ],
        "replication_seconds": seconds,
        "provenance": {"seed": args.seed, "git_commit": commit, "command": ["python", "-m", STEP, *sys.argv[1:]]},
    }


def coverage_text(cells: list[dict[str, Any]]) -> str:
    """The vector and scalar coverage of one (family, statistic, depth), or the bias where there is no interval."""
    parts = []
    for projection in PROJECTIONS:
        entry = next(entry for entry in cells if entry["projection"] == projection)
        value = f"{entry['coverage']:.3f}" if entry["coverage"] is not None else f"bias {entry['bias_in_se']:+.2f} SE"
        parts.append(value if entry["passes"] else f"**{value}**")
    return " / ".join(parts)


def failing_text(failing: list[dict[str, Any]], statistic: str) -> str:
    """``statistic``'s failing families and its lowest coverage among them (or its largest bias, without interval)."""
    families = ", ".join(dict.fromkeys(item["family"] for item in failing))
    coverages = [item["coverage"] for item in failing if item["coverage"] is not None]
    worst = (
        f"coverage down to {min(coverages):.3f}"
        if coverages
        else f"bias up to {max(abs(item['bias_in_se']) for item in failing):.2f} SE"
    )
    return f"{statistic} ({families}: {worst})"


def failure_kind(failing: list[dict[str, Any]], low: float) -> str:
    """Whether every failure is an interval that covers too little with an unbiased estimate (|bias| < 1 SE)."""
    under = all(
        item["coverage"] is not None and item["coverage"] < low and abs(item["bias_in_se"]) < rep.MAX_BIAS_SE
        for item in failing
    )
    return (
        f"Every failure is an interval covering less than {low:.0%}, around an estimate biased by less than "
        f"{rep.MAX_BIAS_SE:g} SE."
        if under
        else "The failures include biased estimates or over-covering intervals (the table)."
    )


def variance_spread(cells: list[dict[str, Any]], families: list[str], depth: int) -> str:
    """Per family at ``depth``, the relative standard error of the Var h estimate (its SD over the replications / the
    exact Var h), vector / scalar: how unstable the masks make it, which a run can set its own beside."""
    parts = []
    for family in families:
        errors = [
            format_number(entry["estimator_se"] / entry["exact"])
            for projection in PROJECTIONS
            for entry in cells
            if (entry["family"], entry["num_blocks"], entry["projection"], entry["statistic"])
            == (family, depth, projection, "variance")
        ]
        parts.append(f"{family} {' / '.join(errors)}")
    return (
        f"The relative standard error of the Var h estimate at L = {depth} (its SD over the replications / the exact "
        f"Var h; vector / scalar): {'; '.join(parts)}. Step 8 gives a run's own (its images' median) beside it."
    )


def report_markdown(summary: dict[str, Any]) -> str:
    design = summary["design"]
    deepest = str(max(design["depths"]))
    cells = summary["cells"]
    rows = []
    for row in summary["statistics"]:
        chosen = [
            entry for entry in cells if entry["statistic"] == row["statistic"] and entry["num_blocks"] == int(deepest)
        ]
        rows.append(
            [
                row["statistic"],
                *(
                    coverage_text([entry for entry in chosen if entry["family"] == family])
                    for family in design["families"]
                ),
                *(row["depths"][str(depth)]["decision"] for depth in design["depths"]),
            ]
        )
    low, high = design["band"]
    failing = [row for row in summary["statistics"] if row["depths"][deepest]["decision"] == FAILS_AT]
    budgets = ", ".join(
        f"{budget['size']}-block sub-cubes × {budget['draws']}"
        if budget["estimator"] == "subcubes"
        else f"m = {budget['samples']} Walsh base masks"
        for budget in design["budgets"]
    )
    holding = [row["statistic"] for row in summary["statistics"] if row["depths"][deepest]["decision"] == HOLDS_AT]
    answer = (
        f"Every estimator step 8 reports covers within [{low:.0%}, {high:.0%}] without bias at L = {deepest} on every "
        "family."
        if not failing
        else f"At L = {deepest} these hold on every family: {', '.join(holding)}. These fail on some: "
        + "; ".join(failing_text(row["depths"][deepest]["failing"], row["statistic"]) for row in failing)
        + f". {failure_kind([item for row in failing for item in row['depths'][deepest]['failing']], low)} Step 8's "
        "REPORTs past the exhaustive limit stop giving the failing ones (their numbers stay in its summary)."
    )
    functions = "; ".join(
        f"{item['family']} at L = {item['num_blocks']}: Var h {format_number(item['variance'])}, κ_W "
        f"{format_number(item['kappa_w'])}, low-degree share {format_number(item['low_degree_share'])}"
        for item in summary["functions"]
        if item["num_blocks"] == int(deepest)
    )
    return "\n".join(
        [
            "# Experiment 2 — the estimators past the exhaustive pass, stressed where step 8 uses them",
            "",
            "## Short answer",
            "",
            answer,
            "",
            f"**Question.** {summary['question']}",
            "",
            f"**Method.** Synthetic set functions of known spectrum (experiment_2/past_exhaustive/validation/synthetic.py; "
            f"the vector projection {design['columns_vector']} outputs, the scalar its first) at L = "
            + ", ".join(str(depth) for depth in design["depths"])
            + f"; {design['replications']} seeded replications per (family, L, projection) at step 8's budgets ({budgets}), "
            f"each estimate with its nominal {design['nominal']:.0%} interval against the exact value. At L = {deepest}: "
            f"{functions}. Rule: {design['rule']}.",
            "",
            f"## Coverage at L = {deepest} (vector / scalar; bold: outside [{low:.0%}, {high:.0%}] or biased) and the "
            "verdict per depth",
            "",
            markdown_table(["statistic", *design["families"], *(f"L = {depth}" for depth in design["depths"])], rows),
            "",
            variance_spread(cells, design["families"], int(deepest)),
            "",
            f"A nominal 95 % interval falls outside the band by chance in {design['chance_failure_per_cell']:.1e} of "
            f"cells at {design['replications']} replications. ē_{design['budgets'][0]['size']} (one coefficient per draw) "
            "has no interval by design and is judged on its bias. Every cell (coverage with its exact CI, bias, relative "
            "RMSE) is in summary.json.",
            "",
            f"Generated by `python -m {STEP}` from summary.json.",
            "",
        ]
    )


def run(args: StressFlags) -> None:
    """The step on its checked flags (module docstring)."""
    commit = git_commit()  # the code that replicates, read before it runs
    budgets = rep.budget_list([args.subcube_size], [args.subcube_draws], [args.walsh_samples])
    jobs, places, functions = [], [], []
    for family_number, family in enumerate(FAMILIES):
        for depth in args.depths:
            function = synthetic_function(
                family, depth, args.columns, rep.replication_seed(args.seed, family_number, depth)
            )
            functions.append(function.describe())
            for projection_number, projection in enumerate(PROJECTIONS):
                chosen = function if projection == "vector" else function.column(0)
                seed = rep.replication_seed(args.seed, family_number, depth, projection_number)
                jobs.append((chosen, budgets, args.replications, seed, BAND))
                places.append({"family": family, "num_blocks": depth, "projection": projection})
    started = time.perf_counter()
    results = resume.replicate_all(args.output_dir / "partial" / STEP, jobs, args.workers)
    cells, verdicts = rep.cells_and_verdicts(places, [result for result, _ in results], BAND)
    seconds = sum(seconds for _, seconds in results)
    print(f"replicated in {time.perf_counter() - started:.0f} s this call ({seconds:.0f} s in all)")
    summary = build_summary(args, functions, cells, verdicts, seconds, commit)
    atomic_write_json(args.output_dir / "summary.json", summary)
    atomic_write_text(args.output_dir / "REPORT.md", report_markdown(summary))
    print(f"wrote {args.output_dir / 'summary.json'} and REPORT.md")
