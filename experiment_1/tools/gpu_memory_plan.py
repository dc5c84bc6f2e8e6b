"""GPU plan — which ``--batch-size`` and ``--mask-chunk`` fit a device, from the measured bounds, and how long an image
might take on one H100, estimated from its multiply-accumulates.

Question: for each built-in architecture at its input size, how many bytes does one all-mask batch hold on
the device — the tree engine's live activations and logits (:func:`~experiment_1.network.memory.tree_activation_bound`,
from each block's working set measured on two images) plus the step's reductions (Experiment 1's
:data:`~experiment_1.reconstruction.metrics.PEAK_LOGIT_MULTIPLE`, the largest of any step's
:data:`~experiment_1.network.memory.REDUCTION_LOGIT_MULTIPLE`, times the float32 logits) — and so which
batch sizes fit ``--device-gib`` (default: the CUDA device's memory, 80 without one) with a tenth left for cuDNN's workspace and the allocator?
The measurement runs on the CPU (live tensor bytes do not depend on the device); float32 arithmetic
(bfloat16/float16 halve the activations, not the float32 logits). Beside it, the tree engine's MACs per image
(:func:`~experiment_1.network.engines.work_ratio`) divided by :data:`ASSUMED_H100_TMAC_PER_S`: an estimate, not a
measurement (``make gpu-check`` measures).

It is the GPU check's ``memory_plan`` check (:mod:`experiment_1.tools.gpu_check`), for the device's own memory
there; it needs no CUDA device, so on any machine

    python -m experiment_1.tools.gpu_check --checks memory_plan --device-gib 80

prints its two tables for an 80 GiB device, the batch sizes that fit and the estimated H100 times (``--json`` writes
the plan; experiment_1/GPU.md quotes both tables from the committed one, results_bench/gpu_memory_plan.json).
"""

from __future__ import annotations

import argparse
from typing import Any

import torch

from experiment_1.network.engines import work_ratio
from experiment_1.network.memory import REDUCTION_LOGIT_MULTIPLE, peak_estimate, stack_profile, tree_activation_bound
from experiment_1.network.registry import build_gated_stack
from experiment_1.reconstruction.metrics import PEAK_LOGIT_MULTIPLE

ARCHS = ("resnet18", "resnet34", "resnet50", "efficientnet_lite0", "efficientnet_lite1")
MASK_CHUNKS = (64, 256, 1024)
HEADROOM = 0.9  # of the device's memory, for cuDNN's workspace and the caching allocator's rounding
GIB = 2**30
# Assumed, not measured: the multiply-accumulates per second one H100 might sustain on the tree engine's convolutions
# (TMAC/s, low and high). float32 with TF32 off runs on the CUDA cores, whose peak is 33.5 TMAC/s on the SXM card
# (67 TFLOP/s): 30-75 % of it. TF32 and bfloat16 run on the tensor cores (dense peaks 247 and 495 TMAC/s), which small
# convolutions, batch-norm and the gating's element-wise work keep far below peak: 10-30 % of TF32's.
ASSUMED_H100_TMAC_PER_S = {"float32": (10.0, 25.0), "tf32 / bfloat16": (25.0, 75.0)}
IMAGES_OF_A_FULL_RUN = 10_000  # the original study's test sample


def largest_batch(profile: Any, mask_chunk: int, multiple: float, budget: float, limit: int = 1024) -> int:
    """The largest batch size whose estimated peak fits ``budget`` bytes (0 if not even one image fits)."""
    return max(
        (batch for batch in range(1, limit + 1) if peak_estimate(profile, batch, mask_chunk, multiple) <= budget),
        default=0,
    )


def plan(arch: str, device_gib: float) -> dict[str, Any]:
    """One architecture's per-image bytes and the batch sizes that fit, per mask chunk."""
    model = build_gated_stack(arch, "random", seed=0)
    with torch.no_grad():
        profile = stack_profile(model)
    budget = HEADROOM * device_gib * GIB
    num_blocks = len(profile.block_outputs)
    logits = 2**num_blocks * profile.num_classes * 4
    rows = []
    for mask_chunk in MASK_CHUNKS:
        engine = tree_activation_bound(profile, 1, mask_chunk)
        rows.append(
            {
                "mask_chunk": mask_chunk,
                "engine_gib_per_image": engine / GIB,
                "experiment_1_gib_per_image": peak_estimate(profile, 1, mask_chunk, PEAK_LOGIT_MULTIPLE) / GIB,
                "any_step_gib_per_image": peak_estimate(profile, 1, mask_chunk, REDUCTION_LOGIT_MULTIPLE) / GIB,
                "batch_size_experiment_1": largest_batch(profile, mask_chunk, PEAK_LOGIT_MULTIPLE, budget),
                "batch_size_any_step": largest_batch(profile, mask_chunk, REDUCTION_LOGIT_MULTIPLE, budget),
            }
        )
    model = build_gated_stack(arch, "random")
    tree_gmac = work_ratio(model, model.preprocess.crop, torch.device("cpu"))["tree_gmac"]
    return {
        "arch": arch,
        "num_blocks": num_blocks,
        "input_size": model.preprocess.crop,
        "logits_gib_per_image": logits / GIB,
        "rows": rows,
        "tree_gmac_per_image": tree_gmac,
        "estimated_h100_seconds_per_image": {
            precision: [tree_gmac / (high * 1e3), tree_gmac / (low * 1e3)]
            for precision, (low, high) in ASSUMED_H100_TMAC_PER_S.items()
        },
    }


