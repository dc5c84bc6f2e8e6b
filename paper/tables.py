"""Every table of tables.md and the paper, declared once as data: its committed results files, where its rows are
(the file, or each λ, variant, measure or rung it holds) and each column's header and cell — a template of the cells'
format language (:data:`paper.table_model.CELLS`) or, where a cell chooses, a function. :mod:`paper.make_tables`
iterates them; no number is typed by hand. A new results section: a :class:`~paper.table_model.Section` here, its key
in the experiment's record's ``tables`` (the paper inputs ``generated/table_<key>.tex`` with ``\\generatedtable{<key>}``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from experiment_1.files import read_timing
from experiment_1.report import by_id, format_number, format_percent, format_stat
from experiment_2.spectrum.null_networks import statistics_rows
from experiment_5.formatting import SCORE_LABELS, decision_cell, difference_cell, measure_label, rho_cell
from paper.depth_ladder import null_peak_text
from paper.experiments import RECORDS, record_of
from paper.macros import TIMINGS, total_pass_seconds
from paper.table_model import Cell, Paragraph, Part, Section, cell_text
from paper.wording import run_label


def optional(cell: Cell) -> Cell:
    """``cell``, or "—" where the row lacks its value (a column later runs added)."""

    def read(row: Any) -> str:
        try:
            return cell_text(cell, row)
        except (KeyError, TypeError):
            return "—"

    return read


def file_name(path: Path, root: Path, document: Any) -> str:
    return f"`{path.name}`"


def folder(path: Path, root: Path, document: Any) -> str:
    return f"`{path.parent.relative_to(root).as_posix()}`"


EXPERIMENT_1 = Section(
    "experiment_1",
    record_of(1).title,
    Part(
        record_of(1).summaries,
        (
            ("Möbius rel. error (float32)", "{metrics[mobius_rel_error_float32]:stat}"),
            ("worst subset (float32)", "{metrics[max_subset_rel_error_float32][max]:num}"),
            ("naive-sum rel. error", "{metrics[naive_sum_rel_error]:stat}"),
            ("naive-sum top-1", "{metrics[naive_sum_top1_agreement]:stat%}"),
            ("first-order rel. error", "{metrics[first_order_rel_error]:stat}"),
            ("first-order top-1", "{metrics[first_order_top1_agreement]:stat%}"),
            ("full-mask top-1 acc.", optional("{metrics[full_mask_top1_accuracy]:stat%}")),
        ),
        experiment=1,
    ),
    "No Experiment 1 results yet.",
)


def binomial_null(summary: dict[str, Any]) -> str:
    null = summary["binomial_null"]
    return f"{null_peak_text(null['num_blocks'])}, κ = {format_number(null['kappa'])}, C≤3 = {format_percent(null['c_le3'])}"


def walsh(cell: str) -> Cell:
    """A Walsh-basis cell, for a run evaluated before the Walsh control "not evaluated"."""
    return lambda summary: cell_text(cell, summary["walsh"]) if "walsh" in summary else "not evaluated"


SPECTRUM = "{projections[vector][mean_spectrum_peak_order]}"
EXPERIMENT_2 = Section(
    "experiment_2",
    record_of(2).title,
    Part(
        record_of(2).summaries,
        (
            ("peak k (vector)", SPECTRUM),
            ("κ^v", "{projections[vector][kappa]:stat}"),
            ("κ^s", "{projections[scalar][kappa]:stat}"),
            ("C≤3 (vector)", "{projections[vector][c_le3]:stat%}"),
            ("trunk share (vector)", "{projections[vector][trunk_share]:stat%}"),
            ("binomial null: peak, κ, C≤3", binomial_null),
        ),
        experiment=2,
    ),
    "No Experiment 2 results yet.",
    Part(
        record_of(2).summaries,
        (
            ("peak k (Walsh)", walsh(SPECTRUM)),
            ("κ_W^v", walsh("{projections[vector][kappa]:stat}")),
            ("W≤3 / Var h", walsh("{projections[vector][c_le3]:stat%}")),
            ("cancellation ratio", walsh("{cancellation_ratio[vector]:stat}")),
        ),
        experiment=2,
        intro="The Walsh basis, vector projection: W_k is the variance of h over random masks at degree k; the "
        "cancellation ratio is the Möbius interaction energy over ‖h(full) − h(∅)‖².",
    ),
)


def null_heading(path: Path, root: Path, summary: dict[str, Any]) -> str:
    seeds = summary["config"]["seeds"]
    return (
        f"{folder(path, root, summary)} — {summary['config']['arch']}: the trained network against "
        f"{summary['num_null_networks']} random-init networks (seeds {min(seeds)}–{max(seeds)}), "
        f"{summary['num_images_per_network']} images each"
    )


EXPERIMENT_2_NULL = Section(
    "experiment_2_null",
    record_of("2N").title,
    Part(record_of("2N").summaries, experiment="2N", per_file=True, heading=null_heading, table=statistics_rows),
    "No random-init null over networks yet.",
)


def slopes(summary: dict[str, Any]) -> list[Paragraph]:
    """The power-law slopes of a λ sweep, a sentence."""
    law = summary["power_law"]
    orders = ", ".join(
        f"k={row['order']}: {format_number(row['slope'])}" for row in law["projections"]["vector"] if row["order"] >= 1
    )
    fit = ", ".join(format_number(value) for value in law["fit_lambdas"])
    return [Paragraph(f"Slope of log sqrt(Ē_k) vs log λ over λ ∈ {{{fit}}} (vector): {orders}.")]


EXPERIMENT_3AB = Section(
    "experiment_3ab",
    record_of("3A/3B").title,
    Part(
        record_of("3A/3B").summaries,
        (
            ("λ", "{lambda:num}"),
            ("κ^v", "{projections[vector][kappa]:stat}"),
            ("κ^s", "{projections[scalar][kappa]:stat}"),
            ("C≤3 (vector)", "{projections[vector][c_le3]:stat%}"),
            ("top-1 agreement with λ = 1", "{top1_agreement_with_lambda_1:stat%}"),
        ),
        experiment="3A/3B",
        rows=lambda summary: summary["per_lambda"],
        label="",
        per_file=True,
        after=slopes,
    ),
    "No Experiment 3A/3B results yet.",
)


def law(name: str, extra: str = "") -> Cell:
    """A 3C law's verdict with the λ it is visible from (and ``extra``); "—" for a law the run did not state."""

    def cell(row: dict[str, Any]) -> str:
        if name not in row["laws"]:
            return "—"
        test, visible = row["laws"][name], row["laws"][name]["visible_from_lambda"]
        seen = "" if visible is None else f" (from λ = {format_number(visible)})"
        return test["verdict"] + seen + (cell_text(extra, row) if extra else "")

    return cell


