"""One all-mask pass feeding several experiments (paper.single_pass) against each experiment's own step.

Random-init ResNet-18 at 64 px (L = 8) on generated shards. Byte equality of the summaries is
expected: the pass evaluates each batch with the same operations on the same batch shape as a
step alone, and each experiment reduces the same logits with its own per-batch function.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
import torch

import experiment_1.run.loop as run_loop
import experiment_3.evaluation as topk_evaluation
from experiment_1 import step_3_evaluate as experiment_1_step
from experiment_1.data.shards import draw_sample, list_items, sample_list_json
from experiment_1.errors import PipelineError
from experiment_1.files import atomic_write_json, read_json
from experiment_2 import step_1_evaluate as experiment_2_step
from experiment_3 import step_1_evaluate as experiment_3_step
from experiment_4 import step_1_signatures as experiment_4_step
from experiment_5 import step_1_evaluate as experiment_5_step
from paper.single_pass import main as single_pass_main

MODULES = {1: experiment_1_step, 2: experiment_2_step, 3: experiment_3_step, 4: experiment_4_step, 5: experiment_5_step}
STEPS: dict[int, Callable[[list[str] | None], None]] = {number: module.main for number, module in MODULES.items()}
OWN_FLAGS = {
    3: ["--ks", "1", "16", "256", "--num-random-seeds", "2"],
    4: ["--store-K", "32"],
    5: ["--extra-taus", "0.3"],
}


def shared_flags(data_dir: Path, sample_index: Path, *extra: str) -> list[str]:
    return [
        "--data-dir",
        str(data_dir),
        "--sample-index",
        str(sample_index),
        "--weights",
        "random",
        "--batch-size",
        "2",
        "--num-workers",
        "0",
        "--device",
        "cpu",
        "--seed",
        "0",
        *extra,
    ]


def own_flags(experiments: list[int]) -> list[str]:
    return [flag for number in experiments for flag in OWN_FLAGS.get(number, [])]


def labelled_list(data_dir: Path, path: Path) -> Path:
    samples = draw_sample(list_items(data_dir, "validation-*.parquet"), "per-class", 0, 3, seed=0)
    atomic_write_json(path, sample_list_json(samples, "validation-*.parquet", "per-class", 0, 3))
    return path


def unlabelled_list(data_dir: Path, path: Path) -> Path:
    samples = draw_sample(list_items(data_dir, "test-*.parquet"), "uniform", 5, 0, seed=0)
    atomic_write_json(path, sample_list_json(samples, "test-*.parquet", "uniform", 0, None))
    return path


class CountingEvaluator:
    """``evaluate_all_masks`` that counts the images it evaluates."""

    def __init__(self, original: Callable[..., torch.Tensor]) -> None:
        self.original, self.images = original, 0

    def __call__(self, model: Any, images: torch.Tensor, **kwargs: Any) -> torch.Tensor:
        self.images += len(images)
        return self.original(model, images, **kwargs)


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> CountingEvaluator:
    evaluator = CountingEvaluator(run_loop.evaluate_all_masks)
    monkeypatch.setattr(run_loop, "evaluate_all_masks", evaluator)
    return evaluator


def result_files(folder: Path, experiment: int) -> dict[str, Any]:
    """What each experiment's own step writes, in a comparable form."""
    if experiment <= 3:
        with np.load(folder / "per_image.npz") as stored:
            arrays = {name: stored[name] for name in stored.files}
        return {"summary": (folder / "summary.json").read_bytes(), "arrays": arrays}
    document = torch.load(folder / ("signatures.pt" if experiment == 4 else "per_image.pt"), weights_only=True)
    return document


def assert_same(a: Any, b: Any, where: str = "") -> None:
    if isinstance(a, dict):
        assert sorted(a) == sorted(b), where
        for name in a:
            assert_same(a[name], b[name], f"{where}/{name}")
    elif isinstance(a, (torch.Tensor, np.ndarray)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=where)
    else:
        assert a == b, where


