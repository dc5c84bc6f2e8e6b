"""Experiment 1, step 2 — draw a sample list of images.

Question: which images do the experiments use? A fixed, seeded draw, so every later step (and
every later experiment) reads exactly the same images.

Inputs:  parquet shards (or ImageFolder trees) in --data-dir matching --pattern.
Outputs: --output, a sample-list JSON (source, row, label per image; sorted by source and row).

    python -m experiment_1.step_2_sample --pattern 'test-*.parquet' --mode uniform \\
        --num-images 10000 --seed 0 --output experiment_1/sample_index.json
    python -m experiment_1.step_2_sample --pattern 'validation-*.parquet' --mode per-class \\
        --per-class 10 --seed 0 --output experiment_1/sample_index_val.json
    python -m experiment_1.step_2_sample --data-dir imagenet-1k/sample-1750 --pattern 'validation-*.parquet' \\
        --mode per-class --per-class 6 --min-per-class 6 --seed 0 --output experiment_1/sample_index_sample_val_min6.json
    python -m experiment_1.step_2_sample --data-dir imagenet-1k/sample-1750 --pattern 'validation-*.parquet' \\
        --mode per-class --per-class 4 --min-per-class 6 --num-classes 12 --seed 0 \\
        --output experiment_1/sample_index_sample_val_12x4.json     # 48 images of 12 classes, for L = 14 runs
"""

from __future__ import annotations

from experiment_1.data.draw import main
from experiment_1.errors import run_cli

__all__ = ["main"]

if __name__ == "__main__":
    run_cli(main)
