"""GPU check — the first run on a CUDA machine, in one call (``make gpu-check``, under 8 minutes on one H100).

Question: does the code give the right numbers on CUDA, how fast is it there, and do a real pass and a
``torchrun`` (NCCL) job run end to end? A list of named checks (:data:`CHECKS`; add one with
:func:`check`), each run in turn, its outcome written to the JSON after it finishes (a check that fails
is recorded with its one-line error and the next one runs):

- ``correctness``: tree and naive engines on CUDA in float32 (TF32 off) against a CPU float64 tree pass,
  on 2 random images at each network's input size (ResNet-18, EfficientNet-Lite0; random weights): the
  largest error relative to the image's largest |logit|, which must stay below ``--tolerance``;
- ``throughput``: the engine benchmark's rows (``experiment_1.tools.bench_engines``: tree over all 2^L masks,
  naive over ``--naive-masks`` masks) for ResNet-18/34/50, Lite0 and Lite1 at 224 px, float32, eager,
  channels-last, random weights — the rows experiment_1/PERFORMANCE.md's benchmark table is made from;
- ``single_pass``: Experiment 1's evaluation step (one all-mask pass) over 64 images of the repository's
  sample shards, ResNet-18 (random weights), on CUDA;
- ``torchrun_nccl``: the same step on 4 images under ``torchrun --standalone --nproc_per_node 1`` (the NCCL
  process group on cuda:0).
- ``environment``, ``deterministic_reductions``, ``memory_bound``, ``no_host_sync``, ``evaluation_parity``: the
  CUDA paths' checks of :mod:`experiment_1.tools.gpu_checks` (versions and API differences, bit-identical
  reductions, the stated memory bounds, no host synchronisation in the engine, full-mask parity per dtype);
- ``memory_plan``: which ``--batch-size`` and ``--mask-chunk`` fit the device (:mod:`experiment_1.tools.gpu_memory_plan`,
  measured on the CPU: the one check that needs no CUDA device).

Without a CUDA device (and a check that needs one) it says so in one line and exits with status 2. Exit status 1
if a check failed.

Inputs:  none (random weights and images; imagenet-1k/sample-1750 for the passes).
Outputs: ``--json`` (default experiment_1/results_bench/gpu_check.json): every check's outcome, plus the
         throughput rows, which ``python -m paper.make_tables`` puts into experiment_1/PERFORMANCE.md's benchmark table.

    python -m experiment_1.tools.gpu_check && python -m paper.make_tables     # = make gpu-check
    python -m experiment_1.tools.gpu_check --checks correctness                # some checks only
    python -m experiment_1.tools.gpu_check --checks memory_plan --device-gib 80 --json experiment_1/results_bench/gpu_memory_plan.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch

from experiment_1.errors import PipelineError, run_cli
from experiment_1.files import atomic_write_json, package_versions
from experiment_1.network.allocator import tune_allocator
from experiment_1.network.engines import evaluate_masks_naive, evaluate_masks_tree
from experiment_1.network.registry import build_gated_stack
from experiment_1.paths import REPO_ROOT
from experiment_1.run import run_config
from experiment_1.tools.bench_engines import bench_rows, device_name, print_rows
from experiment_1.tools.gpu_checks import DEVICE_CHECKS
from experiment_1.tools.gpu_memory_plan import ARCHS as PLAN_ARCHS
from experiment_1.tools.gpu_memory_plan import memory_plan

DEFAULT_JSON = Path("experiment_1/results_bench/gpu_check.json")
SAMPLE_DATA = "imagenet-1k/sample-1750"
SAMPLE_INDEX = "experiment_1/sample_index_sample_test.json"
SUBPROCESS_TIMEOUT_S = 240

CheckFunction = Callable[[argparse.Namespace, torch.device], tuple[bool, dict[str, Any]]]


@dataclass(frozen=True)
class Check:
    """One named check: ``run(args, device)`` returns (passed, details for the JSON); ``cuda``: it needs a CUDA device
    (otherwise it runs on the CPU where there is none)."""

    name: str
    description: str
    run: CheckFunction
    cuda: bool = True


CHECKS: list[Check] = []


def check(name: str, description: str, cuda: bool = True) -> Callable[[CheckFunction], CheckFunction]:
    """Register ``function`` as the check ``name`` (run in registration order)."""

    def register(function: CheckFunction) -> CheckFunction:
        if any(existing.name == name for existing in CHECKS):
            raise ValueError(f"a GPU check named {name} is already registered")
        CHECKS.append(Check(name, description, function, cuda))
        return function

    return register


@check("correctness", "tree and naive on CUDA (float32, TF32 off) vs a CPU float64 tree pass, 2 images")
def correctness(args: argparse.Namespace, device: torch.device) -> tuple[bool, dict[str, Any]]:
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    results = {}
    for arch in args.correctness_archs:
        model = build_gated_stack(arch, "random", device=device, seed=args.seed)
        reference = build_gated_stack(arch, "random", device="cpu", seed=args.seed, dtype=torch.float64)
        size = model.preprocess.crop
        images = torch.randn(2, 3, size, size, generator=torch.Generator().manual_seed(args.seed))
        tree = evaluate_masks_tree(model, images, mask_chunk=args.mask_chunk).cpu().double()
        naive = evaluate_masks_naive(model, images, None, args.mask_chunk).cpu().double()
        exact = evaluate_masks_tree(reference, images.double(), mask_chunk=args.mask_chunk)
        scale = exact.abs().amax(dim=(1, 2), keepdim=True)
        errors = {
            "tree_vs_float64": ((tree - exact).abs() / scale).max().item(),
            "naive_vs_float64": ((naive - exact).abs() / scale).max().item(),
            "tree_vs_naive": ((tree - naive).abs() / scale).max().item(),
        }
        results[arch] = {
            "num_blocks": model.num_blocks,
            "resolution": size,
            "max_relative_error": errors,
            "max_abs_logit": exact.abs().max().item(),
        }
    worst = max(error for result in results.values() for error in result["max_relative_error"].values())
    return worst <= args.tolerance, {
        "tolerance": args.tolerance,
        "worst_relative_error": worst,
        "archs": results,
        "tf32": False,
    }


@check("throughput", "engine benchmark rows at 224 px, float32, eager, channels-last")
def throughput(args: argparse.Namespace, device: torch.device) -> tuple[bool, dict[str, Any]]:
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    bench_args = argparse.Namespace(
        dtypes=["float32"],
        compile_modes=["eager"],
        memory_formats=["channels_last"],
        batchnorm=["kept"],
        weights="random",
        seed=args.seed,
        resolution=224,
        batch_sizes=[1],
        naive_masks=args.naive_masks,
        mask_chunk=args.mask_chunk,
        repeats=1,
    )
    rows = bench_rows(args.throughput_archs, bench_args, device)
    print_rows(rows, device_name(device))
    worst = max(row["max_abs_disagreement"] / max(row["max_abs_logit"], 1e-30) for row in rows)
    return worst <= args.tolerance, {"rows": rows, "worst_tree_naive_relative_disagreement": worst}


def run_step(arguments: list[str], launcher: list[str]) -> tuple[subprocess.CompletedProcess, float]:
    command = [
        *launcher,
        "-m",
        "experiment_1.step_3_evaluate",
        "--arch",
        "resnet18",
        "--weights",
        "random",
        "--data-dir",
        SAMPLE_DATA,
        "--sample-index",
        SAMPLE_INDEX,
        "--device",
        "cuda",
        "--seed",
        "0",
        *arguments,
    ]
    started = time.perf_counter()
    result = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    return result, time.perf_counter() - started


def step_outcome(
    result: subprocess.CompletedProcess, seconds: float, output_dir: Path, images: int
) -> tuple[bool, dict[str, Any]]:
    summary_path, timing_path = output_dir / "summary.json", output_dir / "timing.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    timing = json.loads(timing_path.read_text()) if timing_path.exists() else {}
    passed = result.returncode == 0 and summary.get("num_valid") == images
    return passed, {
        "returncode": result.returncode,
        "process_seconds": seconds,
        "num_valid": summary.get("num_valid"),
        "pass_wall_seconds": timing.get("wall_seconds"),
        "images_evaluated": timing.get("images_evaluated"),
        "world_size": timing.get("world_size", 1),
        "stderr_tail": result.stderr.strip().splitlines()[-3:],
    }


@check("single_pass", "Experiment 1's step on 64 sample images, ResNet-18, CUDA")
def single_pass(args: argparse.Namespace, device: torch.device) -> tuple[bool, dict[str, Any]]:
    with tempfile.TemporaryDirectory() as folder:
        result, seconds = run_step(["--limit", "64", "--batch-size", "8", "--output-dir", folder], [sys.executable])
        return step_outcome(result, seconds, Path(folder), 64)


@check("torchrun_nccl", "the same step on 4 images under torchrun (1 process, NCCL)")
def torchrun_nccl(args: argparse.Namespace, device: torch.device) -> tuple[bool, dict[str, Any]]:
    with tempfile.TemporaryDirectory() as folder:
        launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "1"]
        result, seconds = run_step(
            ["--limit", "4", "--batch-size", "1", "--num-workers", "0", "--output-dir", folder], launcher
        )
        return step_outcome(result, seconds, Path(folder), 4)


for _name, _description, _function in DEVICE_CHECKS:  # the CUDA paths' device-only checks (issue 30), after the above
    check(_name, _description)(_function)
check("memory_plan", "which --batch-size/--mask-chunk fit the device", cuda=False)(memory_plan)  # measured on CPU


def require_cuda() -> torch.device:
    if not torch.cuda.is_available():
        raise PipelineError(
            "no CUDA device here (torch.cuda.is_available() is False); run the GPU check on a machine with an NVIDIA GPU and a CUDA build of torch"
        )
    return torch.device("cuda", 0)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags: which checks, where the outcome goes, and each check's settings."""
    parser.add_argument(
        "--checks",
        nargs="+",
        choices=[entry.name for entry in CHECKS],
        default=[entry.name for entry in CHECKS],
        help="which checks, in order (default: all)",
    )
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where the outcome goes (default: %(default)s)")
    parser.add_argument(
        "--tolerance",
        type=float,
        default=1e-4,
        help="largest float32 error relative to the image's largest |logit| (default: %(default)s)",
    )
    parser.add_argument(
        "--correctness-archs", nargs="+", default=["resnet18", "efficientnet_lite0"], help="(default: %(default)s)"
    )
    parser.add_argument(
        "--throughput-archs",
        nargs="+",
        default=["resnet18", "resnet34", "resnet50", "efficientnet_lite0", "efficientnet_lite1"],
        help="(default: %(default)s)",
    )
    parser.add_argument(
        "--plan-archs", nargs="+", default=list(PLAN_ARCHS), help="the memory plan's (default: %(default)s)"
    )
    parser.add_argument(
        "--device-gib",
        type=float,
        default=None,
        help="device memory the plan is for, in GiB (default: the CUDA device's; 80 without one)",
    )
    parser.add_argument(
        "--naive-masks", type=int, default=64, help="masks the naive engine is timed on (default: %(default)s)"
    )
    parser.add_argument("--mask-chunk", type=int, default=256, help="engine chunk size (default: %(default)s)")
    parser.add_argument(
        "--seed", type=run_config.seed, default=0, help="seed of weights and images (default: %(default)s)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    args = parser.parse_args(argv)
    chosen = [entry for entry in CHECKS if entry.name in args.checks]
    device = require_cuda() if any(entry.cuda for entry in chosen) else torch.device("cpu")
    allocator = (
        tune_allocator()
    )  # as every evaluation step and the CPU benchmark do: its host-side timings are the runs'
    document: dict[str, Any] = {
        "device": device_name(device),
        "command": "python -m experiment_1.tools.gpu_check " + " ".join(sys.argv[1:] if argv is None else argv),
        "versions": {**package_versions(), "cuda": torch.version.cuda},
        "allocator": allocator,
        "checks": {},
        "rows": [],
    }
    for entry in chosen:
        print(f"gpu-check {entry.name}: {entry.description} …", flush=True)
        started = time.perf_counter()
        try:
            passed, details = entry.run(args, device)
            if "rows" in details:  # benchmark rows: top level, where PERFORMANCE.md's table reads them
                document["rows"] = details.pop("rows")
            outcome = {"status": "passed" if passed else "failed", **details}
        except Exception as error:  # one check's failure must not hide the others'; recorded with its one line
            outcome = {
                "status": "failed",
                "error": f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}",
            }
        outcome["seconds"] = time.perf_counter() - started
        document["checks"][entry.name] = outcome
        atomic_write_json(args.json, document)
        print(
            f"gpu-check {entry.name}: {outcome['status']} ({outcome['seconds']:.0f} s){' — ' + outcome['error'] if 'error' in outcome else ''}",
            flush=True,
        )
    failed = [name for name, outcome in document["checks"].items() if outcome["status"] != "passed"]
    print(
        f"gpu-check: {len(document['checks']) - len(failed)} of {len(document['checks'])} checks "
        f"passed{'; failed: ' + ', '.join(failed) if failed else ''}; wrote {args.json}"
    )
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    run_cli(main)
