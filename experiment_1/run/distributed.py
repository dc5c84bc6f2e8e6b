"""Sharding the shared batch loop over ``torchrun`` ranks (one process per GPU, any number of nodes).

Under ``torchrun`` (``RANK``, ``WORLD_SIZE`` and ``LOCAL_RANK`` in the environment), :func:`start`
joins the process group — nccl when this rank runs on ``cuda:LOCAL_RANK``, gloo on CPU — and
silences ``stdout`` on every rank but 0. The batch loop (:func:`experiment_1.run.loop.run_per_image`)
then lets rank 0 check the stored run configuration and list the pending batches
(:func:`on_main`), evaluates this rank's :func:`share` of them into the per-batch partial store,
waits for every rank (:meth:`JobProgress.close`, a barrier) and merges the store in sample-list
order — so the merged arrays, and the summary, do not depend on the world size. Only rank 0 writes
results (:func:`is_main`); :func:`job_timing` gathers every rank's wall time to it.

Errors every rank detects alike (:func:`fail`: more ranks than batches, flags that differ between
ranks, a stored configuration that differs; :func:`alike`: a model that cannot be built) end rank 0
with one ``error: …`` line and the other ranks quietly; an error of one rank (no GPU for its ``LOCAL_RANK``, a corrupt image in its share)
is printed by that rank, and ``torchrun`` then stops the others.

Without ``torchrun`` every function here is the single-process identity (rank 0 of 1).

Wall time of a run across all its processes: each pass's record, kept beside its partial batches.

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

import atexit
import inspect
import os
import socket
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Mapping, NoReturn, TypeVar

import torch
import torch.distributed as dist
from tqdm import tqdm

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


ENVIRONMENT = ("RANK", "WORLD_SIZE", "LOCAL_RANK")
# A rank that finished its share waits at the barrier for the slowest one; with equal shares that is
# about one batch, but slow nodes can lag much longer. A crashed rank is torn down by torchrun, so a
# generous limit costs nothing.
BARRIER_TIMEOUT = timedelta(hours=12)
POLL_SECONDS = 0.2
# Seconds rank 0 waits for other nodes' batch files to appear on a network file system.
STORE_GRACE_SECONDS = 60.0

T = TypeVar("T")


@dataclass(frozen=True)
class Rank:
    """This process's place in the job; the default is a single process."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    launched: bool = False

    @property
    def is_main(self) -> bool:
        return self.rank == 0


_current = Rank()


def rank_from_environment(environ: Mapping[str, str]) -> Rank:
    """The rank ``torchrun`` set in ``environ``; a single process when none of its variables is set."""
    present = [name for name in ENVIRONMENT if name in environ]
    if not present:
        return Rank()
    if len(present) < len(ENVIRONMENT):
        missing = ", ".join(name for name in ENVIRONMENT if name not in environ)
        raise PipelineError(
            f"the environment sets {', '.join(present)} but not {missing}; launch with torchrun, or unset them for a single process"
        )
    try:
        rank, world_size, local_rank = (int(environ[name]) for name in ENVIRONMENT)
    except ValueError:
        values = " ".join(f"{name}={environ[name]}" for name in ENVIRONMENT)
        raise PipelineError(f"{values}: torchrun's rank variables must be integers") from None
    if not 0 <= rank < world_size or local_rank < 0:
        raise PipelineError(
            f"RANK={rank} WORLD_SIZE={world_size} LOCAL_RANK={local_rank}: need 0 ≤ RANK < WORLD_SIZE and LOCAL_RANK ≥ 0"
        )
    return Rank(rank, world_size, local_rank, launched=True)


