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

from dataclasses import dataclass

from experiment_1.errors import run_cli
from experiment_1.run import Command, RunConfig, flag, run_config


@dataclass(frozen=True, kw_only=True)
class NullSeedsConfig(RunConfig):
    """The evaluation flags (random weights, batch-norm re-estimated) and the seeds, FIRST … LAST."""

    seeds: list[int] = flag(
        "initialisation seeds FIRST … LAST (inclusive), one network each",
        type=run_config.seed,
        nargs=2,
        metavar=("FIRST", "LAST"),
    )

    def problems(self) -> list[str]:
        """Not the null's network, or the seeds in the wrong order."""
        found = []
        if str(self.weights) != "random" or self.calibrate_batchnorm is None:
            found.append(
                "experiment_2.step_13_null_seeds: the null over seeds is random-init with its batch-norm statistics "
                "re-estimated; pass --weights random --calibrate-batchnorm N"
            )
        first, last = self.seeds
        if last < first:
            found.append(f"--seeds {first} {last}: the last seed is below the first; pass FIRST ≤ LAST")
        return found


COMMAND = Command(
    __doc__, NullSeedsConfig, "experiment_2.spectrum.null_seeds:run", {"output_dir": "experiment_2/results_null_seeds"}
)
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
