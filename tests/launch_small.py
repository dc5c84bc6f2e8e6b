"""Run an evaluation step in a fresh process with 64-px inputs — for tests that need a subprocess (torchrun).

    python -m torch.distributed.run --standalone --nproc-per-node 2 tests/launch_small.py \\
        experiment_1.step_3_evaluate --weights random …

The in-process tests get the same patch from the ``small_input`` fixture (conftest.py).
``MOE_TEST_DIE_AT=<rank>:<n>`` kills that rank (exit status 3, no clean-up) as it starts its n-th
batch, to test what a crashed rank leaves behind.
"""

from __future__ import annotations

import os
import runpy
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

SMALL_INPUT = 64


def small_builder(build: Callable[..., Any]) -> Callable[..., Any]:
    """``build_gated_stack`` whose models expect SMALL_INPUT-px inputs."""

    def build_small(*args: Any, **kwargs: Any) -> Any:
        model = build(*args, **kwargs)
        model.preprocess = replace(model.preprocess, resize=SMALL_INPUT, crop=SMALL_INPUT)
        return model

    return build_small


def dying_evaluator(evaluate: Callable[..., Any], rank: int, batch: int) -> Callable[..., Any]:
    """``evaluate_all_masks`` that ends this process abruptly on its ``batch``-th call if it is ``rank``."""
    calls = 0

    def evaluate_or_die(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == batch and int(os.environ.get("RANK", "0")) == rank:
            os._exit(3)
        return evaluate(*args, **kwargs)

    return evaluate_or_die


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import experiment_1.run.loop as run_loop
    import experiment_1.run.setup as run_setup

    run_setup.build_gated_stack = small_builder(run_setup.build_gated_stack)
    if "MOE_TEST_DIE_AT" in os.environ:
        rank, batch = (int(value) for value in os.environ["MOE_TEST_DIE_AT"].split(":"))
        run_loop.evaluate_all_masks = dying_evaluator(run_loop.evaluate_all_masks, rank, batch)
    module, sys.argv = sys.argv[1], sys.argv[1:]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
