"""Experiment 4, step 2 — do images of one class share their dominant subsets?

Question: do the dominant subsets depend on the input and on its class? From step 1's rankings,
each image's top-K signature (binary, and weighted by its normalised magnitudes) is compared with
others' by Jaccard (Σ min / Σ max), for the three rankings: vector, scalar at the predicted class,
scalar at the true class (the control for "same predicted class ⇒ same projected coordinate").

- Pairs: Jaccard of same-class vs different-class pairs (true labels; at most --max-pairs of each,
  drawn with --seed), means with bootstrap CIs (over pairs), the AUC of same vs different
  (Mann–Whitney) as the effect size, and histograms.
- Leave-one-out 1-NN on the top---nn-K signatures (neighbour = the most similar other image; ties
  go to the lowest sample position): accuracy at predicting the true label and, separately, the
  predicted class, against chance (1 / classes) and a label-permutation null (--num-permutations
  seeded shuffles of the targets, neighbours fixed); a K sweep (--sweep-K) of the binary 1-NN
  accuracy; the network's own full-mask top-1 on the same images for scale.
- Global core: the K subsets most often in an image's top-K; each image's share of its top-K inside
  it (mean, CI; a random top-K would share K / 2^L) and how many subsets cover 50 % / 90 % of all
  top-K memberships.
Every pairwise similarity is a chunked product of the signature matrix with its transpose in sparse
index form (experiment_4.signatures), so memory stays bounded at N = 10 000 and 2^16 subsets.

Inputs:  --signatures (step_1_signatures' signatures.pt).
Outputs: <output-dir>/overlap.json (default: beside the signatures). Deterministic: a rerun writes
         the same bytes.

    python -m experiment_4.step_2_overlap --signatures experiment_4/results/signatures.pt \\
        --output-dir experiment_4/results --max-pairs 45000 --nn-K 32
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from experiment_1 import arg_types
from experiment_1.errors import PipelineError, run_cli
from experiment_1.io_utils import atomic_write_json, check_not_input, git_commit
from experiment_1.pipeline import image_counts, valid_images
from experiment_1.published import published_numbers
from experiment_1.stats import bootstrap_mean_ci
from experiment_4.signatures import (
    SIGNATURE_RANKINGS,
    auc,
    core_share,
    gate_set,
    global_core,
    membership_counts,
    nearest_neighbours,
    neighbour_agreement,
    pair_similarity,
    permutation_null,
    sample_pairs,
    subsets_covering,
    top_k_signatures,
)
from experiment_4.records import SIMILARITIES, TARGETS, load_signatures

HISTOGRAM_BINS = 40
COVERAGE_FRACTIONS = (0.5, 0.9)
MAX_SWEEP_K = 256
MAX_FREQUENCY_POINTS = 1024


def default_sweep_ks(store_k: int, num_subsets: int) -> list[int]:
    """Powers of two from 8 up to the smallest of the stored ranking length, 2^L / 2 and 256."""
    top = min(store_k, num_subsets // 2, MAX_SWEEP_K)
    return [1 << power for power in range(3, top.bit_length()) if 1 << power <= top]


def check_settings(args: argparse.Namespace, store_k: int, sweep_ks: list[int]) -> None:
    """One-line errors for flags the signatures cannot satisfy."""
    for flag, value in [("--nn-K", args.nn_k)] + [("--sweep-K", k) for k in sweep_ks]:
        if not 1 <= value <= store_k:
            raise PipelineError(f"{flag} {value}: must lie in 1 … {store_k}, the ranked subsets stored per image (rerun step 1 with a larger --store-K)")
    if args.max_pairs < 1 or args.num_permutations < 1:
        raise PipelineError(f"--max-pairs {args.max_pairs} and --num-permutations {args.num_permutations} must be at least 1")


def pair_block(same: np.ndarray, different: np.ndarray, seed: int) -> dict[str, Any]:
    """Same- vs different-class Jaccard: means with CIs, the AUC and histograms on [0, 1]."""
    edges = np.linspace(0.0, 1.0, HISTOGRAM_BINS + 1)
    return {
        "same_class": bootstrap_mean_ci(same, seed),
        "different_class": bootstrap_mean_ci(different, seed),
        "difference": float(same.mean() - different.mean()),
        **auc(same, different),
        "histogram": {"edges": edges.tolist(), "same_class": np.histogram(same, edges)[0].tolist(), "different_class": np.histogram(different, edges)[0].tolist()},
    }


def nn_block(neighbours: torch.Tensor, targets: torch.Tensor, chance: float, num_permutations: int, seed: int) -> dict[str, Any]:
    """1-NN accuracy (mean, CI over images) against chance and the label-permutation null."""
    correct = neighbour_agreement(neighbours, targets).numpy()
    null = permutation_null(neighbours, targets, num_permutations, seed)
    accuracy = float(correct.mean())
    return {
        "accuracy": bootstrap_mean_ci(correct, seed),
        "chance": chance,
        "over_chance": accuracy / chance,
        "permutation_null": {
            "mean": float(null.mean()),
            "std": float(null.std()),
            "q025": float(np.quantile(null, 0.025)),
            "q975": float(np.quantile(null, 0.975)),
            "max": float(null.max()),
            "num_permutations": num_permutations,
            "p_value": float((1 + (null >= accuracy).sum()) / (1 + num_permutations)),
        },
    }


def core_block(indices: torch.Tensor, num_subsets: int, num_blocks: int, seed: int) -> dict[str, Any]:
    """The global core of the top-K signatures and how much of each image's top-K it holds."""
    count, k = indices.shape
    counts = membership_counts(indices, num_subsets)
    core = global_core(counts, k)
    frequency = counts.sort(descending=True).values
    frequency = frequency[frequency > 0][:MAX_FREQUENCY_POINTS]
    return {
        "k": k,
        "core_masks": core.tolist(),
        "core_gate_sets": [gate_set(mask, num_blocks) for mask in core.tolist()],
        "core_frequency": (counts[core].double() / count).tolist(),
        "share": bootstrap_mean_ci(core_share(indices, core).numpy(), seed),
        "random_share": k / num_subsets,
        "distinct_subsets": int((counts > 0).sum()),
        "subsets_covering": {str(fraction): number for fraction, number in zip(COVERAGE_FRACTIONS, subsets_covering(counts, list(COVERAGE_FRACTIONS)))},
        "frequency_curve": (frequency.double() / count).tolist(),
        "frequency_curve_truncated": bool((counts > 0).sum() > MAX_FREQUENCY_POINTS),
    }


