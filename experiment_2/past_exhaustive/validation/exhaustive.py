"""Step 11's body (experiment_2/step_11_estimator_validation.py states its question, inputs and outputs): the exact
tables' checks against the dense butterfly and a committed run, the estimators replicated on exhaustive tables, the
summary and the REPORT."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.errors import PipelineError
from experiment_1.files import atomic_write_json, atomic_write_text, read_json_if_exists
from experiment_1.run import (
    MOBIUS_DTYPES,
    EvaluationSetup,
    image_counts,
    provenance,
    valid_images,
    write_timing,
)
from experiment_2.past_exhaustive.validation import calibration, resume
from experiment_2.past_exhaustive.validation import replications as rep
from experiment_2.past_exhaustive.validation.passes import (
    BASES,
    committed_setup_of,
    evaluate_committed,
    evaluate_table,
    table_setup_of,
)
from experiment_2.past_exhaustive.validation.report import report_markdown
from experiment_2.past_exhaustive.validation.table_spec import TableSpec
from experiment_2.past_exhaustive.validation.tables import class_slice, coefficient_agreement, committed_energies
from experiment_2.step_11_estimator_validation import ValidationConfig

STEP = "experiment_2.step_11_estimator_validation"
ESTIMATOR_NAMES = {"subcubes": "random sub-cube", "walsh": "Walsh random-mask"}
ULP32 = 2.0**-24  # float32 unit round-off
ROUND_OFF_ULPS = 8  # logits of two engines that batch the same convolutions differently: a few float32 ulps apart


def question(budget_list: list[dict[str, Any]]) -> str:
    """The step's question, naming the estimators the run has budgets for (a sub-cube-only run names no Walsh)."""
    present = " and ".join(ESTIMATOR_NAMES[name] for name in dict.fromkeys(b["estimator"] for b in budget_list))
    return (
        "Are the exact low-order tables of the family pass equal to the dense butterfly and to the committed exhaustive "
        f"energies, and do the {present} estimators cover the exact value of exhaustive tables at their nominal 95 % "
        "without bias?"
    )


def check_depths(args: ValidationConfig, setups: list[EvaluationSetup]) -> None:
    """The order and every sub-cube size within every built network's L (one line naming the first beyond it)."""
    for setup in setups:
        num_blocks, arch = setup.model.num_blocks, setup.config.arch
        if args.order > num_blocks:
            raise PipelineError(
                f"--order {args.order}: {arch} has L = {num_blocks} gated blocks; use {num_blocks} or less"
            )
        if max(args.subcube_sizes) > num_blocks:
            raise PipelineError(
                f"--subcube-sizes {max(args.subcube_sizes)}: {arch} has L = {num_blocks} gated blocks; use {num_blocks} or less"
            )


def round_off_tolerance(order: int) -> float:
    """The agreement expected of two float32 evaluations of the same logits: an order-``k`` coefficient sums ``2^k``
    logits, each a few ulps apart (:data:`ROUND_OFF_ULPS`), relative to the table's largest coefficient."""
    return 2**order * ROUND_OFF_ULPS * ULP32


def committed_check(
    setup: EvaluationSetup, args: ValidationConfig, options: dict[str, Any], dtype: Any
) -> tuple[Any, dict[str, Any], dict]:
    """(1b) the family pass's E_1 … E_k against the committed run's, image by image."""
    arrays, timing = evaluate_committed(setup, options, dtype, STEP)
    valid = valid_images(arrays)
    committed = np.load(args.committed)
    if not np.array_equal(committed["index"], arrays["index"]):
        raise PipelineError(
            f"{args.committed}: holds images {committed['index'].tolist()[:4]}…, this run {arrays['index'].tolist()[:4]}…; "
            "give the flags (--sample-index, --limit) of the committed run"
        )
    energies = committed_energies(arrays["order_energy_per_class"], arrays["predicted"])
    order = options["order"]
    # the energy of a coefficient within the coefficient tolerance moves by about twice that, relative
    tolerance = 2 * round_off_tolerance(order) * 2 ** (order / 2)
    projections = {}
    for name in ("vector", "scalar"):
        ours = energies[name][valid, 1 : order + 1]
        theirs = committed[f"energy_{name}"][valid, 1 : order + 1]
        relative = np.abs(ours - theirs) / np.abs(theirs)
        projections[name] = {
            "worst_relative_difference": float(relative.max()),
            "worst_by_order": relative.max(axis=0).tolist(),
            "median_relative_difference": float(np.median(relative)),
            "within_tolerance": bool(relative.max() <= tolerance),
        }
    predicted_match = bool(np.array_equal(arrays["predicted"][valid], committed["full_prediction"][valid]))
    return (
        setup,
        {
            "committed": str(args.committed),
            "committed_run_id": str(committed["run_id"]),
            **image_counts(valid),
            "orders": list(range(1, order + 1)),
            "tolerance": tolerance,
            "tolerance_reason": (
                f"relative, {tolerance:.2g}: float32 logits (unit round-off 2^-24) from two walks that batch the same "
                f"convolutions differently differ by a few ulps ({ROUND_OFF_ULPS} allowed); an order-{order} coefficient "
                f"sums 2^{order} of them and an energy doubles a coefficient's relative error; the factor 2^{order}/2 "
                "allows for the cancellation inside the order's sum"
            ),
            "predicted_class_matches_committed": predicted_match,
            "projections": projections,
        },
        timing,
    )


