"""Regenerate ``tables.md`` — every headline number of every experiment — from the summary JSON.

Question: what does each run say, side by side? One row per results folder, read from
``experiment_1/results*/summary.json`` (Experiment 1), ``experiment_2/results*/summary.json``
(Experiment 2), ``experiment_2/results_lambda*/summary_all.json`` (3A/3B),
``experiment_2/results_3c_*/summary_3c.json`` (3C, a row per variant),
``experiment_2/results_3c_*/swap_cost.json`` (the smooth swap's top-1 cost),
``experiment_3/results*/summary.json`` (Experiment 3), ``experiment_4/results*/overlap.json``
(Experiment 4), ``experiment_5/results*/analysis.json`` (Experiment 5),
``experiment_1/results_bench/bench_*.json`` and ``gpu_check.json`` (engine benchmarks), ``family_*.json`` (the family walk
against the dense pass) and ``allocator_*.json`` (the allocator setting), ``experiment_1/results_profile/*.json``
(tree-pass profiles) and ``paper/results_depth*/depth.json`` (the depth ladder). No number is typed by hand.

One generator, two renderers: every section function below returns the table model of
:mod:`paper.table_model`; :mod:`paper.render_markdown` writes it into tables.md and the README,
:mod:`paper.render_latex` into the paper's generated tables.

Inputs:  the committed runs' summaries (paper/committed_runs.txt; a demo or scratch run is never read).  Outputs: tables.md, the generated blocks of
         README.md (the headline table) and experiment_1/PERFORMANCE.md (benchmark, family benchmark, allocator, wall time, profile; between their
         ``<!-- generated:…`` markers), and
         paper/generated/ (table_<section>.tex, macros.tex, verdicts.tex, figures.tex) for ``make paper``.

    python -m paper.make_tables
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from experiment_1.errors import PipelineError, run_cli
from experiment_1.files import atomic_write_text, missing_key, read_json, read_timing
from experiment_1.paths import REPO_ROOT
from experiment_1.report import (
    by_id,
    format_number,
    format_percent,
    format_stat,
    network_name,
    pretty_networks,
    verdict_sentence,
)
from experiment_2.spectrum.null_networks import statistics_rows
from experiment_5.formatting import SCORE_LABELS, decision_cell, difference_cell, measure_label, rho_cell
from paper.checks import check_one_network, checked_json
from paper.claims import claims_markdown_table, claims_tex, input_size_note
from paper.committed_runs import MANIFEST, allow_all_runs, committed_glob
from paper.experiments import RECORDS, record_of
from paper.figures import figures_tex
from paper.headline import figure_reading, headline_table, null_peak_text
from paper.macros import EXP1, EXP2, EXP3, EXP3AB, EXP4, EXP5, TIMINGS, macros_tex, total_pass_seconds
from paper.plots import render_paper_figures
from paper.render_latex import render_latex
from paper.render_markdown import render_markdown
from paper.runs import runs_tex
from paper.table_model import Block, Bullets, NotRun, Paragraph, Table
from paper.verdict_text import verdicts_tex

RUN_KEYS = ("config.arch", "config.weights", "num_valid")  # what _run_label reads
PAPER_SOURCES = [
    EXP1,
    EXP2,
    EXP3AB,
    EXP3,
    EXP4,
    EXP5,
]  # the paper's network on its sample lists (the random-init null differs by design)
WHOLE_LIST_SOURCES = [
    EXP1,
    EXP2,
    EXP3,
    EXP4,
    EXP5,
]  # runs on their whole sample list (3A/3B takes its first 40 images by design)


def _summaries(
    root: Path, pattern: str, experiment: int | str, keys: tuple[str, ...] = ()
) -> list[tuple[Path, dict[str, Any]]]:
    """The summaries of ``experiment`` matching ``pattern``; one line naming the file and the first
    missing (nested) key if one lacks a key its table reads — checked for all before any table is written."""
    found = []
    for path in committed_glob(root, pattern):
        if "partial" in path.parts:
            continue
        summary = checked_json(path)
        if isinstance(summary, dict) and summary.get("experiment") == experiment:
            missing = next(filter(None, (missing_key(summary, key) for key in (*RUN_KEYS, *keys))), None)
            if missing:
                raise PipelineError(
                    f"{path}: lacks {missing} (written by an older version?); rerun the step that wrote it, or "
                    f"paper.resummarize for Experiments 1, 2, 3 and 3A/3B"
                )
            found.append((path, summary))
    return found


def _run_label(path: Path, root: Path, summary: dict[str, Any]) -> str:
    config = summary["config"]
    folder = path.parent.relative_to(root).as_posix()
    return f"`{folder}` — {config['arch']}{input_size_note(config)}, `{config['weights']}`, N = {summary['num_valid']}"


RUN_LABEL = re.compile(r"`[^`]+` — ([A-Za-z0-9_.:]+)((?: at \d+ px)?), `(pretrained|random)`, N = ")


def reader_label(text: str) -> str:
    """The paper's form of :func:`_run_label` in ``text``: the network as a reader names it (random init when
    untrained) and N, without the results folder (tables.md keeps the folder, to find the files)."""
    return pretty_networks(
        RUN_LABEL.sub(lambda match: f"{network_name(match.group(1), match.group(3))}{match.group(2)}, N = ", text)
    )


def reader_labels(blocks: list[Block]) -> list[Block]:
    """Every cell of ``blocks`` in :func:`reader_label`'s form."""
    folder_only = [isinstance(block, Paragraph) and bool(re.fullmatch(r"`[^`]+`", block.text)) for block in blocks]
    return [
        Table(
            [reader_label(cell) for cell in block.header], [[reader_label(cell) for cell in row] for row in block.rows]
        )
        if isinstance(block, Table)
        else Paragraph(reader_label(block.text))
        if isinstance(block, Paragraph)
        else block
        for block, folder in zip(blocks, folder_only)
        if not folder
    ]


