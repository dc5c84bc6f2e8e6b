"""Experiment 4's REPORT content from overlap.json: the result tables and what the seed reports beside ours."""

from __future__ import annotations

from typing import Any

from experiment_1.report import by_id, decided, format_number, format_percent, format_stat, markdown_table, rests_on
from experiment_4.formats import CONTROL, RANKINGS, ranking_kinds, ranking_targets

NAMES = {
    "vector": "vector ‖Δ_S h‖₂",
    "scalar": "scalar, predicted class",
    "scalar_true": "scalar, true class (leaks the label)",
    CONTROL: "class control (leak-free)",
}
TARGET_NAMES = {"true_label": "true label", "predicted_class": "predicted class"}
PER_IMAGE = tuple(ranking for ranking in RANKINGS if ranking != CONTROL)


def test_cells(tests: dict[str, Any], name: str, percent: bool = False) -> list[str]:
    """Observed value, the permutation null's mean [2.5 %, 97.5 %] and the p-value of one test."""
    test, show = tests[name], (lambda value: format_percent(value, 2)) if percent else format_number
    return [
        show(test["observed"]),
        f"{show(test['null']['mean'])} [{show(test['null']['q025'])}, {show(test['null']['q975'])}]",
        format_number(test["p_value"]),
    ]


def pair_row(ranking: str, kind: str, truth: dict[str, Any]) -> list[str]:
    """One row of the pairs table: the mean Jaccard of same- and different-class pairs, their difference and AUC tests."""
    return [
        NAMES[ranking],
        kind,
        format_number(truth["same_class_mean"]),
        format_number(truth["different_class_mean"]),
        *test_cells(truth["tests"], "difference"),
        *test_cells(truth["tests"], "auc"),
    ]


def nn_row(ranking: str, kind: str, target: str, result: dict[str, Any]) -> list[str]:
    """One row of the 1-NN table: the accuracy with its CI, chance, the ratio and the permutation test."""
    return [
        NAMES[ranking],
        kind,
        TARGET_NAMES[target],
        format_stat({**result["nn_accuracy_ci"], "mean": result["tests"]["nn_accuracy"]["observed"]}, percent=True),
        format_percent(result["chance"], 2),
        f"{format_number(result['over_chance'])}×",
        *test_cells(result["tests"], "nn_accuracy", percent=True)[1:],
    ]


def core_row(ranking: str, core: dict[str, Any], num_subsets: int) -> list[str]:
    """One row of the global-core table."""
    return [
        NAMES[ranking],
        format_stat(core["share"], percent=True),
        format_percent(core["random_share"]),
        str(core["subsets_covering"]["0.5"]),
        str(core["subsets_covering"]["0.9"]),
        f"{core['distinct_subsets']} of {num_subsets}",
        ", ".join(f"`{name}`" for name in core["core_gate_sets"][:5]),
    ]


def sweep_rows(rankings: dict[str, Any]) -> list[list[str]]:
    """The K sweep: one row per signature size, the true-label 1-NN accuracy and p of each ranking ("—" where absent)."""
    return [
        [str(size)]
        + [
            next(
                (
                    f"{format_percent(sweep['true_label']['mean'][i])} (p {format_number(sweep['true_label']['p_value'][i])})"
                    for i, value in enumerate(sweep["ks"])
                    if value == size
                ),
                "—",
            )
            for sweep in (rankings[ranking]["nn_sweep"] for ranking in RANKINGS)
        ]
        for size in rankings["vector"]["nn_sweep"]["ks"]
    ]