def table_checks(
    spec: TableSpec, families: dict[str, dict[str, np.ndarray]], arrays: dict[str, np.ndarray], order: int
) -> dict[str, Any]:
    """(1a) the family pass against the dense butterfly, per image and corner."""
    tolerance = round_off_tolerance(order)
    bases = {}
    for base in BASES:
        rows = [
            coefficient_agreement(families[base]["coefficients"][image], arrays[f"butterfly_{base}"][image])
            for image in range(len(arrays["index"]))
        ]
        worst = max(row["relative"] for row in rows)
        bases[base] = {
            "per_image": rows,
            "worst_relative": worst,
            "bit_identical_images": sum(row["bit_identical"] for row in rows),
            "within_tolerance": bool(worst <= tolerance),
        }
    return {"network": spec.label, "images": len(arrays["index"]), "tolerance": tolerance, "bases": bases}


def budgets(args: ValidationConfig) -> list[dict[str, Any]]:
    """Every budget of the run (:func:`experiment_2.past_exhaustive.validation.replications.budget_list`)."""
    return rep.budget_list(args.subcube_sizes, args.subcube_draws, args.walsh_samples)


def validation(
    tables: list[tuple[TableSpec, dict[str, np.ndarray]]], args: ValidationConfig, store: Path
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], float]:
    """All cells, the verdict of every (table, statistic), and the seconds the tables' replications took (summed over
    the tables, each timed in the process that replicated it, stored tables included). The tables are independent
    and seeded by their coordinates, so ``--workers`` processes give the same cells as one; each table's cells are
    kept in ``store`` (:func:`experiment_2.past_exhaustive.validation.resume.replicate_all`)."""
    budget_list = budgets(args)
    jobs, places = [], []
    for network_number, (spec, arrays) in enumerate(tables):
        for image in range(len(arrays["index"])):
            for projection_number, projection in enumerate(("vector", "scalar")):
                table = (
                    arrays["table_vector"][image] if projection == "vector" else arrays["table_scalar"][image][:, None]
                )
                seed = rep.replication_seed(args.seed, network_number, image, projection_number)
                jobs.append((rep.DenseTable(np.asarray(table, dtype=np.float64)), budget_list, args.replications, seed))
                places.append({"network": spec.label, "image": int(arrays["index"][image]), "projection": projection})
    results = resume.replicate_all(store, jobs, args.workers)
    cells, verdicts = rep.cells_and_verdicts(places, [result for result, _ in results])
    return cells, verdicts, sum(seconds for _, seconds in results)


def failing_cell_counts(cells: list[dict[str, Any]], replications: int) -> dict[str, float | int]:
    """How the cells that fail the rule fail: ``cells_with_interval``; ``failing_cells``; among the cells with an
    interval, those covering above the band (``cells_above_band``), below it (``cells_below_band``) and in it but
    biased (``cells_biased_in_band``); and ``expected_failing_by_chance``, how many cells with an interval would fail
    the band by chance alone if every interval had exactly nominal coverage (``chance_failure`` per cell)."""
    with_interval = [entry for entry in cells if entry["interval_reported"]]
    low, high = rep.COVERAGE_BAND
    return {
        "cells_with_interval": len(with_interval),
        "failing_cells": sum(not entry["passes"] for entry in cells),
        "cells_above_band": sum(entry["coverage"] > high for entry in with_interval),
        "cells_below_band": sum(entry["coverage"] < low for entry in with_interval),
        "cells_biased_in_band": sum(
            not entry["passes"] and low <= entry["coverage"] <= high for entry in with_interval
        ),
        "expected_failing_by_chance": len(with_interval) * rep.chance_failure(replications),
    }


