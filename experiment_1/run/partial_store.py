"""The resume state of an evaluation stage: finished batches, keyed by the content they came from.

Layout: ``<output-dir>/partial/<step>/<part>/`` holds ``run_config.json`` (the *run key*) and one
``batch_NNNNNN.pt`` per finished batch. A stage name is ``"<step>/<part>"`` with ``<step>`` the
module that evaluates (``experiment_1.step_3_evaluate/all_masks``,
``experiment_2.step_3_lambda_sweep/lambda_0.5``), so two steps never share a stage, and an output
directory whose ``partial/`` holds another step's stages is refused.

The run key is the run configuration without its pure path fields, plus what the numbers depend
on but a path does not show: a sha256 over the sample-list entries in use (after ``--limit``), the
identity of every source those entries read (parquet shard: size, row count and a sha256 of its
footer, which holds the row-group offsets and statistics; image file: size and sha256), and a
sha256 of a weights file. A store whose key differs — or that was written before keys held content —
is refused with one line naming what changed.

One run per store: a run holds an exclusive lock (``fcntl.flock`` on ``partial/run.lock``, which
names the holder) for the life of its process, so a second run into the same folder refuses with
one line naming the first; the key file is created atomically (written aside, then hard-linked into
place, which fails if another run created it first) and compared on every open; every batch file
carries its store's id (the sha256 of the key) and a batch of another store is refused. Batches
written before they carried the id are accepted where the store's key matches.

One run per folder: every step that writes a summary claims its folder first (:func:`claim_output`, which takes the
lock): a folder where another run's summary, or a REPORT.md without a summary of this run, stands is refused with one
line naming it — its own resumed run (the same ``config.run_id``) and the files derived from it excepted.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import torch

from experiment_1.data.shards import SampleRef
from experiment_1.errors import PipelineError
from experiment_1.files import atomic_torch_save, atomic_write_json, ensure_dir, file_sha256, read_json

KEY_FILE = "run_config.json"
LOCK_FILE = "run.lock"  # under <output-dir>/partial/, so committed results folders stay clean
STORE_ID = "store_id"  # the entry of a batch file naming the store (sha256 of its key) that wrote it
KEY_FORMAT = 2  # 1 (never written as such): run configuration with the sample-list path only
PATH_FIELDS = ("sample_index",)  # where the inputs came from; their content is in the key instead
STALE_TMP_SECONDS = 120  # a *.tmp file untouched this long belongs to a killed write (live ones take milliseconds)
PARQUET_TAIL = 8  # 4-byte footer length + b"PAR1"


def sample_list_sha256(samples: list[SampleRef]) -> str:
    """sha256 over the (source, row, label) entries, in order."""
    entries = [[sample.source, sample.row, sample.label] for sample in samples]
    return hashlib.sha256(json.dumps(entries, separators=(",", ":")).encode()).hexdigest()


def source_identity(path: Path) -> dict[str, Any]:
    """Size plus row count and footer sha256 of a parquet shard, or the sha256 of an image file."""
    size = path.stat().st_size
    if path.suffix != ".parquet":
        return {"size": size, "sha256": file_sha256(path)}
    with open(path, "rb") as stream:
        stream.seek(max(size - PARQUET_TAIL, 0))
        tail = stream.read(PARQUET_TAIL)
        footer_length = int.from_bytes(tail[:4], "little")
        stream.seek(max(size - PARQUET_TAIL - footer_length, 0))
        footer = stream.read(footer_length + PARQUET_TAIL)
    return {
        "size": size,
        "rows": pq.ParquetFile(path).metadata.num_rows,
        "footer_sha256": hashlib.sha256(footer).hexdigest(),
    }


def run_key(config: dict[str, Any], data_dir: Path, samples: list[SampleRef]) -> dict[str, Any]:
    """The content key of a run: ``config`` without path fields, the sample entries' and sources' identity."""
    key = {name: value for name, value in config.items() if name not in PATH_FIELDS}
    weights = Path(str(config.get("weights", "")))
    if weights.is_file():
        key["weights"] = f"sha256:{file_sha256(weights)}"
    key["key_format"] = KEY_FORMAT
    key["samples_sha256"] = sample_list_sha256(samples)
    key["sources"] = {
        source: source_identity(Path(data_dir) / source) for source in sorted({sample.source for sample in samples})
    }
    return key


def device_identity(device: torch.device) -> dict[str, Any]:
    """What a CUDA run's numbers depend on beyond its flags — the GPU model, the torch, CUDA and cuDNN
    versions (cuDNN picks its kernels by them) and cuBLAS's reduced-precision reductions — as ``{"cuda_device": {...}}`` for the run key; ``{}`` on
    CPU, so CPU keys stay as they were. A resume on another GPU or software stack, or ranks on mixed nodes,
    are then refused instead of mixing batches."""
    if device.type != "cuda":
        return {}
    major, minor = torch.cuda.get_device_capability(device)
    return {
        "cuda_device": {
            "name": torch.cuda.get_device_name(device),
            "capability": f"{major}.{minor}",
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(),
            # cuBLAS may reduce bf16/fp16 matmuls in that precision (torch's default): other bits for --dtype bfloat16/float16
            "reduced_precision_reduction": {
                "bfloat16": bool(torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction),
                "float16": bool(torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction),
            },
        }
    }


def describe_changes(previous: dict[str, Any], current: dict[str, Any]) -> str:
    """What differs between two run keys, in words (the sources named one by one)."""
    changes = []
    for name in sorted(set(previous) | set(current)):
        if name == "sources" or previous.get(name) == current.get(name):
            continue
        changes.append("the sample-list entries in use" if name == "samples_sha256" else name)
    old_sources, new_sources = previous.get("sources", {}), current.get("sources", {})
    for source in sorted(set(old_sources) | set(new_sources)):
        if source not in old_sources or source not in new_sources:
            changes.append(f"source {source} {'added' if source in new_sources else 'no longer read'}")
        elif old_sources[source] != new_sources[source]:
            fields = sorted(
                field for field in new_sources[source] if old_sources[source].get(field) != new_sources[source][field]
            )
            changes.append(f"source {source} ({', '.join(fields)})")
    return ", ".join(changes)


def remove_stale_temporaries(folder: Path, max_age: float = STALE_TMP_SECONDS) -> list[Path]:
    """Delete ``.*.tmp`` files of killed atomic writes (untouched for ``max_age`` s); return them."""
    removed = []
    now = time.time()
    for path in Path(folder).glob(".*.tmp"):
        try:
            if now - path.stat().st_mtime > max_age:
                path.unlink()
                removed.append(path)
        except FileNotFoundError:  # finished (renamed) or removed by a concurrent rank meanwhile
            continue
    return removed


_HELD_LOCKS: dict[str, Any] = {}  # output folder → open lock file, held until this process exits


def lock_output_dir(output_dir: Path) -> None:
    """Hold the exclusive lock of ``output_dir`` for the rest of this process (once per folder);
    a :class:`PipelineError` naming the holder when another process holds it."""
    folder = Path(output_dir) / "partial"
    ensure_dir(folder)
    name = str(folder.resolve())
    if name in _HELD_LOCKS:
        return
    stream = open(folder / LOCK_FILE, "a+", encoding="utf-8")
    try:
        fcntl.flock(stream.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        stream.seek(0)
        holder = stream.read().strip() or "another process"
        stream.close()
        raise PipelineError(
            f"{output_dir}: another run is writing into this folder ({holder}); wait for it to finish, or use another --output-dir"
        ) from None
    stream.seek(0)
    stream.truncate()
    stream.write(
        f"pid {os.getpid()} on {socket.gethostname()} since {time.strftime('%Y-%m-%d %H:%M:%S')}: {' '.join(sys.argv)[:300]}\n"
    )
    stream.flush()
    _HELD_LOCKS[name] = stream


def claim_output(output_dir: Path, summary: dict[str, Any], summary_name: str = "summary.json") -> None:
    """Claim ``output_dir`` for the run of ``summary`` (written there as ``summary_name``): take its lock
    (:func:`lock_output_dir`), then refuse it where a summary of another run stands (another ``config.run_id``, or the
    same name for another experiment; a summary without a run id unless it is this step's own file, written before
    summaries carried one, which a rerun rebuilds) or a REPORT.md stands beside no summary of this run; one line naming
    the folder and the file. An output folder belongs to one run: no step replaces another run's results."""
    folder = Path(output_dir)
    lock_output_dir(folder)
    run_id = summary["config"]["run_id"]
    ours = False
    for path in sorted({*folder.glob("summary*.json"), *folder.glob(summary_name)}):  # a step may name its own file
        other = read_json(path, fix=f"delete it, or use another output folder than {folder}")
        config = other.get("config") if isinstance(other, dict) else None
        found = config.get("run_id") if isinstance(config, dict) else None
        same_name_other_step = path.name == summary_name and other.get("experiment") != summary["experiment"]
        older_write = found is None and path.name == summary_name and not same_name_other_step  # before run ids
        if (found != run_id and not older_write) or same_name_other_step:
            whose = f"run {str(found)[:12]}" if found else "a run without its run id"
            raise PipelineError(
                f"{folder}: holds the results of another {'step' if same_name_other_step else 'run'} ({path.name}, "
                f"experiment {other.get('experiment')!r}, {whose}); use another output folder, or delete that folder's "
                "results to replace them"
            )
        ours = True
    if (folder / "REPORT.md").exists() and not ours:
        raise PipelineError(
            f"{folder}: holds a REPORT.md of another run (no summary of this run beside it); use another output folder, "
            "or delete that REPORT.md to replace it"
        )