def experiment_1_table(root: Path) -> list[Block]:
    rows = []
    for path, summary in _summaries(
        root,
        record_of(1).summaries,
        1,
        tuple(
            f"metrics.{name}"
            for name in (
                "mobius_rel_error_float32",
                "max_subset_rel_error_float32",
                "naive_sum_rel_error",
                "naive_sum_top1_agreement",
                "first_order_rel_error",
                "first_order_top1_agreement",
            )
        ),
    ):
        metrics = summary["metrics"]
        accuracy = metrics.get("full_mask_top1_accuracy")
        rows.append(
            [
                _run_label(path, root, summary),
                format_stat(metrics["mobius_rel_error_float32"]),
                format_number(metrics["max_subset_rel_error_float32"]["max"]),
                format_stat(metrics["naive_sum_rel_error"]),
                format_stat(metrics["naive_sum_top1_agreement"], percent=True),
                format_stat(metrics["first_order_rel_error"]),
                format_stat(metrics["first_order_top1_agreement"], percent=True),
                format_stat(accuracy, percent=True) if accuracy else "—",
            ]
        )
    if not rows:
        return [NotRun("No Experiment 1 results yet.")]
    return [
        Table(
            [
                "run",
                "Möbius rel. error (float32)",
                "worst subset (float32)",
                "naive-sum rel. error",
                "naive-sum top-1",
                "first-order rel. error",
                "first-order top-1",
                "full-mask top-1 acc.",
            ],
            rows,
        )
    ]


def experiment_2_table(root: Path) -> list[Block]:
    rows = []
    for path, summary in _summaries(
        root,
        record_of(2).summaries,
        2,
        (
            "projections.vector.kappa",
            "projections.vector.c_le3",
            "projections.vector.trunk_share",
            "projections.vector.mean_spectrum_peak_order",
            "projections.scalar.kappa",
            "binomial_null.peak_order",
            "binomial_null.kappa",
            "binomial_null.c_le3",
        ),
    ):
        vector, scalar = summary["projections"]["vector"], summary["projections"]["scalar"]
        null = summary["binomial_null"]
        rows.append(
            [
                _run_label(path, root, summary),
                str(vector["mean_spectrum_peak_order"]),
                format_stat(vector["kappa"]),
                format_stat(scalar["kappa"]),
                format_stat(vector["c_le3"], percent=True),
                format_stat(vector["trunk_share"], percent=True),
                f"{null_peak_text(summary)}, κ = {format_number(null['kappa'])}, C≤3 = {format_percent(null['c_le3'])}",
            ]
        )
    if not rows:
        return [NotRun("No Experiment 2 results yet.")]
    return [
        Table(
            [
                "run",
                "peak k (vector)",
                "κ^v",
                "κ^s",
                "C≤3 (vector)",
                "trunk share (vector)",
                "binomial null: peak, κ, C≤3",
            ],
            rows,
        ),
        *experiment_2_walsh_table(root),
    ]


def experiment_2_walsh_table(root: Path) -> list[Block]:
    """The same runs in the Walsh (±1 Fourier) basis, with the cancellation ratio that separates the two bases."""
    rows = []
    for path, summary in _summaries(root, record_of(2).summaries, 2, ("projections.vector.kappa",)):
        walsh = summary.get("walsh")
        if walsh is None:
            rows.append([_run_label(path, root, summary), "not evaluated (run before the Walsh control)", "", "", ""])
            continue
        vector = walsh["projections"]["vector"]
        rows.append(
            [
                _run_label(path, root, summary),
                str(vector["mean_spectrum_peak_order"]),
                format_stat(vector["kappa"]),
                format_stat(vector["c_le3"], percent=True),
                format_stat(walsh["cancellation_ratio"]["vector"]),
            ]
        )
    if not rows:
        return []
    return [
        Paragraph(
            "The Walsh basis, vector projection: W_k is the variance of h over random masks at degree k; the "
            "cancellation ratio is the Möbius interaction energy over ‖h(full) − h(∅)‖²."
        ),
        Table(["run", "peak k (Walsh)", "κ_W^v", "W≤3 / Var h", "cancellation ratio"], rows),
    ]


