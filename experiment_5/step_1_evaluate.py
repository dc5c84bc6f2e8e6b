"""Experiment 5, step 1 — per-image difficulty and interaction complexity.

Question: do hard images use more, or higher-order, block interactions?
Per labelled image, all 2^L masks are evaluated and the Möbius coefficients taken (in
--mobius-dtype). From h(full) and the true label: five difficulty scores — cross-entropy,
1 − p(true), 1 − max softmax, softmax entropy, −(top-1 − top-2 logit margin) — and correct /
incorrect (experiment_5.difficulty). From the coefficients: k̄, κ and C_{≤3} (vector and scalar
projections), N_eff^v (order 0 excluded), K_τ^err for every τ and K_η^mass for every η (vector
magnitude ranking, order 0 included), and ‖h(full)‖ (experiment_5.complexity). Nothing of size
2^L × C is kept.

Inputs:  --sample-index with true labels (a per-class list of validation images from
         experiment_1.step_2_sample), shards in --data-dir, --arch/--weights, --tau/--extra-taus,
         --eta/--extra-etas.
Outputs: <output-dir>/per_image.pt (sample references, labels, scores, measures, configuration),
         <output-dir>/timing.json, <output-dir>/partial/experiment_5.step_1_evaluate/ (resume state).

    python -m experiment_5.step_1_evaluate --sample-index experiment_1/sample_index_val.json \\
        --batch-size 8 --mask-chunk 256 --num-workers 8 --seed 0 --output-dir experiment_5/results
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import torch

from experiment_1 import distributed
from experiment_1.errors import PipelineError, run_cli
from experiment_1.data import list_items
from experiment_1.io_utils import atomic_torch_save, read_json
from experiment_1.mobius import full_mask_index, mobius_transform
from experiment_1.pipeline import MOBIUS_DTYPES, EvaluationSetup, add_evaluation_arguments, build_setup, image_counts, provenance, run_per_image, valid_images, write_timing
from experiment_5.complexity import complexity_measures
from experiment_5.difficulty import difficulty_scores

QUESTION = "Do hard images use more, or higher-order, block interactions?"
DEFAULT_EXTRA_TAUS = (0.05, 0.2, 0.3)
DEFAULT_EXTRA_ETAS = (0.5, 0.75, 0.95)


def thresholds(primary: float, extra: list[float], flag: str, upper_inclusive: bool) -> list[float]:
    """``[primary, *sorted(extra without primary)]``; a :class:`PipelineError` for a value outside (0, 1) (or (0, 1])."""
    for value in [primary, *extra]:
        if not (0 < value < 1 or (upper_inclusive and value == 1)):
            raise PipelineError(f"{flag} {value:g}: must lie in (0, 1{']' if upper_inclusive else ')'}")
    return [primary, *sorted(set(extra) - {primary})]


def check_labelled(setup: EvaluationSetup) -> None:
    """Experiment 5 needs the true label of every image."""
    unlabelled = sum(sample.label < 0 for sample in setup.samples)
    if unlabelled:
        raise PipelineError(
            f"{setup.args.sample_index}: {unlabelled} of {len(setup.samples)} images have no label (-1); Experiment 5 needs labels — "
            "draw a per-class list from the validation shards (experiment_1.step_2_sample --pattern 'validation-*.parquet' --mode per-class)"
        )


def evaluate(setup: EvaluationSetup, taus: list[float], etas: list[float]) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Per-image difficulty scores and complexity measures of every image, resumably."""
    dtype = MOBIUS_DTYPES[setup.args.mobius_dtype]
    full_index = full_mask_index(setup.model.num_blocks)

    def compute(logits: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
        full = logits[:, full_index]
        if int(labels.max()) >= full.shape[1]:
            raise PipelineError(f"{setup.args.sample_index}: label {int(labels.max())} is out of range for a model with {full.shape[1]} classes")
        coefficients = mobius_transform(logits, dim=1, dtype=dtype)
        return {
            **difficulty_scores(full, labels),
            **complexity_measures(coefficients, full, taus, etas),
            "full_prediction": full.argmax(dim=1),
        }

    return run_per_image(setup, "experiment_5.step_1_evaluate/all_masks", compute, description="Exp 5 difficulty/complexity")


def sample_pool(setup: EvaluationSetup) -> dict[str, Any]:
    """How the sample list was drawn (its pattern, mode, per-class count) and how many labelled images that pattern
    matches in --data-dir, so a report can say which share of the available images was used."""
    document = read_json(setup.args.sample_index)
    pattern = document.get("pattern")
    available = sum(item.label >= 0 for item in list_items(setup.dataset.data_dir, pattern)) if pattern else None
    return {
        "pattern": pattern,
        "mode": document.get("mode"),
        "per_class": document.get("per_class"),
        "list_size": len(document["samples"]),
        "labelled_images_matching_pattern": available,
    }


def per_image_record(setup: EvaluationSetup, arrays: dict[str, np.ndarray], config: dict[str, Any]) -> dict[str, Any]:
    """What ``per_image.pt`` holds: configuration, counts, the sample pool, sample references and every per-image array."""
    valid = valid_images(arrays)
    return {
        "experiment": 5,
        "question": QUESTION,
        "config": json.loads(json.dumps(config)),  # plain types only (torch's version string is a str subclass), for weights_only loading
        **image_counts(valid),
        "sample_pool": sample_pool(setup),
        "samples": [{"source": sample.source, "row": sample.row, "label": sample.label} for sample in setup.samples],
        "arrays": {name: torch.from_numpy(np.ascontiguousarray(value)) for name, value in sorted(arrays.items())},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_evaluation_arguments(parser, "experiment_5/results", default_sample_index="experiment_1/sample_index_val.json")
    parser.add_argument("--tau", type=float, default=0.1, help="relative-error threshold of K_τ^err, the headline one (default: %(default)s)")
    parser.add_argument("--extra-taus", type=float, nargs="*", default=list(DEFAULT_EXTRA_TAUS), help="further τ also recorded (default: %(default)s)")
    parser.add_argument("--eta", type=float, default=0.9, help="energy fraction of K_η^mass, the headline one (default: %(default)s)")
    parser.add_argument("--extra-etas", type=float, nargs="*", default=list(DEFAULT_EXTRA_ETAS), help="further η also recorded (default: %(default)s)")
    args = parser.parse_args(argv)
    taus = thresholds(args.tau, args.extra_taus, "--tau/--extra-taus", upper_inclusive=False)
    etas = thresholds(args.eta, args.extra_etas, "--eta/--extra-etas", upper_inclusive=True)
    setup = build_setup(args)
    check_labelled(setup)
    setup.config.update(taus=taus, etas=etas)  # part of the resume key: other thresholds never mix with these batches
    arrays, timing = evaluate(setup, taus, etas)
    if not distributed.is_main():  # under torchrun, rank 0 writes
        return
    config = provenance(setup)
    record = per_image_record(setup, arrays, config)
    path = Path(args.output_dir) / "per_image.pt"
    atomic_torch_save(record, path)
    write_timing(setup, timing, config["device_name"])
    valid = arrays["valid"].astype(bool)
    print(f"wrote {path}: {record['num_valid']} images, top-1 {arrays['correct'][valid].mean():.1%}, "
          f"mean K_τ^err (τ = {taus[0]:g}) {arrays['k_err'][valid, 0].mean():.3g}, mean N_eff^v {np.nanmean(arrays['n_eff_vector'][valid]):.3g}")


if __name__ == "__main__":
    run_cli(main)
