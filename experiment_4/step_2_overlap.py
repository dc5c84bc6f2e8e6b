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

from dataclasses import dataclass
from pathlib import Path

from experiment_1.errors import run_cli
from experiment_1.run import Command, flag, run_config
from experiment_4.contrast import NUM_RESAMPLES

MAX_SWEEP_K = 256
DEFAULT_NN_K = 32  # Experiment 4's signature size, also step_4_shapley's expert sets


@dataclass(frozen=True)
class OverlapFlags:
    """The signatures, the analysis' sizes and its resampling."""

    signatures: Path = flag(
        "signatures.pt of step_1_signatures (default: %(default)s)",
        path="file",
        fix=lambda path, flags: (
            "a results folder from before the compact signatures has only signatures.pt (pass it), or rerun "
            "`python -m experiment_4.step_1_signatures` to write both"
            if path.suffix == ".npz"
            else "run `python -m experiment_4.step_1_signatures` first"
        ),
        default=Path("experiment_4/results/signatures.pt"),
    )
    output_dir: Path | None = flag(
        "where overlap.json goes (default: the signatures' folder)", path="output", default=None
    )
    nn_k: int = flag(
        "signature size for the pairs, 1-NN, the global core and the verdicts (default: %(default)s)",
        low=1,
        option="--nn-K",
        default=DEFAULT_NN_K,
    )
    sweep_k: list[int] | None = flag(
        f"signature sizes of the 1-NN sweep (default: 8, 16, … up to min(store-K, 2^L/2, {MAX_SWEEP_K}); the class "
        "control's stop at its class-store-K)",
        low=1,
        nargs="+",
        option="--sweep-K",
        default=None,
    )
    num_permutations: int = flag(
        "label permutations of every null (default: %(default)s; p-values are at least 1 / (n + 1))",
        low=1,
        default=1000,
    )
    num_bootstrap: int = flag(
        "class-bootstrap replicates of the scalar − vector AUC difference (default: %(default)s; its two-sided p is "
        "at least 2 / (B + 1))",
        low=1,
        default=NUM_RESAMPLES,
    )
    seed: int = flag(
        "seed of the permutations and the bootstraps (default: %(default)s)", type=run_config.seed, default=0
    )
    max_pairs: int | None = flag(
        "compare a seeded, label-blind sample of M image pairs per per-image ranking (about M over the class "
        "control's coordinates, which also samples its 1-NN queries) instead of all pairs (default: all pairs, "
        "exact; see the docstring)",
        low=1,
        default=None,
    )


COMMAND = Command(__doc__, OverlapFlags, "experiment_4.overlap:run")
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
