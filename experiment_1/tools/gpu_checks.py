"""The device-only checks of the CUDA paths (issue 30), for ``make gpu-check`` (:mod:`experiment_1.tools.gpu_check`).

Each check is ``function(args, device) -> (passed, details)`` with ``device`` a CUDA device; ``args`` is
not read. :data:`DEVICE_CHECKS` lists ``(name, description, function)``; the GPU check script registers
them. What a CPU can test is in tests/experiment_1/network/test_gpu_readiness.py; these are the parts only a device can decide.

- ``environment``: torch, CUDA and cuDNN versions, dynamo's recompile-limit name, whether
  ``init_process_group`` takes ``device_id``, whether ``nextafter`` has a bfloat16 CUDA kernel; passes when
  :func:`~experiment_2.spectrum.evaluation.unit_in_last_place` on the device gives the CPU's bits for bf16/fp16/fp32.
- ``deterministic_reductions``: order energies and spectrum statistics, captured fractions, cumulative
  reconstructions, K at a mass, participation ratios (the core primitives of Experiments 2, 3 and 5) computed twice on
  the same logits, and at batch 1 against the same image in a batch of 4; passes
  when every array is bit-identical (``torch.equal``).
- ``memory_bound``: ResNet-50 (random weights, 224 px, float32, c = 256) tree pass at B = 1 and 4: the live
  tensor bytes (:class:`~experiment_1.network.memory.LiveTensorBytes`) must not exceed
  :func:`~experiment_1.network.memory.tree_activation_bound`, and ``torch.cuda.max_memory_allocated`` is
  recorded beside it (the allocator's rounding and cuDNN's workspace come on top); Experiment 1's
  reductions must stay within :data:`~experiment_1.reconstruction.metrics.PEAK_LOGIT_MULTIPLE` of the logits.
- ``no_host_sync``: the tree engine (ResNet-18) and the order-energy / cumulative-reconstruction reductions
  under ``torch.cuda.set_sync_debug_mode("warn")``; passes when the engine makes no synchronising call and
  the reductions make as many at L = 12 as at L = 14.
- ``evaluation_parity``: :func:`~experiment_1.network.gating.check_evaluation_parity` for ResNet-18/50 and
  Lite0 on the device in float32, tf32, bfloat16 and float16; passes when every error is within the dtype's
  :data:`~experiment_1.network.gating.EVALUATION_PARITY_RTOL` (the errors are recorded).
"""

from __future__ import annotations

import argparse
import inspect
import warnings
from typing import Any, Callable

import torch

from experiment_1.mobius.sparsity import (
    captured_fraction,
    cumulative_reconstruction,
    participation_ratio,
    power_of_two_ks,
    smallest_k_reaching_mass,
)
from experiment_1.mobius.spectrum import order_energies, spectrum_statistics, unit_in_last_place
from experiment_1.mobius.transform import mobius_transform
from experiment_1.network.compile_stack import RECOMPILE_LIMIT_NAMES
from experiment_1.network.engines import evaluate_masks_tree
from experiment_1.network.gating import EVALUATION_PARITY_RTOL, check_evaluation_parity
from experiment_1.network.memory import LiveTensorBytes, stack_profile, tree_activation_bound
from experiment_1.network.registry import build_gated_stack
from experiment_1.reconstruction.metrics import PEAK_LOGIT_MULTIPLE, reconstruction_metrics

DeviceCheck = Callable[[argparse.Namespace, torch.device], tuple[bool, dict[str, Any]]]


def _logits(batch: int, num_blocks: int, classes: int, device: torch.device, seed: int = 0) -> torch.Tensor:
    return torch.randn(batch, 2**num_blocks, classes, generator=torch.Generator().manual_seed(seed)).to(device)


def environment(args: argparse.Namespace, device: torch.device) -> tuple[bool, dict[str, Any]]:
    """Versions and API differences; the round-off unit on the device against the CPU."""
    import torch._dynamo
    import torch.distributed as dist

    details: dict[str, Any] = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "device_name": torch.cuda.get_device_name(device),
        "recompile_limit_name": next(
            (name for name in RECOMPILE_LIMIT_NAMES if hasattr(torch._dynamo.config, name)), None
        ),
        "init_process_group_takes_device_id": "device_id" in inspect.signature(dist.init_process_group).parameters,
    }
    try:
        value = torch.ones(4, dtype=torch.bfloat16, device=device)
        torch.nextafter(value, torch.full_like(value, float("inf")))
        details["nextafter_bfloat16_kernel"] = True
    except RuntimeError:
        details["nextafter_bfloat16_kernel"] = False
    passed = True
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        magnitude = (torch.randn(10000, generator=torch.Generator().manual_seed(1)).abs() * 30).to(dtype)
        same = torch.equal(unit_in_last_place(magnitude.to(device)).cpu(), unit_in_last_place(magnitude))
        details[f"ulp_matches_cpu_{str(dtype).removeprefix('torch.')}"] = same
        passed &= same
    return passed, details


