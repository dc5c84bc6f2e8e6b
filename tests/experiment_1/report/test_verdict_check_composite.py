"""The composite rules re-derived by the one verdict checker: for each shape, a committed (or, for the Walsh basis, a
built) summary with one decision edited is refused in one line naming the verdict, and with one of the numbers the
rule needs removed — from the verdict's block or from the summary's source numbers it is re-derived from — is refused
naming what is missing; every committed verdict re-derives to its stored decision."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.report import check_verdicts
from experiment_1.report.verdict_check import COMPOSITE_SHAPES, _verdicts, _with_null_sources, composite_decision
from paper.committed_runs import committed_glob

REPO = Path(__file__).resolve().parents[3]
SPECTRUM = "experiment_2/results_efficientnet_lite0_null_seeds/seed_001/summary.json"
TRAINED_SPECTRUM = (
    "experiment_2/results_efficientnet_lite0_sample/summary.json"  # rebuilt with the middle-peak verdicts
)
SWEEP = "experiment_2/results_3c_efficientnet_lite0_native/summary_all.json"
DEPTH = "paper/results_depth_efficientnet_lite_sample/depth.json"
OVERLAP = "experiment_4/results_efficientnet_lite0_sample/overlap.json"
ANALYSIS = "experiment_5/results_efficientnet_lite0_sample/analysis.json"
TOPK = "experiment_3/results_efficientnet_lite0_sample/summary.json"
LIMIT = "experiment_2/results_3c_resnet18/summary_3c.json"
LAW_TEST = "experiment_2/results_3c_resnet18_first_block_held/summary_3c.json"
WALSH = "walsh"  # built from SPECTRUM: its projections and round-off as the Walsh block


def committed() -> list[Path]:
    return committed_glob(REPO, "experiment_*/results*/*.json") + committed_glob(REPO, "paper/results*/*.json")


def document_of(relative: str) -> dict:
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
    return next(entry for entry in _verdicts(document) if entry.get("id") == verdict_id)


def edited(decision: str) -> str:
    return "cannot tell" if decision in ("holds", "fails") else "holds"


CASES = [
    # (summary, verdict, what to remove: ("block", part, key) | ("source", *keys) | ("verdict", id), missing text)
    (SPECTRUM, "resolved.vector", ("block", "statistic", "value"), "statistic.value"),
    (SPECTRUM, "peak.vector", ("block", "parameters", "null_peak_orders"), "parameters.null_peak_orders"),
    (SPECTRUM, "shape.vector", ("source", "projections", "vector", "c_le3"), "projections.c_le3"),
    (TRAINED_SPECTRUM, "middle_peak.vector", ("block", "parameters", "middle_orders"), "parameters.middle_orders"),
    (TRAINED_SPECTRUM, "middle_peak.scalar", ("block", "effect", "ci_high"), "effect.ci_high"),
    (WALSH, "walsh.shape.vector", ("source", "walsh", "projections", "vector"), "walsh.projections.vector"),
    (WALSH, "walsh.peak.scalar", ("block", "effect", "ci_low"), "effect.ci_low"),
    (WALSH, "basis.scalar", ("verdict", "walsh.shape.scalar"), "the verdict walsh.shape.scalar"),
    (SWEEP, "migration.vector", ("block", "test", "p_value"), "test.p_value"),
    (SWEEP, "monotone.vector", ("source", "kappa_changes", "vector"), "kappa_changes.vector.steps"),
    (DEPTH, "peak_order.depth.efficientnet_lite0-efficientnet_lite1", ("block", "test", "p_value"), "test.p_value"),
    (DEPTH, "kappa_over_l.width.efficientnet_lite1-efficientnet_lite2", ("block", "parameters", "margin"), "margin"),
    (OVERLAP, "class_alignment.vector", ("block", "test", "p_adjusted"), "test.p_adjusted"),
    (OVERLAP, "scalar_minus_vector", ("block", "test", "p_adjusted"), "test.p_adjusted"),
    (OVERLAP, "vector_global_core", ("block", "test", "p_floor"), "test.p_floor"),
    (OVERLAP, "seed_claim", ("verdict", "scalar_minus_vector"), "the verdict scalar_minus_vector"),
    (ANALYSIS, "kbar_vector.hard_minus_easy", ("block", "test", "p_adjusted"), "test.p_adjusted"),
    (ANALYSIS, "seed_claim", ("source", "published", "resnet18", "invariant_measures"), "invariant_measures"),
    (
        TOPK,
        "relative_error.vector",
        ("source", "sources", "magnitude_vector", "curves", "relative_error"),
        "sources.magnitude_vector.curves.relative_error",
    ),
    (TOPK, "controls.scalar", ("source", "improvement", "scalar"), "improvement.scalar"),
    (TOPK, "controls.vector", ("block", "parameters", "k"), "parameters.k"),
    (SWEEP, "power_law.vector", ("source", "power_law", "projections", "vector"), "power_law.projections.vector"),
    (LIMIT, "exp3c.smooth.lambda_k", ("source", "variants", "smooth", "limit_slopes"), "variants.smooth.limit_slopes"),
    (LIMIT, "exp3c.native.kink_chain", ("block", "parameters", "predicted"), "parameters.predicted"),
    (LAW_TEST, "exp3c.native.kink_chain", ("block", "parameters", "limit_points"), "parameters.limit_points"),
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
    check_verdicts(document, Path("summary.json"))  # as committed (or built): it passes
    entry = entry_of(document, verdict_id)
    stored, entry["decision"] = entry["decision"], edited(entry["decision"])
    with pytest.raises(PipelineError) as refused:
        check_verdicts(document, Path("summary.json"))
    line = str(refused.value)
    assert "\n" not in line and line.startswith(f"summary.json: verdict {verdict_id} says {entry['decision']!r} but ")
    entry["decision"] = stored
    with pytest.raises(PipelineError) as refused:
        check_verdicts(removed(document, verdict_id, what), Path("summary.json"))
    line = str(refused.value)
    assert "\n" not in line and f"verdict {verdict_id} says {stored!r} but lacks " in line and missing in line


def test_every_committed_verdict_passes_and_every_composite_shape_is_re_derived_on_committed_data() -> None:
    used = set()
    for path in committed():
        document = read_json(path)
        check_verdicts(document, path)
        for entry in _verdicts(document):
            expected, decides = composite_decision(entry, _with_null_sources(document, path))
            if expected is not None:
                assert expected == entry["decision"], (path, entry["id"])
                used.add(next(index for index, shape in enumerate(COMPOSITE_SHAPES) if shape[0].search(entry["rule"])))
    basis = next(index for index, shape in enumerate(COMPOSITE_SHAPES) if "Walsh shape" in shape[0].pattern)
    single_run_null = next(  # no committed run keeps a single-network null comparison: one is built below
        index for index, shape in enumerate(COMPOSITE_SHAPES) if "null is a constant function" in shape[0].pattern
    )
    assert used | {basis, single_run_null} == set(range(len(COMPOSITE_SHAPES)))


def test_relative_error_is_re_derived_at_every_k_not_only_the_smallest() -> None:
    """The block keeps the smallest mean's K; a larger K whose CI falls below 1 in the per-K curve still refuses holds."""
    document = document_of(TOPK)
    curve = document["sources"]["magnitude_vector"]["curves"]["relative_error"]
    last = max(index for index, k in enumerate(document["ks"]) if k < document["num_masks"])
    curve["ci_low"][last], curve["ci_high"][last] = 0.5, 0.9
    with pytest.raises(PipelineError, match=r"verdict relative_error\.vector says 'holds' but .* gives 'fails'"):
        check_verdicts(document, Path("summary.json"))


