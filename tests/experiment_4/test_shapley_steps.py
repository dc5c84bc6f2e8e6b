"""Experiment 4's Shapley steps: the per-batch arrays against brute force, the class share of variance against its
permutation mean, and steps 4 and 5 end to end on a random-init ResNet-18 at 64 px (resumed without evaluating)."""

from __future__ import annotations

from itertools import combinations, permutations
from math import factorial
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import evaluation_flags
from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.mobius.transform import mobius_transform
from experiment_1.step_2_sample import main as sample_main
from experiment_4 import step_4_shapley, step_5_shapley_plot
from experiment_4.shapley import between_class_share, shapley_batch


def shapley_by_coalitions(values: np.ndarray, num_blocks: int) -> np.ndarray:
    """φ_l = Σ_{C ⊆ N∖l} |C|!(n−|C|−1)!/n! · (h(C ∪ l) − h(C)) for a set function ``values`` (2^L,)."""
    n, out = num_blocks, np.zeros(num_blocks)
    for block in range(n):
        outside = [other for other in range(n) if other != block]
        for size in range(n):
            for chosen in combinations(outside, size):
                mask = sum(1 << other for other in chosen)
                weight = factorial(size) * factorial(n - size - 1) / factorial(n)
                out[block] += weight * (values[mask | 1 << block] - values[mask])
    return out


def test_the_batch_arrays_equal_brute_force() -> None:
    num_blocks, nn_k = 3, 4
    logits = torch.randn(2, 2**num_blocks, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    arrays = shapley_batch(logits, torch.float64, nn_k)
    coefficients = mobius_transform(logits, dim=1)
    for image in range(2):
        predicted = int(logits[image, -1].argmax())
        assert int(arrays["predicted"][image]) == predicted
        values = logits[image, :, predicted].numpy()
        np.testing.assert_allclose(
            arrays["shapley_scalar"][image], shapley_by_coalitions(values, num_blocks), atol=1e-12
        )
        assert float(arrays["gain_scalar"][image]) == values[-1] - values[0]
        norms = [
            np.linalg.norm([shapley_by_coalitions(logits[image, :, c].numpy(), num_blocks)[b] for c in range(5)])
            for b in range(num_blocks)
        ]
        np.testing.assert_allclose(arrays["shapley_vector_norm"][image], norms, atol=1e-12)
        magnitudes = coefficients[image, :, predicted].abs().tolist()
        expert_set = sorted(range(2**num_blocks), key=lambda mask: (-magnitudes[mask], mask))[:nn_k]
        assert int(arrays["expert_set_top"][image]) == expert_set[0]
        counts = [sum(mask >> block & 1 for mask in expert_set) for block in range(num_blocks)]
        assert arrays["expert_set_membership"][image].tolist() == counts


def test_the_class_share_of_variance_and_its_permutation_mean() -> None:
    values = np.array([0.3, 1.2, -0.4, 2.0, 0.9])
    labels = np.array([0, 0, 1, 1, 1])
    within = sum(np.square(values[labels == c] - values[labels == c].mean()).sum() for c in (0, 1))
    total = np.square(values - values.mean()).sum()
    assert between_class_share(values, labels) == pytest.approx(1 - within / total, abs=1e-15)
    # over every relabelling, η² averages (classes − 1) / (images − 1), the null the summary stores
    shares = [between_class_share(values, np.array(order)) for order in set(permutations(labels))]
    assert np.mean(shares) == pytest.approx((2 - 1) / (5 - 1), abs=1e-12)
    assert between_class_share(np.ones(4), np.array([0, 0, 1, 1])) is None


def per_class_list(data_dir: Path, path: Path) -> Path:
    flags = ["--data-dir", str(data_dir), "--pattern", "validation-*.parquet", "--mode", "per-class"]
    sample_main([*flags, "--per-class", "2", "--seed", "0", "--output", str(path)])
    return path


def test_steps_4_and_5_end_to_end(
    tiny_shards: Path, small_input: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample_index = per_class_list(tiny_shards, tmp_path / "samples.json")
    output_dir = tmp_path / "shapley"
    flags = evaluation_flags(tiny_shards, sample_index, output_dir, "--nn-K", "16")
    step_4_shapley.main(flags)
    summary = read_json(output_dir / "shapley.json")
    arrays = np.load(output_dir / "per_image.npz")
    assert summary["num_valid"] == 6 and summary["num_classes"] == 3 and summary["nn_k"] == 16
    assert arrays["shapley_scalar"].shape == arrays["expert_set_membership"].shape == (6, summary["num_blocks"])
    assert (arrays["expert_set_membership"] <= 16).all()
    assert summary["efficiency_max_abs_error"] < 1e-9  # Σ_l φ_l = h(full)[c*] − h(∅)[c*]
    np.testing.assert_allclose(
        [block["shapley_scalar"]["mean"] for block in summary["blocks"]], arrays["shapley_scalar"].mean(axis=0)
    )
    written = (output_dir / "shapley.json").read_bytes()
    step_4_shapley.main(flags)  # resumed: nothing evaluated, the same summary
    assert (output_dir / "shapley.json").read_bytes() == written
    step_5_shapley_plot.main(["--summary", str(output_dir / "shapley.json")])
    report = (output_dir / "REPORT.md").read_text()
    top = max(summary["blocks"], key=lambda block: block["share_top"])
    assert f"block `{top['name']}` carries the largest Shapley value" in report
    assert (
        "Beside Experiment 4's expert sets" in report
        and "![Shapley values of the blocks](shapley_blocks.png)" in report
    )
    assert (output_dir / "shapley_blocks.png").exists() and (output_dir / "shapley_blocks.pdf").exists()
    with pytest.raises(PipelineError, match="--nn-K 999"):
        step_4_shapley.main(evaluation_flags(tiny_shards, sample_index, tmp_path / "other", "--nn-K", "999"))
