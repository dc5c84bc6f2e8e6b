"""Atomic writes, JSON and summary reading, provenance (versions, git commit) shared by every step.

Every read or write failure is a :class:`PipelineError` naming the file and the cause. Result files
prove their run: a summary's ``config`` holds ``run_id`` (sha256 of the run's content key) and
``schema_version`` (:data:`SCHEMA_VERSION`), ``per_image.npz`` holds the same ``run_id`` in
:data:`RUN_ID_ARRAY`; readers refuse another run's file, a summary without its run id, an older schema,
a missing nested key, an impossible image count or a non-finite number with one line.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import math
import os
import platform
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import torch

from experiment_1.errors import PipelineError
from experiment_1.paths import REPO_ROOT, checkout_hint

SCHEMA_VERSION = (
    2  # of summaries, per_image.npz and signatures.pt; 1: written before they carried run_id and schema_version
)
RUN_ID_ARRAY = "run_id"  # the 0-d string array of per_image.npz naming the run that wrote it
# what every REPORT reads (ReportDocument: question, data sentence, seed source), checked by load_summary besides a step's own keys
REPORT_KEYS = (
    "question",
    "config.arch",
    "config.weights",
    "config.num_blocks",
    "config.sample_index",
    "num_valid",
    "num_skipped_corrupt",
    "published.source",
)

_WRITE_HINTS = {
    errno.ENAMETOOLONG: "a file or folder name is longer than the file system allows (255 bytes); choose a shorter name",
    errno.ENOSPC: "the disk is full; free some space and rerun (finished work is kept)",
    errno.EDQUOT: "the disk quota is exhausted; free some space and rerun (finished work is kept)",
    errno.EACCES: "no permission to write there; make it writable or choose another output folder",
    errno.EPERM: "no permission to write there; make it writable or choose another output folder",
    errno.EROFS: "the file system is read-only; choose another output folder",
    errno.ENOTDIR: "a file stands where a folder is needed; choose another output folder",
    errno.EEXIST: "a file stands where a folder is needed; choose another output folder",
}


def write_error(path: Path, error: OSError) -> PipelineError:
    """A one-line error for a failed write: the path, the cause and what to do."""
    cause = error.strerror or str(error) or type(error).__name__
    return PipelineError(f"{path}: cannot write ({cause}); {_WRITE_HINTS.get(error.errno, 'check the path and rerun')}")


def ensure_dir(path: Path) -> None:
    """``mkdir -p``, with a one-line error if a file is in the way or the place is not writable."""
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise write_error(Path(path), error) from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _atomic_replace(path: Path, write: Any, mode: str) -> None:
    path = Path(path)
    ensure_dir(path.parent)
    try:
        handle, temporary = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name[:200]}.", suffix=".tmp"
        )  # the temporary's name must fit where the file's does
    except OSError as error:
        raise write_error(path, error) from None
    try:
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp's 0600 would hide results from a shared group
        with os.fdopen(handle, mode) as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException as error:
        if os.path.exists(temporary):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise write_error(path, error) from None
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and ``os.replace``."""
    _atomic_replace(path, lambda stream: stream.write(text), "w")


def atomic_write_json(path: Path, data: Any) -> None:
    """Write JSON (sorted keys, 2-space indent, trailing newline) atomically."""
    atomic_write_text(path, json_text(data))


def json_text(data: Any) -> str:
    """The text :func:`atomic_write_json` writes: sorted keys, 2-space indent, trailing newline."""
    return json.dumps(data, indent=2, sort_keys=True, allow_nan=True) + "\n"


