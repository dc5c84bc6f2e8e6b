"""Experiment 3's part of an all-mask pass: the K grid and controls (``--ks``, ``--num-random-seeds``: its step's
flags, experiment_3.step_1_evaluate),
per-batch top-K arrays (:mod:`experiment_3.evaluation`) → summary.json, per_image.npz."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from experiment_1.run import (
    MOBIUS_DTYPES,
    BatchFunction,
    EvaluationSetup,
    ExperimentPass,
    provenance,
    write_results,
)
from experiment_3.evaluation import ERROR_THRESHOLDS, MASS_FRACTIONS, batch_arrays, check_ks
from experiment_3.summary import summarize

STAGE = "experiment_3.step_1_evaluate/all_masks"


def prepare(setup: EvaluationSetup) -> dict[str, Any]:
    """The K grid, the controls' draws and the thresholds: options of the configuration (the resume key)."""
    return {
        "ks": check_ks(setup.config.ks, setup.model.num_blocks),
        "num_random_seeds": setup.config.num_random_seeds,
        "mass_fractions": list(MASS_FRACTIONS),
        "error_thresholds": list(ERROR_THRESHOLDS),
    }


def batch_function(setup: EvaluationSetup) -> BatchFunction:
    """:func:`experiment_3.evaluation.batch_arrays` with the run's configuration and Möbius dtype."""
    return partial(batch_arrays, config=setup.config, dtype=MOBIUS_DTYPES[setup.config.mobius_dtype])


def finish(setup: EvaluationSetup, arrays: dict[str, np.ndarray], timing: dict[str, Any]) -> None:
    """Write the Experiment 3 summary, per-image arrays and timing; one line on stdout."""
    summary = summarize(arrays, provenance(setup), setup.config.seed)
    path = write_results(setup, arrays, summary, timing)
    grid = summary["sources"]["magnitude_vector"]["grid_k_reaching"]
    print(
        f"wrote {path}: vector ranking — mean Γ_K ≥ 90 % from K = {grid['captured_energy_0.9']}, "
        f"top-1 agreement ≥ 90 % from K = {grid['top1_agreement_0.9']} (of {summary['num_masks']} subsets)"
    )


EXPERIMENT_3 = ExperimentPass(3, STAGE, "Exp 3 top-K", batch_function, finish, prepare, pass_indices=True)
