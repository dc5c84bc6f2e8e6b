"""Experiment 2, step 11 — are the estimators past the exhaustive pass exact, unbiased and calibrated?

Question: (1) do the exact low-order tables of the family pass (the masks within k gates of either corner, and the
Möbius transform on that family) equal the dense butterfly of the exhaustive table, and reproduce a committed
exhaustive run's energies E_1 … E_k? (2) Do the sampling estimators — random sub-cubes (ē_j = E_j / C(L, j) for
j ≤ u) and the Walsh summaries from random masks (variance, total influence, κ_W, κ_W / L, noise stability, the
exact-degree weights W_1 … W_3 and the low-degree share) — cover the exact value with their nominal 95 % intervals,
without bias, on exhaustive tables?

(1) The family pass at k = --order over the run's own images (the flags: --arch, --weights, --sample-index …), E_j
per projection (vector: ‖·‖² over all classes; scalar: the class argmax h(full)) against --committed's
``energy_vector`` / ``energy_scalar``; and on each --table network's images, the family pass at both corners against
the dense butterfly of the same images' exhaustive pass. (2) Each --table network is evaluated exhaustively (all 2^L
masks) on its images; the estimators then run by subsampling those tables — no further forward — in --replications
seeded replications per (table, statistic, budget): sub-cubes of --subcube-sizes blocks × --subcube-draws draws,
Walsh designs of --walsh-samples units (the defaults are the budgets step 8 runs at: at
a few hundred masks or fewer, or a handful of sub-cubes, the intervals under-cover, which an earlier run of this step
showed). The vector projection of the tables keeps a fixed seeded set of --classes
classes. Coverage, bias in units of the estimator's SE and relative RMSE per cell; the verdict per (table,
statistic) by the rule of experiment_2/past_exhaustive/validation/replications.py, stored in summary.json.

Inputs:  the evaluation flags (the committed run's network, images and data), --committed (its per_image.npz), one
         --table ARCH:WEIGHTS:RESOLUTION:IMAGES[:SAMPLE_LIST] per exhaustive validation network (SAMPLE_LIST: images
         of its own, e.g. ones no interval was chosen on; default: the run's).
Outputs: <output-dir>/summary.json, REPORT.md (a page: the calibration of each estimator over the tables; rendered
         again from the summary by python -m experiment_2.past_exhaustive.validation.report), timing.json,
         partial/ (the resume state, keyed by content; not committed: exhaustive tables and family passes, and
         partial/<step>/replications/ with each table's cells per estimator, so a run stopped part way keeps the tables it finished).

    python -m experiment_2.step_11_estimator_validation --arch efficientnet_lite1 --weights pretrained \\
        --sample-index experiment_1/sample_index_sample_test.json --data-dir imagenet-1k/sample-1750 --limit 24 \\
        --batch-size 1 --mask-chunk 512 --num-workers 0 --seed 0 \\
        --committed experiment_2/results_efficientnet_lite1_sample/per_image.npz \\
        --table efficientnet_lite1:pretrained:native:4 --table resnet34:random:32:4 \\
        --table resnet34:random:32:4:experiment_2/sample_index_validation_8_11.json --replications 1000 --workers 2 \\
        --output-dir experiment_2/results_estimator_validation
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from experiment_1.errors import run_cli
from experiment_1.run import Command, RunConfig, flag
from experiment_2.past_exhaustive.validation.table_spec import TableSpec


@dataclass(frozen=True, kw_only=True)
class ValidationConfig(RunConfig):
    """The evaluation flags (the committed run's) and the step's own; the order and the sub-cube sizes, bounded by
    every network's L, are checked once the networks are built, before the first pass."""

    order: int = flag("k of the exact tables (default: %(default)s)", low=1, default=3)
    committed: Path = flag(
        "per_image.npz of the committed exhaustive run of the same network and images (default: %(default)s)",
        path="file",
        what="committed run's per_image.npz",
        fix="give the committed run's per_image.npz with --committed",
        default=Path("experiment_2/results_efficientnet_lite1_sample/per_image.npz"),
    )
    table: list[TableSpec] = flag(
        "an exhaustive validation network ARCH:WEIGHTS:RESOLUTION:IMAGES[:SAMPLE_LIST] (resolution native: the arch's "
        "own; SAMPLE_LIST: the table's images are the first IMAGES of that list, not of --sample-index)",
        type=TableSpec.parse,
        action="append",
    )
    classes: int = flag("classes kept for the vector projection (default: %(default)s)", low=1, default=64)
    replications: int = flag("replications per cell (default: %(default)s)", low=2, default=500)
    subcube_sizes: list[int] = flag("u (default: %(default)s)", low=1, nargs="+", factory=lambda: [4, 6, 8])
    subcube_draws: list[int] = flag(
        "draws, at least 3 (an interval over draws; default: %(default)s)", low=3, nargs="+", factory=lambda: [30]
    )
    workers: int = flag("processes for the replications (same cells for any count; default: 1)", low=1, default=1)
    walsh_samples: list[int] = flag(
        "Walsh units m, at least 2; the flag alone: no Walsh budget, the sub-cubes only (default: %(default)s)",
        low=2,
        nargs="*",
        factory=lambda: [1024, 2048],
    )


COMMAND = Command(
    __doc__,
    ValidationConfig,
    "experiment_2.past_exhaustive.validation.exhaustive:run",
    {"output_dir": "experiment_2/results_estimator_validation"},
)
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