def limit_variants(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """A 3C summary's rows: each activation variant, with the run's arithmetic, λ grid and slopes."""
    grid = f"`{summary['config']['dtype']}`, λ ≥ {format_number(min(summary['lambdas']))}"
    return [
        {
            "variant": variant,
            "grid": grid,
            "slopes": ", ".join(
                format_number(row["slope"]) if row["resolved"] else "·"
                for row in block["limit_slopes"]
                if row["order"] >= 1
            ),
            **block,
        }
        for variant, block in summary["variants"].items()
    ]


EXPERIMENT_3C = Section(
    "experiment_3c",
    record_of("3C").title,
    Part(
        record_of("3C").summaries,
        (
            ("arithmetic, grid", "{grid}"),
            ("limit slope k = 1 … L (· unresolved)", "{slopes}"),
            ("λ^k law", law("lambda_k")),
            (
                "kink law min(k, s) (stated before the 3C runs; Lite0's float32 3A/3B slopes were already known)",
                law("kink", ", s = {kink_exponent:num}"),
            ),
            ("kink law with the exact-zero chain (after measuring)", law("kink_chain", ", R = {exact_zero_chain}")),
        ),
        experiment="3C",
        rows=limit_variants,
        label="run, activations",
        each=lambda row: f", {row['variant']}",
    ),
    "No Experiment 3C results yet.",
)

SWAP_COST = Section(
    "experiment_3c_swap",
    "Experiment 3C — the smooth swap's top-1 cost (full mask, λ = 1; `experiment_2.step_6_swap_cost`)",
    Part(
        "experiment_2/results_3c_*/swap_cost.json",
        (
            ("β", "{variants[smooth][smooth_activations][beta]:num}"),
            ("top-1 native", "{variants[native][top1]:stat%} ({counts[correct_native]} / {counts[labelled]})"),
            ("top-1 swapped", "{variants[smooth][top1]:stat%} ({counts[correct_smooth]} / {counts[labelled]})"),
            ("swapped − native", "{top1_difference:stat%}"),
            ("the swap lowers top-1", "{verdicts[0][decision]}"),
        ),
        experiment="3C",
        label="run (swap_cost.json)",
    ),
    "No swap-cost results yet.",
)


def seed_fraction(quantity: str, cell: Cell) -> Cell:
    """Experiment 3's vector ranking at the fraction of 2^L that matches the original study's K."""

    def read(summary: dict[str, Any]) -> str:
        rows = summary["beside_seed"]["rows"]
        (row,) = [row for row in rows if (row["ranking"], row["quantity"]) == ("vector", quantity)]
        return "—" if row["at_matching_fraction"]["value"] is None else cell_text(cell, row["at_matching_fraction"])

    return read


EXPERIMENT_3 = Section(
    "experiment_3",
    f"{record_of(3).title} (vector ranking)",
    Part(
        record_of(3).summaries,
        (
            ("Γ_K at 1/4 of 2^L", seed_fraction("captured_energy", "K = {k}: {value:stat%}")),
            ("top-1 agreement at 1/2 of 2^L", seed_fraction("top1_agreement_magnitude", "K = {k}: {value:stat%}")),
            ("best control there", seed_fraction("top1_agreement_controls_max", "K = {k}: {value:stat%}")),
            ("magnitude ÷ random there", seed_fraction("improvement_over_random", "{value:num}×")),
            ("K for 90 % energy (per image)", "{sources[magnitude_vector][k_mass][0.9]:stat}"),
            ("K_eff", "{k_eff[vector]:stat} of {num_masks}"),
        ),
        experiment=3,
        verdicts=("*",),
    ),
    "No Experiment 3 results yet.",
)

EXPERIMENT_4 = Section(
    "experiment_4",
    f"{record_of(4).title} (binary signatures)",
    Part(
        record_of(4).summaries,
        experiment=4,
        per_file=True,
        heading=lambda path, root, summary: (
            f"{run_label(path, root, summary)}, {summary['num_classes']} classes, K = {summary['settings']['nn_k']}"
        ),
        verdicts=("*",),
    ),
    "No Experiment 4 results yet.",
)


def measures(analysis: dict[str, Any]) -> list[dict[str, Any]]:
    """Experiment 5's rows: each headline measure against the primary difficulty score."""
    primary = analysis["settings"]["primary_score"]
    correctness, decisions = analysis["correctness"]["measures"], by_id(analysis["verdicts"])
    return [
        {
            "measure": measure,
            "rho": analysis["spearman"][primary][measure],
            "quartiles": analysis["quartiles"][primary]["measures"][measure]["hard_minus_easy"],
            "correctness": correctness[measure]["incorrect_minus_correct"] if correctness else None,
            "verdict": decisions[f"{measure}.hard_minus_easy"],
        }
        for measure in analysis["headline_measures"]
    ]


EXPERIMENT_5 = Section(
    "experiment_5",
    record_of(5).title,
    Part(
        record_of(5).summaries,
        (
            ("measure", lambda row: measure_label(row["measure"])),
            ("Spearman ρ", lambda row: rho_cell(row["rho"])),
            ("partial ρ given ‖h(full)‖", lambda row: rho_cell(row["rho"], "partial_")),
            ("hard − easy quartile", lambda row: difference_cell(row["quartiles"], row["measure"])),
            ("incorrect − correct", optional(lambda row: difference_cell(row["correctness"], row["measure"]))),
            ("decision", lambda row: decision_cell(row["verdict"])),
        ),
        experiment=5,
        rows=measures,
        label="",
        per_file=True,
        heading=lambda path, root, analysis: (
            f"{run_label(path, root, analysis)}, difficulty = "
            f"{SCORE_LABELS[analysis['settings']['primary_score']]}, top-1 {format_stat(analysis['top1_accuracy'], percent=True)}"
        ),
        verdicts=("seed_claim",),
    ),
    "No Experiment 5 results yet.",
)


def rung(experiment: str, cell: Cell, absent: str = "—") -> Cell:
    """A depth rung's cell from one experiment's statistics (``spectrum``, ``topk``, ``nearest_neighbour``), ``absent``
    for a rung without that experiment's run."""
    return lambda row: optional(cell)(row[experiment]) if row.get(experiment) else absent


def saturated_agreement_note(rungs: list[dict[str, Any]]) -> list[Paragraph]:
    """A note under the depth table when its "K / 2^L for 90 % top-1" column is 1, its bound, on every network that has
    it: only the sum of all 2^L coefficients reaches the agreement, so the column cannot order the networks."""
    fractions = [row["topk"]["agreement_k_fraction"] for row in rungs if row.get("topk")]
    if not fractions or any(fraction != 1 for fraction in fractions):
        return []
    return [
        Paragraph(
            "K / 2^L for 90 % top-1 is the smallest K of the grid whose K largest coefficients sum to the network's "
            "top-1 class on 90 % of the images, as a share of 2^L. It is 1, its bound, on every network here: only the "
            "sum of all 2^L coefficients, h(full) itself, agrees that often, because the largest coefficients cancel "
            "one another (Experiment 3); the column cannot order the networks by depth."
        )
    ]


DEPTH = Section(
    "depth",
    record_of("depth").title,
    Part(
        record_of("depth").summaries,
        (
            (
                "network",
                lambda row: row["arch"] + (f" ({row['label']}, resolution control)" if row.get("label") else ""),
            ),
            ("L", lambda row: "not run" if row["num_blocks"] is None else str(row["num_blocks"])),
            (
                "N (Exp 2 / 3)",
                lambda row: f"{rung('spectrum', '{num_images}')(row)} / {rung('topk', '{num_images}')(row)}",
            ),
            (
                "peak k: mean spectrum; per image",
                rung("spectrum", "{mean_spectrum_peak_order} (null {binomial_null_peak_order}); {peak_order:stat}"),
            ),
            ("κ^v", rung("spectrum", "{kappa:stat}")),
            ("κ^v / L", rung("spectrum", "{kappa_over_l:stat}")),
            ("C≤3", rung("spectrum", "{c_le3:stat%}")),
            ("trunk share", rung("spectrum", "{trunk_share:stat}")),
            ("K_eff / 2^L", rung("topk", "{k_eff_fraction:stat%}")),
            ("Γ_K at 1/8 of 2^L", rung("topk", "{captured_energy[0.125]:stat%}")),
            ("at 1/4", rung("topk", "{captured_energy[0.25]:stat%}")),
            ("at 1/2", rung("topk", "{captured_energy[0.5]:stat%}")),
            ("K / 2^L for 90 % top-1", rung("topk", "{agreement_k_fraction:num}")),
            (
                "Exp 4 1-NN (scalar)",
                rung("nearest_neighbour", "{accuracy:stat%} (N = {num_images}, chance {chance:%})", "not run"),
            ),
        ),
        experiment="depth",
        rows=lambda analysis: analysis["rungs"],
        label="",
        per_file=True,
        heading=folder,
        verdicts=("*",),
        after=lambda analysis: saturated_agreement_note(analysis["rungs"]),
    ),
    "No depth ladder yet (python -m paper.depth_compare).",
)


def wall_rows(root: Path, files: list[tuple[Path, Any]]) -> list[dict[str, Any]]:
    """Every results folder's evaluation time over all its processes (a folder of per-seed runs, as the null seeds', is
    one row summing its seeds), then the total with each pass counted once: a single pass shared by several
    experiments appears in each of their rows."""
    runs: dict[Path, list[dict[str, Any]]] = {}
    for path, timing in files:
        runs.setdefault(Path(*path.relative_to(root).parts[:2]), []).append(timing)
    rows = []
    for name, timings in runs.items():
        wall, images = sum(t["wall_seconds"] for t in timings), sum(t["images_evaluated"] for t in timings)
        shared = f" (shared by {len(timings[0]['shared_pass'])})" if timings[0].get("shared_pass") else ""
        rows.append(
            {
                "run": f"`{name.as_posix()}`" + (f" ({len(timings)} seeds)" if len(timings) > 1 else ""),
                "device": ", ".join(sorted({t["device_name"] for t in timings})),
                "engine": ", ".join(sorted({t["engine"] for t in timings})),
                "images": images,
                "processes": sum(
                    len({(record["pass"], record["rank"]) for record in t["processes"]}) if "processes" in t else 1
                    for t in timings
                ),
                "wall": format_number(wall) + shared,
                "per_image": format_number(wall / images),
            }
        )
    if rows:
        total = total_pass_seconds([timing for _, timing in files])
        wall = f"{format_number(total)} ({format_number(total / 3600)} h)"
        rows.append(dict.fromkeys(rows[0], "") | {"run": "all runs, each pass once", "wall": wall})
    return rows


WALL_TIME = Section(
    "wall_time",
    "Wall time of every evaluation run, over all its processes (timing.json)",
    Part(
        TIMINGS,
        (
            ("run", "{run}"),
            ("device", "{device}"),
            ("engine", "{engine}"),
            ("image evaluations", "{images}"),
            ("processes", "{processes}"),
            ("wall s", "{wall}"),
            ("s per image evaluation", "{per_image}"),
        ),
        label="",
        read=read_timing,
        gather=wall_rows,
    ),
    "No timed runs yet.",
)


def bench_rows(bench: dict[str, Any]) -> list[dict[str, Any]]:
    """A benchmark file's rows, each with the file (``run``), its device and how it allocated memory (tuned as in every
    run, or glibc's default in files written before the benchmark tuned it)."""
    allocator = bench.get("allocator")
    tuning = None if allocator is None else allocator.get("tuning")
    memory = {None: ", allocator untuned (written before the benchmark tuned it)", "mallopt": ", allocator tuned"}
    device = bench["device"] + memory.get(tuning, f", allocator: {tuning}")
    return [{**row, "device": device, "run": bench} for row in bench["rows"]]


def engine_mode(row: dict[str, Any]) -> str:
    mode = "compiled" if row.get("compiled") else "eager"
    return (
        f"{row.get('dtype', 'float32')}, {mode}, {row.get('memory_format', '—')}"
        + (", BN folded" if row.get("batchnorm") == "folded" else "")
        + (f", weights {row['weights']}" if row.get("weights", "random") != "random" else "")
    )


def naive_seconds(row: dict[str, Any]) -> str:
    timed = row["naive_masks_timed"]
    return format_number(row["naive_seconds"]) + ("" if timed == 2 ** row["num_blocks"] else f" (from {timed} masks)")


BENCHMARK = Section(
    "benchmark",
    "Engine benchmark (`python -m experiment_1.tools.bench engines`)",
    Part(
        ("experiment_1/results_bench/bench_*.json", "experiment_1/results_bench/gpu_check.json"),
        (
            ("device", "{device}"),
            ("arch", "{arch}"),
            ("dtype, mode, layout", engine_mode),
            ("images", "{images} × {resolution} px"),
            ("tree s", "{tree_seconds:num}"),
            ("naive s", naive_seconds),
            ("tree img/s", optional("{tree_images_per_s:num}")),
            ("tree GMAC/img", optional("{tree_gmac:num}")),
            ("tree GMAC/s", optional("{tree_gmac_per_s:num}")),
            ("tree GMAC/s vs ResNet-18", optional("{tree_gmac_per_s_vs_resnet18:%}")),
            ("naive GMAC/s", optional("{naive_gmac_per_s:num}")),
            ("naive/tree time", "{speedup:.1f}×"),
            ("MAC ratio", "{work_ratio:.1f}×"),
            ("tree vs contiguous", optional("{tree_speedup_vs_contiguous:.2f}×")),
            ("max abs(tree − naive)", "{max_abs_disagreement:num}"),
        ),
        rows=bench_rows,
        name=file_name,
        label="file",
    ),
    "No benchmark results yet.",
)

FAMILY_BENCHMARK = Section(
    "family_benchmark",
    "The family walk against the dense tree pass (`python -m experiment_1.tools.bench family`)",
    Part(
        "experiment_1/results_bench/family_*.json",
        (
            ("device", "{device}"),
            ("family pass", "{family_arch} (L = {family_num_blocks}), k ≤ {order}, base {base}"),
            ("images", "{run[images]} × {run[resolution]} px"),
            ("masks", "{members}"),
            ("GMAC/img", "{family_gmac:num}"),
            ("s", "{family_seconds_median:num}"),
            ("GMAC/s", "{family_gmac_per_s:num}"),
            ("dense tree pass", "{dense_arch} (L = {dense_num_blocks})"),
            ("dense s", "{dense_seconds_median:num}"),
            ("dense GMAC/s", "{dense_gmac_per_s:num}"),
            ("family / dense GMAC/s", "{ratio_median:%0} ({ratio_min:%0}–{ratio_max:%0})"),
            (
                "reaches target",
                lambda row: f"{'yes' if row['meets_target'] else 'no'} (≥ {format_percent(row['target'], 0)})",
            ),
            ("rounds", lambda row: str(len(row["ratio_per_round"]))),
            ("max abs(tree − naive)", "{max_abs_disagreement:num}"),
            ("max abs(logit)", "{max_abs_logit:num}"),
            ("relative", lambda row: format_number(row["max_abs_disagreement"] / max(row["max_abs_logit"], 1e-30))),
        ),
        rows=bench_rows,
        name=file_name,
        label="file",
    ),
    "No family benchmark yet (python -m experiment_1.tools.bench family).",
)

RATIO = "{wall_ratios[%s][median]:.2f}× ({wall_ratios[%s][min]:.2f}–{wall_ratios[%s][max]:.2f})"
ALLOCATOR = Section(
    "allocator",
    "The allocator setting (`python -m experiment_1.tools.bench allocator --json`)",
    Part(
        "experiment_1/results_bench/allocator_*.json",
        (
            ("path", "{path}"),
            (
                "workload",
                "{workload[arch]}, {workload[images]} × {workload[resolution]} px, {workload[passes]} tree pass(es), "
                "{workload[threads]} thread(s)",
            ),
            ("rounds", "{workload[rounds]}"),
            (
                "wall s: default / tunables / untuned (medians)",
                "{medians[default][wall_seconds]:num} / {medians[tuned][wall_seconds]:num} / "
                "{medians[untuned][wall_seconds]:num}",
            ),
            ("default / tunables", RATIO % (("default_over_tuned",) * 3)),
            ("untuned / tunables", RATIO % (("untuned_over_tuned",) * 3)),
            ("default's setting", optional("{allocator[default][tuning]}")),
        ),
        name=file_name,
        label="file",
    ),
    "No allocator benchmark yet (python -m experiment_1.tools.bench allocator --json …).",
)


def largest_parts(profile: dict[str, Any]) -> str:
    parts = sorted(profile["parts"], key=lambda part: part["share"], reverse=True)[:3]
    return "; ".join(f"{part['part']} {format_percent(part['share'])}" for part in parts)


PROFILE = Section(
    "profile",
    "Where a tree pass spends its time (`python -m experiment_1.tools.bench profile`)",
    Part(
        "experiment_1/results_profile/*.json",
        (
            ("pass", "{arch}, {images} × {resolution} px, {memory_format}, chunk {mask_chunk}"),
            ("profiled s", "{wall_seconds:num}"),
            ("largest parts (share of operator time)", largest_parts),
            ("convolution", "{operator_groups[convolution]:%}"),
            ("batch-norm", "{operator_groups[batch_norm]:%}"),
            ("linear", "{operator_groups[linear]:%}"),
        ),
        name=file_name,
        label="file",
    ),
    "No profiles yet.",
)

EXPERIMENTS = (EXPERIMENT_1, EXPERIMENT_2, EXPERIMENT_2_NULL, EXPERIMENT_3AB, EXPERIMENT_3C, SWAP_COST, EXPERIMENT_3)
ENGINE = (WALL_TIME, BENCHMARK, PROFILE, FAMILY_BENCHMARK, ALLOCATOR)
DECLARED = {section.key: section for section in (*EXPERIMENTS, EXPERIMENT_4, EXPERIMENT_5, DEPTH, *ENGINE)}
"""Table key → its section; the key names the paper's generated table file (paper/generated/table_<key>.tex)."""
ENGINE_TABLES = ("wall_time", "benchmark", "profile")  # in tables.md and the paper after the experiments'
PERFORMANCE_TABLES = (
    "benchmark",
    "family_benchmark",
    "allocator",
    "wall_time",
    "profile",
)  # experiment_1/PERFORMANCE.md

SECTIONS = [DECLARED[key] for key in (*(key for record in RECORDS for key in record.tables), *ENGINE_TABLES)]
"""Every section of tables.md and the paper in order: each record's tables (paper/experiments.py), then the engine's."""
