"""The evaluation loop every experiment shares: resumable batches, the out-of-memory line, the writers.

A step calls :func:`run_per_image` (or :func:`run_stages` for several experiments fed by one pass)
with an :class:`~experiment_1.run.setup.EvaluationSetup` and a function that turns one batch's
all-mask logits ``(B, 2^L, C)`` into per-image arrays. Batches are fixed by ``--batch-size`` over
the sample list; each finished batch is saved atomically under ``<output-dir>/partial/<stage>/``
(:mod:`experiment_1.run.partial_store`, keyed by the content of the inputs; a stage is
``"<step module>/<part>"``), so an interrupted run continues from the last finished batch and
produces exactly the arrays an uninterrupted run would. Under ``torchrun`` each rank evaluates its
share of the unfinished batches into the same store and rank 0 alone writes the results
(:mod:`experiment_1.run.distributed`).

Evaluate once, analyse many: experiments that reduce the same all-mask logits share one pass.

Every evaluation step (Experiments 1–5) is an :class:`ExperimentPass` — its partial-store stage,
the checks and configuration it adds (its resume key), its per-batch reduction and the results it writes; its
flags are its step's (:class:`experiment_1.run.run_config.Command`). :func:`run_passes` builds the model and data
once and runs any number of passes over one all-mask evaluation per batch (:func:`experiment_1.run.loop.run_stages`): each pass
keeps its own output folder, partial store and run key, and writes exactly what its own step writes,
so a step run alone on that folder afterwards resumes from the store and evaluates nothing.
A step runs its one pass; ``python -m paper.single_pass`` runs several.
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from experiment_1.data.shards import check_batch_errors
from experiment_1.errors import Interrupted, PipelineError
from experiment_1.files import RUN_ID_ARRAY, atomic_save_npz, atomic_write_json, check_finite, read_json
from experiment_1.network.engines import (
    evaluate_all_masks,
    evaluate_mask_family,
    evaluate_masks_naive,
    out_of_memory_line,
)
from experiment_1.network.mask_family import MaskFamily
from experiment_1.network.memory import REDUCTION_LOGIT_MULTIPLE, peak_estimate, stack_profile
from experiment_1.run import distributed
from experiment_1.run.partial_store import PartialStore, run_key
from experiment_1.run.run_config import UNSCALED, RunConfig
from experiment_1.run.setup import EvaluationSetup, build_setup

BatchFunction = Callable[[torch.Tensor, torch.Tensor], dict[str, torch.Tensor]]


@dataclass(frozen=True)
class Stage:
    """One consumer of an all-mask pass: its setup (output folder and run configuration, i.e. its
    resume key), its partial-store stage name and the function that reduces a batch's logits."""

    setup: EvaluationSetup
    name: str
    compute: BatchFunction
    pass_indices: bool = False


