"""Experiment 5's difficulty scores against values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from experiment_5.difficulty import DIFFICULTY_SCORES, difficulty_scores

# Three images over three classes, all with true label 0:
#   confident and correct  (logit 10 on class 0),
#   confident and wrong    (logit 10 on class 1),
#   uniform                (all logits equal).
LOGITS = torch.tensor([[10.0, 0.0, 0.0], [0.0, 10.0, 0.0], [1.0, 1.0, 1.0]])
LABELS = torch.tensor([0, 0, 0])


def by_hand() -> dict[str, list[float]]:
    """Every score written out from the softmax of each row."""
    big = 1 + 2 * math.exp(-10)  # partition function of (10, 0, 0) after dividing by e^10
    p_max, p_low = 1 / big, math.exp(-10) / big
    entropy_confident = -(p_max * math.log(p_max) + 2 * p_low * math.log(p_low))
    return {
        "cross_entropy": [math.log(big), 10 + math.log(big), math.log(3)],
        "one_minus_p_true": [1 - p_max, 1 - p_low, 2 / 3],
        "one_minus_max_softmax": [1 - p_max, 1 - p_max, 2 / 3],
        "entropy": [entropy_confident, entropy_confident, math.log(3)],
        "negative_margin": [-10.0, -10.0, 0.0],
    }


def test_scores_equal_hand_computed_values() -> None:
    scores = difficulty_scores(LOGITS, LABELS)
    assert set(scores) == set(DIFFICULTY_SCORES) | {"correct"}
    for name, expected in by_hand().items():
        assert scores[name].dtype == torch.float64
        np.testing.assert_allclose(scores[name].numpy(), expected, rtol=1e-12, atol=1e-15, err_msg=name)
    # argmax takes the first of tied classes, so the uniform image counts as predicting class 0 (its label).
    assert scores["correct"].tolist() == [True, False, True]


def test_every_score_orders_the_images_as_defined() -> None:
    scores = {name: value.tolist() for name, value in difficulty_scores(LOGITS, LABELS).items()}
    confident_right, confident_wrong, uniform = 0, 1, 2
    # Label-aware scores: the confidently wrong image is the hardest, the confidently right one the easiest.
    for name in ("cross_entropy", "one_minus_p_true"):
        values = scores[name]
        assert values[confident_right] < values[uniform] < values[confident_wrong], name
    # Label-free scores cannot tell right from wrong: equal for the two confident images, largest for the uniform one.
    for name in ("one_minus_max_softmax", "entropy", "negative_margin"):
        values = scores[name]
        assert (
            values[confident_right] == pytest.approx(values[confident_wrong], abs=1e-15)
            and values[confident_right] < values[uniform]
        ), name
    assert min(scores["negative_margin"]) < 0 and max(scores["negative_margin"]) == 0.0
    assert all(
        value >= 0
        for name in ("cross_entropy", "one_minus_p_true", "one_minus_max_softmax", "entropy")
        for value in scores[name]
    )


def test_margin_uses_the_top_two_logits_whatever_their_position() -> None:
    logits = torch.tensor([[0.5, 3.0, -1.0, 2.0]])
    assert difficulty_scores(logits, torch.tensor([3]))["negative_margin"].item() == pytest.approx(-1.0)


def test_shape_mismatch_is_rejected() -> None:
    with pytest.raises(ValueError):
        difficulty_scores(LOGITS, torch.tensor([0, 1]))
