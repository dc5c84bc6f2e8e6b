"""The sampled quantities of step 8, per image: Walsh summaries from the design's random masks and the mean Möbius
coefficient energies ē_j, j ≤ u, from random sub-cubes — each with its own interval (the estimators of
:mod:`experiment_2.past_exhaustive.sampling`), then their means over images with bootstrap CIs.

Per image and projection (vector: every class; scalar: the class ``c = argmax h(full)``):

- Walsh: :func:`experiment_2.past_exhaustive.sampling.walsh.walsh_estimates` on ``h`` at the design's masks (variance, influence,
  κ_W, κ_W / L, noise stability at each ρ, W_1 … W_3, the low-degree share), each with its 95 % interval
  (:data:`~experiment_2.past_exhaustive.sampling.walsh.INTERVALS`);
- sub-cubes: per draw, the ``2^u`` table of the held-off view (``experiment_1.network.held_off_view``) gives the mean
  ``‖Δ_S‖²`` of each order inside the draw (:func:`~experiment_2.past_exhaustive.sampling.subcubes.subcube_order_means`); over the
  draws, :func:`~experiment_2.past_exhaustive.sampling.subcubes.subcube_estimates` (mean; bootstrap-t interval over draws for every
  order with at least :data:`~experiment_2.past_exhaustive.sampling.subcubes.MIN_COEFFICIENTS` coefficients per draw, none for the
  others, the top order j = u among them).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from experiment_1.report import bootstrap_mean_ci_rows
from experiment_2.past_exhaustive.low_orders import PROJECTIONS
from experiment_2.past_exhaustive.sampling.subcubes import subcube_estimates, subcube_order_means
from experiment_2.past_exhaustive.sampling.walsh import WalshDesign, estimate_names, walsh_estimates

FIELDS = ("estimate", "ci_low", "ci_high", "se")  # per statistic: its estimate, interval and standard error
EXHAUSTIVE_LIMIT = 16  # the depth up to which the exhaustive step 1 gives p_k, C≤3, κ and the peak order
# The estimators whose 95 % intervals step 15 (experiment_2/results_estimator_stress) finds outside [90 %, 99 %] at
# L = 50 on some of its synthetic families — each covering too little, none biased: step 8's REPORT does not give them
# past the exhaustive limit (its summary keeps them). The Walsh summaries by name, the sub-cube orders as ebar_<j>;
# tests/experiment_2/past_exhaustive/test_estimator_stress.py holds this to the committed summary's failing list.
NOT_VALIDATED_AT_DEPTH = (
    "ebar_4",
    "ebar_5",
    "ebar_6",
    "ebar_7",
    "variance",
    "influence",
    "kappa_w",
    "kappa_w_per_block",
    "stability_0.95",
    "stability_0.9",
    "stability_0.75",
    "stability_0.5",
    "w2",
    "w3",
)
STRESS_REPORT = "experiment_2/results_estimator_stress/REPORT.md"


def walsh_per_image(design: WalshDesign, design_logits: np.ndarray, predicted: np.ndarray) -> dict[str, np.ndarray]:
    """``walsh_<field>_<projection>`` ``(N, K)`` (K names, :func:`~experiment_2.past_exhaustive.sampling.walsh.estimate_names`) from the
    design's ``(N, n, C)`` logits (``n`` = ``design.all_ids()``, in that order)."""
    ids, names = design.all_ids(), estimate_names(design.rhos)
    arrays = {
        f"walsh_{field}_{name}": np.empty((len(design_logits), len(names))) for field in FIELDS for name in PROJECTIONS
    }
    for image, logits in enumerate(np.asarray(design_logits, dtype=np.float64)):
        for name, values in (("vector", logits), ("scalar", logits[:, [int(predicted[image])]])):
            estimates = walsh_estimates(design, ids, values, seed=design.seed)
            for field in FIELDS:
                arrays[f"walsh_{field}_{name}"][image] = [estimates[stat][field] for stat in names]
    return arrays


def subcube_reductions(logits: torch.Tensor, predicted: torch.Tensor) -> dict[str, torch.Tensor]:
    """A view's ``(B, 2^u, C)`` table → ``order_means_<projection>`` ``(B, u + 1)``: the mean ``‖Δ_S‖²`` of each order
    inside the draw (column 0: ``‖h(∅)‖²``)."""
    values = logits.to(torch.float64).cpu()
    scalar = values.gather(2, predicted.cpu().view(-1, 1, 1).expand(-1, values.shape[1], 1))
    return {
        "order_means_vector": torch.from_numpy(subcube_order_means(values.numpy())),
        "order_means_scalar": torch.from_numpy(subcube_order_means(scalar.numpy())),
    }


def subcube_per_image(order_means: np.ndarray) -> dict[str, np.ndarray]:
    """``(N, draws, u + 1)`` per-draw means → per image ``mean``, ``ci_low``, ``ci_high`` of ē_j, ``(N, u)``."""
    rows = [subcube_estimates(image) for image in np.asarray(order_means, dtype=np.float64)]
    return {
        bound: np.array([[entry[key] for entry in image] for image in rows])
        for bound, key in (("mean", "mean"), ("ci_low", "ci_low"), ("ci_high", "ci_high"))
    }


def finite_or_none(values: np.ndarray) -> list:
    """``values`` as nested lists with ``None`` (JSON null) where a limit is NaN: an estimate without an interval (a
    sub-cube order with too few coefficients per draw), which the summary may hold but no verdict reads."""
    array = np.asarray(values, dtype=np.float64)
    return np.where(np.isfinite(array), array, None).tolist()


def over_images(per_image: np.ndarray, low: np.ndarray, high: np.ndarray, seed: int) -> dict[str, Any]:
    """Means over images with percentile-bootstrap CIs (over images), and each image's own interval beside them."""
    return {
        **bootstrap_mean_ci_rows(per_image, seed=seed),
        "per_image": np.asarray(per_image).tolist(),
        "per_image_ci_low": finite_or_none(low),
        "per_image_ci_high": finite_or_none(high),
    }
