"""Experiment 4's analysis: every number and verdict of overlap.json from step 1's rankings (:func:`overlap_summary`).

Rankings compared (:data:`RANKINGS`):

- ``vector`` ‖Δ_S h‖₂ and ``scalar`` |Δ_S h[c*]| at the predicted class: one signature per image,
  binary and weighted;
- ``scalar_true`` |Δ_S h[y]| at the true label: the earlier control, which **leaks the label**
  (same-class images are projected on one coordinate by construction); shown for contrast, no verdict;
- ``class_control``: the leak-free control. For each class coordinate c of the sample list, every
  image is ranked by |Δ_S h[c]| and compared with the others **in that one coordinate**; the images
  of class c take no part in it (no image is ever projected on its own label). Statistics are
  pooled over the coordinates (binary signatures; step 1 keeps subset ids only).

Tests (experiment_4.inference): same- vs different-class mean Jaccard, AUC and leave-one-out 1-NN
accuracy against a null that permutes the labels over images (the same permutations for every
ranking), one-sided; Holm across the rankings × statistics of the verdict family. The scalar −
vector contrast is tested directly: the difference of the two rankings' statistics under those same
permutations, and a paired bootstrap over images of the per-image 1-NN hit difference.

With ``settings["max_pairs"]`` (step 2's ``--max-pairs``) the views are built on sampled pairs instead
(experiment_4.sampled_inference: label-blind pairs fixed under the permutations, exact 1-NN for the
per-image rankings, sampled queries in the class control), in bounded memory; overlap.json's
``settings.pair_sampling`` records the sample.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

import numpy as np
import torch
from tqdm import tqdm

from experiment_1.errors import PipelineError
from experiment_1.report import bootstrap_mean_ci, published_numbers
from experiment_1.run import image_counts, valid_images
from experiment_4.contrast import NUM_RESAMPLES, auc_difference_bootstrap, nn_hit_mcnemar
from experiment_4.core_null import core_test, random_core_shares
from experiment_4.formats import CONTROL, RANKINGS, ranking_kinds, ranking_targets
from experiment_4.inference import (
    N_DIFFERENT,
    N_SAME,
    SUM_DIFFERENT,
    SUM_SAME,
    View,
    difference_tests,
    exact_nn_chance,
    label_permutations,
    permutation_accumulators,
    permutation_tests,
    prepare_view,
    statistics_of,
)
from experiment_4.sampled_inference import (
    PAIR_STREAM,
    QUERY_STREAM,
    SampledView,
    SamplingPlan,
    sample_pairs,
    sample_queries,
    sampled_permutation_accumulators,
    sampled_view,
    view_rng,
)
from experiment_4.signatures import (
    core_share,
    gate_set,
    global_core,
    membership_counts,
    pairwise_similarity,
    subsets_covering,
    top_k_signatures,
)
from experiment_4.verdicts import experiment_4_verdicts

HISTOGRAM_BINS = 40
COVERAGE_FRACTIONS = (0.5, 0.9)
MAX_FREQUENCY_POINTS = 1024
SWEEP_FIELDS = ("mean", "ci_low", "ci_high", "null_mean", "null_q975", "p_value")
CONTRASTED = ("scalar", "vector")  # the seed's contrast: alignment in the predicted-class projection, not the vector


def similarity_matrix(indices: torch.Tensor, weights: torch.Tensor, num_subsets: int) -> np.ndarray:
    """``(N, N)`` float64 weighted Jaccard of the signatures in index form."""
    return pairwise_similarity(indices, weights, num_subsets).numpy()


def signature_views(
    document: dict[str, Any],
    keep: torch.Tensor,
    ranking: str,
    kind: str,
    k: int,
    pairs: bool,
    plan: SamplingPlan | None = None,
) -> Iterator[View | SampledView]:
    """The views of one ranking's top-``k`` signatures: one for a per-image ranking, one per class coordinate for the control
    (``plan``: on sampled pairs and, in the control, sampled queries; the samples depend on the plan's seed and the view only)."""
    num_subsets = int(document["num_subsets"])
    if ranking != CONTROL:
        indices, weights = top_k_signatures(
            document[f"ranked_{ranking}"][keep], document[f"magnitude_{ranking}"][keep], k, kind == "weighted"
        )
        if plan is None:
            yield prepare_view(similarity_matrix(indices, weights, num_subsets), None, 0, pairs)
        else:
            pair_sample = (
                sample_pairs(plan.count, plan.per_image_pairs, view_rng(plan.seed, PAIR_STREAM, 0)) if pairs else None
            )
            yield sampled_view(indices, weights, num_subsets, np.arange(plan.count), pair_sample, None, 0)
        return
    labels = document["label"][keep]
    max_class_size = int(labels.unique(return_counts=True)[1].max())
    ranked = document["ranked_class"][keep]
    for position, label in enumerate(document["class_coordinates"]):
        indices = ranked[:, position, :k].long()
        weights = torch.ones(indices.shape, dtype=torch.float64)
        if plan is None:
            yield prepare_view(similarity_matrix(indices, weights, num_subsets), int(label), max_class_size, pairs)
        else:
            queries = sample_queries(plan.count, plan.control_queries, view_rng(plan.seed, QUERY_STREAM, 1 + position))
            pair_sample = (
                sample_pairs(plan.count, plan.control_pairs, view_rng(plan.seed, PAIR_STREAM, 1 + position))
                if pairs
                else None
            )
            yield sampled_view(indices, weights, num_subsets, queries, pair_sample, int(label), max_class_size)


def alignment_block(
    views: list[View] | list[SampledView] | Iterator[View | SampledView],
    labels: np.ndarray,
    permutations: np.ndarray,
    excluded: list[int | None],
    pairs: bool,
    seed: int,
    raw: dict[str, Any] | None = None,
    sampled: bool = False,
) -> dict[str, Any]:
    """Permutation tests of one target over ``views`` (``sampled``: :class:`SampledView` s), with the 1-NN accuracy's
    image-level CI and exact chance (for the sampled class control, whose queries are a fixed sample, the ratio of the
    expected hits to the expected queries). ``raw``: filled with the statistics under every labelling and the per-image
    1-NN hit rates (not stored)."""
    accumulate = sampled_permutation_accumulators if sampled else permutation_accumulators
    accumulators, hit_rates = accumulate(views, labels, permutations)
    if raw is not None:
        raw.update(statistics=statistics_of(accumulators), hit_rates=hit_rates)
    tests = permutation_tests(accumulators, pairs)
    chance = exact_nn_chance(labels, excluded)
    block: dict[str, Any] = {
        "tests": tests,
        "nn_accuracy_ci": bootstrap_mean_ci(hit_rates, seed),
        "chance": chance,
        "over_chance": tests["nn_accuracy"]["observed"] / chance,
    }
    if pairs:
        observed = accumulators[0]
        block["same_class_mean"] = observed[SUM_SAME] / observed[N_SAME]
        block["different_class_mean"] = observed[SUM_DIFFERENT] / observed[N_DIFFERENT]
        block["pair_counts"] = {"same_class": int(observed[N_SAME]), "different_class": int(observed[N_DIFFERENT])}
    return block


def pair_values(view: View | SampledView, count: int) -> tuple[np.ndarray, np.ndarray]:
    """``(pairs (P, 2), similarities (P,))`` of one view: all ``i < j`` pairs, or a sampled view's pairs."""
    if isinstance(view, SampledView):
        return view.pairs, view.values
    first, second = np.triu_indices(count, 1)
    return np.stack([first, second], axis=1), view.similarity[first, second]


def histogram(view: View | SampledView, labels: np.ndarray) -> dict[str, Any]:
    """Same- vs different-class similarity histograms on [0, 1] over all pairs of one view (a sampled view: its sampled pairs)."""
    edges = np.linspace(0.0, 1.0, HISTOGRAM_BINS + 1)
    pairs, values = pair_values(view, len(labels))
    first, second = pairs[:, 0], pairs[:, 1]
    same = labels[first] == labels[second]
    return {
        "edges": edges.tolist(),
        "same_class": np.histogram(values[same], edges)[0].tolist(),
        "different_class": np.histogram(values[~same], edges)[0].tolist(),
    }


def core_block(indices: torch.Tensor, num_subsets: int, num_blocks: int, seed: int, null: np.ndarray) -> dict[str, Any]:
    """The global core of the top-K signatures, how much of each image's top-K it holds, and that share against random
    top-K sets' (``null``: :func:`experiment_4.core_null.random_core_shares`)."""
    count, k = indices.shape
    counts = membership_counts(indices, num_subsets)
    core = global_core(counts, k)
    frequency = counts.sort(descending=True).values
    frequency = frequency[frequency > 0][:MAX_FREQUENCY_POINTS]
    share = bootstrap_mean_ci(core_share(indices, core).numpy(), seed)
    return {
        "k": k,
        "core_masks": core.tolist(),
        "core_gate_sets": [gate_set(mask, num_blocks) for mask in core.tolist()],
        "core_frequency": (counts[core].double() / count).tolist(),
        "share": share,
        "random_share": k / num_subsets,
        "test": core_test(share["mean"], null),
        "distinct_subsets": int((counts > 0).sum()),
        "subsets_covering": {
            str(fraction): number
            for fraction, number in zip(COVERAGE_FRACTIONS, subsets_covering(counts, list(COVERAGE_FRACTIONS)))
        },
        "frequency_curve": (frequency.double() / count).tolist(),
        "frequency_curve_truncated": bool((counts > 0).sum() > MAX_FREQUENCY_POINTS),
    }


def analyse_signatures(
    document: dict[str, Any], keep: torch.Tensor, settings: dict[str, Any], plan: SamplingPlan | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Per ranking: pairs and 1-NN tests at ``nn_k`` (per signature kind and target), the K sweep and the global core;
    and the scalar − vector contrast (:func:`contrast_block`). ``plan``: on sampled pairs (step 2's ``--max-pairs``)."""
    labels = document["label"][keep].numpy()
    targets = {"true_label": labels, "predicted_class": document["predicted"][keep].numpy()}
    permutations = label_permutations(len(labels), settings["num_permutations"], settings["seed"])
    coordinates = [int(label) for label in document["class_coordinates"]]
    num_subsets, num_blocks, nn_k, seed = (
        int(document["num_subsets"]),
        int(document["config"]["num_blocks"]),
        settings["nn_k"],
        settings["seed"],
    )
    rankings: dict[str, Any] = {ranking: {} for ranking in RANKINGS}
    sweep: dict[str, dict[int, dict[str, Any]]] = {ranking: {} for ranking in RANKINGS}
    jobs = [(ranking, kind, nn_k) for ranking in RANKINGS for kind in ranking_kinds(ranking)]
    jobs += [
        (ranking, "binary", k)
        for ranking in RANKINGS
        for k in settings["sweep_ks"]
        if k != nn_k and k <= ranking_store_k(document, ranking)
    ]
    raw: dict[str, dict[str, Any]] = {ranking: {} for ranking in CONTRASTED}
    null = random_core_shares(len(labels), nn_k, num_subsets, settings["num_permutations"], seed)
    for ranking, kind, k in tqdm(jobs, desc="Exp 4 permutation tests", unit="signature set", dynamic_ncols=True):
        pairs = k == nn_k
        excluded = coordinates if ranking == CONTROL else [None]
        # A per-image ranking has one view, shared by both targets; the control's views are built one coordinate at a time.
        views = None if ranking == CONTROL else list(signature_views(document, keep, ranking, kind, k, pairs, plan))
        # Pairs are compared by true label only; the predicted class is a 1-NN target.
        results = {
            target: alignment_block(
                views or signature_views(document, keep, ranking, kind, k, pairs, plan),
                targets[target],
                permutations,
                excluded,
                pairs and target == "true_label",
                seed,
                raw[ranking]
                if pairs and kind == "binary" and target == "true_label" and ranking in CONTRASTED
                else None,
                plan is not None,
            )
            for target in ranking_targets(ranking)
        }
        if kind == "binary":
            sweep[ranking][k] = {target: sweep_point(result) for target, result in results.items()}
        if not pairs:
            continue
        rankings[ranking][kind] = results
        if views is not None:
            rankings[ranking][kind]["histogram"] = histogram(views[0], labels)
            if kind == "binary" and ranking in CONTRASTED:
                raw[ranking]["pairs"], raw[ranking]["values"] = pair_values(views[0], len(labels))
            if kind == "binary":
                indices, _ = top_k_signatures(
                    document[f"ranked_{ranking}"][keep], document[f"magnitude_{ranking}"][keep], k, False
                )
                rankings[ranking]["global_core"] = core_block(indices, num_subsets, num_blocks, seed, null)
    for ranking, points in sweep.items():
        ks = sorted(points)
        rankings[ranking]["nn_sweep"] = {
            "ks": ks,
            **{
                target: {field: [points[k][target][field] for k in ks] for field in SWEEP_FIELDS}
                for target in ranking_targets(ranking)
            },
        }
    return rankings, contrast_block(raw, seed, labels, settings.get("num_bootstrap", NUM_RESAMPLES))


def canonical_pairs(raw: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """A view's pairs (and their similarities) in lexicographic order, so two views of one pair sample line up."""
    order = np.lexsort((raw["pairs"][:, 1], raw["pairs"][:, 0]))
    return raw["pairs"][order], raw["values"][order]


def contrast_block(raw: dict[str, dict[str, Any]], seed: int, labels: np.ndarray, num_bootstrap: int) -> dict[str, Any]:
    """Scalar − vector class alignment (binary top-``nn_k``, true labels). The decision statistic: the pooled AUC
    difference by a paired bootstrap over classes (``auc_bootstrap``, experiment_4.contrast). Beside it: the exact
    McNemar test of the per-image 1-NN hits with its best attainable p (``nn_hits``), the difference of each statistic
    under the same label permutations (:func:`experiment_4.inference.difference_tests`; that null is "neither
    aligned", not equality), and the paired image-level bootstrap CI of the per-image 1-NN hit difference."""
    first, second = (raw[ranking] for ranking in CONTRASTED)
    (pairs, first_values), (other, second_values) = (canonical_pairs(raw[ranking]) for ranking in CONTRASTED)
    if not np.array_equal(pairs, other):
        raise ValueError("the contrasted rankings must be compared on the same pairs")
    return {
        "rankings": list(CONTRASTED),
        "auc_bootstrap": auc_difference_bootstrap(pairs, first_values, second_values, labels, seed, num_bootstrap),
        "nn_hits": nn_hit_mcnemar(first["hit_rates"], second["hit_rates"]),
        "tests": difference_tests(first["statistics"], second["statistics"]),
        "nn_hit_difference": bootstrap_mean_ci(first["hit_rates"] - second["hit_rates"], seed),
    }


def sweep_point(result: dict[str, Any]) -> dict[str, float]:
    """One K of the 1-NN sweep (:data:`SWEEP_FIELDS`): accuracy with CI, the null's mean and 97.5 % quantile, the p-value."""
    test = result["tests"]["nn_accuracy"]
    ci = result["nn_accuracy_ci"]
    return {
        "mean": test["observed"],
        "ci_low": ci["ci_low"],
        "ci_high": ci["ci_high"],
        "null_mean": test["null"]["mean"],
        "null_q975": test["null"]["q975"],
        "p_value": test["p_value"],
    }


def ranking_store_k(document: dict[str, Any], ranking: str) -> int:
    """The longest signature a ranking supports: ``class_store_k`` for the control, ``store_k`` otherwise."""
    return int(document["class_store_k"] if ranking == CONTROL else document["store_k"])


def minimum_max_pairs(plan: SamplingPlan, class_counts: np.ndarray) -> int:
    """The smallest ``--max-pairs`` at which every view expects at least one same-class and one different-class pair:
    the class control splits M over its C coordinates, so each needs ⌈M / C⌉ ≥ 1 / (the rarer kind's share of all pairs)."""
    same = int(sum(int(count) * (int(count) - 1) // 2 for count in class_counts))
    rarer = min(same, plan.all_pairs - same)
    if rarer <= 0:
        return plan.all_pairs
    return min(plan.coordinates * math.ceil(plan.all_pairs / rarer), plan.all_pairs * plan.coordinates)


def check_sampling(plan: SamplingPlan, class_counts: np.ndarray) -> None:
    """Refuse, before any pair is compared, a ``--max-pairs`` too small for a same-class pair in every view, naming the minimum that works."""
    needed = minimum_max_pairs(plan, class_counts)
    if plan.max_pairs < needed:
        raise PipelineError(
            f"--max-pairs {plan.max_pairs}: too few pairs for a same-class pair in every view (the class control splits them over "
            f"{plan.coordinates} coordinates; {plan.count} images of {len(class_counts)} classes); use --max-pairs "
            f"{needed} or more, or leave it out (every pair)"
        )


def overlap_summary(document: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    """overlap.json: every Experiment 4 number and verdict from step 1's ``document`` (``settings``: step 2's; with a
    ``max_pairs`` entry, on sampled pairs, recorded in ``settings.pair_sampling``)."""
    valid = valid_images({"valid": document["valid"].numpy()})
    source = settings["signatures"]
    if valid.sum() < 2:
        raise PipelineError(f"{source}: only {int(valid.sum())} valid image(s); leave-one-out 1-NN needs at least two")
    keep = torch.from_numpy(valid)
    labels, predicted = document["label"][keep], document["predicted"][keep]
    class_counts = labels.unique(return_counts=True)[1]
    if len(class_counts) < 3 or int(class_counts.max()) < 2:
        raise PipelineError(
            f"{source}: needs at least three classes and several images per class (a per-class sample list); it has "
            f"{len(class_counts)} classes of at most {int(class_counts.max())}"
        )
    plan = None
    if settings.get("max_pairs") is not None:
        plan = SamplingPlan(
            int(settings["max_pairs"]), int(settings["seed"]), int(valid.sum()), len(document["class_coordinates"])
        )
        check_sampling(plan, class_counts.numpy())
        settings = {**settings, "pair_sampling": plan.record()}
    summary = {
        "experiment": 4,
        "question": document["question"],
        "config": document["config"],
        "settings": settings,
        **image_counts(valid),
        "num_subsets": int(document["num_subsets"]),
        "num_classes": len(class_counts),
        "num_predicted_classes": int(predicted.unique().numel()),
        "num_class_coordinates": len(document["class_coordinates"]),
        "full_mask_top1_accuracy": bootstrap_mean_ci((predicted == labels).double().numpy(), settings["seed"]),
        "published": published_numbers("experiment_4"),
    }
    summary["rankings"], summary["scalar_minus_vector"] = analyse_signatures(document, keep, settings, plan)
    summary["verdicts"] = experiment_4_verdicts(summary)
    return summary