def run_per_image(
    setup: EvaluationSetup,
    stage: str,
    compute: BatchFunction,
    residual_scale: float = UNSCALED,
    description: str = "",
    pass_indices: bool = False,
    mask_indices: list[int] | None = None,
    mask_family: MaskFamily | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Evaluate every batch not yet finished; return all per-image arrays and this call's timing.

    ``compute(logits, labels)`` gets ``(B, 2^L, C)`` float32 logits on the device and ``(B,)``
    labels (with ``pass_indices``, also the ``(B,)`` int64 sample-list positions, e.g. to seed
    per-image randomness independently of batching), and returns tensors whose first dimension
    is ``B``. The result holds them
    concatenated over the sample list, plus ``index``, ``label`` and ``valid`` (False for
    images skipped with ``--skip-corrupt``). The timing (``wall_seconds``, ``images_evaluated``)
    counts this call's batches only. Under ``torchrun`` every rank evaluates its share of the
    unfinished batches, waits for the others and returns the same merged arrays; the timing (on
    every rank) then adds the world size and each rank's wall time. With ``mask_indices`` only those
    masks are evaluated (the naive engine, one forward per image and mask; ``logits`` is then
    ``(B, len(mask_indices), C)``) and the store's key records them; with ``mask_family`` the family's
    members (``(B, M, C)`` in ascending mask id) and the key records the family's descriptor.
    """
    arrays, timing = run_stages(
        [Stage(setup, stage, compute, pass_indices)], residual_scale, description or stage, mask_indices, mask_family
    )
    return arrays[0], timing


def run_stages(
    stages: list[Stage],
    residual_scale: float = UNSCALED,
    description: str = "",
    mask_indices: list[int] | None = None,
    mask_family: MaskFamily | None = None,
) -> tuple[list[dict[str, np.ndarray]], dict[str, float]]:
    """:func:`run_per_image` for several stages fed by one all-mask pass over the same images.

    Every stage keeps its own partial store (its folder, stage name and run key), exactly as if it ran alone; a
    batch is evaluated once if any stage lacks it, and only the stages that lack it reduce and store it. The stages
    must share the model, the sample list and the batching flags (they come from one :func:`build_setup`); the
    logits of a batch are reduced stage by stage and then dropped, so no more than one batch's ``(B, 2^L, C)``
    logits and one stage's reductions are alive at a time. Returns each stage's merged arrays (in ``stages`` order)
    and the pass's timing. With ``mask_family`` only its members are evaluated (the family walk of the ``--engine``;
    the stages get ``(B, M, C)`` logits in ascending mask id, ``mask_family.mask_ids(L)``) and the store's key
    records the family's descriptor.
    """
    if mask_indices is not None and mask_family is not None:
        raise PipelineError("a pass evaluates either a list of masks or a mask family, not both")
    setup = stages[0].setup
    flags = setup.config
    stores = stage_stores(stages, residual_scale, mask_indices, mask_family)
    count = len(setup.samples)
    batches = [list(range(start, min(start + flags.batch_size, count))) for start in range(0, count, flags.batch_size)]
    settings = {name: value for store in stores for name, value in store.key.items() if name != "stage"}
    distributed.check_job(len(batches), {**settings, "stages": [store.stage for store in stores]})

    missing, pass_id = distributed.on_main(lambda: (missing_batches(stores, len(batches)), distributed.new_pass_id()))
    pass_log = distributed.PassLog(pass_id, distributed.rank())
    pending = sorted(missing)
    mine = distributed.share(pending)
    # a batch counts as done once the last store that lacked it has it (the stores are written in order)
    done_files = [
        stores[missing[number][-1]].path(number) if number in missing else stores[-1].path(number)
        for number in range(len(batches))
    ]
    started = time.perf_counter()
    progress = distributed.JobProgress(
        done_files, [len(batch) for batch in batches], pending, description or stores[0].stage
    )
    done = count - sum(len(batches[number]) for number in pending)
    cause: str | None = None
    if mine:
        loader = setup.loader([batches[number] for number in mine])
        try:
            for number, batch in zip(mine, loader):
                valid = torch.tensor(check_batch_errors(list(batch["error"]), flags.skip_corrupt, batch["fatal"]))
                logits = batch_logits(setup, batch["image"], residual_scale, mask_indices, mask_family)
                check_finite_logits(logits, batch["index"].tolist(), setup, residual_scale)
                store_reductions(stages, stores, missing[number], number, batch, logits, valid)
                del logits
                pass_log.finished_batch(
                    len(batches[number]), [stores[position].directory for position in missing[number]]
                )
                progress.finished(done_files[number])
                done += len(batches[number])
        except (
            KeyboardInterrupt
        ) as stop:  # SIGINT, or SIGTERM as Interrupted; finished batches are kept: say how many, and how to resume
            signal_number = stop.signal_number if isinstance(stop, Interrupted) else signal.SIGINT
            raise Interrupted(signal_number, done, count) from None
        except (
            PipelineError,
            RuntimeError,
            MemoryError,
        ) as error:  # out of memory anywhere in a batch's work: the engine or a stage's reductions
            cause = out_of_memory_line(error)
            if cause is None:
                raise
        if cause is not None:  # outside the except, with the batch's tensors dropped, so the estimate can run
            logits = None
            raise out_of_memory_error(setup, cause)
    share_timing = {
        "wall_seconds": time.perf_counter() - started,
        "images_evaluated": sum(len(batches[number]) for number in mine),
    }
    progress.close()
    timing = distributed.job_timing(share_timing, time.perf_counter() - started)
    return [merged_arrays(store, batches) for store in stores], timing


def stage_stores(
    stages: list[Stage], residual_scale: float, mask_indices: list[int] | None, mask_family: MaskFamily | None
) -> list[PartialStore]:
    """Each stage's partial store, keyed by its run key, λ and the masks evaluated; one line where two stages would
    share one store's folder."""
    setup = stages[0].setup

    def store_of(stage: Stage) -> PartialStore:
        key = {**run_key(stage.setup.config, setup.dataset.data_dir, setup.samples), "residual_scale": residual_scale}
        if mask_indices is not None:  # absent for all masks, so existing stores keep their keys
            key["mask_indices"] = list(mask_indices)
        if mask_family is not None:  # absent for all masks, so existing stores keep their keys
            key["mask_family"] = mask_family.descriptor()
        return PartialStore(stage.setup.config.output_dir, stage.name, key)

    stores = [store_of(stage) for stage in stages]
    folders = [store.directory.resolve() for store in stores]
    if len(set(folders)) < len(folders):
        repeated = next(folder for folder in folders if folders.count(folder) > 1)
        raise PipelineError(
            f"{repeated}: two stages of one pass would share this partial store; give each stage its own output "
            "folder or stage name"
        )
    return stores


