"""How hard an image is for the network, from its full-mask logits ``h(full)`` and its true label.

Five scores, each larger for a harder image (batched over images, computed in float64):

- ``cross_entropy``: ``−log p(y)`` with ``p = softmax(h(full))`` and ``y`` the true label;
- ``one_minus_p_true``: ``1 − p(y)``;
- ``one_minus_max_softmax``: ``1 − max_c p(c)`` (label-free: low confidence);
- ``entropy``: ``−Σ_c p(c) log p(c)`` in nats (label-free);
- ``negative_margin``: ``−(z₍₁₎ − z₍₂₎)``, minus the gap between the largest and the second-largest
  logit (label-free; ``≤ 0``, and ``0`` when the top two logits tie).

plus ``correct``: ``argmax_c h(full)[c] == y`` (``argmax`` takes the first of tied classes, as everywhere
in the pipeline).
"""

from __future__ import annotations

import torch

from experiment_5.step_2_analyze import DIFFICULTY_SCORES  # the --primary-score choices

__all__ = ["DIFFICULTY_SCORES", "difficulty_scores"]


def difficulty_scores(full_logits: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
    """The five scores of :data:`DIFFICULTY_SCORES` (float64, ``(B,)`` each) and ``correct`` (bool, ``(B,)``).

    ``full_logits`` is ``(B, C)``, ``labels`` ``(B,)`` class indices in ``0 … C−1``.
    """
    if full_logits.dim() != 2 or labels.shape != full_logits.shape[:1]:
        raise ValueError(
            f"expected logits (B, C) and labels (B,); got {tuple(full_logits.shape)} and {tuple(labels.shape)}"
        )
    logits = full_logits.double()
    log_probabilities = logits.log_softmax(dim=1)
    cross_entropy = -log_probabilities.gather(1, labels.view(-1, 1).long()).squeeze(1)
    top_two = logits.topk(2, dim=1).values
    return {
        "cross_entropy": cross_entropy,
        "one_minus_p_true": -torch.expm1(-cross_entropy),
        "one_minus_max_softmax": -torch.expm1(log_probabilities.max(dim=1).values),
        "entropy": -(log_probabilities.exp() * log_probabilities).sum(dim=1),
        "negative_margin": top_two[:, 1] - top_two[:, 0],
        "correct": logits.argmax(dim=1) == labels,
    }
