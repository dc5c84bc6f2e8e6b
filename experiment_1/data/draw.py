"""Experiment 1's sample list (experiment_1.step_2_sample): a seeded draw of images from the shards, written as JSON."""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

from experiment_1.data.shards import default_data_dir, draw_sample, list_items, sample_list_json
from experiment_1.files import atomic_write_json


def run(args: Any) -> None:
    """Draw the sample list the flags ask for (experiment_1.step_2_sample.SampleFlags), write it, and say where the
    data could not give what was asked."""
    data_dir = args.data_dir or default_data_dir()
    items = list_items(data_dir, args.pattern, args.folder_labels)
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


def request_shortfall(args: Any, samples: list, available: int, eligible_classes: int | None = None) -> str | None:
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