def write_json_keeping_commit(path: Path, data: dict[str, Any]) -> bool:
    """Write ``data`` as :func:`atomic_write_json` does, unless ``path`` already holds the same text but for
    ``config.git_commit``: a re-decision that changes nothing keeps the commit that first decided it (so re-rendering
    a checkout from another commit, or from an edited tree, leaves the committed file as it is). True when written."""
    config = data.get("config")
    if path.is_file() and isinstance(config, dict):
        text = path.read_text()
        try:
            previous = json.loads(text).get("config", {}).get("git_commit")
        except (ValueError, AttributeError):
            previous = None
        if previous is not None and text == json_text({**data, "config": {**config, "git_commit": previous}}):
            return False
    atomic_write_json(path, data)
    return True


def atomic_torch_save(obj: Any, path: Path) -> None:
    """``torch.save`` atomically. The object is serialised in memory first, so a full disk is the file system's
    error (one line naming the file), never torch's stream-writer error."""
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    _atomic_replace(path, lambda stream: stream.write(buffer.getbuffer()), "wb")


def atomic_save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """``numpy.savez_compressed`` atomically."""
    _atomic_replace(path, lambda stream: np.savez_compressed(stream, **arrays), "wb")


def read_json(path: Path, fix: str = "regenerate it with the step that wrote it") -> Any:
    """Read a JSON file; a one-line error naming the file (and ``fix``) if it is unreadable or damaged."""
    try:
        with open(path) as stream:
            return json.load(stream)
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError
        raise PipelineError(f"{path}: damaged or not JSON ({type(error).__name__}: {error}); {fix}") from None
    except OSError as error:
        raise PipelineError(f"{path}: cannot read ({error.strerror or error}); {fix}") from None


def _numbers(value: Any, where: str) -> Iterator[tuple[str, float]]:
    """Every float in a JSON-like tree, with its dotted key path."""
    if isinstance(value, float):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, (list, tuple)):
        for position, item in enumerate(value):
            yield from _numbers(item, f"{where}[{position}]")


def check_finite(document: Any, name: str, fix: str) -> None:
    """A one-line error naming the first NaN or ±inf number of ``document`` (a summary) and how many there are."""
    bad = [(where, value) for where, value in _numbers(document, "") if not math.isfinite(value)]
    if bad:
        where, value = bad[0]
        raise PipelineError(
            f"{name}: {where} is {value} ({len(bad)} non-finite number(s)); no verdict is drawn from a non-finite number — {fix}"
        )


def missing_key(document: Any, path: str) -> str | None:
    """The first part of the dotted ``path`` that ``document`` lacks (``None`` if it has all of them)."""
    node, walked = document, []
    for part in path.split("."):
        walked.append(part)
        if not isinstance(node, dict) or part not in node:
            return ".".join(walked)
        node = node[part]
    return None


def check_schema(document: dict[str, Any], path: Path, producer_step: str) -> None:
    """Refuse a result file of another schema version (older files lack ``config.schema_version``)."""
    config = document.get("config")
    found = config.get("schema_version", 1) if isinstance(config, dict) else 1
    if found != SCHEMA_VERSION:
        raise PipelineError(
            f"{path}: written with schema version {found}, this code reads version {SCHEMA_VERSION}; rerun `python -m "
            f"{producer_step}` (it resumes from its partial results)"
        )


def check_same_run(path: Path, found: Any, other: Path, expected: Any) -> None:
    """Refuse ``path`` unless it carries the run id ``expected`` of ``other`` (both named in the error)."""
    if found != expected:
        raise PipelineError(
            f"{path}: from run {str(found)[:12]}, but {other} is from run {str(expected)[:12]}; pass files of the same "
            f"run (rerun the step that wrote {path.name})"
        )


def name_from_file(value: Any, what: str, source: Path, flag: str | None = None) -> str:
    """``value`` (a name a results file supplies, e.g. ``config.arch``, or with ``flag`` one given on the command
    line) checked to be one plain file or folder name — no separator, not ``.``/``..``, no control character —
    before it enters a path."""
    text = value if isinstance(value, str) else ""
    if not text or text in (".", "..") or "/" in text or "\\" in text or any(ord(char) < 32 for char in text):
        if flag is not None:
            raise PipelineError(
                f"{flag} {value!r}: {what} must be a plain name (no '/', '\\', '..' or control characters), the name of "
                f"its results folders; pass the network's name, not a path"
            )
        raise PipelineError(
            f"{source}: {what} {value!r} is not a plain name (no '/', '\\', '..' or control characters); a results file "
            f"never supplies a path — pass --output-dir"
        )
    return text


