"""The random-init null over seeds (experiment_2.step_13_null_seeds): step 1's pass once per initialisation seed, each into
its own folder."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from experiment_1.run import RunConfig
from experiment_2.spectrum.evaluation import EXPERIMENT_2


def seed_folder(output_dir: Path, seed: int) -> Path:
    """Where seed ``seed``'s run goes: ``<output-dir>/seed_<s>`` (three digits, so the folders sort by seed)."""
    return Path(output_dir) / f"seed_{seed:03d}"


def run(config: RunConfig) -> None:
    """Step 1's pass for every seed of ``config.seeds``, each into its :func:`seed_folder`."""
    first, last = config.seeds
    for seed in range(first, last + 1):
        folder = seed_folder(config.output_dir, seed)
        EXPERIMENT_2(replace(config, seed=seed, output_dir=folder))