TRAINED = "experiment_2/results_efficientnet_lite0_sample/summary.json"
COMPARISON = "experiment_2/results_efficientnet_lite0_sample/null_comparison.json"


def comparison_in(root: Path) -> Path:
    """A null comparison of the committed trained run against one committed random-init seed (step_2_plot
    --compare-summary's file), written under ``root`` beside copies of the two summaries at their own paths."""
    from experiment_2.spectrum.verdicts import null_verdicts

    for relative in (TRAINED, SPECTRUM):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes((REPO / relative).read_bytes())
    trained, null = read_json(REPO / TRAINED), read_json(REPO / SPECTRUM)
    document = {
        "run_id": trained["config"]["run_id"],
        "null_run_id": null["config"]["run_id"],
        "null_summary": SPECTRUM,
        "verdicts": null_verdicts(trained, null),
    }
    (root / COMPARISON).write_text(json.dumps(document))
    return root / COMPARISON


def test_a_null_comparison_is_re_derived_from_the_two_summaries_it_names(tmp_path: Path) -> None:
    path = comparison_in(tmp_path)
    document = read_json(path)
    check_verdicts(document, path)
    entry = entry_of(document, "null.vector")
    entry["decision"] = "cannot tell"
    with pytest.raises(PipelineError) as refused:
        check_verdicts(document, path)
    assert "\n" not in str(refused.value) and "verdict null.vector says 'cannot tell' but " in str(refused.value)
    entry["decision"] = "holds"
    null_path = tmp_path / document["null_summary"]
    null = read_json(null_path)
    null["projections"]["vector"].pop("kappa")
    null_path.write_text(json.dumps(null))
    with pytest.raises(PipelineError) as refused:
        check_verdicts(document, path)
    line = str(refused.value)
    assert "\n" not in line and "verdict null.vector says 'holds' but lacks " in line
    assert "the null's projections.vector.kappa" in line
    null_path.unlink()
    with pytest.raises(PipelineError, match=r"verdict null\.vector says 'holds' but lacks the null summary"):
        check_verdicts(document, path)
