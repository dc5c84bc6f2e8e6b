"""Benchmark — the default allocator setting against glibc's tunables and against no setting.

Question: does the setting every evaluation starts with (:mod:`experiment_1.network.allocator`, glibc's
``mallopt``) remove the page-fault cost of large activation buffers as well as the environment
setting ``GLIBC_TUNABLES=glibc.malloc.mmap_threshold=4294967296:glibc.malloc.trim_threshold=17179869184``
does? The same workload — ``--passes`` tree passes of ``--arch`` on ``--images`` random images at
``--resolution`` px, random weights, one intra-op thread unless ``--threads`` — runs in separate
processes under three environments, interleaved (default, tuned, untuned, default, tuned, …):

- ``default``: nothing set: the pipeline's own start-up setting (``tune_allocator``) applies;
- ``tuned``: ``GLIBC_TUNABLES`` as above (the setting then leaves the allocator alone);
- ``untuned``: ``MOE_MALLOC_TUNING=off``: glibc's own behaviour, as before the setting.

``--path step`` (default) times what an evaluation step runs: the child applies the start-up setting itself
(as ``build_setup`` does) and calls the tree engine. ``--path library`` times the README's library block instead:
``build_gated_stack`` and ``evaluate_all_masks`` from the ``experiment_1.network`` face, no set-up call, so the
only setting the ``default`` environment gets is the one the engine applies on its first call.

Each child times its passes (model built and warmed up first) and reports wall, user and system
seconds and minor page faults of the timed passes and what the allocator setting did; the parent prints each
environment's medians and the per-round ratios default/tuned and untuned/tuned (median, min, max). The target:
default ≤ 1.25× tuned.

Inputs:  none (random weights and images).  Outputs: a table on stdout; ``--json`` writes it, which
         ``python -m paper.make_tables`` puts into experiment_1/PERFORMANCE.md's allocator block
         (``experiment_1/results_bench/allocator_*.json``).

    python -m experiment_1.tools.bench allocator --rounds 3
    python -m experiment_1.tools.bench allocator --path library --rounds 5 --json experiment_1/results_bench/allocator_library.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

from experiment_1.errors import PipelineError
from experiment_1.paths import REPO_ROOT
from experiment_1.run import run_config

TUNABLES = "glibc.malloc.mmap_threshold=4294967296:glibc.malloc.trim_threshold=17179869184"
ENVIRONMENTS = {"default": {}, "tuned": {"GLIBC_TUNABLES": TUNABLES}, "untuned": {"MOE_MALLOC_TUNING": "off"}}
CLEARED = ("GLIBC_TUNABLES", "MOE_MALLOC_TUNING", "LD_PRELOAD")
WORKLOAD = ("arch", "images", "resolution", "passes", "mask_chunk", "threads", "path")
"""What a child process measures: these flags, passed to it as JSON on its command line."""


def child(workload: dict[str, Any]) -> dict[str, Any]:
    """One process's measurement: model, warm-up, timed passes — after the start-up setting (as ``build_setup`` does)
    on the step path, or through the library face with no set-up call on the library path."""
    from experiment_1.network.allocator import allocator_record, tune_allocator

    if workload["path"] == "step":
        tune_allocator()
    import torch

    from experiment_1.network import build_gated_stack, evaluate_all_masks

    torch.set_num_threads(workload["threads"])
    model = build_gated_stack(workload["arch"], "random", seed=0)
    size = workload["resolution"]
    images = torch.randn(workload["images"], 3, size, size, generator=torch.Generator().manual_seed(0))
    evaluate_all_masks(model, images[:1], mask_chunk=workload["mask_chunk"])  # warm-up: kernels, first heap growth
    before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    for _ in range(workload["passes"]):
        evaluate_all_masks(model, images, mask_chunk=workload["mask_chunk"])
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF)
    return {
        "allocator": allocator_record(),
        "wall_seconds": wall,
        "user_seconds": after.ru_utime - before.ru_utime,
        "sys_seconds": after.ru_stime - before.ru_stime,
        "minor_faults": after.ru_minflt - before.ru_minflt,
        "peak_rss_mb": after.ru_maxrss / 1024,
    }


def run_child(name: str, args: argparse.Namespace) -> dict[str, Any]:
    env = {key: value for key, value in os.environ.items() if key not in CLEARED}
    env.update(ENVIRONMENTS[name], OMP_NUM_THREADS=str(args.threads))
    workload = json.dumps({key: getattr(args, key) for key in WORKLOAD})
    command = [sys.executable, "-m", "experiment_1.tools.bench_allocator", workload]
    result = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise PipelineError(
            f"the {name} child failed (exit {result.returncode}): {result.stderr.strip().splitlines()[-1] if result.stderr.strip() else 'no output'}"
        )
    return json.loads(result.stdout.strip().splitlines()[-1])


def summarise(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Medians per environment and per-round wall-time ratios against ``tuned``."""
    figures = ("wall_seconds", "user_seconds", "sys_seconds", "minor_faults", "peak_rss_mb")
    medians = {
        name: {figure: statistics.median(run[figure] for run in measured) for figure in figures}
        for name, measured in runs.items()
    }
    ratios = {}
    for name in ("default", "untuned"):
        per_round = [mine["wall_seconds"] / tuned["wall_seconds"] for mine, tuned in zip(runs[name], runs["tuned"])]
        ratios[f"{name}_over_tuned"] = {
            "median": statistics.median(per_round),
            "min": min(per_round),
            "max": max(per_round),
            "per_round": per_round,
        }
    return {
        "medians": medians,
        "wall_ratios": ratios,
        "allocator": {name: measured[0]["allocator"] for name, measured in runs.items()},
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``bench allocator``."""
    parser.add_argument("--arch", default="efficientnet_lite0", help="architecture (default: %(default)s)")
    parser.add_argument(
        "--images", type=run_config.positive_int, default=1, help="images per pass (default: %(default)s)"
    )
    parser.add_argument(
        "--resolution", type=run_config.positive_int, default=224, help="input size in pixels (default: %(default)s)"
    )
    parser.add_argument(
        "--passes", type=run_config.positive_int, default=2, help="timed tree passes per process (default: %(default)s)"
    )
    parser.add_argument(
        "--mask-chunk", type=run_config.power_of_two, default=512, help="engine chunk size (default: %(default)s)"
    )
    parser.add_argument(
        "--threads", type=run_config.positive_int, default=1, help="intra-op threads (default: %(default)s)"
    )
    parser.add_argument(
        "--rounds",
        type=run_config.positive_int,
        default=3,
        help="interleaved rounds of the three environments (default: %(default)s)",
    )
    parser.add_argument(
        "--path",
        choices=("step", "library"),
        default="step",
        help="step: the start-up setting as build_setup applies it; library: the README's library block, no set-up "
        "call (default: %(default)s)",
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run the three environments' children round by round, print the table and return the record."""
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in ENVIRONMENTS}
    for round_number in range(args.rounds):
        for name in ENVIRONMENTS:
            runs[name].append(run_child(name, args))
            print(
                f"round {round_number + 1}/{args.rounds} {name:<8} {runs[name][-1]['wall_seconds']:7.2f} s wall",
                file=sys.stderr,
            )
    summary = summarise(runs)
    print(
        f"{args.path} path: {args.arch}, {args.images} image(s) at {args.resolution} px, {args.passes} tree pass(es) per process, "
        f"{args.threads} thread(s), {args.rounds} interleaved rounds"
    )
    print(
        f"{'environment':<9} {'wall s':>8} {'user s':>8} {'sys s':>7} {'minor faults':>12} {'peak RSS MB':>11}  allocator"
    )
    for name, medians in summary["medians"].items():
        record = summary["allocator"][name]
        print(
            f"{name:<9} {medians['wall_seconds']:>8.2f} {medians['user_seconds']:>8.2f} {medians['sys_seconds']:>7.2f} {medians['minor_faults']:>12.0f} "
            f"{medians['peak_rss_mb']:>11.0f}  {record['allocator']}, {record['tuning']}"
        )
    for name, ratio in summary["wall_ratios"].items():
        print(
            f"wall {name.replace('_over_', ' / ')}: median {ratio['median']:.3f}× (min {ratio['min']:.3f}, max {ratio['max']:.3f}; per round)"
        )
    workload = {name: getattr(args, name) for name in (*WORKLOAD[:-1], "rounds")}
    return {"path": args.path, "workload": workload, **summary, "runs": runs}


if __name__ == "__main__":  # one child process of run_child: its workload as JSON in, its measurement as JSON out
    print(json.dumps(child(json.loads(sys.argv[1]))))