def inside(path: Path, root: Path, what: str = "output") -> Path:
    """``path`` checked to resolve inside ``root`` (symbolic links followed); returns it."""
    resolved, base = Path(path).resolve(), Path(root).resolve()
    if resolved != base and base not in resolved.parents:
        raise PipelineError(
            f"{path}: the {what} path resolves to {resolved}, outside {base}; choose a folder inside it"
        )
    return Path(path)


def check_not_input(output: Path, *inputs: Path) -> None:
    """Refuse an output path that is one of the step's inputs (no step writes over what it reads)."""
    for source in inputs:
        if Path(output).resolve() == Path(source).resolve():
            raise PipelineError(f"{output}: is also this step's input; choose another output path")


MAX_COUNT = 2**53  # image counts beyond this are not exact as floats (and no run has them): refused
COUNT_KEYS = ("num_images", "num_valid", "num_skipped_corrupt")


def check_counts(document: Any, path: Path | str, fix: str) -> None:
    """The run's image counts (``num_images``, ``num_valid``, ``num_skipped_corrupt`` where present) checked to be
    whole numbers in 0 … :data:`MAX_COUNT` with ``num_valid`` ≤ ``num_images``; one line otherwise (never an
    OverflowError where a reader turns a count into a float)."""
    if not isinstance(document, dict):
        return
    for key in COUNT_KEYS:
        value = document.get(key)
        if key in document and (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT):
            shown = (
                value if not isinstance(value, int) or abs(value) < 10**20 else f"a {len(str(abs(value)))}-digit number"
            )
            raise PipelineError(
                f"{path}: {key} is {shown}, not a count of images (a whole number from 0 to 2^53); {fix}"
            )
    if (
        isinstance(document.get("num_valid"), int)
        and isinstance(document.get("num_images"), int)
        and document["num_valid"] > document["num_images"]
    ):
        raise PipelineError(
            f"{path}: num_valid {document['num_valid']} exceeds num_images {document['num_images']}; {fix}"
        )


def rebuild_command(path: Path | str, producer_step: str) -> str:
    """How a summary without its run identity is rebuilt: rerun its step, or migrate a pre-id summary explicitly."""
    return (
        f"rerun `python -m {producer_step}` (it resumes from its partial results), or migrate a summary written before "
        f"summaries carried a run id with `python -m paper.resummarize --summary {path}` (Experiments 1, 2, 3 and 3A/3B)"
    )


def check_identity(document: Any, path: Path | str, producer_step: str) -> str:
    """The run id a summary's ``config.run_id`` names; one line naming the file and the command that rebuilds it
    when it has none (a summary without its identity is never paired with another run's files on its counts)."""
    config = document.get("config") if isinstance(document, dict) else None
    run_id = config.get("run_id") if isinstance(config, dict) else None
    if not isinstance(run_id, str) or not run_id:
        raise PipelineError(
            f"{path}: lacks config.run_id, the identity of the run that wrote it, so no reader can prove which run it "
            f"combines; {rebuild_command(path, producer_step)}"
        )
    return run_id


def check_not_linked(path: Path, flag: str = "--summary") -> None:
    """Refuse a results file that is a symbolic link, or whose results folder (its parent) is one: one line naming the link."""
    for part, what in ((Path(path), flag), (Path(path).parent, f"the results folder of {flag}")):
        if part.is_symlink():
            raise PipelineError(
                f"{part}: {what} is a symbolic link (to {os.readlink(part)}); a plot step reads the run's own results "
                "folder — pass the files the step wrote, not a link to them, or replace the link by the run's files"
            )