def experiment_2_null_table(root: Path) -> list[Block]:
    """The trained network against the random-init networks (experiment_2.step_14_null_compare), one table per run."""
    blocks: list[Block] = []
    for path in committed_glob(root, record_of("2N").summaries):
        summary = checked_json(path)
        headers, rows = statistics_rows(summary)
        blocks += [
            Paragraph(
                f"`{path.parent.relative_to(root).as_posix()}` — {summary['config']['arch']}: the trained network against "
                f"{summary['num_null_networks']} random-init networks (seeds {min(summary['config']['seeds'])}–"
                f"{max(summary['config']['seeds'])}), {summary['num_images_per_network']} images each"
            ),
            Table(headers, rows),
        ]
    return blocks or [NotRun("No random-init null over networks yet.")]


def experiment_3ab_table(root: Path) -> list[Block]:
    blocks = []
    for path, summary in _summaries(
        root,
        record_of("3A/3B").summaries,
        "3A/3B",
        ("per_lambda", "power_law.projections.vector", "power_law.fit_lambdas"),
    ):
        rows = [
            [
                format_number(entry["lambda"]),
                format_stat(entry["projections"]["vector"]["kappa"]),
                format_stat(entry["projections"]["scalar"]["kappa"]),
                format_stat(entry["projections"]["vector"]["c_le3"], percent=True),
                format_stat(entry["top1_agreement_with_lambda_1"], percent=True),
            ]
            for entry in summary["per_lambda"]
        ]
        slopes = ", ".join(
            f"k={row['order']}: {format_number(row['slope'])}"
            for row in summary["power_law"]["projections"]["vector"]
            if row["order"] >= 1
        )
        fit = ", ".join(format_number(value) for value in summary["power_law"]["fit_lambdas"])
        blocks += [
            Paragraph(_run_label(path, root, summary)),
            Table(["λ", "κ^v", "κ^s", "C≤3 (vector)", "top-1 agreement with λ = 1"], rows),
            Paragraph(f"Slope of log sqrt(Ē_k) vs log λ over λ ∈ {{{fit}}} (vector): {slopes}."),
        ]
    return blocks or [NotRun("No Experiment 3A/3B results yet.")]


def distinguishing_notes(labels: list[str], facts: list[dict[str, str]]) -> list[str]:
    """Per row, ``" (…)"`` naming the facts that tell it from the rows whose label reads the same in the paper
    (:func:`reader_label`, which drops the results folder) — e.g. the replications of one network: another seed, grid
    or image list — or ``""`` where no other row reads the same."""
    notes = []
    readers = [reader_label(label) for label in labels]
    for reader, own in zip(readers, facts):
        twins = [other for other_reader, other in zip(readers, facts) if other_reader == reader]
        differing = [name for name in own if len({other[name] for other in twins}) > 1]
        notes.append(f" ({'; '.join(own[name] for name in differing)})" if differing else "")
    return notes


def experiment_3c_table(root: Path) -> list[Block]:
    """Per 3C network and variant: the limit slope per order (vector) and both laws' verdicts, with the λ they are visible from."""

    def law_cell(test: dict[str, Any]) -> str:
        visible = test["visible_from_lambda"]
        return test["verdict"] + ("" if visible is None else f" (from λ = {format_number(visible)})")

    rows, facts = [], []
    for path, summary in _summaries(root, record_of("3C").summaries, "3C"):
        config = summary["config"]
        for variant, block in summary["variants"].items():
            facts.append(
                {
                    "seed": f"seed {config['seed']}",
                    "grid": f"λ ≥ {format_number(min(summary['lambdas']))}",
                    "images": f"images of {Path(config['sample_index']).stem.removeprefix('sample_index_')}",
                }
            )
            slopes = ", ".join(
                format_number(row["slope"]) if row["resolved"] else "·"
                for row in block["limit_slopes"]
                if row["order"] >= 1
            )
            rows.append(
                [
                    f"{_run_label(path, root, summary)}, {variant}",
                    f"`{summary['config']['dtype']}`, λ ≥ {format_number(min(summary['lambdas']))}",
                    slopes,
                    law_cell(block["laws"]["lambda_k"]),
                    f"{law_cell(block['laws']['kink'])}, s = {format_number(block['kink_exponent'])}",
                    f"{law_cell(block['laws']['kink_chain'])}, R = {block['exact_zero_chain']}"
                    if "kink_chain" in block["laws"]
                    else "—",
                ]
            )
    if not rows:
        return [NotRun("No Experiment 3C results yet.")]
    for row, note in zip(rows, distinguishing_notes([row[0] for row in rows], facts)):
        row[0] += note
    return [
        Table(
            [
                "run, activations",
                "arithmetic, grid",
                "limit slope k = 1 … L (· unresolved)",
                "λ^k law",
                "kink law min(k, s) (stated before the 3C runs; Lite0's float32 3A/3B slopes were already known)",
                "kink law with the exact-zero chain (after measuring)",
            ],
            rows,
        )
    ]