def missing_batches(stores: list[PartialStore], num_batches: int) -> dict[int, list[int]]:
    """Batch number → the positions of the stores that lack it (batches every store holds left out)."""
    for store in stores:
        store.open()
    missing = {
        number: [position for position, store in enumerate(stores) if not store.finished(number)]
        for number in range(num_batches)
    }
    return {number: positions for number, positions in missing.items() if positions}


def store_reductions(
    stages: list[Stage],
    stores: list[PartialStore],
    positions: list[int],
    number: int,
    batch: dict[str, Any],
    logits: torch.Tensor,
    valid: torch.Tensor,
) -> None:
    """Batch ``number``'s logits reduced by each stage at ``positions`` (those that lack it), into its store, one
    stage's reductions alive at a time."""
    labels = batch["label"].to(logits.device)
    for position in positions:
        extra = (batch["index"],) if stages[position].pass_indices else ()
        arrays = {
            name: value.detach().cpu() for name, value in stages[position].compute(logits, labels, *extra).items()
        }
        arrays.update(index=batch["index"], label=batch["label"], valid=valid)
        stores[position].save(number, arrays)
        del arrays


def merged_arrays(store: PartialStore, batches: list[list[int]]) -> dict[str, np.ndarray]:
    """A store's batches (every rank's, once they are all written) concatenated over the sample list."""
    distributed.wait_for_files([store.path(number) for number in range(len(batches))])
    parts = [store.load(number, indices) for number, indices in enumerate(batches)]
    return {name: torch.cat([part[name] for part in parts]).numpy() for name in parts[0]}


def batch_logits(
    setup: EvaluationSetup,
    images: torch.Tensor,
    residual_scale: float,
    mask_indices: list[int] | None,
    mask_family: MaskFamily | None,
) -> torch.Tensor:
    """One batch's logits: every mask (``--engine``), a mask family's members, or the listed masks (naive)."""
    flags = setup.config
    if mask_family is not None:
        _, logits = evaluate_mask_family(
            setup.model,
            images,
            mask_family,
            engine=flags.engine,
            mask_chunk=flags.mask_chunk,
            residual_scale=residual_scale,
        )
        return logits
    if mask_indices is None:
        return evaluate_all_masks(
            setup.model, images, engine=flags.engine, mask_chunk=flags.mask_chunk, residual_scale=residual_scale
        )
    return evaluate_masks_naive(setup.model, images, mask_indices, flags.mask_chunk, residual_scale)