def load_summary(
    path: Path,
    experiment: int | str,
    producer_step: str,
    flag: str = "--summary",
    keys: Sequence[str] = ("config",),
    finite: bool = True,
) -> dict[str, Any]:
    """The summary ``producer_step`` wrote for ``experiment``; a one-line error if it is missing, a folder,
    damaged, of another experiment or schema version, lacks one of ``keys`` (dotted paths name
    nested keys: ``"power_law.fit_lambdas"``) or — with ``finite`` — holds a non-finite number
    (``finite=False`` only for files where NaN means "undefined" and the renderer says so). For
    every plot step, before it writes anything. A summary that is a symbolic link, or whose results folder is one, is
    refused too (the figures and REPORT beside it would describe a run that lies elsewhere)."""
    path = Path(path)
    check_not_linked(path, flag)
    if not path.exists():
        hint = checkout_hint(path)
        raise PipelineError(
            f"{path}: {flag} {hint}" if hint else f"{path}: {flag} not found; run `python -m {producer_step}` first"
        )
    if path.is_dir():
        inside = (
            ", ".join(sorted(child.name for child in path.glob("*.json") if child.name != "timing.json"))
            or f"the file {producer_step} wrote"
        )
        raise PipelineError(f"{path}: {flag} is a folder; pass the summary inside it ({inside})")
    summary = read_json(path, fix=f"rerun `python -m {producer_step}` to rewrite it")
    found = summary.get("experiment") if isinstance(summary, dict) else None
    if found != experiment:
        what = f"a summary of Experiment {found}" if found is not None else "not a summary"
        raise PipelineError(
            f"{path}: {what}, not the Experiment {experiment} summary of {producer_step}; pass the file that step wrote to {flag}"
        )
    check_schema(summary, path, producer_step)
    check_identity(summary, path, producer_step)
    check_counts(summary, path, f"rerun `python -m {producer_step}`")
    for key in (*REPORT_KEYS, *keys):
        missing = missing_key(summary, key)
        if missing:
            raise PipelineError(
                f"{path}: lacks {missing}, which {producer_step} writes; pass the file that step wrote to {flag}, or rerun it"
            )
    if finite:
        check_finite(summary, str(path), f"rerun `python -m {producer_step}`")
    return summary


def load_per_image_npz(path: Path) -> tuple[dict[str, np.ndarray], str]:
    """``per_image.npz`` and the run it names: its ``RUN_ID_ARRAY`` (removed from the arrays), or for a
    file written before it carried one, ``npz-sha256:<sha256 of the file>``."""
    try:
        with np.load(path) as stored:
            arrays = {name: stored[name] for name in stored.files}
    except Exception as error:  # truncated or foreign files raise many types (BadZipFile, EOFError, ValueError …)
        raise PipelineError(
            f"{path}: damaged or not a per_image.npz ({type(error).__name__}); rerun the evaluation step that wrote it"
        ) from None
    if RUN_ID_ARRAY in arrays:
        return arrays, str(arrays.pop(RUN_ID_ARRAY))
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return arrays, f"npz-sha256:{digest}"


def load_run_arrays(npz_path: Path, summary: dict[str, Any], summary_path: Path) -> dict[str, np.ndarray]:
    """The per-image arrays at ``npz_path``, checked to be of the run of ``summary`` (its ``config.run_id``; a
    summary without one is refused, naming the command that rebuilds it: no pairing on matching counts)."""
    arrays, run_id = load_per_image_npz(npz_path)
    expected = check_identity(summary, summary_path, "the evaluation step that wrote it")
    check_same_run(npz_path, run_id, summary_path, expected)
    return arrays