def swap_cost_table(root: Path) -> list[Block]:
    """Per network: top-1 at λ = 1 (full mask) with its own activations and with the smooth swap, and the paired difference."""
    rows = []
    for path, summary in _summaries(
        root,
        "experiment_2/results_3c_*/swap_cost.json",
        "3C",
        ("variants.smooth.smooth_activations", "top1_difference", "counts", "verdicts"),
    ):
        native, smooth, counts = summary["variants"]["native"], summary["variants"]["smooth"], summary["counts"]
        rows.append(
            [
                _run_label(path, root, summary),
                format_number(smooth["smooth_activations"]["beta"]),
                f"{format_stat(native['top1'], percent=True)} ({counts['correct_native']} / {counts['labelled']})",
                f"{format_stat(smooth['top1'], percent=True)} ({counts['correct_smooth']} / {counts['labelled']})",
                format_stat(summary["top1_difference"], percent=True),
                summary["verdicts"][0]["decision"],
            ]
        )
    if not rows:
        return [NotRun("No swap-cost results yet.")]
    return [
        Table(
            ["run (swap_cost.json)", "β", "top-1 native", "top-1 swapped", "swapped − native", "the swap lowers top-1"],
            rows,
        )
    ]


def experiment_3_table(root: Path) -> list[Block]:
    """Top-K sparsity at the seed's fractions of 2^L (vector ranking; the REPORTs have the scalar one and every K), then each run's verdicts."""

    def at_k(entry: dict[str, Any]) -> str:
        return f"K = {entry['k']}: " + ("—" if entry["value"] is None else format_stat(entry["value"], percent=True))

    rows, decisions = [], []
    for path, summary in _summaries(
        root,
        record_of(3).summaries,
        3,
        ("beside_seed.rows", "sources.magnitude_vector.k_mass", "k_eff.vector", "num_masks", "verdicts"),
    ):
        seed = {
            row["quantity"]: row["at_matching_fraction"]
            for row in summary["beside_seed"]["rows"]
            if row["ranking"] == "vector"
        }
        ratio = seed["improvement_over_random"]["value"]
        rows.append(
            [
                _run_label(path, root, summary),
                at_k(seed["captured_energy"]),
                at_k(seed["top1_agreement_magnitude"]),
                at_k(seed["top1_agreement_controls_max"]),
                "—" if ratio is None else f"{format_number(ratio)}×",
                format_stat(summary["sources"]["magnitude_vector"]["k_mass"]["0.9"]),
                f"{format_stat(summary['k_eff']['vector'])} of {summary['num_masks']}",
            ]
        )
        decisions += [
            Paragraph(f"{_run_label(path, root, summary)}:"),
            Bullets([f"{entry['claim']}: **{entry['decision']}**" for entry in summary["verdicts"]]),
        ]
    if not rows:
        return [NotRun("No Experiment 3 results yet.")]
    table = Table(
        [
            "run",
            "Γ_K at 1/4 of 2^L",
            "top-1 agreement at 1/2 of 2^L",
            "best control there",
            "magnitude ÷ random there",
            "K for 90 % energy (per image)",
            "K_eff",
        ],
        rows,
    )
    return [table, Paragraph("Verdicts (evidence and rules in each REPORT):"), *decisions]


def experiment_4_table(root: Path) -> list[Block]:
    """Per Experiment 4 run: its verdicts, one sentence each, read from overlap.json's ``verdicts`` block."""
    blocks = []
    for path, summary in _summaries(root, record_of(4).summaries, 4, ("verdicts", "settings.nn_k", "num_classes")):
        blocks += [
            Paragraph(
                f"{_run_label(path, root, summary)}, {summary['num_classes']} classes, K = {summary['settings']['nn_k']}"
            ),
            Bullets([verdict_sentence(entry) for entry in summary["verdicts"]]),
        ]
    return blocks or [NotRun("No Experiment 4 results yet.")]


def experiment_5_table(root: Path) -> list[Block]:
    """Per Experiment 5 run: each headline measure against the primary difficulty score (from analysis.json)."""
    blocks = []
    for path, analysis in _summaries(
        root,
        record_of(5).summaries,
        5,
        (
            "settings.primary_score",
            "correctness.measures",
            "spearman",
            "quartiles",
            "verdicts",
            "headline_measures",
            "top1_accuracy",
        ),
    ):
        primary = analysis["settings"]["primary_score"]
        correctness = analysis["correctness"]["measures"]
        decisions = by_id(analysis["verdicts"])
        rows = [
            [
                measure_label(measure),
                rho_cell(analysis["spearman"][primary][measure]),
                rho_cell(analysis["spearman"][primary][measure], "partial_"),
                difference_cell(analysis["quartiles"][primary]["measures"][measure]["hard_minus_easy"], measure),
                difference_cell(correctness[measure]["incorrect_minus_correct"], measure) if correctness else "—",
                decision_cell(decisions[f"{measure}.hard_minus_easy"]),
            ]
            for measure in analysis["headline_measures"]
        ]
        blocks += [
            Paragraph(
                f"{_run_label(path, root, analysis)}, difficulty = {SCORE_LABELS[primary]}, top-1 {format_stat(analysis['top1_accuracy'], percent=True)}"
            ),
            Table(
                [
                    "measure",
                    "Spearman ρ",
                    "partial ρ given ‖h(full)‖",
                    "hard − easy quartile",
                    "incorrect − correct",
                    "decision",
                ],
                rows,
            ),
            Paragraph(verdict_sentence(decisions["seed_claim"])),
        ]
    return blocks or [NotRun("No Experiment 5 results yet.")]


