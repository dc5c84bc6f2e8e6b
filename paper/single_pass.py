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
from pathlib import Path

from experiment_1.errors import PipelineError, run_cli
from experiment_1.report import resolve
from experiment_1.run import ExperimentPass, add_evaluation_arguments, run_passes
from paper.experiments import RECORDS

PASSES: dict[int, ExperimentPass] = {
    entry.experiment: entry for entry in (resolve(record.single_pass) for record in RECORDS if record.single_pass)
}
"""Experiment number → the pass its record names (paper/experiments.py)."""


def results_name(text: str) -> str:
    """A results folder name: one plain name (no separator, not empty, ``.`` or ``..``), so it stays inside experiment_N/."""
    if not text.strip() or text in (".", "..") or "/" in text or "\\" in text or any(ord(char) < 32 for char in text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a plain folder name (e.g. results_efficientnet_lite1_sample); no '/', '.', '..' or empty names"
        )
    return text


def experiment_options(entry: ExperimentPass) -> dict[str, str]:
    """The destinations of an experiment's own flags → the flag as typed."""
    parser = argparse.ArgumentParser(add_help=False)
    entry.add_arguments(parser)
    return {action.dest: action.option_strings[0] for action in parser._actions}


def check_options_of_chosen(args: argparse.Namespace, parser: argparse.ArgumentParser, chosen: list[int]) -> None:
    """Refuse a flag of an experiment not among ``--experiments`` (it would be dropped unread)."""
    for number, entry in PASSES.items():
        if number in chosen:
            continue
        given = [
            flag for dest, flag in experiment_options(entry).items() if getattr(args, dest) != parser.get_default(dest)
        ]
        if given:
            raise PipelineError(
                f"{given[0]} is a flag of Experiment {number}, which is not among --experiments "
                f"{' '.join(map(str, chosen))}; add {number} to --experiments or drop the flag"
            )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_evaluation_arguments(parser, None)
    parser.add_argument(
        "--experiments",
        type=int,
        nargs="+",
        choices=sorted(PASSES),
        required=True,
        help="the experiments fed by the pass, e.g. 1 2 3 (a test list) or 4 5 (a labelled list)",
    )
    parser.add_argument(
        "--results-name",
        type=results_name,
        required=True,
        help="each experiment's results folder name, e.g. results_efficientnet_lite1_sample",
    )
    parser.add_argument(
        "--results-root",
        type=Path,
        default=Path("."),
        help="the folder holding experiment_1 … experiment_5 (default: the current one)",
    )
    for entry in PASSES.values():
        entry.add_arguments(parser)
    args = parser.parse_args(argv)
    chosen = sorted(set(args.experiments))
    check_options_of_chosen(args, parser, chosen)
    run_passes(
        args, [(PASSES[number], args.results_root / f"experiment_{number}" / args.results_name) for number in chosen]
    )


if __name__ == "__main__":
    run_cli(main)
