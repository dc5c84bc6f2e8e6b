"""Experiment 2's summary: a pure function of the per-image spectrum arrays and the run's configuration.

experiment_2.step_1_evaluate writes it after evaluating; paper.resummarize rebuilds it from a
committed per_image.npz without evaluating a mask.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from experiment_1.run import image_counts, valid_images
from experiment_1.report import published_numbers
from experiment_2.spectrum.summary_blocks import spectrum_summary
from experiment_1.mobius import binomial_null
from experiment_2.spectrum.verdicts import floor_check, input_dependence, paired_kappa_difference, verdicts

QUESTION = "How is the Möbius energy of the logits distributed across interaction orders?"


def summarize(arrays: dict[str, np.ndarray], config: dict[str, Any], seed: int) -> dict[str, Any]:
    """The Experiment 2 summary: both projections' spectrum statistics, the binomial null, the seed's numbers, the
    round-off floor check, how much h(full) moves with the image, the paired κ^s − κ^v and the verdicts block
    (:mod:`experiment_2.spectrum.verdicts`)."""
    valid = valid_images(arrays)
    num_blocks = int(config["num_blocks"])
    summary = {
        "experiment": 2,
        "question": QUESTION,
        "config": config,
        "residual_scale": 1.0,
        **image_counts(valid),
        "projections": spectrum_summary(arrays, valid, num_blocks, seed),
        "binomial_null": binomial_null(num_blocks),
        "published": published_numbers("experiment_2"),
        "roundoff": floor_check(arrays, valid, num_blocks),
        "input_dependence": input_dependence(arrays, valid),
        "kappa_scalar_minus_vector": paired_kappa_difference(arrays, valid, seed),
    }
    summary["verdicts"] = verdicts(summary)
    return summary