def depth_table(root: Path) -> list[Block]:
    """The depth ladder (``paper/results_depth*/depth.json``): the same statistics of every network side by side
    (vector projection and ranking), then the depth claims' verdicts."""

    def stat(block: dict[str, Any] | None, name: str, percent: bool = False) -> str:
        return "—" if not block or block.get(name) is None else format_stat(block[name], percent=percent)

    blocks: list[Block] = []
    for path in committed_glob(root, record_of("depth").summaries):
        analysis = checked_json(path)
        rows = []
        for row in analysis["rungs"]:
            spectrum, topk, nn = row.get("spectrum"), row.get("topk"), row.get("nearest_neighbour")
            gammas = [
                stat(topk["captured_energy"], key, percent=True) if topk else "—" for key in ("0.125", "0.25", "0.5")
            ]
            rows.append(
                [
                    row["arch"] + (f" ({row['label']}, resolution control)" if row.get("label") else ""),
                    "not run" if row["num_blocks"] is None else str(row["num_blocks"]),
                    f"{spectrum['num_images'] if spectrum else '—'} / {topk['num_images'] if topk else '—'}",
                    "—"
                    if not spectrum
                    else f"{spectrum['mean_spectrum_peak_order']} (null {spectrum['binomial_null_peak_order']}); {format_stat(spectrum['peak_order'])}",
                    stat(spectrum, "kappa"),
                    stat(spectrum, "kappa_over_l"),
                    stat(spectrum, "c_le3", percent=True),
                    stat(spectrum, "trunk_share"),
                    stat(topk, "k_eff_fraction", percent=True),
                    *gammas,
                    "—"
                    if not topk or topk["agreement_k_fraction"] is None
                    else format_number(topk["agreement_k_fraction"]),
                    "not run"
                    if not nn
                    else f"{format_stat(nn['accuracy'], percent=True)} (N = {nn['num_images']}, chance {format_percent(nn['chance'])})",
                ]
            )
        blocks += [
            Paragraph(f"`{path.parent.relative_to(root).as_posix()}`"),
            Table(
                [
                    "network",
                    "L",
                    "N (Exp 2 / 3)",
                    "peak k: mean spectrum; per image",
                    "κ^v",
                    "κ^v / L",
                    "C≤3",
                    "trunk share",
                    "K_eff / 2^L",
                    "Γ_K at 1/8 of 2^L",
                    "at 1/4",
                    "at 1/2",
                    "K / 2^L for 90 % top-1",
                    "Exp 4 1-NN (scalar)",
                ],
                rows,
            ),
            Bullets([verdict_sentence(entry) for entry in analysis["verdicts"]])
            if analysis["verdicts"]
            else NotRun("No shared images to compare."),
            *saturated_agreement_note(analysis["rungs"]),  # after the verdicts: the paper keeps it, drops them
        ]
    return blocks or [NotRun("No depth ladder yet (python -m paper.depth_compare).")]


def saturated_agreement_note(rungs: list[dict[str, Any]]) -> list[Paragraph]:
    """A note under the depth table when its "K / 2^L for 90 % top-1" column is 1, its bound, on every network that has
    it: only the sum of all 2^L coefficients reaches the agreement, so the column cannot order the networks."""
    fractions = [row["topk"]["agreement_k_fraction"] for row in rungs if row.get("topk")]
    if not fractions or any(fraction != 1 for fraction in fractions):
        return []
    return [
        Paragraph(
            "K / 2^L for 90 % top-1 is the smallest K of the grid at which the sum of the K largest coefficients agrees "
            "with the network's top-1 class on 90 % of the images, as a share of 2^L. It is 1, its bound, on every "
            "network here: only the sum of all 2^L coefficients, which is h(full) itself, agrees that often, because "
            "the largest coefficients cancel one another (Experiment 3); the column cannot order the networks by depth."
        )
    ]


def _rate(row: dict[str, Any], name: str) -> str:
    """A column the benchmark added later; older JSON lacks it."""
    value = row.get(name)
    return "—" if value is None else format_number(value)


BENCHMARK_FILES = ("experiment_1/results_bench/bench_*.json", "experiment_1/results_bench/gpu_check.json")
"""The files whose ``rows`` the benchmark table lists: ``bench_engines`` runs and ``make gpu-check`` (the memory plan
beside them is not a benchmark)."""


def allocator_note(bench: dict) -> str:
    """How the benchmark's process allocated memory: tuned as in every run, or (files written before
    experiment_1.tools.bench_engines tuned it) glibc's default, which pays page faults on large buffers."""
    allocator = bench.get("allocator")
    if allocator is None:
        return ", allocator untuned (written before the benchmark tuned it)"
    return ", allocator tuned" if allocator.get("tuning") == "mallopt" else f", allocator: {allocator.get('tuning')}"


