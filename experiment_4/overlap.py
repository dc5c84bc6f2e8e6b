"""Experiment 4's overlap analysis (experiment_4.step_2_overlap): the signatures' pairs, 1-NN, global core and nulls."""

from __future__ import annotations

import argparse
from typing import Any

from experiment_1.errors import PipelineError
from experiment_1.files import atomic_write_json, check_finite, check_not_input, git_commit
from experiment_4.formats import CONTROL, RANKINGS, load_signatures
from experiment_4.step_2_overlap import MAX_SWEEP_K, OverlapFlags
from experiment_4.summary import overlap_summary, ranking_store_k


def default_sweep_ks(store_k: int, num_subsets: int) -> list[int]:
    """Powers of two from 8 up to the smallest of the stored ranking length, 2^L / 2 and 256."""
    top = min(store_k, num_subsets // 2, MAX_SWEEP_K)
    return [1 << power for power in range(3, top.bit_length()) if 1 << power <= top]


def check_settings(args: argparse.Namespace, document: dict[str, Any], sweep_ks: list[int]) -> None:
    """One-line errors for flags the signatures cannot satisfy."""
    if "ranked_class" not in document:
        raise PipelineError(
            f"{args.signatures}: has no class-coordinate rankings (written before the leak-free class control); rerun experiment_4.step_1_signatures"
        )
    for ranking, flag, per in (
        (RANKINGS[0], "--store-K", "image"),
        (CONTROL, "--class-store-K", "image and class coordinate"),
    ):
        stored = ranking_store_k(document, ranking)
        if not 1 <= args.nn_k <= stored:
            raise PipelineError(
                f"--nn-K {args.nn_k}: must lie in 1 … {stored}, the ranked subsets stored per {per} (rerun step 1 with a larger {flag})"
            )
    weighted = int(document.get("magnitude_k", document["store_k"]))
    if args.nn_k > weighted:
        raise PipelineError(
            f"--nn-K {args.nn_k}: {args.signatures} keeps the magnitudes of the first {weighted} subsets only (the weighted "
            "signatures); use a smaller --nn-K or signatures.pt"
        )
    for k in sweep_ks:
        if not 1 <= k <= int(document["store_k"]):
            raise PipelineError(
                f"--sweep-K {k}: must lie in 1 … {int(document['store_k'])}, the ranked subsets stored per image (rerun step 1 with a larger --store-K)"
            )


def run(args: OverlapFlags) -> None:
    """overlap.json beside the signatures (or in --output-dir)."""
    document = load_signatures(args.signatures)
    sweep_ks = (
        sorted(set(args.sweep_k))
        if args.sweep_k
        else default_sweep_ks(int(document["store_k"]), int(document["num_subsets"]))
    )
    check_settings(args, document, sweep_ks)
    settings = {
        "signatures": str(args.signatures),
        "nn_k": args.nn_k,
        "sweep_ks": sweep_ks,
        "num_permutations": args.num_permutations,
        "num_bootstrap": args.num_bootstrap,
        "p_value_floor": 1 / (args.num_permutations + 1),
        "seed": args.seed,
        "store_k": int(document["store_k"]),
        "class_store_k": int(document["class_store_k"]),
        "git_commit": git_commit(),
    }
    if args.max_pairs is not None:
        settings["max_pairs"] = args.max_pairs  # overlap_summary adds settings.pair_sampling (what each view used)
    summary = overlap_summary(document, settings)
    path = (args.output_dir or args.signatures.parent) / "overlap.json"
    check_not_input(path, args.signatures)
    check_finite(
        summary,
        f"{path} (not written)",
        "the sampled pairs left a statistic undefined; rerun with a larger --max-pairs, or without it (every pair)",
    )
    atomic_write_json(path, summary)
    scalar, control = (summary["rankings"][name]["binary"]["true_label"] for name in ("scalar", CONTROL))
    print(
        f"wrote {path}: 1-NN at K = {args.nn_k}, true label: scalar {scalar['tests']['nn_accuracy']['observed']:.1%} (p "
        f"= {scalar['tests']['nn_accuracy']['p_value']:.3g}), "
        f"class control {control['tests']['nn_accuracy']['observed']:.1%} (p = {control['tests']['nn_accuracy']['p_value']:.3g}); chance {scalar['chance']:.2%}"
    )
