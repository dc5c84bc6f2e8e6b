"""Precision comparison — how far do the order spectra move when the network runs in another precision?

Question: run Experiment 2's evaluation step on the same images twice, once in float32 (the default: TF32 off) and
once with ``--dtype tf32`` or ``bfloat16`` (or on another device): per image, how far apart are the full network's
prediction, and per projection κ, C≤3, the peak order and every order's share p_k? The answer says whether a run in
the faster precision may be read beside the committed float32 runs. Evaluates nothing.

Inputs:  --reference and --other: two step-1 summaries (experiment_2.step_1_evaluate; per_image.npz beside each) of
         the same sample list (their first images in common are compared).
Outputs: a table on stdout; --json writes it (experiment_1/GPU.md quotes the committed one).

    python -m experiment_2.compare_precision --reference experiment_2/results_efficientnet_lite0_sample/summary.json \\
        --other experiment_2/results_precision_bfloat16/summary.json --json experiment_1/results_bench/precision_cpu.json
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.errors import PipelineError, run_cli
from experiment_1.files import atomic_write_json, load_run_arrays, read_json

PROJECTIONS = ("vector", "scalar")


def run_of(summary_path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A step-1 summary and its checked per-image arrays."""
    summary = read_json(summary_path)
    return summary, load_run_arrays(summary_path.parent / "per_image.npz", summary, summary_path)


def rows_of(arrays: dict[str, np.ndarray], positions: np.ndarray) -> dict[str, np.ndarray]:
    """The per-image arrays at the sample-list ``positions`` (each array's rows in that order)."""
    where = {int(position): row for row, position in enumerate(arrays["index"])}
    chosen = np.array([where[int(position)] for position in positions])
    return {key: value[chosen] for key, value in arrays.items() if key != "run_id"}


def compare(reference: dict[str, np.ndarray], other: dict[str, np.ndarray]) -> dict[str, Any]:
    """The per-image differences ``other − reference`` over the valid images both hold (same sample-list positions)."""
    common = np.intersect1d(reference["index"][reference["valid"]], other["index"][other["valid"]])
    if not len(common):
        raise PipelineError("the two runs share no valid image; run both on the same --sample-index")
    reference, other = rows_of(reference, common), rows_of(other, common)
    result: dict[str, Any] = {
        "num_images": len(common),
        "prediction_changed": int((reference["full_prediction"] != other["full_prediction"]).sum()),
    }
    for projection in PROJECTIONS:
        delta = {
            key: other[f"{key}_{projection}"].astype(np.float64) - reference[f"{key}_{projection}"].astype(np.float64)
            for key in ("kappa", "c_le3", "spectrum")
        }
        result[projection] = {
            "kappa_mean_difference": float(delta["kappa"].mean()),
            "kappa_max_abs_difference": float(np.abs(delta["kappa"]).max()),
            "c_le3_max_abs_difference": float(np.abs(delta["c_le3"]).max()),
            "spectrum_max_abs_difference": float(np.abs(delta["spectrum"]).max()),
            "peak_order_changed": int(
                (reference[f"peak_order_{projection}"] != other[f"peak_order_{projection}"]).sum()
            ),
        }
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference", type=Path, required=True, help="the float32 run's summary.json")
    parser.add_argument("--other", type=Path, required=True, help="the other precision's summary.json")
    parser.add_argument("--json", type=Path, default=None, help="write the comparison here")
    args = parser.parse_args(argv)
    (reference_summary, reference), (other_summary, other) = run_of(args.reference), run_of(args.other)
    configs = {"reference": reference_summary["config"], "other": other_summary["config"]}
    if configs["reference"]["sample_list_sha256"] != configs["other"]["sample_list_sha256"]:
        raise PipelineError(
            f"{args.other}: another sample list than {args.reference}'s; compare runs of the same images"
        )
    result = {
        name: {key: config[key] for key in ("arch", "weights", "dtype", "device_name", "git_commit", "run_id")}
        for name, config in configs.items()
    } | compare(reference, other)
    print(
        f"{result['other']['dtype']} on {result['other']['device_name']} against {result['reference']['dtype']} on "
        f"{result['reference']['device_name']}, {result['num_images']} images: the prediction changes on "
        f"{result['prediction_changed']}"
    )
    print("| projection | mean Δκ | max abs Δκ | max abs ΔC≤3 | max abs Δp_k | peak order changed |")
    for projection in PROJECTIONS:
        row = result[projection]
        print(
            f"| {projection} | {row['kappa_mean_difference']:.3g} | {row['kappa_max_abs_difference']:.3g} | "
            f"{row['c_le3_max_abs_difference']:.3g} | {row['spectrum_max_abs_difference']:.3g} | "
            f"{row['peak_order_changed']} of {result['num_images']} |"
        )
    if args.json:
        atomic_write_json(args.json, result)


if __name__ == "__main__":
    run_cli(main)
