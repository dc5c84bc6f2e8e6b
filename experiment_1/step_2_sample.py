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

from dataclasses import dataclass
from pathlib import Path

from experiment_1.data.choices import FOLDER_LABELS, MODES
from experiment_1.errors import run_cli
from experiment_1.paths import DOWNLOAD_HINT
from experiment_1.run import Command, flag, run_config


@dataclass(frozen=True)
class SampleFlags:
    """What to draw from which shards, and where the list goes."""

    data_dir: Path | None = flag(
        "folder of shards (default: $MOE_DATA or imagenet-1k/data)",
        path="folder",
        what="data directory",
        fix=f"check the path, or {DOWNLOAD_HINT}",
        default=None,
    )
    pattern: str = flag(
        "glob of shards or image folders inside --data-dir (default: %(default)s)", default="test-*.parquet"
    )
    mode: str = flag(
        "uniform over all images, or a fixed number per class (default: %(default)s)", choices=MODES, default="uniform"
    )
    num_images: int = flag("images to draw in uniform mode (default: %(default)s)", low=1, default=10000)
    per_class: int = flag("images per class in per-class mode (default: %(default)s)", low=1, default=10)
    min_per_class: int | None = flag(
        "per-class mode: keep only classes with at least N images (default: every class)", low=1, default=None
    )
    num_classes: int | None = flag(
        "per-class mode: draw only N of the (kept) classes at random, for a small list whose classes each hold "
        "several images (default: every class)",
        low=1,
        default=None,
    )
    seed: int = flag("seed of the draw (default: %(default)s)", type=run_config.seed, default=0)
    folder_labels: str = flag(
        "labels of ImageFolder class folders: imagenet (folders named by WordNet id or torchvision class name → "
        "the ImageNet class index) or sorted (0 … K−1 in sorted order, for folders that are not ImageNet classes) "
        "(default: %(default)s)",
        choices=FOLDER_LABELS,
        default="imagenet",
    )
    output: Path = flag(
        "sample list to write (default: %(default)s)", path="output", default=Path("experiment_1/sample_index.json")
    )

    def problems(self) -> list[str]:
        """Per-class options without --mode per-class."""
        found = []
        if self.min_per_class is not None and self.mode != "per-class":
            found.append(f"--min-per-class {self.min_per_class}: needs --mode per-class and a value of at least 1")
        if self.num_classes is not None and self.mode != "per-class":
            found.append(f"--num-classes {self.num_classes}: needs --mode per-class")
        return found


COMMAND = Command(__doc__, SampleFlags, "experiment_1.data.draw:run")
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