def load_torch_record(path: Path, flag: str, producer_step: str, is_record: Callable[[Any], bool]) -> Any:
    """A ``.pt`` file that ``producer_step`` wrote (``torch.load``, tensors and plain types only); a
    one-line error if it is missing, unreadable, or ``is_record`` rejects it. For steps reading another
    step's per-image tensors."""
    path = Path(path)
    if not path.exists():
        hint = checkout_hint(path)
        raise PipelineError(
            f"{path}: {flag} {hint}" if hint else f"{path}: {flag} not found; run `python -m {producer_step}` first"
        )
    try:
        record = torch.load(path, weights_only=True)
    except Exception as error:  # truncated, empty or foreign files raise many types; all mean the same here
        raise PipelineError(
            f"{path}: cannot be read ({type(error).__name__}); rerun `python -m {producer_step}` to rewrite it"
        ) from None
    if not is_record(record):
        raise PipelineError(f"{path}: not a file of {producer_step} (pass the file that step wrote to {flag})")
    return record


def read_json_if_exists(path: Path) -> Any | None:
    """Read a JSON file, or return ``None`` when it does not exist (e.g. an optional timing.json)."""
    path = Path(path)
    return read_json(path) if path.exists() else None


TIMING_FIX = "delete it (it only records timing; the next evaluation run writes it again)"


def check_timing_record(record: Any, path: Path) -> None:
    """One pass's (or a folder's) timing: ``wall_seconds`` a finite number ≥ 0 and ``images_evaluated`` an integer ≥ 0,
    or a one-line error naming ``path``."""
    if not isinstance(record, dict):
        raise PipelineError(f"{path}: not a timing record (a JSON object); {TIMING_FIX}")
    seconds, images = record.get("wall_seconds"), record.get("images_evaluated")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds < 0:
        raise PipelineError(f"{path}: wall_seconds is {seconds!r}, not a finite number of seconds ≥ 0; {TIMING_FIX}")
    if isinstance(images, bool) or not isinstance(images, int) or images < 0:
        raise PipelineError(f"{path}: images_evaluated is {images!r}, not a count ≥ 0; {TIMING_FIX}")


def read_timing(path: Path, num_images: int | None = None) -> dict[str, Any] | None:
    """The ``timing.json`` at ``path`` checked (:func:`check_timing_record`, its process records too; at most
    ``num_images`` images per pass when given), or ``None`` when there is none."""
    timing = read_json_if_exists(path)
    if timing is None:
        return None
    check_timing_record(timing, path)
    if timing["images_evaluated"] < 1:  # written only by a run that evaluated something
        raise PipelineError(f"{path}: says no image was evaluated; {TIMING_FIX}")
    for record in timing.get("processes", []):
        check_timing_record(record, path)
    passes = timing.get("passes", 1)
    if num_images is not None and isinstance(passes, int) and timing["images_evaluated"] > num_images * max(passes, 1):
        raise PipelineError(
            f"{path}: says {timing['images_evaluated']} images were evaluated in {passes} pass(es) of a run of "
            f"{num_images} images; {TIMING_FIX}"
        )
    return timing


RESULT_PATHS = (":(exclude,glob)**/results*/**", ":(exclude,glob)**/sample_index*.json")
"""Outputs of the runs themselves, which the dirty check does not count (see :func:`git_commit`)."""


def git_commit(root: Path = REPO_ROOT) -> str:
    """The repository's HEAD commit, with ``-dirty`` if a tracked file other than a run's output has changes, or ``unknown``.

    Results folders (``results*/``) and sample lists are outputs: a rerun of ``make offline-results`` rewrites
    committed ones before its later steps record their commit, and that must not read as an edited tree.
    Any other change to a tracked file (code, Makefile, READMEs) does.
    """
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", *RESULT_PATHS],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def package_versions() -> dict[str, str]:
    """Versions of the packages that determine the numbers."""
    import pyarrow
    import torchvision

    return {
        "python": platform.python_version(),
        "torch": str(torch.__version__),
        "torchvision": torchvision.__version__,
        "numpy": np.__version__,
        "pyarrow": pyarrow.__version__,
    }