def sweep_block(accuracies: dict[str, list[dict[str, Any]]], ks: list[int]) -> dict[str, Any]:
    """The binary 1-NN accuracy per K, per target, as lists for plotting and tables."""
    block: dict[str, Any] = {"ks": ks}
    for target, results in accuracies.items():
        block[target] = {
            "mean": [result["accuracy"]["mean"] for result in results],
            "ci_low": [result["accuracy"]["ci_low"] for result in results],
            "ci_high": [result["accuracy"]["ci_high"] for result in results],
            "null_mean": [result["permutation_null"]["mean"] for result in results],
            "null_q975": [result["permutation_null"]["q975"] for result in results],
        }
    return block


def summarize(document: dict[str, Any], args: argparse.Namespace, sweep_ks: list[int]) -> dict[str, Any]:
    """Every Experiment 4 number: pairs, 1-NN, K sweep and global core per ranking."""
    valid = valid_images({"valid": document["valid"].numpy()})
    if valid.sum() < 2:
        raise PipelineError(f"{args.signatures}: only {int(valid.sum())} valid image(s); leave-one-out 1-NN needs at least two")
    keep = torch.from_numpy(valid)
    labels, predicted = document["label"][keep], document["predicted"][keep]
    num_classes = int(labels.unique().numel())
    if num_classes < 2:
        raise PipelineError(f"{args.signatures}: every image has the same label; Experiment 4 compares classes (use a per-class sample list)")
    num_subsets, num_blocks = int(document["num_subsets"]), int(document["config"]["num_blocks"])
    targets = {"true_label": labels, "predicted_class": predicted}
    chance = {"true_label": 1 / num_classes, "predicted_class": 1 / int(predicted.unique().numel())}
    rng = np.random.default_rng(args.seed)
    pairs = {"same_class": sample_pairs(labels.numpy(), True, args.max_pairs, rng), "different_class": sample_pairs(labels.numpy(), False, args.max_pairs, rng)}

    if not len(pairs["same_class"]):
        raise PipelineError(f"{args.signatures}: no two images share a label; Experiment 4 needs several images per class (a per-class sample list)")

    jobs = list(dict.fromkeys([(ranking, kind, args.nn_k) for ranking in SIGNATURE_RANKINGS for kind in SIMILARITIES] + [(ranking, "binary", k) for ranking in SIGNATURE_RANKINGS for k in sweep_ks]))
    nn_results: dict[tuple[str, str, int], dict[str, Any]] = {}
    rankings: dict[str, Any] = {ranking: {} for ranking in SIGNATURE_RANKINGS}
    for ranking, kind, k in tqdm(jobs, desc="Exp 4 1-NN", unit="signature set", dynamic_ncols=True):
        indices, weights = top_k_signatures(document[f"ranked_{ranking}"][keep], document[f"magnitude_{ranking}"][keep], k, kind == "weighted")
        neighbours = nearest_neighbours(indices, weights, num_subsets)
        nn_results[ranking, kind, k] = {target: nn_block(neighbours, targets[target], chance[target], args.num_permutations, args.seed) for target in TARGETS}
        if k != args.nn_k:
            continue
        similarity = {name: pair_similarity(indices, weights, num_subsets, torch.from_numpy(value)).numpy() for name, value in pairs.items()}
        rankings[ranking][kind] = {"pairs": pair_block(similarity["same_class"], similarity["different_class"], args.seed), "nn": nn_results[ranking, kind, k]}
        if kind == "binary":
            rankings[ranking]["global_core"] = core_block(indices, num_subsets, num_blocks, args.seed)
    for ranking in SIGNATURE_RANKINGS:
        rankings[ranking]["nn_sweep"] = sweep_block({target: [nn_results[ranking, "binary", k][target] for k in sweep_ks] for target in TARGETS}, sweep_ks)

    correct = (predicted == labels).double().numpy()
    return {
        "experiment": 4,
        "question": document["question"],
        "config": document["config"],
        "settings": {
            "signatures": str(args.signatures),
            "nn_k": args.nn_k,
            "max_pairs": args.max_pairs,
            "sweep_ks": sweep_ks,
            "num_permutations": args.num_permutations,
            "seed": args.seed,
            "store_k": int(document["store_k"]),
            "git_commit": git_commit(),
        },
        **image_counts(valid),
        "num_subsets": num_subsets,
        "num_classes": num_classes,
        "num_predicted_classes": int(predicted.unique().numel()),
        "chance": chance["true_label"],
        "full_mask_top1_accuracy": bootstrap_mean_ci(correct, args.seed),
        "pairs": {name: len(value) for name, value in pairs.items()},
        "rankings": rankings,
        "published": published_numbers("experiment_4"),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--signatures", type=Path, default=Path("experiment_4/results/signatures.pt"), help="signatures.pt of step_1_signatures (default: %(default)s)")
    parser.add_argument("--output-dir", type=arg_types.output_path, default=None, help="where overlap.json goes (default: the signatures' folder)")
    parser.add_argument("--max-pairs", type=int, default=45000, help="at most this many same-class and this many different-class pairs (default: %(default)s)")
    parser.add_argument("--nn-K", dest="nn_k", type=int, default=32, help="signature size for the pairs, 1-NN and the global core (default: %(default)s)")
    parser.add_argument("--sweep-K", dest="sweep_k", type=int, nargs="+", default=None, help=f"signature sizes of the 1-NN sweep (default: 8, 16, … up to min(store-K, 2^L/2, {MAX_SWEEP_K}))")
    parser.add_argument("--num-permutations", type=int, default=100, help="label permutations of the 1-NN null (default: %(default)s)")
    parser.add_argument("--seed", type=arg_types.seed, default=0, help="seed of the pair draw, the permutations and the bootstraps (default: %(default)s)")
    args = parser.parse_args(argv)
    document = load_signatures(args.signatures)
    sweep_ks = sorted(set(args.sweep_k)) if args.sweep_k else default_sweep_ks(int(document["store_k"]), int(document["num_subsets"]))
    check_settings(args, int(document["store_k"]), sweep_ks)
    summary = summarize(document, args, sweep_ks)
    path = (args.output_dir or args.signatures.parent) / "overlap.json"
    check_not_input(path, args.signatures)
    atomic_write_json(path, summary)
    scalar = summary["rankings"]["scalar"]["binary"]["nn"]["true_label"]
    print(f"wrote {path}: 1-NN (scalar, K = {args.nn_k}) {scalar['accuracy']['mean']:.1%} vs chance {summary['chance']:.2%} "
          f"(permutation null {scalar['permutation_null']['mean']:.2%})")


if __name__ == "__main__":
    run_cli(main)