def result_tables(summary: dict[str, Any]) -> list[str]:
    """The REPORT's result tables: pairs, 1-NN, K sweep, global core."""
    k, settings, rankings = summary["settings"]["nn_k"], summary["settings"], summary["rankings"]
    pair_rows, nn_rows, core_rows = [], [], []
    for ranking in RANKINGS:
        for kind in ranking_kinds(ranking):
            block = rankings[ranking][kind]
            pair_rows.append(pair_row(ranking, kind, block["true_label"]))
            nn_rows += [nn_row(ranking, kind, target, block[target]) for target in ranking_targets(ranking)]
        if ranking in PER_IMAGE:
            core_rows.append(core_row(ranking, rankings[ranking]["global_core"], summary["num_subsets"]))
    return [
        *contrast_lines(summary),
        f"{pair_sentence(summary)} Every test permutes the labels over images ({settings['num_permutations']} permutations; "
        f"null mean [2.5 %, 97.5 %]; one-sided p = (1 + #null ≥ ours) / (1 + n), at least "
        f"{format_number(settings['p_value_floor'])}), never the pairs, which share images.",
        markdown_table(
            [
                "ranking",
                "signature",
                "mean Jaccard, same class",
                "different class",
                "difference",
                "null",
                "p",
                "AUC (same > different)",
                "null",
                "p",
            ],
            pair_rows,
        ),
        f"Leave-one-out 1-NN on the top-{k} signatures ({summary['num_classes']} classes; "
        f"{summary['num_predicted_classes']} predicted classes). Chance is exact for the "
        f"class counts. The network's own full-mask top-1 on these images is {format_stat(summary['full_mask_top1_accuracy'], percent=True)}. "
        "Two rows share their coordinate with the target by construction and so leak it: the scalar ranking predicting the predicted class, "
        "and the true-class projection predicting the true label; no verdict rests on them.",
        markdown_table(
            ["ranking", "signature", "predicts", "1-NN accuracy", "chance", "× chance", "permutation null", "p"],
            nn_rows,
        ),
        "1-NN accuracy (true label, binary signatures) against the signature size K (uncorrected p):",
        markdown_table(["K"] + [NAMES[ranking] for ranking in RANKINGS], sweep_rows(rankings)),
        f"Global core: the {k} subsets most often in an image's top-{k}; the share of each image's top-{k} inside it, "
        f"how many subsets hold 50 % / 90 % of all top-K memberships:",
        markdown_table(
            [
                "ranking",
                "share of top-K in the core",
                "random",
                "subsets for 50 %",
                "subsets for 90 %",
                "distinct subsets",
                "core (most frequent first)",
            ],
            core_rows,
        ),
    ]


def contrast_lines(summary: dict[str, Any]) -> list[str]:
    """Scalar − vector by the paired class bootstrap of the AUC difference, and the global cores against random top-K
    sets (absent from an overlap.json written before these tests: nothing)."""
    contrast, rankings = summary["scalar_minus_vector"], summary["rankings"]
    if "auc_bootstrap" not in contrast:
        return []
    auc, hits = contrast["auc_bootstrap"], contrast["nn_hits"]
    rows = [
        [
            NAMES[ranking],
            format_stat(rankings[ranking]["global_core"]["share"], percent=True),
            format_percent(rankings[ranking]["global_core"]["random_share"]),
            f"{format_percent(rankings[ranking]['global_core']['test']['null']['mean'])} "
            f"[≤ {format_percent(rankings[ranking]['global_core']['test']['null']['max'])}]",
            format_number(rankings[ranking]["global_core"]["test"]["p_value"]),
        ]
        for ranking in PER_IMAGE
    ]
    return [
        f"Scalar − vector, pooled AUC (binary top-{summary['settings']['nn_k']}, true labels): scalar {format_number(auc['first'])}, "
        f"vector {format_number(auc['second'])}, difference {format_number(auc['observed'])} "
        f"[{format_number(auc['ci_low'])}, {format_number(auc['ci_high'])}] (95 % percentile CI of a paired bootstrap over the "
        f"{auc['num_classes']} classes, {auc['num_resamples']} replicates, seed {auc['seed']}; two-sided p = {format_number(auc['p_value'])}, "
        f"at least {format_number(auc['p_value_floor'])}). 1-NN hits: scalar {hits['first_hits']}, vector {hits['second_hits']}; "
        f"{hits['first_only']} vs {hits['second_only']} discordant images, exact McNemar p = {format_number(hits['p_value'])}.",
        f"Global cores against random top-{summary['settings']['nn_k']} sets (each image's subset ids permuted, the core "
        "recomputed; one-sided Monte Carlo p):",
        markdown_table(
            ["ranking", "share in the core", "a fixed core, at random", "random sets' own core [max]", "p"], rows
        ),
    ]