def out_of_memory_error(setup: EvaluationSetup, cause: str) -> PipelineError:
    """One line for an out-of-memory batch: the flags, the allocator's line and the estimated peak
    (:func:`experiment_1.network.memory.peak_estimate`, measured on two images), with a batch size that fits."""
    flags = setup.config
    estimate = ""
    try:
        profile = stack_profile(setup.model)
        peak = peak_estimate(profile, flags.batch_size, flags.mask_chunk, REDUCTION_LOGIT_MULTIPLE)
        estimate = f"; estimated peak {peak / 2**30:.1f} GiB for these flags"
        if setup.device.type == "cuda":
            total = torch.cuda.get_device_properties(setup.device).total_memory
            fitting = max(
                (
                    size
                    for size in range(1, flags.batch_size)
                    if peak_estimate(profile, size, flags.mask_chunk, REDUCTION_LOGIT_MULTIPLE) <= 0.9 * total
                ),
                default=None,
            )
            estimate += f" on a {total / 2**30:.0f}-GiB device" + (f" (--batch-size {fitting} fits)" if fitting else "")
    except (RuntimeError, MemoryError):  # no memory left even for the two-image estimate
        pass
    return PipelineError(
        f"out of memory with --batch-size {flags.batch_size} --mask-chunk {flags.mask_chunk} ({cause}){estimate}; "
        f"reduce --batch-size, or --mask-chunk (try {max(1, flags.mask_chunk // 4)}); experiment_1/PERFORMANCE.md, GPU"
    )


