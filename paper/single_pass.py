"""Evaluate once, analyse many: several experiments' evaluation steps from one all-mask pass.

Question: at L = 14 or 16 a pass over all 2^L masks dominates every experiment's cost; when
Experiments 1, 2 and 3 (a test list) or 4 and 5 (a labelled list) read the same images, why
evaluate them once per experiment? This runner evaluates every batch once and hands its logits to
each chosen experiment's per-batch reduction (experiment_1.run.loop). Each experiment keeps
its own results folder, partial store and resume key, and gets exactly the files its own step
writes (summary.json and per_image.npz for 1–3, signatures.pt for 4, per_image.pt for 5), so the
plot/analysis steps run on them unchanged, and an experiment's own step rerun on its folder resumes
from the store without evaluating. Resume, --limit and torchrun sharding work as in every step; a
batch that some experiments already hold is evaluated for the others only.

Inputs:  --experiments (any of 1 … 5), the shared evaluation flags (--sample-index, --data-dir,
         --arch, --weights, --batch-size, --mask-chunk, …), each chosen experiment's own flags
         (Experiment 3: --ks, --num-random-seeds; 4: --store-K; 5: --tau, --extra-taus, --eta,
         --extra-etas), --results-name and --results-root.
Outputs: <results-root>/experiment_<N>/<results-name>/ for every chosen N: that step's outputs;
         timing.json there holds the shared pass's wall time and lists the stages it fed.

    python -m paper.single_pass --experiments 1 2 3 --arch efficientnet_lite1 --weights pretrained \\
        --sample-index experiment_1/sample_index_sample_test.json --data-dir imagenet-1k/sample-1750 \\
        --limit 6 --batch-size 1 --mask-chunk 512 --num-workers 0 --seed 0 \\
        --results-name results_efficientnet_lite1_sample
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from experiment_1.errors import PipelineError, run_cli
from experiment_1.report import resolve
from experiment_1.run import Command, RunConfig, flag, run_config
from paper.experiments import RECORDS

STEPS: dict[int, Command] = {record.experiment: resolve(record.single_pass) for record in RECORDS if record.single_pass}
"""Experiment number → the evaluation step its record names (paper/experiments.py): its flags and its pass."""
SHARED = {item.name for item in fields(RunConfig)}


def results_name(text: str) -> str:
    """A results folder name: one plain name (no separator, not empty, ``.`` or ``..``), so it stays inside experiment_N/."""
    if not text.strip() or text in (".", "..") or "/" in text or "\\" in text or any(ord(char) < 32 for char in text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a plain folder name (e.g. results_efficientnet_lite1_sample); no '/', '.', '..' or empty names"
        )
    return text


@dataclass(frozen=True)
class SinglePassFlags:
    """The runner's own flags (beside the shared evaluation flags and each experiment's)."""

    experiments: list[int] = flag(
        "the experiments fed by the pass, e.g. 1 2 3 (a test list) or 4 5 (a labelled list)",
        type=int,
        nargs="+",
        choices=sorted(STEPS),
    )
    results_name: str = flag(
        "each experiment's results folder name, e.g. results_efficientnet_lite1_sample", type=results_name
    )
    results_root: Path = flag(
        "the folder holding experiment_1 … experiment_5 (default: the current one)", type=Path, default=Path(".")
    )


def parser() -> argparse.ArgumentParser:
    """The shared evaluation flags (no --output-dir), the runner's, then every experiment's own."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    run_config.add_flags(parser, RunConfig, skip=["output_dir"])
    run_config.add_flags(parser, SinglePassFlags)
    for step in STEPS.values():
        run_config.add_flags(parser, step.flags, skip=sorted(SHARED))
    return parser


def check_options_of_chosen(args: argparse.Namespace, parser: argparse.ArgumentParser, chosen: list[int]) -> None:
    """Refuse a flag of an experiment not among ``--experiments`` (it would be dropped unread)."""
    for number, step in STEPS.items():
        if number in chosen:
            continue
        given = [
            spec.option_of(item.name)
            for item, spec in run_config.flag_fields(step.flags)
            if item.name not in SHARED and getattr(args, item.name) != parser.get_default(item.name)
        ]
        if given:
            raise PipelineError(
                f"{given[0]} is a flag of Experiment {number}, which is not among --experiments "
                f"{' '.join(map(str, chosen))}; add {number} to --experiments or drop the flag"
            )


def main(argv: list[str] | None = None) -> None:
    flags = parser()
    args = flags.parse_args(argv)
    own = run_config.check(run_config.from_flags(SinglePassFlags, args))
    chosen = sorted(set(own.experiments))
    check_options_of_chosen(args, flags, chosen)
    configs: list[Any] = [run_config.check(run_config.from_flags(STEPS[number].flags, args)) for number in chosen]
    from experiment_1.run import run_passes  # the heavy modules, once the flags are checked

    run_passes(
        [
            (
                resolve(STEPS[number].work),
                replace(config, output_dir=own.results_root / f"experiment_{number}" / own.results_name),
            )
            for number, config in zip(chosen, configs)
        ]
    )


if __name__ == "__main__":
    run_cli(main)
