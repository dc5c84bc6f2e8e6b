"""Experiment 2, step 11 — are the estimators past the exhaustive pass exact, unbiased and calibrated?

Question: (1) do the exact low-order tables of the family pass (the masks within k gates of either corner, and the
Möbius transform on that family) equal the dense butterfly of the exhaustive table, and reproduce a committed
exhaustive run's energies E_1 … E_k? (2) Do the sampling estimators — random sub-cubes (ē_j = E_j / C(L, j) for
j ≤ u) and the Walsh summaries from random masks (variance, total influence, κ_W, κ_W / L, noise stability, the
exact-degree weights W_1 … W_3 and the low-degree share) — cover the exact value with their nominal 95 % intervals,
without bias, on exhaustive tables?

(1) The family pass at k = --order over the run's own images (the flags: --arch, --weights, --sample-index …), E_j
per projection (vector: ‖·‖² over all classes; scalar: the class argmax h(full)) against --committed's
``energy_vector`` / ``energy_scalar``; and on each --table network's images, the family pass at both corners against
the dense butterfly of the same images' exhaustive pass. (2) Each --table network is evaluated exhaustively (all 2^L
masks) on its images; the estimators then run by subsampling those tables — no further forward — in --replications
seeded replications per (table, statistic, budget): sub-cubes of --subcube-sizes blocks × --subcube-draws draws,
Walsh designs of --walsh-samples units (the defaults are the budgets step 8 runs at: at
a few hundred masks or fewer, or a handful of sub-cubes, the intervals under-cover, which an earlier run of this step
showed). The vector projection of the tables keeps a fixed seeded set of --classes
classes. Coverage, bias in units of the estimator's SE and relative RMSE per cell; the verdict per (table,
statistic) by the rule of experiment_2/past_exhaustive/validation/replications.py, stored in summary.json.

Inputs:  the evaluation flags (the committed run's network, images and data), --committed (its per_image.npz), one
         --table ARCH:WEIGHTS:RESOLUTION:IMAGES[:SAMPLE_LIST] per exhaustive validation network (SAMPLE_LIST: images
         of its own, e.g. ones no interval was chosen on; default: the run's).
Outputs: <output-dir>/summary.json, REPORT.md (a page: the calibration of each estimator over the tables; rendered
         again from the summary by python -m experiment_2.past_exhaustive.validation.report), timing.json,
         partial/ (the resume state, keyed by content; not committed: exhaustive tables and family passes, and
         partial/<step>/replications/ with each table's cells per estimator, so a run stopped part way keeps the tables it finished).

    python -m experiment_2.step_11_estimator_validation --arch efficientnet_lite1 --weights pretrained \\
        --sample-index experiment_1/sample_index_sample_test.json --data-dir imagenet-1k/sample-1750 --limit 24 \\
        --batch-size 1 --mask-chunk 512 --num-workers 0 --seed 0 \\
        --committed experiment_2/results_efficientnet_lite1_sample/per_image.npz \\
        --table efficientnet_lite1:pretrained:native:4 --table resnet34:random:32:4 \\
        --table resnet34:random:32:4:experiment_2/sample_index_validation_8_11.json --replications 1000 --workers 2 \\
        --output-dir experiment_2/results_estimator_validation
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.errors import PipelineError, run_cli
from experiment_1.files import atomic_write_json, atomic_write_text, read_json_if_exists
from experiment_1.run import (
    MOBIUS_DTYPES,
    Command,
    EvaluationSetup,
    RunConfig,
    flag,
    image_counts,
    provenance,
    valid_images,
    write_timing,
)
from experiment_2.past_exhaustive.validation import calibration, resume
from experiment_2.past_exhaustive.validation import replications as rep
from experiment_2.past_exhaustive.validation.passes import (
    BASES,
    TableSpec,
    committed_setup_of,
    evaluate_committed,
    evaluate_table,
    table_setup_of,
)
from experiment_2.past_exhaustive.validation.report import report_markdown
from experiment_2.past_exhaustive.validation.tables import class_slice, coefficient_agreement, committed_energies

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


@dataclass(frozen=True, kw_only=True)
class ValidationConfig(RunConfig):
    """The evaluation flags (the committed run's) and the step's own; the order and the sub-cube sizes, bounded by
    every network's L, are checked once the networks are built, before the first pass."""

    order: int = flag("k of the exact tables (default: %(default)s)", low=1, default=3)
    committed: Path = flag(
        "per_image.npz of the committed exhaustive run of the same network and images (default: %(default)s)",
        path="file",
        what="committed run's per_image.npz",
        fix="give the committed run's per_image.npz with --committed",
        default=Path("experiment_2/results_efficientnet_lite1_sample/per_image.npz"),
    )
    table: list[TableSpec] = flag(
        "an exhaustive validation network ARCH:WEIGHTS:RESOLUTION:IMAGES[:SAMPLE_LIST] (resolution native: the arch's "
        "own; SAMPLE_LIST: the table's images are the first IMAGES of that list, not of --sample-index)",
        type=TableSpec.parse,
        action="append",
    )
    classes: int = flag("classes kept for the vector projection (default: %(default)s)", low=1, default=64)
    replications: int = flag("replications per cell (default: %(default)s)", low=2, default=500)
    subcube_sizes: list[int] = flag("u (default: %(default)s)", low=1, nargs="+", factory=lambda: [4, 6, 8])
    subcube_draws: list[int] = flag(
        "draws, at least 3 (an interval over draws; default: %(default)s)", low=3, nargs="+", factory=lambda: [30]
    )
    workers: int = flag("processes for the replications (same cells for any count; default: 1)", low=1, default=1)
    walsh_samples: list[int] = flag(
        "Walsh units m, at least 2; the flag alone: no Walsh budget, the sub-cubes only (default: %(default)s)",
        low=2,
        nargs="*",
        factory=lambda: [1024, 2048],
    )


COMMAND = Command(__doc__, ValidationConfig, None, {"output_dir": "experiment_2/results_estimator_validation"})


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


def main(argv: list[str] | None = None) -> None:
    args = COMMAND.parse(argv)
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


if __name__ == "__main__":
    run_cli(main)
