"""Experiment 5's part of an all-mask pass: the thresholds (``--tau``/``--eta`` and extras: its step's flags,
experiment_5.step_1_evaluate), per-batch
difficulty scores and complexity measures (:mod:`experiment_5.evaluation`) → per_image.pt."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.files import atomic_torch_save
from experiment_1.run import (
    MOBIUS_DTYPES,
    BatchFunction,
    EvaluationSetup,
    ExperimentPass,
    distributed,
    provenance,
    write_timing,
)
from experiment_5.evaluation import (
    batch_arrays,
    check_labelled,
    per_image_record,
    sample_pool,
    thresholds,
)

STAGE = "experiment_5.step_1_evaluate/all_masks"


def prepare(setup: EvaluationSetup) -> dict[str, Any]:
    """Thresholds checked and labels required; the thresholds enter the configuration (the resume key:
    other thresholds never mix with these batches)."""
    config = setup.config
    taus, etas = thresholds(config.tau, config.extra_taus), thresholds(config.eta, config.extra_etas)
    check_labelled(setup)
    sample_pool(setup)  # before evaluating: a pattern that matches no shard fails now, not after the last batch
    return {"taus": taus, "etas": etas}


def batch_function(setup: EvaluationSetup) -> BatchFunction:
    """:func:`experiment_5.evaluation.batch_arrays` with the run's thresholds and Möbius dtype."""
    return partial(
        batch_arrays,
        taus=setup.config["taus"],
        etas=setup.config["etas"],
        dtype=MOBIUS_DTYPES[setup.config.mobius_dtype],
        sample_index=str(setup.config.sample_index),
    )


def finish(setup: EvaluationSetup, arrays: dict[str, np.ndarray], timing: dict[str, Any]) -> None:
    """Write per_image.pt and timing (rank 0); one line on stdout."""
    if not distributed.is_main():  # under torchrun, rank 0 writes
        return
    config = provenance(setup)
    record = per_image_record(setup, arrays, config, sample_pool(setup))
    path = Path(setup.config.output_dir) / "per_image.pt"
    atomic_torch_save(record, path)
    write_timing(setup, timing, config["device_name"])
    valid = arrays["valid"].astype(bool)
    taus = setup.config["taus"]
    print(
        f"wrote {path}: {record['num_valid']} images, top-1 {arrays['correct'][valid].mean():.1%}, "
        f"mean K_τ^err (τ = {taus[0]:g}) {arrays['k_err'][valid, 0].mean():.3g}, mean N_eff^v {np.nanmean(arrays['n_eff_vector'][valid]):.3g}"
    )


EXPERIMENT_5 = ExperimentPass(5, STAGE, "Exp 5 difficulty/complexity", batch_function, finish, prepare)