def build_summary(
    setup: Any,
    committed: dict[str, Any],
    checks: list[dict[str, Any]],
    networks: list[dict[str, Any]],
    cells: list[dict[str, Any]],
    verdicts: list[dict[str, Any]],
    args: ValidationConfig,
) -> dict[str, Any]:
    validated = sum(entry["verdict"] == rep.VALIDATED for entry in verdicts)
    with_interval = sum(entry["budgets_with_interval"] > 0 for entry in verdicts)
    return {
        "experiment": "experiment_2_estimator_validation",
        "question": question(budgets(args)),
        "num_images": committed["num_images"],
        "num_valid": committed["num_valid"],
        "num_skipped_corrupt": committed["num_skipped_corrupt"],
        "num_blocks": setup.model.num_blocks,
        "exact": {
            "committed": committed,
            "family_vs_butterfly": checks,
            "all_within_tolerance": bool(
                all(item["within_tolerance"] for item in committed["projections"].values())
                and all(base["within_tolerance"] for check in checks for base in check["bases"].values())
            ),
        },
        "networks": networks,
        "design": {
            "replications": args.replications,
            "nominal": rep.NOMINAL,
            "budgets": budgets(args),
            "classes_vector": args.classes,
            "chance_failure_per_cell": rep.chance_failure(args.replications),
            "rule": rep.RULE,
        },
        "cells": cells,
        "estimator_verdicts": verdicts,
        "counts": {
            "verdicts": len(verdicts),
            "with_interval": with_interval,
            "validated": validated,
            "not_validated": sum(entry["verdict"] == rep.NOT_VALIDATED for entry in verdicts),
            "conservative": sum(entry["verdict"] == rep.CONSERVATIVE for entry in verdicts),
            "estimate_only": len(verdicts) - with_interval,
            "cells": len(cells),
            **failing_cell_counts(cells, args.replications),
        },
        "calibration": calibration.over_tables(cells),
        "config": provenance(setup),
    }


def run(args: ValidationConfig) -> None:
    """The step on its checked flags (module docstring)."""
    dtype = MOBIUS_DTYPES[args.mobius_dtype]
    options = {"order": args.order, "classes": args.classes, "class_seed": args.seed}
    committed_setup = committed_setup_of(args, options)
    table_setups = [table_setup_of(args, spec, options) for spec in args.table]
    check_depths(args, [committed_setup, *table_setups])  # every network built, no pass run yet
    setup, committed, timing = committed_check(committed_setup, args, options, dtype)
    checks, networks, tables = [], [], []
    for spec, table_setup in zip(args.table, table_setups):
        arrays, families, part = evaluate_table(table_setup, spec, options, dtype, STEP)
        timing = {name: timing[name] + part[name] for name in ("wall_seconds", "images_evaluated")}
        checks.append(table_checks(spec, families, arrays, args.order))
        config = provenance(table_setup)
        networks.append(
            {
                "network": spec.label,
                "description": spec.describe(),
                "arch": spec.arch,
                "weights": spec.weights,
                "input_size": config["input_size"],
                "num_blocks": table_setup.model.num_blocks,
                "images": arrays["index"].tolist(),
                "masks_per_table": 2**table_setup.model.num_blocks,
                "run_id": config["run_id"],
                "classes": class_slice(arrays["butterfly_off"].shape[2], args.classes, args.seed).tolist(),
            }
        )
        tables.append((spec, arrays))
    started = time.perf_counter()
    store = Path(setup.config.output_dir) / "partial" / STEP / "replications"
    cells, verdicts, replication_seconds = validation(tables, args, store)
    timing = {
        **timing,
        "replication_seconds": replication_seconds,  # every table's, when it was replicated
        "replication_wall_seconds_this_call": time.perf_counter() - started,
    }
    summary = build_summary(setup, committed, checks, networks, cells, verdicts, args)
    output = Path(setup.config.output_dir)
    atomic_write_json(output / "summary.json", summary)
    write_timing(setup, timing, summary["config"]["device_name"])
    timing_record = read_json_if_exists(output / "timing.json")
    atomic_write_text(output / "REPORT.md", report_markdown(summary, timing_record))
    print(f"wrote {output / 'summary.json'} and {output / 'REPORT.md'}")