def benchmark_table(root: Path) -> list[Block]:
    rows = []
    for path in (path for pattern in BENCHMARK_FILES for path in committed_glob(root, pattern)):
        bench = read_json(path)
        for row in bench["rows"]:
            naive_from = (
                ""
                if row["naive_masks_timed"] == 2 ** row["num_blocks"]
                else f" (from {row['naive_masks_timed']} masks)"
            )
            mode = "compiled" if row.get("compiled") else "eager"
            versus = row.get("tree_speedup_vs_contiguous")
            share = row.get("tree_gmac_per_s_vs_resnet18")
            rows.append(
                [
                    f"`{path.name}`",
                    bench["device"] + allocator_note(bench),
                    row["arch"],
                    f"{row.get('dtype', 'float32')}, {mode}, {row.get('memory_format', '—')}"
                    + (", BN folded" if row.get("batchnorm") == "folded" else "")
                    + (f", weights {row['weights']}" if row.get("weights", "random") != "random" else ""),
                    f"{row['images']} × {row['resolution']} px",
                    format_number(row["tree_seconds"]),
                    format_number(row["naive_seconds"]) + naive_from,
                    _rate(row, "tree_images_per_s"),
                    _rate(row, "tree_gmac"),
                    _rate(row, "tree_gmac_per_s"),
                    "—" if share is None else format_percent(share),
                    _rate(row, "naive_gmac_per_s"),
                    f"{row['speedup']:.1f}×",
                    f"{row['work_ratio']:.1f}×",
                    "—" if versus is None else f"{versus:.2f}×",
                    format_number(row["max_abs_disagreement"]),
                ]
            )
    if not rows:
        return [NotRun("No benchmark results yet.")]
    return [
        Table(
            [
                "file",
                "device",
                "arch",
                "dtype, mode, layout",
                "images",
                "tree s",
                "naive s",
                "tree img/s",
                "tree GMAC/img",
                "tree GMAC/s",
                "tree GMAC/s vs ResNet-18",
                "naive GMAC/s",
                "naive/tree time",
                "MAC ratio",
                "tree vs contiguous",
                "max abs(tree − naive)",
            ],
            rows,
        )
    ]


FAMILY_BENCHMARK_FILES = "experiment_1/results_bench/family_*.json"
"""``python -m experiment_1.tools.bench family`` runs: the family walk's rate against the dense tree pass's, in one run."""


def family_benchmark_table(root: Path) -> list[Block]:
    """One row per (file, family base): the family pass's GMAC/s beside the dense tree pass's of the same run and their
    ratio (median of the per-round ratios, with their range), against its target."""
    rows = []
    for path in committed_glob(root, FAMILY_BENCHMARK_FILES):
        bench = read_json(path)
        for row in bench["rows"]:
            rows.append(
                [
                    f"`{path.name}`",
                    bench["device"] + allocator_note(bench),
                    f"{row['family_arch']} (L = {row['family_num_blocks']}), k ≤ {row['order']}, base {row['base']}",
                    f"{bench['images']} × {bench['resolution']} px",
                    str(row["members"]),
                    format_number(row["family_gmac"]),
                    format_number(row["family_seconds_median"]),
                    format_number(row["family_gmac_per_s"]),
                    f"{row['dense_arch']} (L = {row['dense_num_blocks']})",
                    format_number(row["dense_seconds_median"]),
                    format_number(row["dense_gmac_per_s"]),
                    f"{format_percent(row['ratio_median'], 0)} ({format_percent(row['ratio_min'], 0)}–{format_percent(row['ratio_max'], 0)})",
                    f"{'yes' if row['meets_target'] else 'no'} (≥ {format_percent(row['target'], 0)})",
                    str(len(row["ratio_per_round"])),
                    format_number(row["max_abs_disagreement"]),
                    format_number(row["max_abs_logit"]),
                    format_number(row["max_abs_disagreement"] / max(row["max_abs_logit"], 1e-30)),
                ]
            )
    if not rows:
        return [NotRun("No family benchmark yet (python -m experiment_1.tools.bench family).")]
    return [
        Table(
            [
                "file",
                "device",
                "family pass",
                "images",
                "masks",
                "GMAC/img",
                "s",
                "GMAC/s",
                "dense tree pass",
                "dense s",
                "dense GMAC/s",
                "family / dense GMAC/s",
                "reaches target",
                "rounds",
                "max abs(tree − naive)",
                "max abs(logit)",
                "relative",
            ],
            rows,
        )
    ]


ALLOCATOR_FILES = "experiment_1/results_bench/allocator_*.json"
"""``python -m experiment_1.tools.bench allocator --json`` runs: the default allocator setting against glibc's tunables and none."""


def allocator_table(root: Path) -> list[Block]:
    """One row per allocator benchmark: the path timed, the workload, each environment's median wall seconds and the
    per-round ratios default/tuned and untuned/tuned (median and range)."""
    rows = []
    for path in committed_glob(root, ALLOCATOR_FILES):
        bench = read_json(path)
        load = bench["workload"]
        medians, ratios = bench["medians"], bench["wall_ratios"]

        def ratio(name: str) -> str:
            found = ratios[name]
            return f"{found['median']:.2f}× ({found['min']:.2f}–{found['max']:.2f})"

        rows.append(
            [
                f"`{path.name}`",
                bench["path"],
                f"{load['arch']}, {load['images']} × {load['resolution']} px, {load['passes']} tree pass(es), "
                f"{load['threads']} thread(s)",
                str(load["rounds"]),
                " / ".join(format_number(medians[name]["wall_seconds"]) for name in ("default", "tuned", "untuned")),
                ratio("default_over_tuned"),
                ratio("untuned_over_tuned"),
                bench["allocator"]["default"]["tuning"] if bench["allocator"]["default"] else "—",
            ]
        )
    if not rows:
        return [NotRun("No allocator benchmark yet (python -m experiment_1.tools.bench allocator --json …).")]
    return [
        Table(
            [
                "file",
                "path",
                "workload",
                "rounds",
                "wall s: default / tunables / untuned (medians)",
                "default / tunables",
                "untuned / tunables",
                "default's setting",
            ],
            rows,
        )
    ]


