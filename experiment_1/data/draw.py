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

import argparse
import sys
from collections import Counter
from pathlib import Path

from experiment_1.data.imagenet_classes import FOLDER_LABELS
from experiment_1.data.shards import MODES, default_data_dir, draw_sample, list_items, sample_list_json
from experiment_1.errors import PipelineError, run_cli
from experiment_1.files import atomic_write_json
from experiment_1.run import run_config


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--data-dir",
        type=run_config.data_folder,
        default=None,
        help="folder of shards (default: $MOE_DATA or imagenet-1k/data)",
    )
    parser.add_argument(
        "--pattern",
        default="test-*.parquet",
        help="glob of shards or image folders inside --data-dir (default: %(default)s)",
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        default="uniform",
        help="uniform over all images, or a fixed number per class (default: %(default)s)",
    )
    parser.add_argument(
        "--num-images",
        type=run_config.positive_int,
        default=10000,
        help="images to draw in uniform mode (default: %(default)s)",
    )
    parser.add_argument(
        "--per-class",
        type=run_config.positive_int,
        default=10,
        help="images per class in per-class mode (default: %(default)s)",
    )
    parser.add_argument(
        "--min-per-class",
        type=run_config.positive_int,
        default=None,
        help="per-class mode: keep only classes with at least N images (default: every class)",
    )
    parser.add_argument(
        "--num-classes",
        type=run_config.positive_int,
        default=None,
        help="per-class mode: draw only N of the (kept) classes at random, for a small list whose classes each hold several images (default: every class)",
    )
    parser.add_argument("--seed", type=run_config.seed, default=0, help="seed of the draw (default: %(default)s)")
    parser.add_argument(
        "--folder-labels",
        choices=FOLDER_LABELS,
        default="imagenet",
        help="labels of ImageFolder class folders: imagenet (folders named by WordNet id or torchvision class name → "
        "the ImageNet class index) or sorted (0 … K−1 in sorted order, for folders that are not ImageNet classes) "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--output",
        type=run_config.output_path,
        default=Path("experiment_1/sample_index.json"),
        help="sample list to write (default: %(default)s)",
    )
    args = parser.parse_args(argv)

    data_dir = args.data_dir or default_data_dir()
    items = list_items(data_dir, args.pattern, args.folder_labels)
    if args.min_per_class is not None and (args.mode != "per-class" or args.min_per_class < 1):
        raise PipelineError(f"--min-per-class {args.min_per_class}: needs --mode per-class and a value of at least 1")
    if args.num_classes is not None and args.mode != "per-class":
        raise PipelineError(f"--num-classes {args.num_classes}: needs --mode per-class")
    samples = draw_sample(
        items, args.mode, args.num_images, args.per_class, args.seed, args.min_per_class or 1, args.num_classes
    )
    per_class = args.per_class if args.mode == "per-class" else None
    document = sample_list_json(
        samples, args.pattern, args.mode, args.seed, per_class, args.min_per_class, args.num_classes
    )
    atomic_write_json(
        args.output, document if args.folder_labels == "imagenet" else {**document, "folder_labels": args.folder_labels}
    )
    labelled = sum(1 for sample in samples if sample.label >= 0)
    classes = len(Counter(sample.label for sample in samples if sample.label >= 0))
    labels = {item.label for item in items if item.label >= 0}
    if args.num_classes is not None:
        eligible = sum(
            1
            for count in Counter(item.label for item in items if item.label >= 0).values()
            if count >= (args.min_per_class or 1)
        )
        kept = f"; {eligible} of {len(labels)} classes have at least {args.min_per_class or 1} images, {classes} of them drawn at random"
    else:
        kept = (
            ""
            if args.min_per_class is None
            else f"; kept the {classes} of {len(labels)} classes with at least {args.min_per_class} images"
        )
    print(f"wrote {args.output}: {len(samples)} of {len(items)} images ({labelled} labelled, {classes} classes{kept})")
    shortfall = request_shortfall(
        args, samples, len(items), eligible_classes=len(labels) if args.num_classes is not None else None
    )
    if shortfall:
        print(f"note: {shortfall}", file=sys.stderr)


def request_shortfall(
    args: argparse.Namespace, samples: list, available: int, eligible_classes: int | None = None
) -> str | None:
    """One sentence where the draw could not give what was asked (more images, or more per class, than the data
    holds): what was asked and what the list holds instead; None where the request was met."""
    if args.mode == "uniform":
        if len(samples) < args.num_images:
            return f"asked for {args.num_images} images, the data has {available} matching '{args.pattern}': the list holds all {len(samples)}"
        return None
    counts = Counter(sample.label for sample in samples if sample.label >= 0)
    short = [count for count in counts.values() if count < args.per_class]
    parts = []
    if short:
        parts.append(
            f"asked for {args.per_class} images per class, {len(short)} of the {len(counts)} classes have fewer "
            f"({min(short)}–{max(short)}; {len(samples) / max(len(counts), 1):.2f} per class on average): "
            f"the list holds {len(samples)} images, not {args.per_class * len(counts)}"
        )
    if args.num_classes is not None and len(counts) < args.num_classes:
        parts.append(f"asked for {args.num_classes} classes, {len(counts)} qualify")
    return "; ".join(parts) or None


if __name__ == "__main__":
    run_cli(main)
