"""Wall time of a run across all its processes: each pass's record, kept beside its partial batches.

An interrupted-and-resumed run is evaluated by several processes. Each all-mask pass (one call of
:func:`experiment_1.run.loop.run_stages`, on each rank under ``torchrun``) rewrites one small
record after every finished batch — ``<store>/processes/<pass>-r<rank>.json`` with the host, rank,
start time, the git commit of the code it runs (:func:`experiment_1.files.git_commit`, read when the pass starts),
wall seconds and images evaluated so far — into the partial store of every stage it
feeds, so a killed process's time is kept up to its last batch. :func:`accumulated` sums a folder's
records into ``timing.json``: the wall time of a pass is its slowest rank's, and a pass shared by
several experiments (``paper.single_pass``) carries the same ``pass`` id in each of their folders,
so a table over folders counts it once (:func:`unique_passes`). :func:`evaluating_commits` names the commits of
the processes that evaluated images — several when a run was resumed across commits — which a summary's
``config.git_commit`` (the commit of the call that wrote it, possibly evaluating nothing) is not.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from experiment_1.errors import PipelineError
from experiment_1.files import atomic_write_json, check_timing_record, git_commit, read_json

FOLDER = "processes"
NOT_RECORDED = "not recorded"
"""The evaluating commit of a process record (or a timing.json) written before processes recorded theirs."""


def new_pass_id() -> str:
    """A fresh identity for one pass (host, process id and a random part; shared by a torchrun job's ranks)."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:12]}"


class PassLog:
    """This rank's record of one pass, rewritten into each given store directory after every batch."""

    def __init__(self, pass_id: str, rank: int) -> None:
        self.started = time.perf_counter()
        self.record: dict[str, Any] = {
            "pass": pass_id,
            "rank": rank,
            "host": socket.gethostname(),
            "started_utc": datetime.now(timezone.utc).isoformat(timespec="microseconds"),
            "git_commit": git_commit(),  # the code this process evaluates with
            "wall_seconds": 0.0,
            "images_evaluated": 0,
        }

    def finished_batch(self, images: int, directories: list[Path]) -> None:
        """Count ``images`` more and rewrite the record (atomically) in every directory."""
        self.record.update(
            wall_seconds=time.perf_counter() - self.started, images_evaluated=self.record["images_evaluated"] + images
        )
        for directory in directories:
            atomic_write_json(
                Path(directory) / FOLDER / f"{self.record['pass']}-r{self.record['rank']}.json", self.record
            )


def records(output_dir: Path) -> list[dict[str, Any]]:
    """Every pass record under ``<output_dir>/partial`` (each (pass, rank) once), oldest first."""
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for path in sorted(Path(output_dir).glob(f"partial/**/{FOLDER}/*.json")):
        record = read_json(path, fix="delete it (it only records timing)")
        check_timing_record(record, path)
        if (
            not all(isinstance(record.get(key), str) for key in ("pass", "host", "started_utc"))
            or type(record.get("rank")) is not int
        ):
            raise PipelineError(
                f"{path}: lacks its pass id, host, start time or rank; delete it (it only records timing)"
            )
        found.setdefault((record["pass"], record["rank"]), record)
    return sorted(found.values(), key=lambda record: (record["started_utc"], record["pass"], record["rank"]))


def unique_passes(all_records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per pass id: wall seconds (its slowest rank), images (all ranks), hosts and ranks — each pass once."""
    passes: dict[str, dict[str, Any]] = {}
    seen: set[tuple[str, int]] = set()
    for record in all_records:
        if (record["pass"], record["rank"]) in seen:
            continue
        seen.add((record["pass"], record["rank"]))
        entry = passes.setdefault(record["pass"], {"wall_seconds": 0.0, "images_evaluated": 0, "hosts": [], "ranks": 0})
        entry["wall_seconds"] = max(entry["wall_seconds"], record["wall_seconds"])
        entry["images_evaluated"] += record["images_evaluated"]
        entry["ranks"] += 1
        if record["host"] not in entry["hosts"]:
            entry["hosts"].append(record["host"])
    return passes


def evaluating_commits(timing: dict[str, Any] | None) -> list[str]:
    """The commits of the processes that evaluated images (a timing.json's ``processes``), oldest first, each once;
    :data:`NOT_RECORDED` for a record written before processes recorded their commit, and ``[NOT_RECORDED]`` for no
    timing or a timing.json without process records."""
    found = [
        str(record.get("git_commit", NOT_RECORDED))
        for record in (timing or {}).get("processes", [])
        if record.get("images_evaluated", 0) > 0
    ]
    return list(dict.fromkeys(found)) or [NOT_RECORDED]


def accumulated(output_dir: Path) -> dict[str, Any] | None:
    """The folder's total over every pass and process (``wall_seconds``, ``images_evaluated``, ``passes``,
    ``processes``: the records, ``evaluating_commits``: their commits), or None when no pass has recorded a batch there."""
    found = records(output_dir)
    if not found:
        return None
    passes = unique_passes(found)
    return {
        "wall_seconds": sum(entry["wall_seconds"] for entry in passes.values()),
        "images_evaluated": sum(entry["images_evaluated"] for entry in passes.values()),
        "passes": len(passes),
        "processes": found,
        "evaluating_commits": evaluating_commits({"processes": found}),
    }