def rank_device(device: torch.device, rank: Rank, gpu_count: int) -> torch.device:
    """The device of ``rank`` given the resolved ``--device``: ``cuda`` → ``cuda:LOCAL_RANK``, ``cpu`` stays."""
    if device.type != "cuda" or not rank.launched:
        return device
    if device.index is not None:
        raise PipelineError(
            f"--device {device} under torchrun: every rank would share one GPU; use --device cuda or auto (rank k runs on cuda:LOCAL_RANK)"
        )
    if rank.local_rank >= gpu_count:
        raise PipelineError(
            f"rank {rank.rank} (LOCAL_RANK {rank.local_rank}) asks for cuda:{rank.local_rank} but this node has {gpu_count} GPU(s); "
            f"launch at most --nproc-per-node {gpu_count}, or use --device cpu"
        )
    return torch.device("cuda", rank.local_rank)


def device_id_argument(init: Callable[..., Any], device: torch.device) -> dict[str, torch.device]:
    """``{"device_id": device}`` where ``init`` (``init_process_group``) takes that keyword (torch ≥ 2.3), else ``{}``
    (older torch binds the rank's GPU through the ``set_device`` call before it)."""
    try:
        parameters = inspect.signature(init).parameters
    except (TypeError, ValueError):  # a builtin without a signature: do not guess
        return {}
    return {"device_id": device} if "device_id" in parameters else {}


def start(device: torch.device) -> torch.device:
    """Under torchrun: join the process group and return this rank's device; otherwise ``device`` unchanged."""
    global _current
    rank = rank_from_environment(os.environ)
    if not rank.launched:
        return device
    device = rank_device(device, rank, torch.cuda.device_count() if device.type == "cuda" else 0)
    if not dist.is_initialized():
        if device.type == "cuda":
            torch.cuda.set_device(device)
            dist.init_process_group(
                "nccl", timeout=BARRIER_TIMEOUT, **device_id_argument(dist.init_process_group, device)
            )
        else:
            dist.init_process_group("gloo", timeout=BARRIER_TIMEOUT)
        atexit.register(_shutdown)
        if not rank.is_main:
            sys.stdout = open(os.devnull, "w")
    _current = rank
    return device


def _shutdown() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()


def current() -> Rank:
    """This process's rank (a single process unless :func:`start` ran under torchrun)."""
    return _current


def is_main() -> bool:
    """Whether this process writes results: rank 0, or the only process."""
    return _current.is_main


def rank() -> int:
    """This process's rank (0 without torchrun)."""
    return _current.rank


def world_size() -> int:
    """The number of processes of the job (1 without torchrun)."""
    return _current.world_size


