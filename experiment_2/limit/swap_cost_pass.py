"""Experiment 3C's swap cost (experiment_2.step_6_swap_cost): the full mask with the network's own activations and with the
smooth swap, on the same labelled images; swap_cost.json, REPORT.md."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from experiment_1.files import atomic_write_text, read_timing
from experiment_1.network import DEFAULT_BETA
from experiment_1.report import ReportDocument, format_percent, format_stat, markdown_table
from experiment_1.run import (
    EvaluationSetup,
    RunConfig,
    build_setup,
    distributed,
    provenance,
    run_per_image,
    write_results,
)
from experiment_2.limit.swap_cost import VARIANTS, swap_cost_summary

STEP = "experiment_2.step_6_swap_cost"


def top1_prediction(logits: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
    """The predicted class of the one evaluated mask (the full mask)."""
    return {"prediction": logits[:, 0].argmax(dim=-1)}


def evaluate_variant(
    config: RunConfig, variant: str, beta: float | None
) -> tuple[EvaluationSetup, dict[str, np.ndarray], dict[str, float]]:
    """One variant's full-mask predictions at λ = 1 (``beta`` None: the network's own activations)."""
    setup = build_setup(
        replace(config, smooth_activations=beta, engine="naive", masks_per_image=1)
    )  # one mask: the cost estimate's count
    full_mask = 2**setup.model.num_blocks - 1
    arrays, timing = run_per_image(
        setup,
        f"{STEP}/{variant}",
        top1_prediction,
        description=f"{variant} activations, full mask",
        mask_indices=[full_mask],
    )
    return setup, arrays, timing


def variant_description(setup: EvaluationSetup) -> dict[str, Any]:
    record = provenance(setup)
    return {
        "gated_recursion": record["gated_recursion"],
        "smooth_activations": record.get("smooth_activations"),
        "run_id": record["run_id"],
    }


def report_markdown(summary: dict[str, Any], timing: dict[str, Any] | None) -> str:
    """REPORT.md, generated from swap_cost.json."""
    counts, variants = summary["counts"], summary["variants"]
    beta = variants["smooth"]["smooth_activations"]["beta"]
    rows = [
        [
            variant,
            format_stat(variants[variant]["top1"], percent=True),
            f"{counts[f'correct_{variant}']} / {counts['labelled']}",
        ]
        for variant in VARIANTS
    ]
    pairs = markdown_table(
        ["", "swapped correct", "swapped wrong"],
        [
            ["native correct", counts["both_correct"], counts["only_native_correct"]],
            ["native wrong", counts["only_smooth_correct"], counts["neither_correct"]],
        ],
    )
    results = [
        markdown_table(["activations", "top-1 [95 % CI]", "correct / labelled"], rows),
        f"Paired difference (swapped − native): {format_stat(summary['top1_difference'], percent=True)} (bootstrap over images). "
        f"The two predictions agree on {format_stat(summary['prediction_agreement'], percent=True)} of the {summary['num_valid']} images.",
        pairs,
    ]
    method = (
        f"Full mask (every gate on), λ = 1, network arithmetic `{summary['config']['dtype']}`; once with the network's own activations and once with the "
        f"smooth swap (β = {beta:g}), which computes `{variants['smooth']['gated_recursion']}`. Top-1 on the labelled images; "
        "percentile-bootstrap 95 % CIs over images, the difference resampled in pairs."
    )
    return ReportDocument(
        title=f"Experiment 3C — the top-1 cost of the smooth activation swap ({summary['config']['arch']})",
        summary=summary,
        method=method,
        results=results,
        seed_rows=[],
        seed_source="the original study reports no Experiment 3C",
        verdict=[
            f"Top-1 {format_percent(variants['native']['top1']['mean'])} native, {format_percent(variants['smooth']['top1']['mean'])} with the swap "
            f"({counts['labelled']} labelled images)."
        ],
        generator=STEP,
        timing=timing,
        data_extra=f"; {summary['num_labelled']} labelled",
        source="swap_cost.json",
    ).render()


def run(config: RunConfig) -> None:
    """Both variants' full-mask predictions, their top-1s compared; the summary and REPORT written."""
    beta = DEFAULT_BETA if config.smooth_activations is None else config.smooth_activations
    native_setup, native, native_timing = evaluate_variant(config, "native", None)
    smooth_setup, smooth, smooth_timing = evaluate_variant(config, "smooth", beta)
    arrays = {
        "index": native["index"],
        "label": native["label"],
        "valid": native["valid"] & smooth["valid"],
        "prediction_native": native["prediction"],
        "prediction_smooth": smooth["prediction"],
    }
    variants = {"native": variant_description(native_setup), "smooth": variant_description(smooth_setup)}
    summary = swap_cost_summary(arrays, provenance(native_setup), variants, config.seed)
    timing = {name: native_timing[name] + smooth_timing[name] for name in ("wall_seconds", "images_evaluated")}
    path = write_results(native_setup, arrays, summary, timing, summary_name="swap_cost.json")
    if not distributed.is_main():
        return
    report = Path(config.output_dir) / "REPORT.md"
    atomic_write_text(
        report,
        report_markdown(summary, read_timing(Path(config.output_dir) / "timing.json", summary.get("num_images"))),
    )
    counts = summary["counts"]
    print(
        f"wrote {path} and {report}: top-1 native {counts['correct_native']}/{counts['labelled']}, swapped {counts['correct_smooth']}/{counts['labelled']}, "
        f"difference {format_stat(summary['top1_difference'], percent=True)}; {summary['verdicts'][0]['decision']}"
    )
