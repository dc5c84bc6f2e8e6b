"""experiment_2.compare_precision: the per-image differences of two step-1 runs, image by image whatever the order."""

from __future__ import annotations

import numpy as np
import pytest

from experiment_1.errors import PipelineError
from experiment_2.compare_precision import compare


def run(index: list[int], kappa: list[float], peak: list[int], prediction: list[int]) -> dict[str, np.ndarray]:
    count = len(index)
    arrays = {"index": np.array(index), "valid": np.ones(count, bool), "full_prediction": np.array(prediction)}
    for projection in ("vector", "scalar"):
        arrays[f"kappa_{projection}"] = np.array(kappa, dtype=np.float32)
        arrays[f"c_le3_{projection}"] = np.array(kappa) / 10
        arrays[f"spectrum_{projection}"] = np.outer(kappa, [1.0, -1.0])
        arrays[f"peak_order_{projection}"] = np.array(peak)
    return arrays


def test_differences_are_taken_image_by_image_over_the_images_both_hold() -> None:
    reference = run([0, 1, 2], [4.0, 5.0, 6.0], [4, 5, 5], [7, 8, 9])
    other = run([2, 0], [6.5, 3.0], [5, 3], [1, 7])  # another order, image 1 missing
    result = compare(reference, other)
    assert result["num_images"] == 2 and result["prediction_changed"] == 1  # image 2: 9 → 1
    for projection in ("vector", "scalar"):
        row = result[projection]
        assert row["kappa_mean_difference"] == pytest.approx((-1.0 + 0.5) / 2)
        assert row["kappa_max_abs_difference"] == pytest.approx(1.0)
        assert row["c_le3_max_abs_difference"] == pytest.approx(0.1)
        assert row["spectrum_max_abs_difference"] == pytest.approx(1.0)
        assert row["peak_order_changed"] == 1


def test_an_image_invalid_in_either_run_is_left_out_and_no_common_image_is_refused() -> None:
    reference, other = run([0, 1], [4.0, 5.0], [4, 5], [1, 2]), run([0, 1], [9.0, 5.5], [4, 5], [1, 2])
    other["valid"][0] = False
    assert compare(reference, other)["vector"]["kappa_max_abs_difference"] == pytest.approx(0.5)
    with pytest.raises(PipelineError, match="share no valid image"):
        compare(reference, run([5], [1.0], [1], [0]))