@pytest.mark.parametrize("experiments", [[1, 2, 3], [4, 5]])
def test_one_pass_writes_what_each_step_writes_and_each_step_then_resumes_without_evaluating(
    experiments: list[int], tiny_shards: Path, tmp_path: Path, small_input: int, counting: CountingEvaluator
) -> None:
    sample_index = (
        labelled_list(tiny_shards, tmp_path / "labelled.json")
        if 4 in experiments
        else unlabelled_list(tiny_shards, tmp_path / "test.json")
    )
    flags = shared_flags(tiny_shards, sample_index, "--limit", "5")  # 5 of the list's images, 3 batches
    separate = {}
    for number in experiments:
        separate[number] = tmp_path / "separate" / f"experiment_{number}"
        STEPS[number](flags + OWN_FLAGS.get(number, []) + ["--output-dir", str(separate[number])])
    assert counting.images == 5 * len(experiments)

    counting.images = 0
    root = tmp_path / "one"
    single_pass_main(
        flags
        + own_flags(experiments)
        + ["--experiments", *map(str, experiments), "--results-root", str(root), "--results-name", "r"]
    )
    assert counting.images == 5  # every image evaluated once for all the experiments
    for number in experiments:
        folder = root / f"experiment_{number}" / "r"
        assert_same(result_files(folder, number), result_files(separate[number], number), f"experiment {number}")
        assert read_json(folder / "timing.json")["shared_pass"] == [
            f"{MODULES[n].__name__}/{stage_name(n)}" for n in experiments
        ]
        STEPS[number](
            flags + OWN_FLAGS.get(number, []) + ["--output-dir", str(folder)]
        )  # the step alone on the runner's folder …
        assert_same(result_files(folder, number), result_files(separate[number], number), f"experiment {number} rerun")
    assert counting.images == 5  # … resumes from the store the runner filled: nothing evaluated


def stage_name(experiment: int) -> str:
    return {1: "all_masks", 2: "spectrum", 3: "all_masks", 4: "signatures", 5: "all_masks"}[experiment]


def test_an_interrupted_pass_resumes_each_experiment_where_it_stopped(
    tiny_shards: Path, tmp_path: Path, small_input: int, counting: CountingEvaluator, monkeypatch: pytest.MonkeyPatch
) -> None:
    sample_index = unlabelled_list(tiny_shards, tmp_path / "test.json")
    flags = shared_flags(tiny_shards, sample_index) + own_flags([1, 2, 3])
    root = tmp_path / "one"
    runner_flags = flags + ["--experiments", "1", "2", "3", "--results-root", str(root), "--results-name", "r"]
    original, calls = topk_evaluation.topk_metrics, {"count": 0}

    def fail_on_second_batch(*args: Any, **kwargs: Any) -> dict[str, torch.Tensor]:
        calls["count"] += 1
        if calls["count"] == 2:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    monkeypatch.setattr(topk_evaluation, "topk_metrics", fail_on_second_batch)
    with pytest.raises(KeyboardInterrupt):
        single_pass_main(runner_flags)
    held = {
        number: sorted(path.name for path in (root / f"experiment_{number}" / "r" / "partial").rglob("batch_*.pt"))
        for number in (1, 2, 3)
    }
    assert held == {
        1: ["batch_000000.pt", "batch_000001.pt"],
        2: ["batch_000000.pt", "batch_000001.pt"],
        3: ["batch_000000.pt"],
    }

    monkeypatch.setattr(topk_evaluation, "topk_metrics", original)
    counting.images = 0
    single_pass_main(runner_flags)
    assert counting.images == 5 - 2  # batch 1 again (for Experiment 3 only) and batch 2; batch 0 not at all
    separate = tmp_path / "separate"
    experiment_3_step.main(flags + ["--output-dir", str(separate)])
    assert (root / "experiment_3" / "r" / "summary.json").read_bytes() == (separate / "summary.json").read_bytes()


def test_an_unlabelled_list_for_experiment_4_is_one_line_before_anything_is_evaluated(
    tiny_shards: Path, tmp_path: Path, small_input: int, counting: CountingEvaluator
) -> None:
    sample_index = unlabelled_list(tiny_shards, tmp_path / "test.json")
    with pytest.raises(PipelineError, match="Experiment 4 needs a labelled per-class list"):
        single_pass_main(
            shared_flags(tiny_shards, sample_index)
            + ["--experiments", "3", "4", "--results-root", str(tmp_path), "--results-name", "r"]
        )
    assert counting.images == 0