def create_json_once(path: Path, data: Any) -> bool:
    """Create ``path`` holding ``data`` atomically unless it exists (then leave it); True if this call created it."""
    if path.exists():  # the common case (a resumed store): nothing to write
        return False
    temporary = path.with_name(f".{path.name}.{os.getpid()}.new.tmp")
    atomic_write_json(temporary, data)
    try:
        os.link(temporary, path)
        return True
    except FileExistsError:
        return False
    finally:
        temporary.unlink(missing_ok=True)


def key_id(key: dict[str, Any]) -> str:
    """The sha256 of a store's key (canonical JSON): the id every batch file of the store carries."""
    return hashlib.sha256(json.dumps(key, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class PartialStore:
    """One stage's finished batches under ``<output_dir>/partial/<stage>``, checked against a run key."""

    def __init__(self, output_dir: Path, stage: str, key: dict[str, Any]) -> None:
        self.output_dir = Path(output_dir)
        self.stage = stage
        self.step = stage.split("/")[0]
        self.directory = self.output_dir / "partial" / stage
        self.key = {**key, "stage": stage}
        self.id = key_id(self.key)

    def open(self) -> None:
        """Lock the folder; refuse another step's folder or a different run; record the key; clear stale temporaries."""
        lock_output_dir(self.output_dir)
        self._refuse_other_steps()
        ensure_dir(self.directory)
        path = self.directory / KEY_FILE
        fix = f"delete {self.directory} to recompute this stage"
        if not create_json_once(path, self.key):
            previous = read_json(path, fix=fix)
            if not isinstance(previous, dict) or "key_format" not in previous:
                raise PipelineError(
                    f"{self.directory}: partial results written by an older version that did not record their inputs' "
                    f"content; use another --output-dir, or delete that folder to start over"
                )
            if previous != self.key:
                raise PipelineError(
                    f"{self.directory}: holds partial results of a different run (changed: "
                    f"{describe_changes(previous, self.key)}); use another --output-dir, or delete that folder to start "
                    f"over"
                )
        remove_stale_temporaries(self.directory)
        remove_stale_temporaries(self.output_dir)

    def _refuse_other_steps(self) -> None:
        partial = self.output_dir / "partial"
        others = (
            sorted(path for path in partial.iterdir() if path.is_dir() and path.name != self.step)
            if partial.is_dir()
            else []
        )
        for other in others:
            if (other / KEY_FILE).exists():  # the layout before stages were named by step
                raise PipelineError(
                    f"{other}: partial results written by an older version that did not record their inputs' content; "
                    f"use another --output-dir, or delete that folder to start over"
                )
        if others:
            raise PipelineError(
                f"{self.output_dir}: holds results of another step ({others[0].name}), not of {self.step}; use another --output-dir"
            )

    def path(self, number: int) -> Path:
        return self.directory / f"batch_{number:06d}.pt"

    def finished(self, number: int) -> bool:
        return self.path(number).exists()

    def save(self, number: int, arrays: dict[str, torch.Tensor]) -> None:
        atomic_torch_save({**arrays, STORE_ID: self.id}, self.path(number))

    def load(self, number: int, indices: list[int]) -> dict[str, torch.Tensor]:
        """A finished batch, checked to hold the sample positions ``indices``; one-line error if damaged."""
        path = self.path(number)
        fix = "delete it to recompute that batch (rerun the same command)"
        try:
            arrays = torch.load(
                path, weights_only=True, map_location="cpu"
            )  # stored from .cpu() tensors; a guard all the same
        except Exception as error:  # truncated, empty or foreign files raise many types
            raise PipelineError(f"{path}: damaged partial batch file ({type(error).__name__}); {fix}") from None
        if not isinstance(arrays, dict) or "index" not in arrays or arrays["index"].tolist() != indices:
            raise PipelineError(
                f"{path}: does not hold batch {number} of this run (images {indices[0]}–{indices[-1]}); {fix}"
            )
        written_by = arrays.pop(STORE_ID, None)
        if written_by is None:  # a batch without its identity could be any run's: never trusted on its counts alone
            raise PipelineError(f"{path}: names no store id, so it cannot be shown to be this run's batch; {fix}")
        if written_by != self.id:
            raise PipelineError(
                f"{path}: a batch file of another run (its store id {str(written_by)[:12]}…, this store's {self.id[:12]}…); {fix}"
            )
        return arrays
