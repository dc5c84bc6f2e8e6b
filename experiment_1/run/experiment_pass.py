"""Evaluate once, analyse many: experiments that reduce the same all-mask logits share one pass.

Every evaluation step (Experiments 1–5) is an :class:`ExperimentPass` — its partial-store stage,
its extra flags, the checks and configuration it adds (its resume key), its per-batch reduction and
the results it writes. :func:`run_passes` builds the model and data once and runs any number of
passes over one all-mask evaluation per batch (:func:`experiment_1.run.loop.run_stages`): each pass
keeps its own output folder, partial store and run key, and writes exactly what its own step writes,
so a step run alone on that folder afterwards resumes from the store and evaluates nothing.
A step is :func:`run_step` with its one pass; ``python -m paper.single_pass`` runs several.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from experiment_1.errors import PipelineError
from experiment_1.run.loop import BatchFunction, Stage, run_stages
from experiment_1.run.setup import EvaluationSetup, add_evaluation_arguments, build_setup


@dataclass(frozen=True)
class ExperimentPass:
    """What one experiment contributes to an all-mask pass.

    ``prepare(setup)`` checks the inputs and returns the experiment's options (a dict, or None for
    none), which :func:`run_passes` adds to a new frozen ``setup.config`` (its run key); ``batch_function(setup)`` returns the reduction of one batch's logits;
    ``finish(setup, arrays, timing)`` writes the experiment's results (rank 0) and prints one line.
    """

    experiment: int
    stage: str
    description: str
    batch_function: Callable[[EvaluationSetup], BatchFunction]
    finish: Callable[[EvaluationSetup, dict[str, np.ndarray], dict[str, Any]], None]
    add_arguments: Callable[[argparse.ArgumentParser], None] = lambda parser: None
    prepare: Callable[[EvaluationSetup], dict[str, Any] | None] = lambda setup: None
    pass_indices: bool = False


def experiment_setup(setup: EvaluationSetup, output_dir: Path) -> EvaluationSetup:
    """``setup`` (model, data and the parsed flags shared) with its own output folder."""
    return replace(setup, config=setup.config.for_output(output_dir))


def run_passes(args: argparse.Namespace, passes: list[tuple[ExperimentPass, Path]]) -> None:
    """Run every ``(pass, output folder)`` from one all-mask evaluation per batch; each writes its results."""
    folders = [Path(folder).resolve() for _, folder in passes]
    if len(set(folders)) < len(folders):
        raise PipelineError(
            "every experiment of a single pass needs its own output folder; give each experiment its own results folder"
        )
    shared = build_setup(args)
    entries = [entry for entry, _ in passes]
    setups = [experiment_setup(shared, folder) for _, folder in passes]
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


def run_step(
    experiment_pass: ExperimentPass,
    argv: list[str] | None,
    doc: str | None,
    default_output_dir: str,
    default_sample_index: str = "experiment_1/sample_index.json",
) -> None:
    """An experiment's evaluation step: the shared flags plus its own, then its pass alone."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_evaluation_arguments(parser, default_output_dir, default_sample_index)
    experiment_pass.add_arguments(parser)
    args = parser.parse_args(argv)
    run_passes(args, [(experiment_pass, args.output_dir)])
