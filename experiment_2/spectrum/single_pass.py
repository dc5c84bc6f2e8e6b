"""Experiment 2's part of an all-mask pass: per-batch spectrum arrays → summary.json, per_image.npz."""
from __future__ import annotations

from typing import Any

import numpy as np

from experiment_1.run import EvaluationSetup, provenance, write_results
from experiment_1.run import ExperimentPass
from experiment_2.spectrum.evaluation import SPECTRUM_STAGE, spectrum_batch_function
from experiment_2.spectrum.summary import summarize


def finish(setup: EvaluationSetup, arrays: dict[str, np.ndarray], timing: dict[str, Any]) -> None:
    """Write the Experiment 2 summary, per-image arrays and timing; one line on stdout."""
    summary = summarize(arrays, provenance(setup), setup.config.seed)
    path = write_results(setup, arrays, summary, timing)
    vector = summary["projections"]["vector"]
    print(f"wrote {path}: κ^v {vector['kappa']['mean']:.3g}, peak order {vector['mean_spectrum_peak_order']} (binomial null κ {summary['binomial_null']['kappa']:.3g})")


EXPERIMENT_2 = ExperimentPass(2, SPECTRUM_STAGE, "Exp 2 spectrum", spectrum_batch_function, finish)
