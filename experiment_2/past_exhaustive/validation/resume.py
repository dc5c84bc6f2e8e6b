"""Each set function's replicated cells (an exhaustive table of step 11, a synthetic function of step 15), kept per
estimator under a content key so that a rerun reads what it holds; and the replications of many functions in one or
more processes (:func:`replicate_all`).

The key (:func:`replication_key`) is the function's content digest (a table's float64 bytes and shape; a synthetic
function's numbers and kind) and the source of its module, the estimator's budgets with their places in
the run's budget list (a budget's place seeds its replications), the replication count, seed and coverage band, the
store's format,
and the source of the code that computes that estimator's cells (:data:`SOURCES`): the sub-cubes
(:mod:`experiment_2.past_exhaustive.sampling.subcubes` and its bootstrap-t :mod:`experiment_2.past_exhaustive.sampling.bootstrap`), the Walsh
summaries (:mod:`experiment_2.past_exhaustive.sampling.walsh`, the same bootstrap and the pair statistics' variance
:mod:`experiment_2.past_exhaustive.sampling.u_statistics`), and for both the replications and rule
(:mod:`experiment_2.past_exhaustive.validation.replications`). So an edit to the sub-cubes recomputes the sub-cube cells of every
table and leaves the Walsh cells (the larger part of the cost) in the store, and an edit anywhere else (the step
script, its report, the calibration over tables) recomputes nothing. Each entry keeps the seconds its cells took, so a
resumed run still reports what the replications cost.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from experiment_1.files import atomic_write_json, read_json_if_exists
from experiment_2.past_exhaustive.sampling import bootstrap, subcubes, u_statistics, walsh
from experiment_2.past_exhaustive.validation import replications

STORE_FORMAT = "cells and seconds per table and estimator, 3"  # the layout of one entry; part of the key
SOURCES = {  # per estimator, the modules whose source is part of its cells' key
    "subcubes": (subcubes, bootstrap, replications),
    "walsh": (walsh, bootstrap, u_statistics, replications),
}


def replication_key(
    function: replications.SetFunction,
    budget_list: list[dict[str, Any]],
    count: int,
    seed: int,
    estimator: str,
    band: tuple[float, float] = replications.COVERAGE_BAND,
) -> str:
    """The content key of one function's cells of ``estimator`` judged with the coverage ``band`` (module docstring);
    ``budget_list`` is the run's whole list, of which the key reads the estimator's budgets and their places."""
    digest = hashlib.sha256(function.digest().encode())
    placed = [[number, budget] for number, budget in enumerate(budget_list) if budget["estimator"] == estimator]
    setting = {"budgets": placed, "replications": count, "seed": seed, "band": list(band)}
    digest.update(json.dumps({**setting, "estimator": estimator, "format": STORE_FORMAT}, sort_keys=True).encode())
    for module in SOURCES[estimator]:
        digest.update(Path(module.__file__).read_bytes())
    digest.update(Path(inspect.getfile(type(function))).read_bytes())
    return digest.hexdigest()


def replicate_or_resume(
    store: Path,
    function: replications.SetFunction,
    budget_list: list[dict[str, Any]],
    count: int,
    seed: int,
    band: tuple[float, float] = replications.COVERAGE_BAND,
) -> tuple[list[dict[str, Any]], float]:
    """:func:`experiment_2.past_exhaustive.validation.replications.replicate_table` of one function and the seconds it
    took, each estimator's cells kept in ``store`` under its :func:`replication_key`: a rerun (or a
    run stopped part way) reads what it already holds, with the seconds it took when it was computed, instead of
    replicating it again. The cells come in the order of their budgets in ``budget_list``, as one call of
    ``replicate_table`` gives them."""
    cells, seconds = [], 0.0
    for estimator in dict.fromkeys(budget["estimator"] for budget in budget_list):
        path = store / f"{replication_key(function, budget_list, count, seed, estimator, band)}.json"
        entry = read_json_if_exists(path)
        if entry is None:
            started = time.perf_counter()
            computed = replications.replicate_table(function, budget_list, count, seed, estimator, band)
            entry = {"cells": computed, "seconds": time.perf_counter() - started}
            atomic_write_json(path, entry)
        cells += entry["cells"]
        seconds += float(entry["seconds"])
    place = {budget["name"]: number for number, budget in enumerate(budget_list)}
    return sorted(cells, key=lambda cell: place[cell["budget"]]), seconds


def _one_thread() -> None:
    """A replication worker's start: one torch thread (the workers already divide the cores)."""
    torch.set_num_threads(1)


def replicate_all(store: Path, jobs: list[tuple], workers: int) -> list[tuple[list[dict[str, Any]], float]]:
    """:func:`replicate_or_resume` of every job (its arguments after ``store``), in order, in ``workers`` processes.
    The functions are independent and seeded by their coordinates, so any count gives the same cells."""
    if workers > 1:
        # spawn, not fork: a child forked from a parent whose torch / OpenMP threads have run can hang at its first
        # parallel region (seen here: one worker stuck from its start, the other then waiting on the shared queue)
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(workers, mp_context=context, initializer=_one_thread) as pool:
            results = pool.map(replicate_or_resume, *zip(*[(store, *job) for job in jobs]))
            return list(tqdm(results, total=len(jobs), desc="replicated functions"))
    return [replicate_or_resume(store, *job) for job in tqdm(jobs, desc="replicated functions")]