def profile_table(root: Path) -> list[Block]:
    """One row per profiled tree pass (experiment_1/results_profile/*.json): the parts and operators that dominate."""
    rows = []
    for path in committed_glob(root, "experiment_1/results_profile/*.json"):
        profile = read_json(path)
        parts = sorted(profile["parts"], key=lambda part: part["share"], reverse=True)[:3]
        groups = profile["operator_groups"]
        rows.append(
            [
                f"`{path.name}`",
                f"{profile['arch']}, {profile['images']} × {profile['resolution']} px, {profile['memory_format']}, chunk {profile['mask_chunk']}",
                format_number(profile["wall_seconds"]),
                "; ".join(f"{part['part']} {format_percent(part['share'])}" for part in parts),
                format_percent(groups["convolution"]),
                format_percent(groups["batch_norm"]),
                format_percent(groups["linear"]),
            ]
        )
    if not rows:
        return [NotRun("No profiles yet.")]
    return [
        Table(
            [
                "file",
                "pass",
                "profiled s",
                "largest parts (share of operator time)",
                "convolution",
                "batch-norm",
                "linear",
            ],
            rows,
        )
    ]


def wall_time_table(root: Path) -> list[Block]:
    """Every results folder's evaluation time over all its processes (timing.json; a folder of per-seed runs, as the
    null seeds', is one row summing its seeds), and the total with each pass counted once: a single pass shared by
    several experiments appears in each of their rows."""
    runs: dict[Path, list[dict[str, Any]]] = {}
    for path in committed_glob(root, TIMINGS):
        runs.setdefault(Path(*path.relative_to(root).parts[:2]), []).append(read_timing(path))
    rows = []
    for folder, timings in runs.items():
        wall = sum(timing["wall_seconds"] for timing in timings)
        images = sum(timing["images_evaluated"] for timing in timings)
        processes = sum(
            len({(record["pass"], record["rank"]) for record in timing["processes"]}) if "processes" in timing else 1
            for timing in timings
        )
        shared = f" (shared by {len(timings[0]['shared_pass'])})" if timings[0].get("shared_pass") else ""
        seeds = f" ({len(timings)} seeds)" if len(timings) > 1 else ""
        rows.append(
            [
                f"`{folder.as_posix()}`{seeds}",
                ", ".join(sorted({timing["device_name"] for timing in timings})),
                ", ".join(sorted({timing["engine"] for timing in timings})),
                str(images),
                str(processes),
                format_number(wall) + shared,
                format_number(wall / images),
            ]
        )
    if not rows:
        return [NotRun("No timed runs yet.")]
    total = total_pass_seconds([timing for timings in runs.values() for timing in timings])
    rows.append(
        ["all runs, each pass once", "", "", "", "", f"{format_number(total)} ({format_number(total / 3600)} h)", ""]
    )
    return [
        Table(["run", "device", "engine", "image evaluations", "processes", "wall s", "s per image evaluation"], rows)
    ]


TABLES: dict[str, tuple[str, Callable[[Path], list[Block]]]] = {
    "experiment_1": (record_of(1).title, experiment_1_table),
    "experiment_2": (record_of(2).title, experiment_2_table),
    "experiment_2_null": (record_of("2N").title, experiment_2_null_table),
    "experiment_3ab": (record_of("3A/3B").title, experiment_3ab_table),
    "experiment_3c": (record_of("3C").title, experiment_3c_table),
    "experiment_3c_swap": (
        "Experiment 3C — the smooth swap's top-1 cost (full mask, λ = 1; `experiment_2.step_6_swap_cost`)",
        swap_cost_table,
    ),
    "experiment_3": (f"{record_of(3).title} (vector ranking)", experiment_3_table),
    "experiment_4": (f"{record_of(4).title} (binary signatures)", experiment_4_table),
    "experiment_5": (record_of(5).title, experiment_5_table),
    "depth": (record_of("depth").title, depth_table),
    "wall_time": ("Wall time of every evaluation run, over all its processes (timing.json)", wall_time_table),
    "benchmark": ("Engine benchmark (`python -m experiment_1.tools.bench engines`)", benchmark_table),
    "profile": ("Where a tree pass spends its time (`python -m experiment_1.tools.bench profile`)", profile_table),
}
"""Table key → (title, section function); the key names the paper's generated table file (paper/generated/table_<key>.tex)."""
ENGINE_TABLES = ("wall_time", "benchmark", "profile")  # not of one experiment: after the experiments'