def pair_sentence(summary: dict[str, Any]) -> str:
    """Which pairs the pair statistics compare: all of them, or the sample of step 2's ``--max-pairs`` (``settings.pair_sampling``)."""
    k, sampling = summary["settings"]["nn_k"], summary["settings"].get("pair_sampling")
    counts = summary["rankings"]["vector"]["binary"]["true_label"]["pair_counts"]
    coordinates = summary["num_class_coordinates"]
    if sampling is None:
        return (
            f"Pairs: all {counts['same_class']} same-class and {counts['different_class']} different-class pairs (true labels), top-{k} signatures; "
            f"the class control pools its {coordinates} class coordinates."
        )
    return (
        f"Pairs: **sampled** (`--max-pairs {sampling['max_pairs']}`, seed {sampling['seed']}): {sampling['per_image_ranking_pairs']} of the "
        f"{sampling['all_pairs']} pairs, drawn uniformly without looking at the labels and fixed under the permutations, of which "
        f"{counts['same_class']} same-class and {counts['different_class']} different-class (true labels), top-{k} signatures; the 1-NN of the "
        f"per-image rankings is over all images. The class control pools its {coordinates} class coordinates, each with its own "
        f"{sampling['class_control_pairs_per_coordinate']} sampled pairs and the 1-NN of {sampling['class_control_queries_per_coordinate']} sampled "
        f"query images (of {sampling['per_image_ranking_queries']}), each neighbour searched among all images."
    )


METHOD = (
    "Every image is evaluated under all 2^L gate masks and its 2^L Möbius coefficients Δ_S h (order 0 included) are ranked by magnitude: vector ‖Δ_S h‖₂, "
    "scalar |Δ_S h[c*]| at the full-mask predicted class c*, scalar |Δ_S h[y]| at the true label y (which leaks the "
    "label: same-class images share the coordinate), "
    "and |Δ_S h[c]| in every class coordinate c for the leak-free class control, which compares all images in one "
    "coordinate c at a time with class c's own images "
    "left out (ties to the lower mask index). An image's top-K signature is the set of its first K subsets (binary), or the same subsets weighted by their "
    "magnitude over the top-K sum (weighted). Overlap is the (weighted) Jaccard Σ min / Σ max. Leave-one-out 1-NN: each image takes the label of its most "
    "similar other image (ties: the lowest sample position)."
)


def short_answer(summary: dict[str, Any]) -> list[str]:
    """The REPORT's short answer, worded from overlap.json's verdicts."""
    verdicts, k = by_id(summary["verdicts"]), summary["settings"]["nn_k"]
    return [
        "The original study reports class alignment only in the predicted-class (scalar) projection, and the claim that "
        f"it is so here {decided(verdicts['seed_claim'])}.",
        f"The claim that an image's top-{k} subsets (its signature) are class-aligned "
        f"{decided(verdicts['class_alignment.vector'])} on the vector projection; on the scalar projection it "
        f"{decided(verdicts['class_alignment.scalar'])}, and in the leak-free class control it "
        f"{decided(verdicts['class_alignment.class_control'])}.",
        rests_on(summary, f"each image's top-{k} subsets ranked by their Möbius coefficients over all 2^L masks"),
    ]


def seed_rows(summary: dict[str, Any]) -> list[list[str]]:
    """What the seed reports (ResNet-18, 1000 classes, no CI) beside ours."""
    seed, k = summary["published"]["resnet18"], summary["settings"]["nn_k"]
    scalar = summary["rankings"]["scalar"]["binary"]["true_label"]
    vector_core = summary["rankings"]["vector"]["global_core"]["share"]
    return [
        [
            f"1-NN accuracy, scalar ranking, {k}-subset signature (seed: 32)",
            format_percent(seed["nn_accuracy_scalar_k32"]),
            format_stat({**scalar["nn_accuracy_ci"], "mean": scalar["tests"]["nn_accuracy"]["observed"]}, percent=True),
        ],
        [
            "chance",
            f"{format_percent(seed['chance'])} (1 / classes)",
            f"{format_percent(scalar['chance'], 2)} (exact for the class counts)",
        ],
        [
            "1-NN accuracy / chance",
            f"{format_number(seed['nn_accuracy_over_chance'])}×",
            f"{format_number(scalar['over_chance'])}× (at most {format_number(1 / scalar['chance'])}×)",
        ],
        [
            "vector ranking",
            str(seed["vector_ranking"]),
            f"{format_percent(vector_core['mean'])} of an image's top-{k} in the global core",
        ],
    ]