def shard(num_batches: int, world_size: int, rank: int) -> range:
    """Positions ``0 … num_batches − 1`` of ``rank``'s share: contiguous, sizes differ by at most one."""
    if world_size < 1 or not 0 <= rank < world_size or num_batches < 0:
        raise ValueError(f"shard({num_batches}, {world_size}, {rank}): need num_batches ≥ 0 and 0 ≤ rank < world_size")
    return range(num_batches * rank // world_size, num_batches * (rank + 1) // world_size)


def share(pending: list[int]) -> list[int]:
    """This rank's part of the pending batch numbers (all of them for a single process)."""
    return [pending[position] for position in shard(len(pending), _current.world_size, _current.rank)]


def fail(message: str) -> NoReturn:
    """End the job for an error every rank detected alike: rank 0 raises it (one line), the others exit quietly."""
    if _current.is_main:
        raise PipelineError(message)
    raise SystemExit(0)


def alike(function: Callable[[], T]) -> T:
    """Run ``function`` on every rank. A :class:`PipelineError` that every rank raises (a bad ``--arch``
    or ``--weights``) ends the job with one line, from rank 0; one raised on some ranks only is
    raised (and printed) by each of them."""
    if not _current.launched:
        return function()
    message, value = None, None
    try:
        value = function()
    except PipelineError as error:
        message = str(error)
    if all(other is not None for other in _all_gather(message)):
        fail(message or "")
    if message is not None:
        raise PipelineError(message)
    return value  # type: ignore[return-value]


def _all_gather(value: Any) -> list[Any]:
    gathered: list[Any] = [None] * _current.world_size
    dist.all_gather_object(gathered, value)
    return gathered


def check_job(num_batches: int, settings: dict[str, Any]) -> None:
    """Refuse more ranks than the job has batches, and ranks launched with different settings."""
    if not _current.launched:
        return
    if _current.world_size > num_batches:
        fail(
            f"{_current.world_size} ranks but the job has only {num_batches} batch(es) of --batch-size; launch at most "
            f"{num_batches} ranks (--nproc-per-node × --nnodes) or lower --batch-size"
        )
    reference, *others = _all_gather(settings)
    for rank, other in enumerate(others, start=1):
        if other != reference:
            changed = sorted(name for name in set(reference) | set(other) if reference.get(name) != other.get(name))
            fail(
                f"rank {rank} was launched with other settings than rank 0 ({', '.join(changed)}); give every rank the same flags"
            )


def on_main(function: Callable[[], T]) -> T:
    """Run ``function`` on rank 0 only and hand its result to every rank; its :class:`PipelineError` ends the job."""
    if not _current.launched:
        return function()
    outcome: list[Any] = [None]
    if _current.is_main:
        try:
            outcome = [(True, function())]
        except PipelineError as error:
            outcome = [(False, str(error))]
    dist.broadcast_object_list(outcome, src=0)
    succeeded, value = outcome[0]
    if not succeeded:
        fail(value)
    return value


class JobProgress:
    """One bar for the whole job, on rank 0 only: images in finished batch files, whichever rank wrote them."""

    def __init__(self, files: list[Path], sizes: list[int], pending: list[int], description: str) -> None:
        self.unfinished = {files[number]: sizes[number] for number in pending}
        total = sum(sizes)
        self.bar = tqdm(
            total=total,
            initial=total - sum(self.unfinished.values()),
            unit="img",
            desc=description,
            dynamic_ncols=True,
            disable=not (pending and _current.is_main),
        )

    def finished(self, path: Path) -> None:
        """This rank wrote ``path``; on rank 0, also count what the other ranks finished meanwhile."""
        self.bar.update(self.unfinished.pop(path))
        if _current.launched and _current.is_main:
            self._count_others()

    def _count_others(self) -> None:
        for path in [path for path in self.unfinished if path.exists()]:
            self.bar.update(self.unfinished.pop(path))

    def close(self) -> None:
        """Wait until every rank has finished its share (a barrier under torchrun), then close the bar."""
        if _current.launched:
            waiting = dist.barrier(async_op=True)
            while _current.is_main and not waiting.is_completed():
                self._count_others()
                time.sleep(POLL_SECONDS)
            waiting.wait()
            if _current.is_main:
                self._count_others()
        self.bar.close()


def job_timing(share_timing: dict[str, float], wall_seconds: float) -> dict[str, Any]:
    """The job's timing from this rank's (``wall_seconds`` includes the wait for the others); a single process's as is."""
    if not _current.launched:
        return share_timing
    per_rank = _all_gather(share_timing)
    return {
        "wall_seconds": wall_seconds,
        "images_evaluated": sum(timing["images_evaluated"] for timing in per_rank),
        "world_size": _current.world_size,
        "per_rank_wall_seconds": [timing["wall_seconds"] for timing in per_rank],
        "per_rank_images_evaluated": [timing["images_evaluated"] for timing in per_rank],
    }


def wait_for_files(files: list[Path]) -> None:
    """After the barrier: every batch file must be visible here (network file systems may lag a little)."""
    if not _current.launched:
        return
    deadline = time.monotonic() + STORE_GRACE_SECONDS
    while missing := [path for path in files if not path.exists()]:
        if time.monotonic() > deadline:
            raise PipelineError(
                f"{missing[0]}: missing although every rank finished ({len(missing)} batch files missing on rank {_current.rank}); "
                "under torchrun --output-dir must be one folder on a file system every node shares"
            )
        time.sleep(POLL_SECONDS)
