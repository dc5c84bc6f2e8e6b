"""Every number the paper's prose cites, as a LaTeX macro generated from the summary JSON (paper/generated/macros.tex).

A :class:`Macro` names its source file (relative to the repository root), the key path to its value
inside that JSON and how to print it. Each generated line carries that provenance as a comment,
``\\newcommand{\\ExpOneNaiveErr}{529 [523, 537]}% {"source": …, "path": […], "kind": "stat"}``, so
tests/paper/test_paper.py can check every printed number against its JSON value. A macro whose source file
does not exist (an experiment not run here) expands to ``\\resultnotrun``; a source that exists but
lacks the path is a bug and stops the generator with one line naming macro, file and path.

Path elements: a dict key, a list index, or ``{"field": value}`` — the list element whose ``field``
equals ``value`` (e.g. the λ = 0.1 entry of ``per_lambda``). Kinds: ``number`` (3 significant digits),
``integer``, ``percent`` (a share printed as 12.3 %), ``stat`` / ``stat_percent`` (mean [CI] of a
bootstrap dict), ``power_of_two`` (2 to the value), ``hours`` (seconds summed over every file the
``source`` glob matches, each evaluation pass counted once, printed in hours; the only kind whose source is a glob), ``list`` (a list of
numbers, comma-separated), ``text`` (a string, escaped).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.report import format_number, format_percent, format_stat
from experiment_1.run import unique_passes
from paper.checks import checked_json
from paper.committed_runs import check_inside, committed_glob
from paper.experiments import record_of
from paper.render_latex import latex_text

PathElement = Union[str, int, dict]
KINDS = ("number", "integer", "percent", "stat", "stat_percent", "power_of_two", "hours", "list", "text")
NOT_RUN = r"\resultnotrun"


@dataclass(frozen=True)
class Macro:
    """One generated macro: ``\\name`` ← ``kind`` of the value at ``path`` in ``source``."""

    name: str
    source: str
    path: tuple[PathElement, ...]
    kind: str = "number"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"macro {self.name}: kind {self.kind!r} is not one of {KINDS}")
        if not self.name.isalpha():
            raise ValueError(f"macro {self.name}: LaTeX macro names are letters only")


EXP1 = record_of(1).primary
EXP2 = record_of(2).primary
EXP2_NULLS = record_of("2N").primary  # the random-init null over networks
NULL_KAPPA_V = "null_networks.kappa_vector"
NULL_KAPPA_W = "null_networks.walsh_kappa_vector"
EXP3AB = record_of("3A/3B").primary
EXP3 = record_of(3).primary
EXP4 = record_of(4).primary
EXP5 = record_of(5).primary
DEPTH = record_of("depth").primary
DEPTH_STEP = "peak_order.depth.efficientnet_lite0-efficientnet_lite1"  # the ladder's depth step, Lite0 → Lite1
LITE1_SPECTRUM = "experiment_2/results_efficientnet_lite1_sample/summary.json"
LITE2_SPECTRUM = "experiment_2/results_efficientnet_lite2_sample/summary.json"
KBAR_SCALAR = "kbar_scalar.hard_minus_easy"  # Experiment 5: the order measure difficulty moves
LIMIT_FITTED = "experiment_2/results_3c_resnet18/summary_3c.json"  # the run the refined kink law was fitted on
LIMIT_HELD = "experiment_2/results_3c_resnet18_first_block_held/summary_3c.json"  # the run it was predicted for
LIMIT_EXTENDED = "experiment_2/results_3c_resnet18_first_block_held_lambda_1e-4/summary_3c.json"  # λ down to 1e-4
LIMIT_LITE = "experiment_2/results_3c_efficientnet_lite0/summary_3c.json"  # pretrained Lite0, native and smooth
TEST_SAMPLE = "experiment_1/sample_index_sample_test.json"
LABELLED_SAMPLE = "experiment_1/sample_index_sample_val_min6.json"
# every committed run's timing.json (the wall-time table's), in its results folder or in per-seed folders under it
# (the null seeds); a shared pass is counted once
TIMINGS = "experiment_*/results*/**/timing.json"


def _per_lambda(value: float, *rest: PathElement) -> tuple[PathElement, ...]:
    return ("per_lambda", {"lambda": value}, *rest)


def _limit_slope(order: int, field: str) -> tuple[PathElement, ...]:
    return ("variants", "native", "limit_slopes", {"order": order}, field)


MACROS: list[Macro] = [
    # the run: model, images
    Macro("RunBlocks", EXP1, ("config", "num_blocks"), "integer"),
    Macro("RunMasks", EXP1, ("config", "num_blocks"), "power_of_two"),
    Macro("RunInputSize", EXP1, ("config", "input_size"), "integer"),
    Macro("RunTestImages", TEST_SAMPLE, ("num_images",), "integer"),
    Macro("RunLabelledImages", LABELLED_SAMPLE, ("num_images",), "integer"),
    Macro("RunLabelledClasses", LABELLED_SAMPLE, ("num_classes",), "integer"),
    Macro("RunLabelledPerClass", LABELLED_SAMPLE, ("per_class",), "integer"),
    Macro("RunSeed", EXP1, ("config", "seed"), "integer"),
    Macro("RunTorch", EXP1, ("config", "versions", "torch"), "text"),
    Macro("RunDevice", EXP1, ("config", "device_name"), "text"),
    Macro("WallTotalHours", TIMINGS, ("wall_seconds",), "hours"),
    # the depth ladder: its networks' depth and resolution, its paired images and the sign-test floor they give
    Macro("DepthBlocksLiteOne", LITE1_SPECTRUM, ("config", "num_blocks"), "integer"),
    Macro("DepthInputLiteOne", LITE1_SPECTRUM, ("config", "input_size"), "integer"),
    Macro("DepthInputLiteTwo", LITE2_SPECTRUM, ("config", "input_size"), "integer"),
    Macro("DepthPairedImages", DEPTH, ("verdicts", {"id": DEPTH_STEP}, "statistic", "value"), "integer"),
    Macro("DepthSignTestP", DEPTH, ("verdicts", {"id": DEPTH_STEP}, "test", "p_value"), "number"),
    Macro("DepthMinPaired", DEPTH, ("verdicts", {"id": DEPTH_STEP}, "parameters", "min_paired_images"), "integer"),
    # Experiment 1
    Macro("ExpOneImages", EXP1, ("num_valid",), "integer"),
    Macro("ExpOneMobiusErr", EXP1, ("metrics", "mobius_rel_error_float32"), "stat"),
    Macro("ExpOneMobiusErrDouble", EXP1, ("metrics", "mobius_rel_error_float64", "max"), "number"),
    Macro("ExpOneWorstSubset", EXP1, ("metrics", "max_subset_rel_error_float32", "max"), "number"),
    Macro("ExpOneNaiveErr", EXP1, ("metrics", "naive_sum_rel_error"), "stat"),
    Macro("ExpOneNaiveTop", EXP1, ("metrics", "naive_sum_top1_agreement"), "stat_percent"),
    Macro("ExpOneFirstOrderErr", EXP1, ("metrics", "first_order_rel_error"), "stat"),
    Macro("ExpOneFirstOrderTop", EXP1, ("metrics", "first_order_top1_agreement"), "stat_percent"),
    Macro("ExpOneEmptyTop", EXP1, ("metrics", "empty_top1_agreement"), "stat_percent"),
    Macro("SeedExpOneMobiusErr", EXP1, ("published", "resnet18", "mobius_rel_error"), "number"),
    Macro("SeedExpOneNaiveErr", EXP1, ("published", "resnet18", "naive_sum_rel_error"), "number"),
    # Experiment 2
    Macro("ExpTwoImages", EXP2, ("num_valid",), "integer"),
    Macro("ExpTwoPeak", EXP2, ("projections", "vector", "mean_spectrum_peak_order"), "integer"),
    Macro("ExpTwoKappaV", EXP2, ("projections", "vector", "kappa"), "stat"),
    Macro("ExpTwoKappaS", EXP2, ("projections", "scalar", "kappa"), "stat"),
    Macro("ExpTwoCleThree", EXP2, ("projections", "vector", "c_le3"), "stat_percent"),
    Macro("ExpTwoTrunk", EXP2, ("projections", "vector", "trunk_share"), "stat_percent"),
    Macro("ExpTwoNullPeak", EXP2, ("binomial_null", "peak_order"), "integer"),
    Macro("ExpTwoNullKappa", EXP2, ("binomial_null", "kappa"), "number"),
    Macro("ExpTwoNullCleThree", EXP2, ("binomial_null", "c_le3"), "percent"),
    Macro("ExpTwoRandomNetworks", EXP2_NULLS, ("num_null_networks",), "integer"),
    Macro("ExpTwoRandomImages", EXP2_NULLS, ("num_images_per_network",), "integer"),
    Macro("ExpTwoRandomCalibration", EXP2_NULLS, ("config", "batchnorm_calibration", "images"), "integer"),
    Macro("ExpTwoRandomTrainedKappaV", EXP2_NULLS, ("statistics", "kappa_vector", "trained"), "number"),
    Macro("ExpTwoRandomKappaVMin", EXP2_NULLS, ("statistics", "kappa_vector", "min"), "number"),
    Macro("ExpTwoRandomKappaVMax", EXP2_NULLS, ("statistics", "kappa_vector", "max"), "number"),
    Macro("ExpTwoRandomTrainedKappaW", EXP2_NULLS, ("statistics", "walsh_kappa_vector", "trained"), "number"),
    Macro("ExpTwoRandomKappaWMin", EXP2_NULLS, ("statistics", "walsh_kappa_vector", "min"), "number"),
    Macro("ExpTwoRandomKappaWMax", EXP2_NULLS, ("statistics", "walsh_kappa_vector", "max"), "number"),
    Macro("ExpTwoRandomKappaVP", EXP2_NULLS, ("verdicts", {"id": NULL_KAPPA_V}, "test", "p_adjusted"), "number"),
    Macro("ExpTwoRandomKappaWP", EXP2_NULLS, ("verdicts", {"id": NULL_KAPPA_W}, "test", "p_adjusted"), "number"),
    Macro("ExpTwoRandomKappaVDecision", EXP2_NULLS, ("verdicts", {"id": NULL_KAPPA_V}, "decision"), "text"),
    Macro("ExpTwoRandomKappaWDecision", EXP2_NULLS, ("verdicts", {"id": NULL_KAPPA_W}, "decision"), "text"),
    Macro("SeedExpTwoPeak", EXP2, ("published", "resnet18", "peak_order"), "integer"),
    Macro("SeedExpTwoKappa", EXP2, ("published", "resnet18", "kappa_vector"), "number"),
    Macro("SeedExpTwoCleThree", EXP2, ("published", "resnet18", "c_le3"), "percent"),
    Macro("SeedExpTwoPeakDeep", EXP2, ("published", "resnet34", "peak_order"), "integer"),
    # Experiment 3A/3B
    Macro("ExpThreeABImages", EXP3AB, ("num_valid",), "integer"),
    Macro("ExpThreeABLambdas", EXP3AB, ("lambdas",), "list"),
    Macro("ExpThreeABFitLambdas", EXP3AB, ("power_law", "fit_lambdas"), "list"),
    Macro("ExpThreeABKappaOne", EXP3AB, _per_lambda(1.0, "projections", "vector", "kappa"), "stat"),
    Macro("ExpThreeABKappaLow", EXP3AB, _per_lambda(0.1, "projections", "vector", "kappa"), "stat"),
    Macro("ExpThreeABKappaSOne", EXP3AB, _per_lambda(1.0, "projections", "scalar", "kappa"), "stat"),
    Macro("ExpThreeABKappaSLow", EXP3AB, _per_lambda(0.1, "projections", "scalar", "kappa"), "stat"),
    Macro("ExpThreeABAgreeEight", EXP3AB, _per_lambda(0.8, "top1_agreement_with_lambda_1"), "stat_percent"),
    Macro("ExpThreeABAgreeLow", EXP3AB, _per_lambda(0.1, "top1_agreement_with_lambda_1"), "stat_percent"),
    Macro("ExpThreeABSlopeOne", EXP3AB, ("power_law", "projections", "vector", {"order": 1}, "slope"), "number"),
    Macro("ExpThreeABSlopeTwo", EXP3AB, ("power_law", "projections", "vector", {"order": 2}, "slope"), "number"),
    Macro("ExpThreeABSlopeThree", EXP3AB, ("power_law", "projections", "vector", {"order": 3}, "slope"), "number"),
    Macro("ExpThreeABSlopeTolerance", EXP3AB, ("power_law", "slope_tolerance"), "number"),
    Macro("SeedExpThreeABKappaOne", EXP3AB, ("published", "resnet18", "kappa_at_lambda_1"), "number"),
    Macro("SeedExpThreeABKappaLow", EXP3AB, ("published", "resnet18", "kappa_at_lambda_0.1"), "number"),
    Macro("SeedExpThreeABAgreeLow", EXP3AB, ("published", "resnet18", "agreement_range_lambda_0.8_to_1", 0), "percent"),
    Macro(
        "SeedExpThreeABAgreeHigh", EXP3AB, ("published", "resnet18", "agreement_range_lambda_0.8_to_1", 1), "percent"
    ),
    # Experiment 3 (top-K)
    Macro("ExpThreeImages", EXP3, ("num_valid",), "integer"),
    Macro("ExpThreeKeffV", EXP3, ("k_eff", "vector"), "stat"),
    Macro("SeedExpThreeGamma", EXP3, ("published", "resnet18", "captured_energy_at_64"), "percent"),
    Macro("SeedExpThreeTop", EXP3, ("published", "resnet18", "top1_agreement_magnitude_at_128"), "percent"),
    Macro("SeedExpThreeControls", EXP3, ("published", "resnet18", "top1_agreement_controls_below"), "percent"),
    Macro("SeedExpThreeRatio", EXP3, ("published", "resnet18", "improvement_over_random"), "integer"),
    Macro("ExpThreeGammaQuarter", EXP3, ("verdicts", {"id": "captured_energy.vector"}, "effect", "value"), "percent"),
    Macro(
        "ExpThreeTopHalf", EXP3, ("verdicts", {"id": "top1_agreement_magnitude.vector"}, "effect", "value"), "percent"
    ),
    Macro("ExpThreeBestControl", EXP3, ("verdicts", {"id": "controls_bound.vector"}, "effect", "value"), "percent"),
    Macro("ExpThreeBestRelErr", EXP3, ("verdicts", {"id": "relative_error.vector"}, "effect", "value"), "number"),
    Macro("ExpThreeTrunkTop", EXP3, ("verdicts", {"id": "empty_top1.vector"}, "effect", "value"), "percent"),
    # Experiment 4
    Macro("ExpFourImages", EXP4, ("num_valid",), "integer"),
    Macro("ExpFourClasses", EXP4, ("num_classes",), "integer"),
    Macro("ExpFourK", EXP4, ("settings", "nn_k"), "integer"),
    Macro("ExpFourTop", EXP4, ("full_mask_top1_accuracy",), "stat_percent"),
    Macro(
        "ExpFourVectorOverChance", EXP4, ("verdicts", {"id": "class_alignment.vector"}, "statistic", "value"), "number"
    ),
    Macro(
        "ExpFourScalarOverChance", EXP4, ("verdicts", {"id": "class_alignment.scalar"}, "statistic", "value"), "number"
    ),
    Macro("ExpFourAucDiff", EXP4, ("verdicts", {"id": "scalar_minus_vector"}, "effect", "value"), "number"),
    Macro("ExpFourAucDiffLow", EXP4, ("verdicts", {"id": "scalar_minus_vector"}, "effect", "ci_low"), "number"),
    Macro("ExpFourAucDiffHigh", EXP4, ("verdicts", {"id": "scalar_minus_vector"}, "effect", "ci_high"), "number"),
    Macro("ExpFourCoreShare", EXP4, ("verdicts", {"id": "vector_global_core"}, "effect", "value"), "percent"),
    Macro(
        "ExpFourCoreRandomShare",
        EXP4,
        ("verdicts", {"id": "vector_global_core"}, "parameters", "random_share"),
        "percent",
    ),
    Macro("SeedExpFourNN", EXP4, ("published", "resnet18", "nn_accuracy_scalar_k32"), "percent"),
    Macro("SeedExpFourOverChance", EXP4, ("published", "resnet18", "nn_accuracy_over_chance"), "integer"),
    # Experiment 5
    Macro("ExpFiveImages", EXP5, ("num_valid",), "integer"),
    Macro("ExpFiveTop", EXP5, ("top1_accuracy",), "stat_percent"),
    Macro("SeedExpFiveNeff", EXP5, ("published", "resnet18", "n_eff_vector_hard_minus_easy"), "number"),
    Macro("SeedExpFiveKerr", EXP5, ("published", "resnet18", "k_tau_err_hard_minus_easy"), "number"),
    Macro("ExpFiveKbarScalarShift", EXP5, ("verdicts", {"id": KBAR_SCALAR}, "effect", "value"), "number"),
    Macro("ExpFiveKbarScalarLow", EXP5, ("verdicts", {"id": KBAR_SCALAR}, "effect", "ci_low"), "number"),
    Macro("ExpFiveKbarScalarHigh", EXP5, ("verdicts", {"id": KBAR_SCALAR}, "effect", "ci_high"), "number"),
    Macro("ExpFiveKbarScalarP", EXP5, ("verdicts", {"id": KBAR_SCALAR}, "test", "p_adjusted"), "number"),
    Macro("ExpFiveKbarScalarMargin", EXP5, ("verdicts", {"id": KBAR_SCALAR}, "parameters", "margin"), "number"),
    Macro(
        "ExpFiveMarginFraction", EXP5, ("verdicts", {"id": KBAR_SCALAR}, "parameters", "margin_sd_fraction"), "number"
    ),
    # the Walsh (±1 Fourier) control of Experiment 2, on Lite0 and Lite2
    Macro("ExpTwoWalshPeak", EXP2, ("walsh", "projections", "vector", "mean_spectrum_peak_order"), "integer"),
    Macro("ExpTwoWalshKappaV", EXP2, ("walsh", "projections", "vector", "kappa"), "stat"),
    Macro("ExpTwoWalshLow", EXP2, ("walsh", "projections", "vector", "c_le3"), "stat_percent"),
    Macro("ExpTwoCancellation", EXP2, ("walsh", "cancellation_ratio", "vector"), "stat"),
    Macro("LiteTwoPeak", LITE2_SPECTRUM, ("projections", "vector", "mean_spectrum_peak_order"), "integer"),
    Macro(
        "LiteTwoWalshPeak", LITE2_SPECTRUM, ("walsh", "projections", "vector", "mean_spectrum_peak_order"), "integer"
    ),
    Macro("LiteTwoWalshLow", LITE2_SPECTRUM, ("walsh", "projections", "vector", "c_le3"), "stat_percent"),
    Macro("LiteTwoCancellation", LITE2_SPECTRUM, ("walsh", "cancellation_ratio", "vector"), "stat"),
    # Experiment 3C: the kink law's story (fitted on ResNet-18, then predicted for the held-block network)
    Macro("ThreeCFittedChain", LIMIT_FITTED, ("variants", "native", "exact_zero_chain"), "integer"),
    Macro("ThreeCFittedSlopeTwo", LIMIT_FITTED, _limit_slope(2, "slope"), "number"),
    Macro("ThreeCFittedSlopeFour", LIMIT_FITTED, _limit_slope(4, "slope"), "number"),
    Macro("ThreeCFittedBlocks", LIMIT_FITTED, ("config", "num_blocks"), "integer"),
    Macro("ThreeCHeldChain", LIMIT_HELD, ("prediction", "exact_zero_chain"), "integer"),
    Macro("ThreeCHeldPredicted", LIMIT_HELD, ("prediction", "predicted", 2), "number"),
    Macro("ThreeCHeldSlopeTwo", LIMIT_HELD, _limit_slope(2, "slope"), "number"),
    Macro("ThreeCHeldSlopeTwoLow", LIMIT_HELD, _limit_slope(2, "ci_low"), "number"),
    Macro("ThreeCHeldSlopeTwoHigh", LIMIT_HELD, _limit_slope(2, "ci_high"), "number"),
    Macro("ThreeCHeldTolerance", LIMIT_HELD, ("slope_tolerance",), "number"),
    Macro("ThreeCHeldImages", LIMIT_HELD, ("num_valid",), "integer"),
    Macro("ThreeCExtendedLambda", LIMIT_EXTENDED, ("variants", "native", "lambdas", -1), "number"),
    Macro("ThreeCExtendedSlopeTwo", LIMIT_EXTENDED, _limit_slope(2, "slope"), "number"),
    Macro("ThreeCExtendedSlopeTwoLow", LIMIT_EXTENDED, _limit_slope(2, "ci_low"), "number"),
    Macro("ThreeCExtendedSlopeTwoHigh", LIMIT_EXTENDED, _limit_slope(2, "ci_high"), "number"),
    Macro("ThreeCSmallestLambda", LIMIT_HELD, ("variants", "native", "lambdas", -1), "number"),
    Macro("ThreeCLiteSmallestLambda", LIMIT_LITE, ("variants", "native", "lambdas", -1), "number"),
    # the residues of issue #61: the extended grid's order-2 successive slopes (largest λ pair, smallest), the share of
    # images the zero vector beats at K = ks[1] (the K of the smallest mean relative error), the null's effect sizes and
    # where the trained network's scalar Walsh order lies among the random networks
    Macro("ThreeCExtendedStepTwoFirst", LIMIT_EXTENDED, ("variants", "native", "successive_slopes", 0, "slope", 2)),
    Macro("ThreeCExtendedStepTwoLast", LIMIT_EXTENDED, ("variants", "native", "successive_slopes", -1, "slope", 2)),
    Macro("ExpThreeZeroVectorK", EXP3, ("ks", 1), "integer"),
    Macro("ExpThreeZeroVectorShare", EXP3, ("small_k", "vector", "relative_error_at_least_1", 1), "percent"),
    Macro("ExpTwoRandomKappaVEffect", EXP2_NULLS, ("statistics", "kappa_vector", "effect", "difference"), "stat"),
    Macro("ExpTwoRandomKappaVZ", EXP2_NULLS, ("statistics", "kappa_vector", "effect", "z"), "number"),
    Macro("ExpTwoRandomKappaWEffect", EXP2_NULLS, ("statistics", "walsh_kappa_vector", "effect", "difference"), "stat"),
    Macro("ExpTwoRandomKappaWZ", EXP2_NULLS, ("statistics", "walsh_kappa_vector", "effect", "z"), "number"),
    Macro("ExpTwoRandomKappaSTrained", EXP2_NULLS, ("statistics", "kappa_scalar", "trained"), "number"),
    Macro("ExpTwoRandomKappaSBelow", EXP2_NULLS, ("statistics", "kappa_scalar", "networks_below"), "integer"),
    Macro("ExpTwoRandomWalshScalarTrained", EXP2_NULLS, ("statistics", "walsh_kappa_scalar", "trained"), "number"),
    Macro(
        "ExpTwoRandomWalshScalarBelow", EXP2_NULLS, ("statistics", "walsh_kappa_scalar", "networks_below"), "integer"
    ),
]


def follow(document: Any, path: tuple[PathElement, ...]) -> Any:
    """The value at ``path`` inside ``document``; KeyError naming the first element that is missing."""
    value = document
    for element in path:
        if isinstance(element, dict):
            ((field, wanted),) = element.items()
            matches = [item for item in value if isinstance(item, dict) and item.get(field) == wanted]
            if len(matches) != 1:
                raise KeyError(f"{field} = {wanted} ({len(matches)} list entries match)")
            value = matches[0]
        elif isinstance(element, int):
            if not isinstance(value, list) or not -len(value) <= element < len(value):
                raise KeyError(f"index {element}")
            value = value[element]
        else:
            if not isinstance(value, dict) or element not in value:
                raise KeyError(element)
            value = value[element]
    return value


def _pass_walls(timing: dict[str, Any]) -> dict[tuple, float]:
    """A timing.json's passes by identity → wall seconds: its process records' pass ids (each pass's
    slowest rank), or — for a timing.json written before the records — one pass named by the stages it
    fed and its wall time, so two folders of one shared pass still name the same pass."""
    if "processes" in timing:
        return {
            ("pass", pass_id): entry["wall_seconds"] for pass_id, entry in unique_passes(timing["processes"]).items()
        }
    return {
        (
            "shared",
            tuple(timing.get("shared_pass") or ()),
            timing["wall_seconds"],
            timing.get("images_evaluated"),
        ): timing["wall_seconds"]
    }


def total_pass_seconds(timings: list[dict[str, Any]]) -> float:
    """The wall seconds of every evaluation pass the ``timings`` (timing.json documents) record, each pass once —
    the total the wall-time table prints and ``\\WallTotalHours`` gives, from this one function."""
    passes: dict[tuple, float] = {}
    for timing in timings:
        passes.update(_pass_walls(timing))
    return sum(passes.values())


def source_values(root: Path, macro: Macro) -> list[Any] | None:
    """The JSON values ``macro`` prints, in print order (``None`` when its source is absent: not run)."""
    files = committed_glob(root, macro.source) if macro.kind == "hours" else [root / macro.source]
    files = [check_inside(path, root) for path in files if path.exists() or path.is_symlink()]
    if not files:
        return None
    try:
        documents = [checked_json(path) if macro.kind != "hours" else read_json(path) for path in files]
        values = [follow(document, macro.path) for document in documents]
    except KeyError as missing:
        raise PipelineError(
            f"paper macro \\{macro.name}: {macro.source} has no {missing} on the path {macro.path}; "
            "update paper/macros.py to the summary's current layout"
        ) from None
    if macro.kind == "hours":
        return [total_pass_seconds(documents)]
    if macro.kind in ("stat", "stat_percent"):
        return [values[0]["mean"], values[0]["ci_low"], values[0]["ci_high"]]
    if macro.kind == "list":
        return list(values[0])
    return values


def macro_body(macro: Macro, values: list[Any] | None) -> str:
    """The LaTeX a macro expands to."""
    if values is None:
        return NOT_RUN
    value = values[0]
    if macro.kind == "text":
        return latex_text(str(value))
    if macro.kind == "integer":
        return str(int(value))
    if macro.kind == "power_of_two":
        return str(2 ** int(value))
    if macro.kind == "percent":
        return latex_text(format_percent(value))
    if macro.kind == "hours":
        return latex_text(format_number(value / 3600))
    if macro.kind == "list":
        return ", ".join(latex_text(format_number(item)) for item in values)
    if macro.kind in ("stat", "stat_percent"):
        return latex_text(
            format_stat(
                {"mean": values[0], "ci_low": values[1], "ci_high": values[2]}, percent=macro.kind == "stat_percent"
            )
        )
    return latex_text(format_number(value))


def macro_line(macro: Macro, values: list[Any] | None) -> str:
    """``\\newcommand{\\name}{body}% {provenance}`` for one macro."""
    provenance = json.dumps({"source": macro.source, "path": list(macro.path), "kind": macro.kind}, ensure_ascii=False)
    return f"\\newcommand{{\\{macro.name}}}{{{macro_body(macro, values)}}}% {provenance}"


def macros_tex(root: Path, macros: list[Macro] = MACROS) -> str:
    """The whole of paper/generated/macros.tex."""
    lines = [
        "% Generated by `python -m paper.make_tables` from the summary JSON; do not edit by hand.",
        "% Each line: the macro, then the file, key path and kind its value was printed from.",
    ]
    lines += [macro_line(macro, source_values(root, macro)) for macro in macros]
    return "\n".join(lines) + "\n"