SECTIONS: list[tuple[str, str, Callable[[Path], list[Block]]]] = [
    (key, *TABLES[key]) for key in (*(key for record in RECORDS for key in record.tables), *ENGINE_TABLES)
]
"""Every section of tables.md in order: each record's tables (paper/experiments.py), then the engine tables."""


def tables_markdown(root: Path) -> str:
    """The whole of tables.md."""
    lines = [
        "# MOE-ResNet — tables",
        "",
        "Generated by `python -m paper.make_tables` from the summary JSON of every results folder; "
        "do not edit by hand. Means with 95 % bootstrap CIs over images. Each experiment's REPORT.md has the details "
        "and the original study's numbers beside ours.",
        "",
        "## The original study's claims, one row per network and verdict (paper/claims.py)",
        "",
        render_markdown(claims_markdown_table(root)),
        "",
    ]
    for _, title, section in SECTIONS:
        lines += [f"## {title}", "", render_markdown(section(root)), ""]
    return "\n".join(lines)


def without_verdict_lists(blocks: list[Block]) -> list[Block]:
    """A section's blocks for the paper's body: its verdict sentences (bullets, their run labels, sentences
    carrying a rule) left out, since the appendix lists every verdict once (paper/verdict_text.py)."""
    kept: list[Block] = []
    for position, block in enumerate(blocks):
        following = blocks[position + 1] if position + 1 < len(blocks) else None
        if isinstance(block, Bullets) or (
            isinstance(block, Paragraph)
            and (isinstance(following, Bullets) or ". Rule: " in block.text or block.text.startswith("Verdicts ("))
        ):
            continue
        kept.append(block)
    return kept


def paper_inputs(root: Path) -> dict[str, str]:
    """The generated files of the paper (paper/generated/): one table per section, the number macros,
    the verdict sentences and the figures, by file name."""
    header = "% Generated by `python -m paper.make_tables` from the summary JSON; do not edit by hand.\n"
    files = {
        f"table_{key}.tex": header
        + render_latex(
            reader_labels(without_verdict_lists(section(root)))
            or [Paragraph("Its results are its verdicts, listed in the appendix.")]
        )
        for key, _, section in SECTIONS
    }
    files["macros.tex"] = macros_tex(root)
    files["verdicts.tex"] = verdicts_tex(root)
    files["claims.tex"] = claims_tex(root)
    files["runs.tex"] = runs_tex(root)
    files["figures.tex"] = figures_tex(root)
    return files


README_BLOCKS: dict[str, dict[str, Callable[[Path], list[Block]]]] = {
    "README.md": {"headline": headline_table, "figure": figure_reading},
    "experiment_1/PERFORMANCE.md": {
        "benchmark": benchmark_table,
        "family-benchmark": family_benchmark_table,
        "allocator": allocator_table,
        "wall-time": wall_time_table,
        "profile": profile_table,
    },
}
"""Markdown page (relative to the root) → its generated blocks."""


def refresh_readme_blocks(readme: Path, root: Path, blocks: dict[str, Callable[[Path], list[Block]]]) -> list[str]:
    """Rewrite each generated block of ``readme`` (``<!-- generated:NAME … -->`` … ``<!-- /generated:NAME -->``)
    from the JSON; returns the names of the blocks found."""
    text = readme.read_text()
    found = []
    for name, table in blocks.items():
        start, end = text.find(f"<!-- generated:{name}"), text.find(f"<!-- /generated:{name} -->")
        if start < 0 or end < start:
            continue
        opening_end = text.index("\n", start) + 1
        text = text[:opening_end] + render_markdown(table(root)) + "\n" + text[end:]
        found.append(name)
    if found:
        atomic_write_text(readme, text)
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=REPO_ROOT, help="repository root to scan (default: this checkout)")
    parser.add_argument("--output", type=Path, default=None, help="file to write (default: <root>/tables.md)")
    parser.add_argument(
        "--all-runs",
        action="store_true",
        help="a root without paper/committed_runs.txt: read every results folder (said in the output)",
    )
    args = parser.parse_args(argv)
    output = args.output or args.root / "tables.md"
    if args.all_runs and not (args.root / MANIFEST).exists():
        allow_all_runs(args.root)
        print(
            f"--all-runs: {args.root / MANIFEST} is absent, so every results folder under {args.root} counts as a committed run"
        )
    check_one_network(args.root, PAPER_SOURCES, WHOLE_LIST_SOURCES)
    tables, paper = (
        tables_markdown(args.root),
        paper_inputs(args.root),
    )  # every summary is checked before any file is written
    if render_paper_figures(args.root):
        paper["figures.tex"] = figures_tex(args.root)  # the rendered figures exist now
    atomic_write_text(output, tables)
    refreshed = [
        f"{', '.join(names)} of {readme}"
        for readme, blocks in README_BLOCKS.items()
        if (args.root / readme).exists()
        for names in [refresh_readme_blocks(args.root / readme, args.root, blocks)]
        if names
    ]
    generated = args.root / "paper" / "generated"
    for name, text in paper.items():
        atomic_write_text(generated / name, text)
    print(f"wrote {output}" + "".join(f", the block(s) {entry}" for entry in refreshed) + f" and {generated}/")


if __name__ == "__main__":
    run_cli(main)
