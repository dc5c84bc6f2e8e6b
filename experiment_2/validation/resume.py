"""Each exhaustive table's replicated cells, kept under a content key so that a rerun reads what it holds.

The key (:func:`replication_key`) is the table's float64 bytes and shape, the budgets, the replication count and
seed, the store's format, and the source of the code that computes the cells — the estimators
(:mod:`experiment_2.sampling.walsh`, :mod:`experiment_2.sampling.subcubes`, their bootstrap-t
:mod:`experiment_2.sampling.bootstrap`, the pair statistics' variance :mod:`experiment_2.sampling.u_statistics`) and the replications and rule
(:mod:`experiment_2.validation.replications`) — so an edit there recomputes every table, and an edit anywhere else
(the step script, its report) does not. Each entry keeps the seconds its table's replications took, so a resumed
run still reports what the replications cost.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.files import atomic_write_json, read_json_if_exists
from experiment_2.sampling import bootstrap, subcubes, u_statistics, walsh
from experiment_2.validation import replications

STORE_FORMAT = "cells and seconds per table, 2"  # the layout of one entry; part of the key
SOURCES = (walsh, subcubes, bootstrap, u_statistics, replications)  # the modules whose source is part of the key


def replication_key(table: np.ndarray, budget_list: list[dict[str, Any]], count: int, seed: int) -> str:
    """The content key of one table's replications (module docstring)."""
    digest = hashlib.sha256(np.ascontiguousarray(table, dtype="<f8").tobytes())
    setting = {"shape": list(table.shape), "budgets": budget_list, "replications": count, "seed": seed}
    digest.update(json.dumps({**setting, "format": STORE_FORMAT}, sort_keys=True).encode())
    for module in SOURCES:
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()


def replicate_or_resume(
    store: Path, table: np.ndarray, budget_list: list[dict[str, Any]], count: int, seed: int
) -> tuple[list[dict[str, Any]], float]:
    """:func:`experiment_2.validation.replications.replicate_table` of one table and the seconds it took, kept in
    ``store`` under its :func:`replication_key`: a rerun (or a run stopped part way) reads the tables it already holds,
    with the seconds they took when they were computed, instead of replicating them again."""
    path = store / f"{replication_key(table, budget_list, count, seed)}.json"
    entry = read_json_if_exists(path)
    if entry is None:
        started = time.perf_counter()
        cells = replications.replicate_table(table, budget_list, count, seed)
        entry = {"cells": cells, "seconds": time.perf_counter() - started}
        atomic_write_json(path, entry)
    return entry["cells"], float(entry["seconds"])
