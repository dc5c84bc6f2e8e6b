"""GPU memory plan — which ``--batch-size`` and ``--mask-chunk`` fit a device, from the measured bounds.

Question: for each built-in architecture at its input size, how many bytes does one all-mask batch hold on
the device — the tree engine's live activations and logits (:func:`~experiment_1.network.memory.tree_activation_bound`,
from each block's working set measured on two images) plus the step's reductions (Experiment 1's
:data:`~experiment_1.reconstruction.metrics.PEAK_LOGIT_MULTIPLE`, the largest of any step's
:data:`~experiment_1.network.memory.REDUCTION_LOGIT_MULTIPLE`, times the float32 logits) — and so which
batch sizes fit ``--device-gib`` (default 80) with a tenth left for cuDNN's workspace and the allocator?
The measurement runs on the CPU (live tensor bytes do not depend on the device); float32 arithmetic
(bfloat16/float16 halve the activations, not the float32 logits).

Inputs:  none (random weights, zero images).
Outputs: a table on stdout; ``--json`` writes it (experiment_1/PERFORMANCE.md's GPU section quotes it).

    python -m experiment_1.tools.gpu_memory_plan --json experiment_1/results_bench/gpu_memory_plan.json
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import torch

from experiment_1.errors import run_cli
from experiment_1.files import atomic_write_json, package_versions
from experiment_1.network.memory import REDUCTION_LOGIT_MULTIPLE, peak_estimate, stack_profile, tree_activation_bound
from experiment_1.network.registry import build_gated_stack
from experiment_1.reconstruction.metrics import PEAK_LOGIT_MULTIPLE
from experiment_1.run.setup import seed_everything

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
    profile = stack_profile(build_gated_stack(arch, "random", seed=0))
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
        "input_size": build_gated_stack(arch, "random").preprocess.crop,
        "logits_gib_per_image": logits / GIB,
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--archs", nargs="+", default=list(ARCHS), help="architectures (default: %(default)s)")
    parser.add_argument("--device-gib", type=float, default=80.0, help="device memory in GiB (default: %(default)s)")
    parser.add_argument("--json", type=Path, default=None, help="write the plan here")
    args = parser.parse_args(argv)
    seed_everything(0)
    torch.set_grad_enabled(False)
    plans = [plan(arch, args.device_gib) for arch in args.archs]
    print(
        f"| arch | L | logits GiB/img | c | engine GiB/img | Exp 1 GiB/img | any step GiB/img | --batch-size Exp 1 | "
        f"--batch-size any step |  ({args.device_gib:g} GiB, {HEADROOM:.0%} used)"
    )
    for entry in plans:
        for row in entry["rows"]:
            print(
                f"| {entry['arch']} | {entry['num_blocks']} | {entry['logits_gib_per_image']:.2f} | {row['mask_chunk']} | {row['engine_gib_per_image']:.2f} | "
                f"{row['experiment_1_gib_per_image']:.2f} | {row['any_step_gib_per_image']:.2f} | "
                f"{row['batch_size_experiment_1']} | {row['batch_size_any_step']} |"
            )
    if args.json:
        atomic_write_json(
            args.json,
            {
                "device_gib": args.device_gib,
                "headroom": HEADROOM,
                "dtype": "float32",
                "peak_logit_multiple_experiment_1": PEAK_LOGIT_MULTIPLE,
                "reduction_logit_multiple_any_step": REDUCTION_LOGIT_MULTIPLE,
                "plans": plans,
                "versions": package_versions(),
            },
        )


if __name__ == "__main__":
    run_cli(main)
