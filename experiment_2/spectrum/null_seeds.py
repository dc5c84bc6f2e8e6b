"""Experiment 2, step 13 — the random-init null over many initialisation seeds, in one process.

Question: which spectrum does the architecture have when nothing has been learned — over networks, not over the
images of one network? Each seed of ``--seeds FIRST LAST`` builds the network with random weights drawn under that
seed, re-estimates its batch-norm statistics on the ``--calibrate-batchnorm N`` images that follow the evaluated ones
in the sample list (disjoint from them; experiment_1.run.preflight.calibration_samples), and runs Experiment 2's pass
(experiment_2.step_1_evaluate) on the first ``--limit`` images. One process for all seeds: the interpreter, the data
and the checks are paid once per seed, not once per process.

Inputs:  the flags of experiment_2.step_1_evaluate (``--weights random`` and ``--calibrate-batchnorm N`` required;
         ``--seed`` is replaced by ``--seeds``).
Outputs: <output-dir>/seed_<s>/summary.json, per_image.npz and timing.json per seed (experiment_2.step_1_evaluate's
         files); each seed resumes from its own partial store, so a rerun evaluates only what is missing.
         experiment_2.step_14_null_compare reads them.

    python -m experiment_2.step_13_null_seeds --arch efficientnet_lite0 --weights random --calibrate-batchnorm 50 \\
        --limit 4 --seeds 1 44 --sample-index experiment_1/sample_index_sample_test.json \\
        --data-dir imagenet-1k/sample-1750 --output-dir experiment_2/results_efficientnet_lite0_null_seeds
"""

from __future__ import annotations

import argparse
from pathlib import Path

from experiment_1.errors import PipelineError, run_cli
from experiment_1.run import add_evaluation_arguments, run_config, run_passes
from experiment_2.spectrum.evaluation import EXPERIMENT_2


def seed_folder(output_dir: Path, seed: int) -> Path:
    """Where seed ``seed``'s run goes: ``<output-dir>/seed_<s>`` (three digits, so the folders sort by seed)."""
    return Path(output_dir) / f"seed_{seed:03d}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_evaluation_arguments(parser, "experiment_2/results_null_seeds")
    parser.add_argument(
        "--seeds",
        type=run_config.seed,
        nargs=2,
        metavar=("FIRST", "LAST"),
        required=True,
        help="initialisation seeds FIRST … LAST (inclusive), one network each",
    )
    args = parser.parse_args(argv)
    if str(args.weights) != "random" or args.calibrate_batchnorm is None:
        raise PipelineError(
            "experiment_2.step_13_null_seeds: the null over seeds is random-init with its batch-norm statistics re-estimated; "
            "pass --weights random --calibrate-batchnorm N"
        )
    first, last = args.seeds
    if last < first:
        raise PipelineError(f"--seeds {first} {last}: the last seed is below the first; pass FIRST ≤ LAST")
    for seed in range(first, last + 1):
        folder = seed_folder(args.output_dir, seed)
        run_passes(argparse.Namespace(**{**vars(args), "seed": seed, "output_dir": folder}), [(EXPERIMENT_2, folder)])


if __name__ == "__main__":
    run_cli(main)