def check_finite_logits(
    logits: torch.Tensor, indices: list[int], setup: EvaluationSetup, residual_scale: float
) -> None:
    """Stop with one line naming the image(s), λ and the weights if any logit of the batch is NaN or ±inf."""
    finite = torch.isfinite(
        logits.flatten(1).sum(dim=1, dtype=torch.float64)
    ).cpu()  # NaN and ±inf survive the sum; no (B, 2^L, C) mask is allocated
    if bool(finite.all()):
        return
    bad = [setup.samples[index].describe() for index, ok in zip(indices, finite.tolist()) if not ok]
    shown = ", ".join(bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
    raise PipelineError(
        f"non-finite logits (NaN or inf) for {len(bad)} image(s) of this batch ({shown}) at λ = {residual_scale:g} with weights "
        f"{setup.config['weights']} (--dtype {setup.config['dtype']}); check the weights for NaN/inf parameters, use a smaller λ or --dtype float64"
    )


def valid_images(arrays: dict[str, np.ndarray]) -> np.ndarray:
    """The images that were decoded; a :class:`PipelineError` if there are none."""
    valid = arrays["valid"].astype(bool)
    if not valid.any():
        raise PipelineError("every image of the sample list was skipped as corrupt; nothing to summarise")
    return valid


def image_counts(valid: np.ndarray) -> dict[str, int]:
    """``num_images``, ``num_valid`` and ``num_skipped_corrupt`` for a summary."""
    return {"num_images": int(len(valid)), "num_valid": int(valid.sum()), "num_skipped_corrupt": int((~valid).sum())}


def may_stay_beside(path: Path, other: dict[str, Any], summary: dict[str, Any], summary_name: str) -> bool:
    """Whether ``path``, a summary already in the output folder, may stay beside ``summary`` (written as ``summary_name``):
    the same experiment's, or a differently named one that an analysis step derived from this very run (same
    ``config.run_id``; e.g. Experiment 3C's ``summary_3c.json`` beside the λ sweep it scores), which a rerun of the
    same run reproduces rather than overwrites. A same-named summary of another experiment is always refused."""
    if other.get("experiment") == summary["experiment"]:
        return True
    derived = isinstance(other.get("config"), dict) and other["config"].get("run_id") == summary["config"]["run_id"]
    return path.name != summary_name and derived


def write_results(
    setup: EvaluationSetup,
    arrays: dict[str, np.ndarray],
    summary: dict[str, Any],
    timing: dict[str, Any],
    summary_name: str = "summary.json",
) -> Path:
    """Write ``per_image.npz``, the summary and — if this call evaluated images — ``timing.json``.

    Timings never enter the summary, so a resumed run's summary is byte-identical to an
    uninterrupted one. Under ``torchrun`` only rank 0 writes. Returns the summary's path.
    """
    output_dir = Path(setup.config.output_dir)
    if not distributed.is_main():
        return output_dir / summary_name
    for path in sorted(output_dir.glob("summary*.json")):  # never overwrite another step's results
        if not may_stay_beside(
            path, read_json(path, fix="delete it or use another --output-dir"), summary, summary_name
        ):
            raise PipelineError(
                f"{output_dir}: holds results of another experiment ({path.name}); use another --output-dir"
            )
    check_finite(
        summary,
        f"{output_dir / summary_name} (not written)",
        "a statistic of the per-image arrays is NaN or inf; check the inputs and weights",
    )
    atomic_save_npz(output_dir / "per_image.npz", {**arrays, RUN_ID_ARRAY: np.array(summary["config"]["run_id"])})
    atomic_write_json(output_dir / summary_name, summary)
    write_timing(setup, timing, summary["config"]["device_name"])
    return output_dir / summary_name


def write_timing(setup: EvaluationSetup, timing: dict[str, Any], device_name: str) -> None:
    """Write ``<output-dir>/timing.json``: ``wall_seconds`` and ``images_evaluated`` summed over every
    process that evaluated batches of this run (:mod:`experiment_1.run.distributed`; its records in
    ``processes``), this call's own in ``last_call``; rank 0 only, and only once something was evaluated."""
    flags = setup.config
    total = distributed.accumulated(Path(flags.output_dir))
    if distributed.is_main() and (total or timing["images_evaluated"]):
        last_call = {name: value for name, value in timing.items() if name != "shared_pass"}
        atomic_write_json(
            Path(flags.output_dir) / "timing.json",
            {
                **timing,
                **(total or {}),
                "last_call": last_call,
                "device_name": device_name,
                "batch_size": flags.batch_size,
                "mask_chunk": flags.mask_chunk,
                "engine": flags.engine,
            },
        )


@dataclass(frozen=True)
class ExperimentPass:
    """What one experiment contributes to an all-mask pass.

    ``prepare(setup)`` checks the inputs and returns the experiment's options (a dict, or None for
    none), which :func:`run_passes` adds to a new frozen ``setup.config`` (its run key); ``batch_function(setup)`` returns the reduction of one batch's logits;
    ``finish(setup, arrays, timing)`` writes the experiment's results (rank 0) and prints one line. The
    experiment's own flags are typed fields of ``setup.config`` (its step's subclass of
    :class:`~experiment_1.run.run_config.RunConfig`). Called with a configuration, the pass runs alone: the work
    of its step (:class:`experiment_1.run.run_config.Command`).
    """

    experiment: int
    stage: str
    description: str
    batch_function: Callable[[EvaluationSetup], BatchFunction]
    finish: Callable[[EvaluationSetup, dict[str, np.ndarray], dict[str, Any]], None]
    prepare: Callable[[EvaluationSetup], dict[str, Any] | None] = lambda setup: None
    pass_indices: bool = False

    def __call__(self, config: RunConfig) -> None:
        run_passes([(self, config)])


def run_passes(passes: list[tuple[ExperimentPass, RunConfig]]) -> None:
    """Run every ``(pass, configuration)`` from one all-mask evaluation per batch; each writes its results into its
    configuration's output folder. The configurations differ only in the experiments' own flags and folders: the
    model and data are built once, from the first."""
    folders = [Path(config.output_dir).resolve() for _, config in passes]
    if len(set(folders)) < len(folders):
        raise PipelineError(
            "every experiment of a single pass needs its own output folder; give each experiment its own results folder"
        )
    shared = build_setup(passes[0][1])
    entries = [entry for entry, _ in passes]
    setups = [replace(shared, config=config.with_content(shared.config.content())) for _, config in passes]
    setups = [
        replace(setup, config=setup.config.with_options(**(entry.prepare(setup) or {})))
        for entry, setup in zip(entries, setups)
    ]
    stages = [
        Stage(setup, entry.stage, entry.batch_function(setup), entry.pass_indices)
        for entry, setup in zip(entries, setups)
    ]
    description = (
        entries[0].description
        if len(entries) == 1
        else "Exp " + "+".join(str(entry.experiment) for entry in entries) + " all masks"
    )
    arrays, timing = run_stages(stages, description=description)
    if len(entries) > 1:
        timing = {**timing, "shared_pass": [stage.name for stage in stages]}  # the wall time is the whole pass's
    for entry, setup, experiment_arrays in zip(entries, setups, arrays):
        entry.finish(setup, experiment_arrays, timing)