def duration_span(low: float, high: float) -> str:
    """``low``–``high`` seconds in the unit that suits ``high``: seconds, minutes or hours."""
    scale, unit = (1, "s") if high < 120 else (60, "min") if high < 7200 else (3600, "h")
    low, high = low / scale, high / scale
    return f"{low:.0f}–{high:.0f} {unit}" if low >= 10 else f"{low:.2g}–{high:.2g} {unit}"


def markdown_tables(document: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The plan's two tables as Markdown lines: the batch sizes that fit, and the estimated H100 time per image."""
    memory = [
        "| arch | L | px | `--mask-chunk` | logits GiB/img | engine GiB/img | Exp 1 GiB/img | any step GiB/img | "
        "`--batch-size`, Exp 1 | `--batch-size`, any step |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    precisions = list(document["assumed_h100_tmac_per_s"])
    times = [
        "| arch | L | px | tree GMAC/img | "
        + " | ".join(f"s/img, {name} (estimate)" for name in precisions)
        + f" | {IMAGES_OF_A_FULL_RUN:,} images, float32 (estimate) |".replace(",", " ", 1),
        "|---|---|---|---|" + "---|" * len(precisions) + "---|",
    ]
    for entry in document["plans"]:
        name = f"| {entry['arch']} | {entry['num_blocks']} | {entry['input_size']} |"
        for row in entry["rows"]:
            memory.append(
                f"{name} {row['mask_chunk']} | {entry['logits_gib_per_image']:.2f} | {row['engine_gib_per_image']:.2f} | "
                f"{row['experiment_1_gib_per_image']:.2f} | {row['any_step_gib_per_image']:.2f} | "
                f"{row['batch_size_experiment_1']} | {row['batch_size_any_step']} |"
            )
        seconds = entry["estimated_h100_seconds_per_image"]
        spans = [f"{seconds[name][0]:.2g}–{seconds[name][1]:.2g}" for name in precisions]
        run = duration_span(*(IMAGES_OF_A_FULL_RUN * value for value in seconds["float32"]))
        gmac = f"{entry['tree_gmac_per_image']:,.0f}".replace(",", " ")
        times.append(f"{name} {gmac} | {' | '.join(spans)} | {run} |")
    return memory, times


def memory_plan(args: argparse.Namespace, device: torch.device) -> tuple[bool, dict[str, Any]]:
    """The plan for ``--plan-archs`` on a device of ``--device-gib`` (default: this CUDA device's memory, or 80 GiB
    without one); passes when every architecture fits at least one image at ``--mask-chunk 256`` in any step."""
    device_gib = args.device_gib or (
        torch.cuda.get_device_properties(device).total_memory / GIB if device.type == "cuda" else 80.0
    )
    plans = [plan(arch, device_gib) for arch in args.plan_archs]
    passed = all(
        row["batch_size_any_step"] >= 1 for entry in plans for row in entry["rows"] if row["mask_chunk"] == 256
    )
    document = {
        "device_gib": device_gib,
        "headroom": HEADROOM,
        "dtype": "float32",
        "peak_logit_multiple_experiment_1": PEAK_LOGIT_MULTIPLE,
        "reduction_logit_multiple_any_step": REDUCTION_LOGIT_MULTIPLE,
        "assumed_h100_tmac_per_s": ASSUMED_H100_TMAC_PER_S,
        "plans": plans,
    }
    memory, times = markdown_tables(document)
    print(f"Batch sizes that fit {device_gib:g} GiB ({HEADROOM:.0%} of it used):", *memory, sep="\n")
    print("\nEstimated time per image on one H100 (assumed rates, not measured):", *times, sep="\n")
    return passed, document
