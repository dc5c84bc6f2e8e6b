"""GPU memory plan — which ``--batch-size`` and ``--mask-chunk`` fit a device, from the measured bounds.

Question: for each built-in architecture at its input size, how many bytes does one all-mask batch hold on
the device — the tree engine's live activations and logits (:func:`~experiment_1.network.memory.tree_activation_bound`,
from each block's working set measured on two images) plus the step's reductions (Experiment 1's
:data:`~experiment_1.reconstruction.metrics.PEAK_LOGIT_MULTIPLE`, the largest of any step's
:data:`~experiment_1.network.memory.REDUCTION_LOGIT_MULTIPLE`, times the float32 logits) — and so which
batch sizes fit ``--device-gib`` (default: the CUDA device's memory, 80 without one) with a tenth left for cuDNN's workspace and the allocator?
The measurement runs on the CPU (live tensor bytes do not depend on the device); float32 arithmetic
(bfloat16/float16 halve the activations, not the float32 logits).

It is the GPU check's ``memory_plan`` check (:mod:`experiment_1.tools.gpu_check`), for the device's own memory
there; it needs no CUDA device, so on any machine

    python -m experiment_1.tools.gpu_check --checks memory_plan --device-gib 80

prints the table for an 80 GiB device (``--json`` writes it; experiment_1/PERFORMANCE.md's GPU section quotes it).
"""

from __future__ import annotations

import argparse
from typing import Any

import torch

from experiment_1.network.memory import REDUCTION_LOGIT_MULTIPLE, peak_estimate, stack_profile, tree_activation_bound
from experiment_1.network.registry import build_gated_stack
from experiment_1.reconstruction.metrics import PEAK_LOGIT_MULTIPLE

ARCHS = ("resnet18", "resnet34", "resnet50", "efficientnet_lite0", "efficientnet_lite1")
MASK_CHUNKS = (64, 256, 1024)
HEADROOM = 0.9  # of the device's memory, for cuDNN's workspace and the caching allocator's rounding
GIB = 2**30


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
    return {
        "arch": arch,
        "num_blocks": num_blocks,
        "input_size": model.preprocess.crop,
        "logits_gib_per_image": logits / GIB,
        "rows": rows,
    }


def memory_plan(args: argparse.Namespace, device: torch.device) -> tuple[bool, dict[str, Any]]:
    """The plan for ``--plan-archs`` on a device of ``--device-gib`` (default: this CUDA device's memory, or 80 GiB
    without one); passes when every architecture fits at least one image at ``--mask-chunk 256`` in any step."""
    device_gib = args.device_gib or (
        torch.cuda.get_device_properties(device).total_memory / GIB if device.type == "cuda" else 80.0
    )
    plans = [plan(arch, device_gib) for arch in args.plan_archs]
    print(
        f"| arch | L | logits GiB/img | c | engine GiB/img | Exp 1 GiB/img | any step GiB/img | --batch-size Exp 1 | "
        f"--batch-size any step |  ({device_gib:g} GiB, {HEADROOM:.0%} used)"
    )
    for entry in plans:
        for row in entry["rows"]:
            print(
                f"| {entry['arch']} | {entry['num_blocks']} | {entry['logits_gib_per_image']:.2f} | {row['mask_chunk']} | {row['engine_gib_per_image']:.2f} | "
                f"{row['experiment_1_gib_per_image']:.2f} | {row['any_step_gib_per_image']:.2f} | "
                f"{row['batch_size_experiment_1']} | {row['batch_size_any_step']} |"
            )
    passed = all(
        row["batch_size_any_step"] >= 1 for entry in plans for row in entry["rows"] if row["mask_chunk"] == 256
    )
    return passed, {
        "device_gib": device_gib,
        "headroom": HEADROOM,
        "dtype": "float32",
        "peak_logit_multiple_experiment_1": PEAK_LOGIT_MULTIPLE,
        "reduction_logit_multiple_any_step": REDUCTION_LOGIT_MULTIPLE,
        "plans": plans,
    }
