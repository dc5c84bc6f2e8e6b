"""The arithmetic and loader flags end to end (Experiment 2's evaluation step, random-init ResNet-18 at 64 px, 2
images): each flag does what it says and nothing else.

- ``--dtype tf32``: TensorFloat-32 acts on CUDA only, so on CPU every per-image array equals float32's bit for bit;
- ``--dtype bfloat16 / float16 / float64``: the network runs in that precision — the energies move from float32's
  by that precision's round-off (and no more), and the recorded round-off variance of the logits scales with the
  square of its machine epsilon;
- ``--mobius-dtype float32``: the transform and statistics in float32 — within float32 round-off of float64's, not
  bit-equal;
- ``--num-workers 2``: worker processes decode the images; every array equals the in-process loader's bit for bit.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch

import experiment_2.step_1_evaluate as step_1_evaluate
from experiment_1.data.shards import draw_sample, list_items, sample_list_json
from experiment_1.files import atomic_write_json, read_json

EPSILON = {"float32": 2.0**-24, "bfloat16": 2.0**-8, "float16": 2.0**-11, "float64": 2.0**-53}
ENERGY_TOLERANCE = {"bfloat16": 0.2, "float16": 0.05, "float64": 1e-5}  # of the image's total energy


def evaluate(data_dir: Path, root: Path, name: str, *extra: str) -> dict[str, np.ndarray]:
    samples = root / "samples.json"
    if not samples.exists():
        atomic_write_json(
            samples,
            sample_list_json(
                draw_sample(list_items(data_dir, "test-*.parquet"), "uniform", 2, 0, seed=0),
                "test-*.parquet",
                "uniform",
                0,
                None,
            ),
        )
    output = root / name
    step_1_evaluate.main(
        [
            "--sample-index",
            str(samples),
            "--data-dir",
            str(data_dir),
            "--weights",
            "random",
            "--batch-size",
            "2",
            "--num-workers",
            "0",
            "--device",
            "cpu",
            "--output-dir",
            str(output),
            *extra,
        ]
    )
    with np.load(output / "per_image.npz") as stored:
        arrays = {key: stored[key] for key in stored.files if key != "run_id"}
    arrays["config"] = read_json(output / "summary.json")["config"]
    return arrays


@pytest.fixture
def keep_tf32_switches() -> Iterator[None]:
    """build_setup sets torch's global TF32 switches from --dtype: restore them after the test (torch's switch
    objects are properties, which monkeypatch cannot undo)."""
    cudnn, matmul = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    yield
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = cudnn, matmul


def relative_energy_change(arrays: dict[str, np.ndarray], reference: dict[str, np.ndarray]) -> float:
    total = reference["energy_vector"].sum(axis=1, keepdims=True)
    return float((np.abs(arrays["energy_vector"] - reference["energy_vector"]) / total).max())


@pytest.mark.usefixtures("keep_tf32_switches")
def test_dtype_and_worker_flags_change_the_arithmetic_they_name_and_nothing_else(
    tiny_shards: Path, small_input: int, tmp_path: Path
) -> None:
    reference = evaluate(tiny_shards, tmp_path, "float32")
    assert reference["config"]["dtype"] == "float32" and reference["config"]["mobius_dtype"] == "float64"
    arrays = [name for name in reference if name != "config"]

    tf32 = evaluate(tiny_shards, tmp_path, "tf32", "--dtype", "tf32")
    assert tf32["config"]["dtype"] == "tf32" and torch.backends.cuda.matmul.allow_tf32
    for name in arrays:
        np.testing.assert_array_equal(tf32[name], reference[name], err_msg=name)

    workers = evaluate(tiny_shards, tmp_path, "workers", "--num-workers", "2")
    for name in arrays:
        np.testing.assert_array_equal(workers[name], reference[name], err_msg=name)

    mobius = evaluate(tiny_shards, tmp_path, "mobius_float32", "--mobius-dtype", "float32")
    assert mobius["config"]["mobius_dtype"] == "float32"
    assert 0 < relative_energy_change(mobius, reference) < 1e-5

    for dtype in ("bfloat16", "float16", "float64"):
        lowered = evaluate(tiny_shards, tmp_path, dtype, "--dtype", dtype)
        assert lowered["config"]["dtype"] == dtype
        assert 0 < relative_energy_change(lowered, reference) < ENERGY_TOLERANCE[dtype], dtype
        ratio = lowered["roundoff_variance_vector"] / reference["roundoff_variance_vector"]
        expected = (EPSILON[dtype] / EPSILON["float32"]) ** 2
        assert ((ratio > expected / 10) & (ratio < expected * 10)).all(), (dtype, ratio, expected)