def deterministic_reductions(args: argparse.Namespace, device: torch.device) -> tuple[bool, dict[str, Any]]:
    """Every reduction twice, and batch 1 against the same image in a batch of 4: bit for bit."""
    num_blocks = 12
    logits = _logits(4, num_blocks, 100, device)
    coefficients = mobius_transform(logits, dim=1, dtype=torch.float64)
    energies = coefficients.square().sum(dim=2)
    permutation = torch.argsort(energies, dim=1, descending=True, stable=True)
    ks = power_of_two_ks(num_blocks)

    def arrays(batch: slice) -> dict[str, torch.Tensor]:
        result = {
            "order_energies": order_energies(coefficients[batch]),
            "captured_fraction": captured_fraction(energies[batch], permutation[batch]),
            **{
                f"cumulative_{name}": value
                for name, value in cumulative_reconstruction(
                    coefficients[batch], permutation[batch], logits[batch, -1], ks, energies[batch], (0.1,)
                ).items()
            },
            **{
                f"spectrum_{name}": value
                for name, value in spectrum_statistics(order_energies(coefficients[batch])).items()
            },
            "k_mass": smallest_k_reaching_mass(energies[batch], permutation[batch], (0.5, 0.9)),
            "participation_ratio": participation_ratio(energies[batch]),
        }
        return {name: value.cpu() for name, value in result.items()}

    first, second, single = arrays(slice(0, 4)), arrays(slice(0, 4)), arrays(slice(0, 1))
    repeat_differs = sorted(name for name in first if not torch.equal(first[name], second[name]))
    batch_differs = sorted(name for name in first if not torch.equal(first[name][:1], single[name]))
    return not repeat_differs and not batch_differs, {
        "differ_between_runs": repeat_differs,
        "differ_batch_1_vs_4": batch_differs,
    }


def memory_bound(args: argparse.Namespace, device: torch.device) -> tuple[bool, dict[str, Any]]:
    """ResNet-50 tree pass at 224 px against the stated bound; Experiment 1's reductions against theirs."""
    model = build_gated_stack("resnet50", "random", device=device)
    profile = stack_profile(model)
    rows, passed = [], True
    for batch in (1, 4):
        images = torch.randn(batch, 3, 224, 224, generator=torch.Generator().manual_seed(batch))
        bound = tree_activation_bound(profile, batch, 256)
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        baseline = torch.cuda.memory_allocated(device)
        with LiveTensorBytes() as live:
            logits = evaluate_masks_tree(model, images, 256)
        torch.cuda.synchronize(device)
        allocated = torch.cuda.max_memory_allocated(device) - baseline
        torch.cuda.reset_peak_memory_stats(device)
        base = torch.cuda.memory_allocated(device)
        reconstruction_metrics(logits, torch.zeros(batch, dtype=torch.long, device=device))
        torch.cuda.synchronize(device)
        reduction = torch.cuda.max_memory_allocated(device) - base
        logit_bytes = logits.numel() * 4
        ok = live.peak <= bound and reduction <= PEAK_LOGIT_MULTIPLE * logit_bytes * 1.05
        passed &= ok
        rows.append(
            {
                "batch": batch,
                "bound_bytes": bound,
                "live_peak_bytes": live.peak,
                "max_memory_allocated_bytes": allocated,
                "reduction_peak_bytes": reduction,
                "reduction_multiple": reduction / logit_bytes,
                "passed": ok,
            }
        )
        del logits
    return passed, {"rows": rows}


def no_host_sync(args: argparse.Namespace, device: torch.device) -> tuple[bool, dict[str, Any]]:
    """Synchronising calls in the engine and the per-order / top-K reductions (``set_sync_debug_mode("warn")``)."""

    def synchronising_calls(function: Callable[[], object]) -> int:
        torch.cuda.synchronize(device)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.cuda.set_sync_debug_mode("warn")
            try:
                function()
            finally:
                torch.cuda.set_sync_debug_mode(0)
        return sum("synchroniz" in str(warning.message) for warning in caught)

    model = build_gated_stack("resnet18", "random", device=device)
    images = torch.randn(2, 3, 224, 224).to(device)
    engine = synchronising_calls(lambda: evaluate_masks_tree(model, images, 64))
    reductions = {}
    for num_blocks in (12, 14):
        logits = _logits(2, num_blocks, 50, device)

        def reduce() -> None:
            coefficients = mobius_transform(logits, dim=1, dtype=torch.float64)
            energies = coefficients.square().sum(dim=2)
            order_energies(coefficients)
            permutation = torch.argsort(energies, dim=1, descending=True, stable=True)
            cumulative_reconstruction(
                coefficients, permutation, logits[:, -1], power_of_two_ks(num_blocks), energies, (0.1,)
            )

        reductions[num_blocks] = synchronising_calls(reduce)
    return engine == 0 and reductions[12] == reductions[14], {
        "engine_synchronising_calls": engine,
        "reduction_synchronising_calls": reductions,
    }


def evaluation_parity(args: argparse.Namespace, device: torch.device) -> tuple[bool, dict[str, Any]]:
    """The full-mask parity of the evaluation model on the device, per architecture and dtype."""
    dtypes = {"float32": torch.float32, "tf32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
    errors: dict[str, float | str] = {}
    passed = True
    for arch in ("resnet18", "resnet50", "efficientnet_lite0"):
        for name, dtype in dtypes.items():
            torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
            try:
                errors[f"{arch}/{name}"] = check_evaluation_parity(
                    build_gated_stack(arch, "random", device=device, dtype=dtype), name
                )
            except Exception as error:  # record and go on: the JSON names every failing pair
                errors[f"{arch}/{name}"] = f"{type(error).__name__}: {error}"
                passed = False
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    return passed, {"relative_error": errors, "tolerance": EVALUATION_PARITY_RTOL}


DEVICE_CHECKS: list[tuple[str, str, DeviceCheck]] = [
    ("environment", "versions, API differences, the round-off unit on the device", environment),
    (
        "deterministic_reductions",
        "per-order and top-K sums bit-identical across runs and batch sizes",
        deterministic_reductions,
    ),
    ("memory_bound", "ResNet-50 tree pass and Experiment 1 reductions within their stated bounds", memory_bound),
    ("no_host_sync", "no synchronising call in the engine; reductions' count independent of 2^L", no_host_sync),
    ("evaluation_parity", "full-mask parity of the evaluation model on the device per dtype", evaluation_parity),
]
