"""The depth ladder (paper/depth_ladder.py) on hand-built rungs, its entries compared whole to hand-written ones, so a
changed id, claim, decision, effect, parameter, rule, note or table cell shows: a ladder of three networks and a
resolution control whose valid images differ (so each paired statistic is read on the shared positions only), a depth
step that holds at exactly the minimum number of shared images, a width step shown equivalent, a resolution control, a
trunk-removed measure; the paired rule at α, at 0 and just off them, at and around the minimum N; the equivalence rule
at a margin of 1 and with a shift inside it; the bounds; the refusals. Rungs are built in memory (no files) except where
the loading is under test. Written against the survivors of `make mutation MODULES=paper/depth_ladder.py`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import binomtest

from experiment_1.errors import PipelineError
from experiment_1.files import RUN_ID_ARRAY, atomic_save_npz, atomic_write_json
from experiment_1.report import bootstrap_mean_ci, tost
from paper import depth_ladder as dl
from paper import depth_verdicts as dv
from paper.depth_ladder import Rung

SAMPLE = "sample_list.json"
PAIRED_RULE = (
    "holds when the 95 % CI of the paired difference lies above 0 and the exact sign test gives p < 0.05 "
    "(at least 6 shared images); fails when the CI lies below 0 with p < 0.05; otherwise cannot tell; "
    "saturated when either network's measure sits at its bound on ≥ 90 % of images (the shallower: it cannot move; "
    "the deeper: censored, the test would read only how often the shallower sits below the bound)"
)
EQUIVALENCE_RULE = (
    "equivalence by two one-sided t-tests (TOST) at level α: holds when the 1 − 2α t-interval of the mean difference "
    "lies inside ±margin (TOST p ≤ α); fails when it lies wholly beyond the margin (the mean differs by more than the "
    "margin at level α); otherwise cannot tell; the margin is a fixed fraction of the depth effect; saturated when "
    "either network sits at the measure's bound on ≥ 90 % of images"
)
SIGN_TEST = "exact two-sided sign test"
TOST = "TOST (two one-sided t-tests)"


def stat(mean: float, n: int = 8) -> dict[str, float]:
    return {
        "mean": mean,
        "ci_low": mean - 1,
        "ci_high": mean + 1,
        "median": mean,
        "min": mean - 2,
        "max": mean + 2,
        "n": n,
    }


def agreement(starts: list[int], num_blocks: int) -> np.ndarray:
    """``(N, 1, L + 1)`` float 0/1 top-1 agreement that holds from grid position ``starts[i]`` on (L + 1: never)."""
    rows = [[float(position >= start) for position in range(num_blocks + 1)] for start in starts]
    return np.asarray(rows, dtype=np.float32)[:, None, :]


def make(
    arch: str,
    num_blocks: int,
    peaks: list[int],
    starts: list[int],
    *,
    kappas: list[float] | None = None,
    removed: list[int] | None = None,
    invalid: tuple[int, ...] = (),
    input_size: int | None = None,
    label: str = "",
    spectrum_list: str = SAMPLE,
    topk_list: str = SAMPLE,
    overlap: dict[str, Any] | None = None,
) -> Rung:
    """One network: per-image peak orders (and κ^v), agreement from grid positions ``starts`` (and trunk-removed
    ``removed``), the images at positions ``invalid`` marked invalid."""
    count = len(peaks)
    valid = np.array([position not in invalid for position in range(count)])

    def config(sample: str) -> dict[str, Any]:
        return {"num_blocks": num_blocks, "sample_index": sample, **({"input_size": input_size} if input_size else {})}

    spectrum = {
        "config": config(spectrum_list),
        "num_valid": int(valid.sum()),
        "projections": {
            "vector": {
                "mean_spectrum_peak_order": 2,
                "peak_order": stat(2.0),
                "kappa": stat(3.0),
                "c_le3": stat(0.5),
                "trunk_share": stat(0.25),
            }
        },
    }
    spectrum_arrays = {
        "index": np.arange(count),
        "valid": valid.astype(np.uint8),
        "peak_order_vector": np.asarray(peaks, dtype=np.int64),
        **({"kappa_vector": np.asarray(kappas, dtype=np.float64)} if kappas is not None else {}),
    }
    masks = 2**num_blocks
    ks = [2**power for power in range(num_blocks + 1)]
    curve = {
        "mean": [10.0 * k for k in ks],
        "ci_low": [10.0 * k - 1 for k in ks],
        "ci_high": [10.0 * k + 1 for k in ks],
    }
    topk = {
        "config": config(topk_list),
        "num_valid": int(valid.sum()),
        "num_masks": masks,
        "ks": ks,
        "k_eff": {"vector": stat(4.0)},
        "sources": {
            "magnitude_vector": {
                "grid_k_reaching": {"top1_agreement_0.9": masks // 2},
                "curves": {"captured_energy": curve},
            }
        },
    }
    topk_arrays = {
        "index": np.arange(count),
        "valid": valid.astype(np.uint8),
        "top1_agreement_magnitude_vector": agreement(starts, num_blocks),
        **({f"top1_agreement_{dl.TRUNK_REMOVED_SOURCE}": agreement(removed, num_blocks)} if removed else {}),
    }
    return Rung(arch, spectrum, spectrum_arrays, topk, topk_arrays, overlap, label)


def ladder() -> tuple[list[Rung], dict[str, Any]]:
    """shallow (L = 3, 224 px, image 0 invalid) → deep (L = 5, 240 px, image 7 invalid) → wide (L = 5, 260 px), and
    shallow at 240 px (image 6 invalid) as the resolution control."""
    shallow = make(
        "shallow", 3, [9, 1, 2, 2, 1, 2, 1, 2], [0, 3, 1, 3, 3, 2, 3, 3],
        kappas=[0.0, 1.5, 1.5, 1.2, 1.8, 1.5, 1.5, 1.5], removed=[0, 3, 3, 2, 3, 3, 3, 3], invalid=(0,), input_size=224,
    )  # fmt: skip
    deep = make(
        "deep", 5, [2, 3, 3, 4, 3, 3, 4, 0], [5, 5, 5, 4, 5, 5, 3, 0],
        kappas=[3.0, 3.0, 3.5, 2.5, 3.0, 3.0, 3.0, 0.0], removed=[5, 5, 4, 5, 5, 5, 5, 0], invalid=(7,), input_size=240,
    )  # fmt: skip
    wide = make(
        "wide", 5, [2, 3, 3, 4, 3, 3, 5, 4], [5, 5, 5, 4, 5, 4, 3, 5],
        kappas=[3.0, 3.0, 3.5, 2.5, 3.0, 3.0, 3.0, 3.0], input_size=260,
    )  # fmt: skip
    control = make(
        "shallow", 3, [2, 2, 2, 2, 2, 2, 0, 2], [3, 3, 1, 3, 3, 2, 0, 3],
        kappas=[1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 0.0, 1.5], invalid=(6,), input_size=240, label="240px",
    )  # fmt: skip
    return [shallow, deep, wide], {"control": control}


def paired_numbers(shared: list[int], differences: list[float], seed: int = 0) -> dict[str, Any]:
    """A :func:`paired_difference` by hand: counts, ties and the sign test of ``differences`` on positions ``shared``."""
    values = np.asarray(differences, dtype=np.float64)
    positive, negative = int((values > 0).sum()), int((values < 0).sum())
    return {
        "num_shared": len(shared),
        "shared_positions": shared,
        "num_finite": len(differences),
        "difference": bootstrap_mean_ci(values, seed=seed),
        "positive": positive,
        "negative": negative,
        "ties": len(differences) - positive - negative,
        "sign_test_p": float(binomtest(positive, positive + negative).pvalue) if positive + negative else 1.0,
    }


DEPTH, WIDTH, RESOLUTION, AT_INPUT = [1, 2, 3, 4, 5, 6], [0, 1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 7], [0, 1, 2, 3, 4, 5]
# each measure's per-image differences on the shared positions, by hand from the planted rungs
DIFFERENCES = {
    ("width", "peak_order"): (WIDTH, [0, 0, 0, 0, 0, 0, 1]),
    ("depth", "peak_order"): (DEPTH, [2, 1, 2, 2, 1, 3]),
    ("resolution", "peak_order"): (RESOLUTION, [1, 0, 0, 1, 0, 0]),
    ("depth_at_input", "peak_order"): (AT_INPUT, [0, 1, 1, 2, 1, 1]),
    ("width", "peak_minus_null"): (WIDTH, [0, 0, 0, 0, 0, 0, 1]),
    ("depth", "peak_minus_null"): (DEPTH, [1, 0, 1, 1, 0, 2]),  # (deep − 5/2) − (shallow − 3/2)
    ("resolution", "peak_minus_null"): (RESOLUTION, [1, 0, 0, 1, 0, 0]),
    ("depth_at_input", "peak_minus_null"): (AT_INPUT, [-1, 0, 0, 1, 0, 0]),  # (deep − 5/2) − (control − 3/2)
    ("width", "kappa_over_l"): (WIDTH, [0.0] * 7),
    ("depth", "kappa_over_l"): (
        DEPTH,
        [3 / 5 - 1.5 / 3, 3.5 / 5 - 1.5 / 3, 2.5 / 5 - 1.2 / 3, 3 / 5 - 1.8 / 3, 3 / 5 - 1.5 / 3, 3 / 5 - 1.5 / 3],
    ),
    ("resolution", "kappa_over_l"): (
        RESOLUTION,
        [0.0, 0.0, 1.5 / 3 - 1.2 / 3, 1.5 / 3 - 1.8 / 3, 0.0, 0.0],
    ),
    ("depth_at_input", "kappa_over_l"): (
        AT_INPUT,
        [3 / 5 - 0.5, 3 / 5 - 0.5, 3.5 / 5 - 0.5, 2.5 / 5 - 0.5, 3 / 5 - 0.5, 3 / 5 - 0.5],
    ),
    # preserving fractions: shallow [·, 1, 1/4, 1, 1, 1/2, 1, 1], deep [1, 1, 1, 1/2, 1, 1, 1/4, ·],
    # wide [1, 1, 1, 1/2, 1, 1/2, 1/4, 1], control [1, 1, 1/4, 1, 1, 1/2, ·, 1]
    ("width", "preserving_fraction"): (WIDTH, [0, 0, 0, 0, 0, -0.5, 0]),
    ("depth", "preserving_fraction"): (DEPTH, [0, 0.75, -0.5, 0, 0.5, -0.75]),
    ("resolution", "preserving_fraction"): (RESOLUTION, [0.0] * 6),
    ("depth_at_input", "preserving_fraction"): (AT_INPUT, [0, 0, 0.75, -0.5, 0, 0.5]),
    # trunk removed: shallow [·, 1, 1, 1/2, 1, 1, 1, 1], deep [1, 1, 1/2, 1, 1, 1, 1, ·]; wide and control lack it
    ("depth", "preserving_fraction_trunk_removed"): (DEPTH, [0, -0.5, 0.5, 0, 0, 0]),
}
ENDS = {"width": ("deep", "wide"), "depth": ("shallow", "deep"), "resolution": ("shallow", "shallow_240px")}
ENDS["depth_at_input"] = ("shallow_240px", "deep")


def without_sources(record: dict[str, Any]) -> dict[str, Any]:
    """A comparison record without what the rules read beside the paired difference (its rungs' shares at the bound,
    its equivalence test)."""
    return {key: value for key, value in record.items() if key not in ("at_bound", "equivalence")}


def comparison(kind: str, measure: str, seed: int = 0) -> dict[str, Any]:
    shared, differences = DIFFERENCES[kind, measure]
    first, second = ENDS[kind]
    return {"from": first, "to": second, "measure": measure, **paired_numbers(shared, differences, seed), "kind": kind}


def test_the_comparisons_are_the_paired_differences_on_the_shared_positions_in_order() -> None:
    rungs, options = ladder()
    analysis = dl.depth_analysis(rungs, **options)  # the default seed is 0
    order = [("width", "depth", "resolution", "depth_at_input")] * 4
    expected = [
        comparison(kind, measure)
        for measure, kinds in zip(dl.SPECTRUM_MEASURES + ("preserving_fraction",), order)
        for kind in kinds
    ] + [comparison("depth", "preserving_fraction_trunk_removed")]
    assert [without_sources(entry) for entry in analysis["comparisons"]] == expected
    assert all(entry["at_bound"] == [None, None] for entry in analysis["comparisons"])  # no rung sits at a bound
    width = analysis["comparisons"][0]  # peak order, deep → wide: TOST within a quarter of the depth step's effect
    depth = analysis["comparisons"][1]
    assert width["equivalence"] == {
        **tost(np.asarray(DIFFERENCES["width", "peak_order"][1]), 0.25 * abs(depth["difference"]["mean"])),
        "margin": 0.25 * abs(depth["difference"]["mean"]),
        "depth_effect": depth["difference"]["mean"],
        "reference": ["shallow", "deep"],
    }
    assert {key: analysis[key] for key in ("experiment", "question", "rule_parameters")} == {
        "experiment": "depth",
        "question": "Do the interaction statistics move with depth (and not with width), as the paper claims?",
        "rule_parameters": {
            "alpha": 0.05,
            "min_paired_images": 6,
            "equivalence_margin_fraction": 0.25,
            "gamma_fractions": [0.125, 0.25, 0.5],
            "agreement_target": 0.9,
            "seed": 0,
        },
    }
    assert [(entry["id"], entry["decision"]) for entry in analysis["verdicts"]] == [
        ("peak_order.depth.shallow-deep", "holds"),  # 6 of 6 up: p = 2/64, at the minimum N
        ("peak_order.width.deep-wide", "holds"),
        ("peak_order.resolution.shallow-shallow_240px", "cannot tell"),
        ("peak_order.depth_at_input.shallow_240px-deep", "cannot tell"),  # 5 up, 1 tied: p = 1/16
        ("peak_minus_null.depth.shallow-deep", "cannot tell"),
        ("peak_minus_null.width.deep-wide", "cannot tell"),
        ("peak_minus_null.resolution.shallow-shallow_240px", "cannot tell"),
        ("peak_minus_null.depth_at_input.shallow_240px-deep", "cannot tell"),
        ("kappa_over_l.depth.shallow-deep", "cannot tell"),
        ("kappa_over_l.width.deep-wide", "holds"),
        ("kappa_over_l.resolution.shallow-shallow_240px", "cannot tell"),
        ("kappa_over_l.depth_at_input.shallow_240px-deep", "cannot tell"),
        ("preserving_fraction.depth.shallow-deep", "cannot tell"),
        ("preserving_fraction.width.deep-wide", "cannot tell"),
        ("preserving_fraction.resolution.shallow-shallow_240px", "cannot tell"),
        ("preserving_fraction.depth_at_input.shallow_240px-deep", "cannot tell"),
        ("preserving_fraction_trunk_removed.depth.shallow-deep", "cannot tell"),
    ]
    seeded = dl.depth_analysis(rungs, seed=3, **options)
    assert without_sources(seeded["comparisons"][1]) == comparison("depth", "peak_order", seed=3)
    assert seeded["rule_parameters"]["seed"] == 3


def test_a_width_step_first_does_not_stop_the_depth_steps_after_it() -> None:
    rungs, _ = ladder()
    first = make("first", 3, [1, 2, 2, 1, 2, 1, 2, 2], [1, 1, 1, 1, 1, 1, 1, 1], input_size=224)
    analysis = dl.depth_analysis([first, *rungs[:2]])
    assert [(entry["kind"], entry["measure"]) for entry in analysis["comparisons"]][:2] == [
        ("width", "peak_order"),
        ("depth", "peak_order"),
    ]
    assert without_sources(analysis["comparisons"][1]) == comparison("depth", "peak_order")


def sign_test(p_value: float) -> dict[str, Any]:
    return {
        "name": SIGN_TEST,
        "p_value": p_value,
        "p_adjusted": None,
        "correction": None,
        "family_size": None,
        "p_floor": None,
    }


def paired_entry(
    verdict_id: str, claim: str, decision: str, effect_name: str, paired: dict[str, Any], notes: list[str]
) -> dict[str, Any]:
    difference = paired["difference"]
    return {
        "id": verdict_id,
        "claim": claim,
        "decision": decision,
        "rule": PAIRED_RULE,
        "parameters": {"alpha": 0.05, "min_paired_images": 6},
        "statistic": {"name": "shared images", "value": paired["num_finite"]},
        "effect": {
            "name": effect_name,
            "value": difference["mean"],
            "ci_low": difference["ci_low"],
            "ci_high": difference["ci_high"],
            "confidence": 0.95,
            "percent": False,
        },
        "test": sign_test(paired["sign_test_p"]),
        "seed": None,
        "notes": notes,
    }


def equivalence_entry(
    verdict_id: str,
    claim: str,
    decision: str,
    effect_name: str,
    differences: list[float],
    margin: float | None,
    depth_effect: float | None,
    notes: list[str],
) -> dict[str, Any]:
    result = tost(differences, 0.0 if margin is None else margin)
    return {
        "id": verdict_id,
        "claim": claim,
        "decision": decision,
        "rule": EQUIVALENCE_RULE,
        "parameters": {
            "alpha": 0.05,
            "margin": margin,
            "margin_fraction": 0.25,
            "depth_effect": depth_effect,
            "p_beyond": result["p_beyond"],
        },
        "statistic": {"name": "shared images", "value": len(differences)},
        "effect": {
            "name": effect_name,
            "value": result["mean"],
            "ci_low": result["ci_low"],
            "ci_high": result["ci_high"],
            "confidence": 0.9,
            "interval": "t-interval (the TOST's)",
        },
        "test": {**sign_test(result["p_value"]), "name": TOST},
        "seed": None,
        "notes": notes,
    }


def bootstrap_text(kind: str, measure: str) -> str:
    difference = comparison(kind, measure)["difference"]
    return f"95 % bootstrap CI [{difference['ci_low']:.3g}, {difference['ci_high']:.3g}]"


def width_note(measure: str) -> str:
    difference = comparison("width", measure)["difference"]
    return (
        f"width control at L = 5 (deep → wide): mean difference {difference['mean']:+.3g} "
        f"[{difference['ci_low']:.3g}, {difference['ci_high']:.3g}] on 7 image(s)"
    )


STEP_NOTE = (
    "depth step L = 3 → 5 (shallow → deep); the input resolution changes with it (224 px → 240 px), so depth and "
    "resolution are not separated here (the resolution control, where run, holds the input fixed)"
)
STEP_CLAIM = " (shallow → deep: L = 3 → 5, input 224 px → 240 px)"
DEPTH_MARGIN = 0.25 * 11 / 6  # a quarter of the peak order's depth effect, 11/6
MARGIN_NOTE = "margin ±0.458 = 0.25 × the depth effect +1.83 (shallow → deep, same images)"


def test_the_depth_verdicts_are_the_hand_written_entries() -> None:
    rungs, options = ladder()
    verdicts = {entry["id"]: entry for entry in dl.depth_analysis(rungs, **options)["verdicts"]}
    assert verdicts["peak_order.depth.shallow-deep"] == paired_entry(
        "peak_order.depth.shallow-deep",
        "the peak order of the interaction spectrum grows with depth (expected of subset counting alone: the binomial "
        "null's peak, L/2, grows too)" + STEP_CLAIM,
        "holds",
        "deep − shallow",
        comparison("depth", "peak_order"),
        [
            "6 shared image(s): 6 up, 0 down, 0 tied",
            "trivial: the binomial null's peak moves too (1 and 2 (tied) → 2 and 3 (tied)); growth with L alone is what "
            "equal energy per subset gives — the shape is judged by peak − L/2 and κ^v / L",
            STEP_NOTE,
            width_note("peak_order"),
        ],
    )
    assert verdicts["preserving_fraction.depth.shallow-deep"] == paired_entry(
        "preserving_fraction.depth.shallow-deep",
        "prediction-preserving sparsity weakens with depth" + STEP_CLAIM,
        "cannot tell",
        "deep − shallow",
        comparison("depth", "preserving_fraction"),
        [
            "6 shared image(s): 2 up, 2 down, 2 tied",
            STEP_NOTE,
            width_note("preserving_fraction"),
            "shallow sits at the bound 1 on 5 of its 7 images but on 4 of the 6 shared ones: the shared images need "
            "not represent its sample",
        ],
    )
    assert verdicts["preserving_fraction_trunk_removed.depth.shallow-deep"] == paired_entry(
        "preserving_fraction_trunk_removed.depth.shallow-deep",
        "prediction-preserving sparsity of the interactions weakens with depth (trunk removed: ranking S ≠ ∅, target "
        "h(full) − h(∅))" + STEP_CLAIM,
        "cannot tell",
        "deep − shallow",
        comparison("depth", "preserving_fraction_trunk_removed"),
        [
            "6 shared image(s): 1 up, 1 down, 4 tied",
            STEP_NOTE,
            "no width control at L = 5: depth and width are not separated",
        ],
    )
    assert verdicts["kappa_over_l.depth_at_input.shallow_240px-deep"] == paired_entry(
        "kappa_over_l.depth_at_input.shallow_240px-deep",
        "the spectrum shifts to higher relative orders with depth (κ^v / L grows) (shallow_240px → deep: L = 3 → 5, "
        "input 240 px → 240 px)",
        "cannot tell",
        "deep − shallow_240px",
        comparison("depth_at_input", "kappa_over_l"),
        [
            "6 shared image(s): 5 up, 0 down, 1 tied",
            "depth step L = 3 → 5 (shallow_240px → deep); both at 240 px: depth separated from resolution",
        ],
    )


def test_the_width_and_resolution_verdicts_are_the_hand_written_entries() -> None:
    rungs, options = ladder()
    verdicts = {entry["id"]: entry for entry in dl.depth_analysis(rungs, **options)["verdicts"]}
    assert verdicts["peak_order.width.deep-wide"] == equivalence_entry(
        "peak_order.width.deep-wide",
        "at equal depth (L = 5), wide (wider; input 240 px → 260 px) moves peak order (per image, vector) by less than "
        "25% of the depth effect",
        "holds",
        "wide − deep",
        [0, 0, 0, 0, 0, 0, 1],
        DEPTH_MARGIN,
        11 / 6,
        [
            f"7 shared image(s): 1 up, 0 down, 6 tied (sign test p = 1; {bootstrap_text('width', 'peak_order')})",
            "width step at L = 5 (deep → wide); the input resolution changes with it (240 px → 260 px), so width and "
            "resolution are not separated",
            MARGIN_NOTE,
        ],
    )
    assert verdicts["peak_order.resolution.shallow-shallow_240px"] == equivalence_entry(
        "peak_order.resolution.shallow-shallow_240px",
        "at equal depth (L = 3), shallow at 240 px instead of 224 px moves peak order (per image, vector) by less than "
        "25% of the depth effect",
        "cannot tell",
        "shallow_240px − shallow",
        [1, 0, 0, 1, 0, 0],
        DEPTH_MARGIN,
        11 / 6,
        [
            f"6 shared image(s): 2 up, 0 down, 4 tied (sign test p = 0.5; {bootstrap_text('resolution', 'peak_order')})",
            "resolution control: the same network and images, input 224 px → 240 px",
            MARGIN_NOTE,
        ],
    )


def scaled(mean: float, scale: float) -> dict[str, float]:
    """:func:`stat` of ``mean`` with every location divided by ``scale`` (``n`` is a count: kept)."""
    return {
        "mean": mean / scale,
        "ci_low": (mean - 1) / scale,
        "ci_high": (mean + 1) / scale,
        "median": mean / scale,
        "min": (mean - 2) / scale,
        "max": (mean + 2) / scale,
        "n": 8,
    }


def nearest(num_valid: int, **extra: Any) -> dict[str, Any]:
    return {
        "num_valid": num_valid,
        **extra,
        "rankings": {"scalar": {"binary": {"true_label": {"nn_accuracy_ci": stat(0.5), "chance": 0.1}}}},
    }


def test_the_rows_are_the_hand_written_table() -> None:
    rungs, _ = ladder()
    shallow = Rung(**{**rungs[0].__dict__, "overlap": nearest(7, num_classes=10, settings={"nn_k": 16})})
    bare = Rung(**{**rungs[1].__dict__, "overlap": nearest(7)})  # no class count, no settings
    assert dl.rung_row(shallow) == {
        "arch": "shallow",
        "label": "",
        "num_blocks": 3,
        "num_masks": 8,
        "input_size": 224,
        "spectrum": {
            "num_images": 7,
            "mean_spectrum_peak_order": 2,
            "peak_order": stat(2.0),
            "peak_order_over_l": scaled(2.0, 3),
            "kappa": stat(3.0),
            "kappa_over_l": scaled(3.0, 3),
            "c_le3": stat(0.5),
            "trunk_share": stat(0.25),
            "binomial_null_peak_order": 1.5,
            "binomial_null_peak_orders": [1, 2],
        },
        "topk": {
            "num_images": 7,
            "k_eff_fraction": scaled(4.0, 8),
            "captured_energy": {  # 1/8, 1/4, 1/2 of 2^3: K = 1, 2, 4, where the planted curve is 10·K ± 1
                "0.125": {"mean": 10.0, "ci_low": 9.0, "ci_high": 11.0},
                "0.25": {"mean": 20.0, "ci_low": 19.0, "ci_high": 21.0},
                "0.5": {"mean": 40.0, "ci_low": 39.0, "ci_high": 41.0},
            },
            "agreement_k_fraction": 0.5,
            "preserving_fraction": {
                **bootstrap_mean_ci(np.array([1, 0.25, 1, 1, 0.5, 1, 1])),
                "at_bound_share": 5 / 7,
                "bound": 1.0,
            },
            "preserving_fraction_trunk_removed": {
                **bootstrap_mean_ci(np.array([1, 1, 0.5, 1, 1, 1, 1])),
                "at_bound_share": 6 / 7,
                "bound": 1.0,
            },
        },
        "nearest_neighbour": {
            "accuracy": stat(0.5),
            "chance": 0.1,
            "num_images": 7,
            "num_classes": 10,
            "nn_k": 16,
        },
    }
    row = dl.rung_row(bare)
    assert row["nearest_neighbour"] == {
        "accuracy": stat(0.5),
        "chance": 0.1,
        "num_images": 7,
        "num_classes": None,
        "nn_k": None,
    }
    assert row["topk"]["preserving_fraction_trunk_removed"] is not None
    assert dl.rung_row(rungs[2])["topk"]["preserving_fraction_trunk_removed"] is None  # wide has no such run
    assert dl.rung_row(Rung(**{**rungs[1].__dict__, "overlap": {"rankings": {}}}))["nearest_neighbour"] is None


def test_a_row_off_the_grid_without_a_reaching_k_or_arrays_or_any_results() -> None:
    rungs, _ = ladder()
    topk = dict(rungs[0].topk)
    topk["ks"] = [1, 4, 8]  # 1/4 of 2^3 = 2 is not on the grid
    topk["sources"] = {
        "magnitude_vector": {
            "grid_k_reaching": {},  # no K reached 90 % agreement
            "curves": {"captured_energy": {name: [1.0, 4.0, 8.0] for name in ("mean", "ci_low", "ci_high")}},
        }
    }
    row = dl.rung_row(Rung("net", None, None, topk, None, None))  # a summary without per-image arrays
    assert row == {
        "arch": "net",
        "label": "",
        "num_blocks": 3,
        "num_masks": 8,
        "input_size": 224,
        "topk": {
            "num_images": 7,
            "k_eff_fraction": scaled(4.0, 8),
            "captured_energy": {
                "0.125": {"mean": 1.0, "ci_low": 1.0, "ci_high": 1.0},
                "0.25": None,
                "0.5": {"mean": 4.0, "ci_low": 4.0, "ci_high": 4.0},
            },
            "agreement_k_fraction": None,
            "preserving_fraction": None,
            "preserving_fraction_trunk_removed": None,
        },
    }
    assert dl.per_image_measures(Rung("net", None, None, topk, None, None)) == {}
    assert dl.rung_row(Rung("gone", None, None, None, None, None, "240px")) == {
        "arch": "gone",
        "label": "240px",
        "num_blocks": None,
        "num_masks": None,
        "input_size": None,
    }


def planted(count: int, p_value: float, low: float, high: float, up: int = 0, down: int = 0) -> dict[str, Any]:
    """A paired comparison with the given number of finite images, sign test p and bootstrap CI (mean its midpoint)."""
    return {
        "num_finite": count,
        "positive": up,
        "negative": down,
        "ties": count - up - down,
        "sign_test_p": p_value,
        "difference": {"mean": (low + high) / 2, "ci_low": low, "ci_high": high},
        "from": "a",
        "to": "b",
        "measure": "m",
        "kind": "depth",
        "at_bound": [None, None],
    }


AT_BOUND = [{"value": 1.0, "share": 0.95}, None]  # the shallower network at its bound on 95 % of images


def with_tost(paired: dict[str, Any], differences: list[float], reference: dict[str, Any] | None) -> dict[str, Any]:
    """A width comparison of ``paired`` carrying the equivalence test of ``differences`` against ``reference``."""
    return {**paired, "kind": "width", "equivalence": dv.equivalence_block(np.array(differences), reference)}


FEW = "fewer than 6 shared images: no sign test can reach p < 0.05, so the data cannot decide"


@pytest.mark.parametrize(
    ("count", "p_value", "low", "high", "decision"),
    [
        (6, 0.03, 0.1, 1.0, "holds"),  # at the minimum N
        (5, 0.03, 0.1, 1.0, "cannot tell"),  # just below it
        (7, 0.05, 0.1, 1.0, "cannot tell"),  # p at α is not below it
        (7, 0.049, 0.1, 1.0, "holds"),
        (7, 0.03, 0.0, 1.0, "cannot tell"),  # a CI touching 0 does not lie above it
        (7, 0.03, -1.0, -0.1, "fails"),
        (6, 0.03, -1.0, -0.1, "fails"),
        (5, 0.03, -1.0, -0.1, "cannot tell"),
        (7, 0.05, -1.0, -0.1, "cannot tell"),
        (7, 0.03, -1.0, 0.0, "cannot tell"),  # touching 0 from below
        (7, 0.03, -1.0, 0.5, "cannot tell"),  # across 0
        (7, 0.5, -1.0, -0.1, "cannot tell"),  # below 0 but no significant sign test
    ],
)
def test_the_paired_rule_at_and_around_its_thresholds(
    count: int, p_value: float, low: float, high: float, decision: str
) -> None:
    entry = dv.paired_verdict("m.depth.a-b", "claim", planted(count, p_value, low, high, up=count), "b − a", [])
    assert entry["decision"] == decision
    assert entry["notes"] == [f"{count} shared image(s): {count} up, 0 down, 0 tied"] + ([FEW] if count < 6 else [])


@pytest.mark.parametrize(("count", "few"), [(0, False), (1, True), (5, True), (6, False)])
def test_the_few_images_note_is_written_from_one_to_five_images(count: int, few: bool) -> None:
    paired = {**planted(count, 1.0, 0.0, 0.0, up=min(count, 1), down=0), "at_bound": AT_BOUND}
    entry = dv.paired_verdict("m.depth.a-b", "a claim", paired, "b − a", ["bound"], notes=["first", "second"])
    assert entry == paired_entry(
        "m.depth.a-b",
        "a claim",
        "saturated",
        "b − a",
        paired,
        [
            f"{count} shared image(s): {min(count, 1)} up, 0 down, {count - min(count, 1)} tied",
            "first",
            "second",
            "bound",
        ]
        + ([FEW] if few else []),
    )


def margin_note(margin: str, effect: str) -> str:
    return f"margin ±{margin} = 0.25 × the depth effect {effect} (a → b, same images)"


def test_the_equivalence_rule_at_a_margin_of_one_without_a_reference_and_with_a_shift_inside_it() -> None:
    differences = [0.1, 0.2, 0.1, 0.2, 0.1, 0.2]
    reference = planted(6, 0.03, 3.0, 5.0)  # a depth effect of 4: the margin is exactly 1
    shifted = planted(6, 0.03, 0.1, 0.2, up=6)
    head = "6 shared image(s): 6 up, 0 down, 0 tied (sign test p = 0.03; 95 % bootstrap CI [0.1, 0.2])"
    shift = (
        "a consistent shift inside the margin: the step moves the measure (sign test p < α), by less than 25% of the "
        "depth effect"
    )
    entry = dv.equivalence_verdict(
        "m.width.a-b", "claim", with_tost(shifted, differences, reference), "b − a", [], ["n"], reference
    )
    assert entry == equivalence_entry(
        "m.width.a-b", "claim", "holds", "b − a", differences, 1.0, 4.0, [head, "n", margin_note("1", "+4"), shift]
    )
    at_alpha = {**shifted, "sign_test_p": 0.05}  # p at α: no consistent shift
    entry = dv.equivalence_verdict(
        "m.width.a-b", "claim", with_tost(at_alpha, differences, reference), "b − a", [], [], reference
    )
    assert entry["decision"] == "holds" and entry["notes"][1:] == [margin_note("1", "+4")]
    beyond = [5.1, 5.2, 5.1, 5.2, 5.1, 5.2]  # wholly beyond ±1 with a significant sign test: fails, no shift note
    entry = dv.equivalence_verdict(
        "m.width.a-b", "claim", with_tost(shifted, beyond, reference), "b − a", [], [], reference
    )
    assert entry["decision"] == "fails" and entry["notes"][1:] == [margin_note("1", "+4")]
    saturated = {**with_tost(shifted, differences, None), "at_bound": AT_BOUND}
    entry = dv.equivalence_verdict("m.width.a-b", "claim", saturated, "b − a", ["s"], [])
    assert entry == equivalence_entry(
        "m.width.a-b",
        "claim",
        "saturated",
        "b − a",
        differences,
        None,
        None,
        [head, "no depth comparison of this measure to size the margin: cannot tell", "s"],
    )
    flat = planted(6, 0.03, -1.0, 1.0)  # a depth effect of 0: no margin to be inside
    entry = dv.equivalence_verdict("m.width.a-b", "claim", with_tost(shifted, differences, flat), "b − a", [], [], flat)
    assert entry["decision"] == "cannot tell" and entry["parameters"]["margin"] == 0.0
    entry = dv.equivalence_verdict("m.width.a-b", "claim", with_tost(shifted, differences, None), "b − a", [], [])
    assert entry["decision"] == "cannot tell"


def test_a_paired_difference_reads_the_shared_finite_positions_only() -> None:
    first = (np.array([0, 1, 2, 3, 5]), np.array([9.0, 1.0, 2.0, 3.0, 4.0]))
    second = (np.array([1, 2, 3, 4, 5]), np.array([2.0, 2.0, np.nan, 7.0, 1.0]))
    assert dl.paired_difference(first, second) == {  # shared 1, 2, 3, 5; position 3 is NaN: 1, 0, −3
        "num_shared": 4,
        "shared_positions": [1, 2, 3, 5],
        "num_finite": 3,
        "difference": bootstrap_mean_ci(np.array([1.0, 0.0, -3.0]), seed=0),
        "positive": 1,
        "negative": 1,
        "ties": 1,
        "sign_test_p": 1.0,
    }
    up = (np.arange(5), np.array([1.0, 2.0, 3.0, 4.0, 0.0]))
    result = dl.paired_difference((np.arange(5), np.zeros(5)), up, seed=2)
    assert (result["positive"], result["negative"], result["ties"]) == (4, 0, 1)
    assert result["sign_test_p"] == pytest.approx(2 / 16) and result["difference"] == bootstrap_mean_ci(up[1], seed=2)
    tied = dl.paired_difference((np.arange(3), np.ones(3)), (np.arange(3), np.ones(3)))
    assert (tied["sign_test_p"], tied["ties"], tied["negative"]) == (1.0, 3, 0)


def bare(arch: str, num_blocks: int | None) -> Rung:
    summary = None if num_blocks is None else {"config": {"num_blocks": num_blocks}}
    return Rung(arch, summary, None, None, None, None)


def test_a_ladder_naming_a_network_twice_or_out_of_order_is_refused() -> None:
    with pytest.raises(PipelineError) as error:
        dl.check_ladder([bare("a", 3), bare("b", 5), bare("a", 5)])
    assert str(error.value) == "the depth ladder names a twice; each rung must be another network"
    with pytest.raises(PipelineError) as error:
        dl.check_ladder([bare("c", 3), bare("b", 3), bare("b", 5), bare("c", 5)])
    assert str(error.value) == "the depth ladder names b twice; each rung must be another network"
    with pytest.raises(PipelineError) as error:
        dl.check_ladder([bare("a", 5), bare("gone", None), bare("b", 3)])
    assert str(error.value) == (
        "the depth ladder is not ordered shallow to deep (L = 5 → 3); list the networks by increasing number of blocks"
    )
    dl.check_ladder([bare("a", 3), bare("gone", None), bare("b", 3), bare("c", 5)])  # equal L and a missing rung: fine


def with_config(rung: Rung, **config: Any) -> Rung:
    """``rung`` with ``config`` added to both its summaries."""
    spectrum = {**rung.spectrum, "config": {**rung.spectrum["config"], **config}}
    topk = {**rung.topk, "config": {**rung.topk["config"], **config}}
    return Rung(**{**rung.__dict__, "spectrum": spectrum, "topk": topk})


def test_images_pair_only_on_the_same_sample_list_of_the_measure_s_own_summary() -> None:
    rungs, _ = ladder()
    shallow, deep = rungs[0], rungs[1]
    apart = [with_config(shallow, sample_list_sha256="aaa"), with_config(deep, sample_list_sha256="bbb")]
    assert dl.depth_analysis(apart)["comparisons"] == []  # the same path, other contents
    same = [
        with_config(shallow, sample_list_sha256="aaa"),
        with_config(deep, sample_list_sha256="aaa", sample_index="x"),
    ]
    assert without_sources(dl.depth_analysis(same)["comparisons"][0]) == comparison("depth", "peak_order")
    # the spectrum on one list, the top-K on another: only the spectrum measures pair; without κ^v on one side, no κ
    mixed = Rung(
        **{**shallow.__dict__, "topk": {**shallow.topk, "config": {**shallow.topk["config"], "sample_index": "y"}}}
    )
    no_kappa = {name: values for name, values in shallow.spectrum_arrays.items() if name != "kappa_vector"}
    mixed = Rung(**{**mixed.__dict__, "spectrum_arrays": no_kappa})
    analysis = dl.depth_analysis([mixed, deep])
    assert [(entry["kind"], entry["measure"]) for entry in analysis["comparisons"]] == [
        ("depth", "peak_order"),
        ("depth", "peak_minus_null"),
    ]


def test_a_shallower_network_at_its_bound_is_saturated_and_a_resolution_control_at_it_censored() -> None:
    shallow = make("shallow", 3, [1] * 8, [3] * 8)  # every image needs all 2^3 masks: at the bound 1; no input sizes
    deep = make("deep", 5, [2] * 8, [3] * 8)  # 8 of 32 on every image
    control = make("shallow", 3, [1] * 8, [3] * 8, label="240px")
    verdicts = {entry["id"]: entry for entry in dl.depth_analysis([shallow, deep], control=control)["verdicts"]}
    assert verdicts["preserving_fraction.depth.shallow-deep"] == paired_entry(
        "preserving_fraction.depth.shallow-deep",
        "prediction-preserving sparsity weakens with depth (shallow → deep: L = 3 → 5, input unrecorded → unrecorded)",
        "saturated",
        "deep − shallow",
        paired_numbers(list(range(8)), [-0.75] * 8),
        [
            "8 shared image(s): 0 up, 8 down, 0 tied",
            "depth step L = 3 → 5 (shallow → deep); the input resolution changes with it (unrecorded → unrecorded), so "
            "depth and resolution are not separated here (the resolution control, where run, holds the input fixed)",
            "no width control at L = 5: depth and width are not separated",
            "shallow sits at the bound 1 on 8 of its 8 images but on 8 of the 8 shared ones: the shared images need not "
            "represent its sample",
            "shallow (the shallower network): preserving_fraction already at its bound 1 on 100% of images, so it cannot "
            "move in the claimed direction",
        ],
    )
    censored = "censored: {} sits at the bound 1 on 100% of images (≥ 90%), so the measure cannot move there"
    assert verdicts["preserving_fraction.resolution.shallow-shallow_240px"] == equivalence_entry(
        "preserving_fraction.resolution.shallow-shallow_240px",
        "at equal depth (L = 3), shallow at unrecorded instead of unrecorded moves preserving fraction K/2^L (per "
        "image, vector ranking) by less than 25% of the depth effect",
        "saturated",
        "shallow_240px − shallow",
        [0.0] * 8,
        0.25 * 0.75,
        -0.75,
        [
            "8 shared image(s): 0 up, 0 down, 8 tied (sign test p = 1; 95 % bootstrap CI [0, 0])",
            "resolution control: the same network and images, input unrecorded → unrecorded",
            "margin ±0.188 = 0.25 × the depth effect -0.75 (shallow → deep, same images)",
            censored.format("shallow"),
            censored.format("shallow_240px"),
        ],
    )
    assert verdicts["preserving_fraction.depth_at_input.shallow_240px-deep"]["notes"][1:] == [
        "depth step L = 3 → 5 (shallow_240px → deep); the input resolution changes with it (unrecorded → unrecorded), "
        "so depth and resolution are not separated here (the resolution control, where run, holds the input fixed)",
        "shallow_240px sits at the bound 1 on 8 of its 8 images but on 8 of the 8 shared ones: the shared images need "
        "not represent its sample",
        "shallow_240px (the shallower network): preserving_fraction already at its bound 1 on 100% of images, so it "
        "cannot move in the claimed direction",
    ]


def test_a_resolution_control_of_the_deepest_rung_or_below_a_rung_without_results() -> None:
    shallow = make("shallow", 3, [1] * 8, [1] * 8)
    deep = make("deep", 5, [2, 3, 2, 3, 2, 3, 2, 3], [1] * 8)
    control = make("deep", 5, [3] * 8, [1] * 8, label="240px")  # no deeper rung: no margin, no depth step at its size
    analysis = dl.depth_analysis([shallow, deep], control=control)
    assert [(entry["kind"], entry["from"], entry["to"]) for entry in analysis["comparisons"]][:3] == [
        ("depth", "shallow", "deep"),
        ("resolution", "deep", "deep_240px"),
        ("depth", "shallow", "deep"),
    ]
    resolution = {entry["id"]: entry for entry in analysis["verdicts"]}["peak_order.resolution.deep-deep_240px"]
    assert resolution["decision"] == "cannot tell" and resolution["parameters"]["margin"] is None
    # the control's own network has no results: the first rung of more blocks than none is the deeper one
    one = make("one", 1, [1, 0, 1, 0, 1, 0, 1, 0], [1] * 8)
    analysis = dl.depth_analysis([bare("net", None), one], control=make("net", 1, [0] * 8, [1] * 8, label="x"))
    assert [(entry["kind"], entry["from"], entry["to"]) for entry in analysis["comparisons"]][0] == (
        "depth_at_input",
        "net_x",
        "one",
    )


def test_a_rung_loads_the_arrays_of_its_own_run_only(tmp_path: Path) -> None:
    spectrum = tmp_path / "experiment_2" / "results_net_sample"
    atomic_write_json(spectrum / "summary.json", {"config": {"run_id": "run-a", "num_blocks": 3}})
    atomic_save_npz(spectrum / "per_image.npz", {RUN_ID_ARRAY: np.array("run-b"), "index": np.arange(2)})
    with pytest.raises(PipelineError) as error:
        dl.load_rung(tmp_path, "net", "_sample")
    assert str(error.value) == (
        f"{spectrum / 'per_image.npz'}: from run run-b, but {spectrum / 'summary.json'} is from run run-a; pass files "
        "of the same run (rerun the step that wrote per_image.npz)"
    )
    topk = tmp_path / "experiment_3" / "results_net_sample"  # arrays without a summary, and a summary without arrays
    atomic_save_npz(topk / "per_image.npz", {RUN_ID_ARRAY: np.array("run-a"), "index": np.arange(2)})
    atomic_save_npz(spectrum / "per_image.npz", {RUN_ID_ARRAY: np.array("run-a"), "index": np.arange(2)})
    (spectrum / "per_image.npz").rename(spectrum / "elsewhere.npz")
    rung = dl.load_rung(tmp_path, "net", "_sample", label="240px")
    assert (rung.spectrum, rung.spectrum_arrays, rung.topk, rung.topk_arrays, rung.overlap, rung.label) == (
        {"config": {"run_id": "run-a", "num_blocks": 3}},
        None,
        None,
        None,
        None,
        "240px",
    )
    (spectrum / "elsewhere.npz").rename(spectrum / "per_image.npz")
    assert dl.load_rung(tmp_path, "net", "_sample").spectrum_arrays["index"].tolist() == [0, 1]
    with pytest.raises(PipelineError) as error:
        dl.load_rung(tmp_path, "a/b", "_sample")
    assert str(error.value) == (
        "--ladder 'a/b': a rung of the ladder must be a plain name (no '/', '\\', '..' or control characters), the name "
        "of its results folders; pass the network's name, not a path"
    )


def test_a_deeper_network_at_its_bound_is_censored() -> None:
    shallow = make("shallow", 3, [1] * 8, [1] * 8)  # 2 of 8 masks on every image
    deep = make("deep", 5, [2] * 8, [5] * 8)  # all 32 on every image: at the bound
    verdicts = {entry["id"]: entry for entry in dl.depth_analysis([shallow, deep])["verdicts"]}
    assert verdicts["preserving_fraction.depth.shallow-deep"] == paired_entry(
        "preserving_fraction.depth.shallow-deep",
        "prediction-preserving sparsity weakens with depth (shallow → deep: L = 3 → 5, input unrecorded → unrecorded)",
        "saturated",
        "deep − shallow",
        paired_numbers(list(range(8)), [0.75] * 8),
        [
            "8 shared image(s): 8 up, 0 down, 0 tied",
            "depth step L = 3 → 5 (shallow → deep); the input resolution changes with it (unrecorded → unrecorded), so "
            "depth and resolution are not separated here (the resolution control, where run, holds the input fixed)",
            "no width control at L = 5: depth and width are not separated",
            "shallow sits at the bound 1 on 0 of its 8 images but on 0 of the 8 shared ones: the shared images need not "
            "represent its sample",
            "censored: deep (the deeper network) sits at the bound 1 on 100% of images, so every image where the "
            "shallower one is below it counts as up: the comparison reads the shallower network alone",
        ],
    )


def test_every_comparison_bootstraps_with_the_analysis_seed() -> None:
    """κ^v spread over a continuum on 16 images: the bootstrap CI of each comparison is the one of the given seed."""
    count, positions = 16, np.arange(16)
    kappas = {
        "shallow": 1.5 + 0.1 * np.sin(positions),
        "deep": 3.0 + 0.2 * np.cos(1.3 * positions),
        "wide": 3.0 + 0.2 * np.cos(1.3 * positions) + 0.01 * np.sin(2.0 * positions),
        "control": 1.5 + 0.1 * np.sin(positions) + 0.01 * np.cos(3.0 * positions),
    }
    blocks = {"shallow": 3, "deep": 5, "wide": 5, "control": 3}

    def network(name: str) -> Rung:
        arch, label = ("shallow", "240px") if name == "control" else (name, "")
        return make(arch, blocks[name], [1] * count, [1] * count, kappas=list(kappas[name]), label=label)

    rungs = [network(name) for name in ("shallow", "deep", "wide")]
    steps = {"width": ("deep", "wide"), "depth": ("shallow", "deep"), "resolution": ("shallow", "control")}
    steps["depth_at_input"] = ("control", "deep")
    for seed, options in ((0, {}), (5, {"seed": 5})):
        analysis = dl.depth_analysis(rungs, control=network("control"), **options)
        found = {
            entry["kind"]: entry["difference"]
            for entry in analysis["comparisons"]
            if entry["measure"] == "kappa_over_l"
        }
        expected = {
            kind: bootstrap_mean_ci(kappas[second] / blocks[second] - kappas[first] / blocks[first], seed=seed)
            for kind, (first, second) in steps.items()
        }
        assert found == expected
    assert expected["depth"] != bootstrap_mean_ci(kappas["deep"] / 5 - kappas["shallow"] / 3, seed=0)  # seeds differ
    values = (positions, kappas["deep"])
    assert dl.paired_difference((positions, np.zeros(count)), values)["difference"] == bootstrap_mean_ci(values[1])
