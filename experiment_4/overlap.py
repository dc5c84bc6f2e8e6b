"""Experiment 4, step 2 — do images of one class share their dominant subsets?

Question: do the dominant subsets depend on the input and on its class? From step 1's rankings,
each image's top-K signature (binary, and weighted by its normalised magnitudes) is compared with
every other image's by Jaccard (Σ min / Σ max), for the rankings of experiment_4.summary: vector,
scalar at the predicted class, scalar at the true class (the earlier control; it leaks the label and
is shown for contrast only) and the leak-free class control (all images compared in one class
coordinate at a time, that class's own images left out; pooled over the coordinates).

- Pairs: mean Jaccard of all same-class vs all different-class pairs (true labels), their
  difference and the AUC (same > different), with histograms.
- Leave-one-out 1-NN on the top---nn-K signatures (neighbour = the most similar other image; ties
  go to the lowest sample position): accuracy at predicting the true label and, separately, the
  predicted class, with a bootstrap CI over images, against the exact chance given the class counts
  (Σ m_c (m_c − 1) / (N (N − 1))); a K sweep (--sweep-K); the network's own full-mask top-1 for scale.
- Inference: every statistic is tested against a null that permutes the labels (or predicted
  classes) over images (--num-permutations, default 1 000, seeded; p = (1 + #null ≥ ours) / (1 + n),
  floor 1 / (n + 1)); pairs share images, so no pair-level test is used. Holm across the rankings ×
  statistics of the verdicts. The scalar − vector contrast is tested on the difference of the two
  rankings' statistics under the same permutations (overlap.json's ``scalar_minus_vector``).
- Global core: the K subsets most often in an image's top-K; each image's share of its top-K inside
  it (mean, CI; a random top-K would share K / 2^L) and how many subsets cover 50 % / 90 % of all
  top-K memberships.
- Verdicts (experiment_4.verdicts): computed here and stored in the JSON's ``verdicts`` block.
- Sampled pairs (--max-pairs M; default: every pair, exact): for N = 10 000, where all-pairs inference
  takes tens of hours (experiment_4/README.md). A per-image ranking's pair statistics (difference, AUC,
  histograms) run over min(M, N(N − 1)/2) pairs drawn uniformly without replacement, label-blind,
  seeded by --seed (one sample shared by every per-image ranking); its 1-NN stays exact (all images,
  similarity rows in blocks). The class control's C coordinates share the budget: each compares its
  own min(⌈M / C⌉, N(N − 1)/2) pairs and takes the 1-NN of its own min(⌈M / C⌉, N) query images (each
  neighbour searched among all images). The pairs and queries are fixed and the labels permuted over
  images, so each permutation reclassifies the same sampled pairs and the null stays exact. Unlike the
  original study, which caps the same-class and the different-class pairs at M each (a sample chosen by
  the labels, not exchangeable under their permutation), the sample holds about M × chance same-class
  pairs. overlap.json's ``settings.pair_sampling`` records M, the seed and the pairs and queries per view
  (experiment_4.sampled_inference).

- Scalar − vector is decided on the pooled AUC difference by a paired bootstrap over classes (--num-bootstrap,
  experiment_4.contrast); the global core's share is tested against random top-K sets (experiment_4.core_null);
  every test whose best attainable p exceeds α reads "cannot tell (no power)" (experiment_4.power); Holm over
  Experiment 4's family of tests.

Inputs:  --signatures (step_1_signatures' signatures.pt, or its compact, committed signatures.npz: the same numbers).
Outputs: <output-dir>/overlap.json (default: beside the signatures). Deterministic: a rerun writes
         the same bytes.

    python -m experiment_4.step_2_overlap --signatures experiment_4/results/signatures.pt \\
        --output-dir experiment_4/results --nn-K 32
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from experiment_1.errors import PipelineError, run_cli
from experiment_1.files import atomic_write_json, check_finite, check_not_input, git_commit
from experiment_1.run import run_config
from experiment_4.contrast import NUM_RESAMPLES
from experiment_4.formats import CONTROL, RANKINGS, load_signatures
from experiment_4.summary import overlap_summary, ranking_store_k

MAX_SWEEP_K = 256


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
    if args.num_permutations < 1:
        raise PipelineError(f"--num-permutations {args.num_permutations} must be at least 1")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--signatures",
        type=Path,
        default=Path("experiment_4/results/signatures.pt"),
        help="signatures.pt of step_1_signatures (default: %(default)s)",
    )
    parser.add_argument(
        "--output-dir",
        type=run_config.output_path,
        default=None,
        help="where overlap.json goes (default: the signatures' folder)",
    )
    parser.add_argument(
        "--nn-K",
        dest="nn_k",
        type=int,
        default=32,
        help="signature size for the pairs, 1-NN, the global core and the verdicts (default: %(default)s)",
    )
    parser.add_argument(
        "--sweep-K",
        dest="sweep_k",
        type=int,
        nargs="+",
        default=None,
        help=f"signature sizes of the 1-NN sweep (default: 8, 16, … up to min(store-K, 2^L/2, {MAX_SWEEP_K}); the class control's stop at its class-store-K)",
    )
    parser.add_argument(
        "--num-permutations",
        type=int,
        default=1000,
        help="label permutations of every null (default: %(default)s; p-values are at least 1 / (n + 1))",
    )
    parser.add_argument(
        "--num-bootstrap",
        type=run_config.positive_int,
        default=NUM_RESAMPLES,
        help="class-bootstrap replicates of the scalar − vector AUC difference (default: %(default)s; its two-sided p is "
        "at least 2 / (B + 1))",
    )
    parser.add_argument(
        "--seed",
        type=run_config.seed,
        default=0,
        help="seed of the permutations and the bootstraps (default: %(default)s)",
    )
    parser.add_argument(
        "--max-pairs",
        type=run_config.positive_int,
        default=None,
        help="compare a seeded, label-blind sample of M image pairs per per-image ranking (about M over the class control's "
        "coordinates, which also samples its 1-NN queries) instead of all pairs (default: all pairs, exact; see the docstring)",
    )
    args = parser.parse_args(argv)
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


if __name__ == "__main__":
    run_cli(main)
