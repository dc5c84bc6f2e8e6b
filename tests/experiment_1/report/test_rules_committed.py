"""The verdict engine on every committed results file (the tests of the text checker it replaced, moved here): each
file passes the check under its record's rules and every declared rule decides a committed verdict; each rule id is
declared once; for each rule, a committed (or, for the Walsh basis and the run-against-null comparison, a built)
summary with one decision edited is refused in one line naming the verdict and its rule, and with one of the numbers
the rule reads removed — from the summary's source numbers, or the verdict it combines — is refused naming what is
missing; the relative-error rule reads every K, not only the smallest."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.report import check_verdicts
from experiment_1.report.rules import rule_of
from paper.committed_runs import committed_glob
from paper.experiments import VERDICTS, rules_of

REPO = Path(__file__).resolve().parents[3]
SPECTRUM = "experiment_2/results_efficientnet_lite0_null_seeds/seed_001/summary.json"
TRAINED = "experiment_2/results_efficientnet_lite0_sample/summary.json"
NULL_NETWORKS = "experiment_2/results_efficientnet_lite0_null_seeds/summary.json"
SWEEP = "experiment_2/results_3c_efficientnet_lite0_native/summary_all.json"
LAMBDA = "experiment_2/results_lambda_efficientnet_lite0_sample/summary_all.json"
LIMIT = "experiment_2/results_3c_resnet18/summary_3c.json"
LAW_TEST = "experiment_2/results_3c_resnet18_first_block_held/summary_3c.json"
SWAP = "experiment_2/results_3c_efficientnet_lite0_swap_cost/swap_cost.json"
REPLICATIONS = "experiment_2/results_3c_resnet18_first_block_held_replications/summary_replications.json"
LOW_ORDERS = "experiment_2/results_low_orders_resnet50_random_64px/summary.json"
TREND = "experiment_2/results_low_orders_depth_trend_random_64px/summary.json"
EXP1 = "experiment_1/results_efficientnet_lite0_sample/summary.json"
TOPK = "experiment_3/results_efficientnet_lite0_sample/summary.json"
OVERLAP = "experiment_4/results_efficientnet_lite0_sample/overlap.json"
ANALYSIS = "experiment_5/results_efficientnet_lite0_sample/analysis.json"
DEPTH = "paper/results_depth_efficientnet_lite_sample/depth.json"
DEPTH_STEP = "efficientnet_lite0-efficientnet_lite1"
NOT_COMMITTED = {"exp2.null", "exp5.basis"}
"""Rules no committed run decides: no run keeps a single-network null comparison, and no committed Experiment 5 run
holds κ_W (its labelled passes predate the Walsh measures); tests/experiment_5/test_measure_entries.py decides exp5.basis
on built analyses and the checker refuses a flipped one there."""
WALSH = "walsh"  # built from SPECTRUM: its projections and round-off as the Walsh block
NULL = "null"  # the trained run against one committed random-init seed (step 2's --compare-summary file)


def committed() -> list[Path]:
    return committed_glob(REPO, "experiment_*/results*/**/*.json") + committed_glob(REPO, "paper/results*/*.json")


def document_of(relative: str) -> dict:
    if relative == NULL:
        from experiment_2.spectrum.verdicts import null_sources, null_verdicts

        trained, null = read_json(REPO / TRAINED), read_json(REPO / SPECTRUM)
        return {"experiment": 2, **null_sources(trained, null), "verdicts": null_verdicts(trained, null)}
    if relative != WALSH:
        return copy.deepcopy(read_json(REPO / relative))
    from experiment_2.spectrum.verdicts import verdicts

    summary = copy.deepcopy(read_json(REPO / SPECTRUM))
    ratio = {"mean": 1.0, "ci_low": 0.9, "ci_high": 1.1}
    summary["walsh"] = {
        "projections": copy.deepcopy(summary["projections"]),
        "roundoff": copy.deepcopy(summary["roundoff"]),
        "cancellation_ratio": {"scalar": ratio, "vector": ratio},
    }
    summary["verdicts"] = verdicts(summary)
    return summary


def entry_of(document: dict, verdict_id: str) -> dict:
    return next(entry for entry in document["verdicts"] if entry.get("id") == verdict_id)


def edited(decision: str) -> str:
    return "cannot tell" if decision in ("holds", "fails") else "holds"


CASES = [
    # (summary, verdict, what to remove: ("source", *keys) | ("block", part, key) | ("verdict", id), missing text)
    (EXP1, "mobius.exact", ("source", "metrics", "max_subset_rel_error_float32"), "max_subset_rel_error_float32.max"),
    (EXP1, "naive.misses", ("source", "metrics", "naive_sum_rel_error"), "metrics.naive_sum_rel_error.ci_low"),
    (EXP1, "first_order.interactions", ("source", "metrics"), "metrics.first_order_rel_error"),
    (SPECTRUM, "resolved.vector", ("source", "roundoff", "vector", "floor_ratio"), "roundoff.vector.floor_ratio"),
    (SPECTRUM, "peak.vector", ("source", "projections", "vector", "peak_order"), "projections.vector.peak_order"),
    (SPECTRUM, "shape.vector", ("source", "projections", "vector", "c_le3"), "projections.vector.c_le3"),
    (SPECTRUM, "input_dependent", ("source", "input_dependence"), "input_dependence.trunk_energy_relative_spread"),
    (SPECTRUM, "projections_differ", ("source", "kappa_scalar_minus_vector"), "kappa_scalar_minus_vector"),
    (TRAINED, "middle_peak.vector", ("source", "binomial_null", "kappa"), "binomial_null.kappa"),
    (WALSH, "walsh.resolved.scalar", ("source", "walsh", "roundoff"), "walsh.roundoff.scalar.floor_ratio"),
    (WALSH, "walsh.shape.vector", ("source", "walsh", "projections", "vector"), "walsh.projections.vector"),
    (WALSH, "walsh.peak.scalar", ("source", "walsh", "roundoff", "scalar"), "walsh.roundoff.scalar"),
    (WALSH, "basis.scalar", ("verdict", "walsh.shape.scalar"), "the verdict walsh.shape.scalar"),
    (NULL, "null.vector", ("source", "kappa", "null_run"), "kappa.null_run.vector"),
    (NULL_NETWORKS, "null_input_function", ("source", "networks"), "networks"),
    (NULL_NETWORKS, "null_networks.kappa_vector", ("source", "statistics"), "config.tested / statistics"),
    (SWEEP, "migration.vector", ("source", "kappa_changes", "vector", "end_to_end"), "kappa_changes.vector.end_to_end"),
    (SWEEP, "monotone.vector", ("source", "kappa_changes", "vector"), "kappa_changes.vector.steps"),
    (SWEEP, "seed_endpoint", ("source", "per_lambda"), "per_lambda at λ = 0.1"),
    (SWEEP, "power_law.vector", ("source", "power_law", "projections", "vector"), "power_law.projections.vector"),
    (LAMBDA, "cost", ("source", "published"), "published agreement range"),
    (LAMBDA, "basis.migration.vector", ("verdict", "walsh.migration.vector"), "the verdict walsh.migration.vector"),
    (LIMIT, "exp3c.smooth.lambda_k", ("source", "variants", "smooth", "limit_slopes"), "variants.smooth.limit_slopes"),
    (LIMIT, "exp3c.native.kink_chain", ("source", "slope_tolerance"), "slope_tolerance"),
    (LAW_TEST, "exp3c.native.kink_chain.k2", ("source", "variants", "native", "laws"), "laws.kink_chain"),
    (SWAP, "swap_lowers_top1", ("source", "top1_difference"), "top1_difference"),
    (REPLICATIONS, "replications.kink_chain.k2", ("source", "replications"), "replications"),
    (TOPK, "captured_energy.vector", ("source", "beside_seed"), "beside_seed.rows[captured_energy, vector]"),
    (TOPK, "controls_bound.scalar", ("source", "beside_seed"), "beside_seed.rows[top1_agreement_controls_max"),
    (TOPK, "controls.scalar", ("source", "improvement", "scalar"), "improvement.scalar"),
    (TOPK, "relative_error.vector", ("source", "sources", "magnitude_vector"), "sources.magnitude_vector.curves"),
    (TOPK, "orders.vector", ("source", "order_histograms"), "order_histograms.vector.mean_order"),
    (TOPK, "empty_top1.vector", ("source", "small_k", "vector", "top1_is_empty_set"), "small_k.vector.top1_is"),
    (OVERLAP, "class_alignment.vector", ("source", "rankings", "vector", "binary"), "Experiment 4's family"),
    (OVERLAP, "scalar_minus_vector", ("source", "scalar_minus_vector", "auc_bootstrap"), "Experiment 4's family"),
    (OVERLAP, "vector_global_core", ("source", "rankings", "vector", "global_core", "test", "num_draws"), "num_draws"),
    (OVERLAP, "seed_claim", ("verdict", "scalar_minus_vector"), "the verdict scalar_minus_vector"),
    (ANALYSIS, "kbar_vector.hard_minus_easy", ("source", "quartiles"), "quartiles.cross_entropy.measures.kbar_vector"),
    (ANALYSIS, "seed_claim", ("source", "published", "resnet18", "invariant_measures"), "invariant_measures"),
    (ANALYSIS, "k_err.partial", ("source", "saturation", "k_err"), "saturation.k_err"),
    (DEPTH, "peak_order.depth.efficientnet_lite0-efficientnet_lite1", ("source", "comparisons"), "comparisons[peak"),
    (DEPTH, "kappa_over_l.width.efficientnet_lite1-efficientnet_lite2", ("source", "comparisons"), "comparisons[kap"),
    (
        DEPTH,
        f"kappa_over_l.basis.{DEPTH_STEP}",
        ("verdict", f"walsh_kappa_over_l.depth.{DEPTH_STEP}"),
        "the verdict walsh",
    ),
    (LOW_ORDERS, "walsh_low_degree_share.vector", ("source", "walsh", "projections"), "walsh.projections.vector"),
    (LOW_ORDERS, "surrogate_r2.vector", ("source", "surrogate_r2_by_size"), "surrogate_r2_by_size.projections"),
    (TREND, "low_degree_share.vector.L16_to_L33", ("source", "levels"), "levels"),
    (TREND, "mobius_mean_order.off.vector.L16_to_L33", ("block", "effect", "ci_low"), "effect.ci_low / ci_high"),
    (
        TREND,
        "basis.vector.L16_to_L33",
        ("verdict", "walsh_kappa_per_block.vector.L16_to_L33"),
        "the verdict walsh_kappa_per_block.vector.L16_to_L33",
    ),
]


def removed(document: dict, verdict_id: str, what: tuple) -> dict:
    kind, *keys = what
    if kind == "block":
        entry_of(document, verdict_id)[keys[0]].pop(keys[1])
    elif kind == "source":
        node = document
        for key in keys[:-1]:
            node = node[key]
        node.pop(keys[-1])
    else:
        document["verdicts"] = [entry for entry in document["verdicts"] if entry["id"] != keys[0]]
    return document


@pytest.mark.parametrize("relative, verdict_id, what, missing", CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_an_edited_decision_and_a_removed_number_are_refused(
    relative: str, verdict_id: str, what: tuple, missing: str
) -> None:
    document = document_of(relative)
    table = rules_of(document)
    check_verdicts(document, Path("summary.json"), table)  # as committed (or built): it passes
    entry = entry_of(document, verdict_id)
    stored, entry["decision"] = entry["decision"], edited(entry["decision"])
    rule = rule_of(table, verdict_id)
    with pytest.raises(PipelineError) as refused:
        check_verdicts(document, Path("summary.json"), table)
    line = str(refused.value)
    assert "\n" not in line and line.startswith(
        f"summary.json: verdict {verdict_id} says {entry['decision']!r} but its rule {rule.id} gives {stored!r}"
    )
    entry["decision"] = stored
    document["verdicts"] = [entry] + [other for other in document["verdicts"] if other is not entry]  # checked first
    with pytest.raises(PipelineError) as refused:
        check_verdicts(removed(document, verdict_id, what), Path("summary.json"), table)
    line = str(refused.value)
    assert "\n" not in line and f"verdict {verdict_id} says {stored!r} but lacks " in line and missing in line


def declared() -> dict[str, list]:
    """Every rule the records declare, by id (each resolved from every table that names it)."""
    rules: dict[str, list] = {}
    for table in VERDICTS.values():
        for pattern, _ in table:
            rule = rule_of(table, pattern.replace("*", "x"))
            rules.setdefault(rule.id, []).append(rule)
    return rules


def test_each_rule_id_is_declared_once_and_each_case_above_covers_a_rule() -> None:
    rules = declared()
    assert all(len({id(rule) for rule in found}) == 1 for found in rules.values())  # one declaration per id
    covered = {rule_of(rules_of(document_of(case[0])), case[1]).id for case in CASES}
    assert covered == set(rules) - (NOT_COMMITTED - {"exp2.null"})  # the built NULL case covers exp2.null


def test_every_committed_verdict_passes_and_every_rule_but_the_single_null_decides_one() -> None:
    used = set()
    for path in committed():
        document = read_json(path)
        if not isinstance(document, dict) or not isinstance(document.get("verdicts"), list):
            continue
        table = rules_of(document)
        check_verdicts(document, path, table)
        used |= {rule_of(table, entry["id"]).id for entry in document["verdicts"]}
    assert set(declared()) - used == NOT_COMMITTED


def test_relative_error_is_re_derived_at_every_k_not_only_the_smallest() -> None:
    """The block keeps the smallest mean's K; a larger K whose CI falls below 1 in the per-K curve still refuses holds."""
    document = document_of(TOPK)
    curve = document["sources"]["magnitude_vector"]["curves"]["relative_error"]
    last = max(index for index, k in enumerate(document["ks"]) if k < document["num_masks"])
    curve["ci_low"][last], curve["ci_high"][last] = 0.5, 0.9
    with pytest.raises(PipelineError, match=r"verdict relative_error\.vector says 'holds' but .* gives 'fails'"):
        check_verdicts(document, Path("summary.json"), rules_of(document))


def test_a_verdict_of_another_shape_is_refused_in_one_line() -> None:
    document = document_of(LIMIT)
    entry_of(document, "exp3c.native.kink")["parameters"] = None  # its rule's words are a function of its parameters
    with pytest.raises(PipelineError) as refused:
        check_verdicts(document, Path("summary_3c.json"), rules_of(document))
    line = str(refused.value)
    assert "\n" not in line and "verdict exp3c.native.kink is not in the shape its rule exp3c.law reads" in line
