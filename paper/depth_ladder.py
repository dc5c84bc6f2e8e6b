"""The depth ladder: the same statistics of several networks side by side, and the paper's depth claims.

A *rung* is one network's results folders, ``experiment_<N>/results_<arch><suffix>/`` for N = 2
(spectrum: summary.json, per_image.npz), 3 (top-K: summary.json, per_image.npz) and 4 (overlap.json);
a missing folder leaves its statistics ``None``. Per rung (:func:`rung_row`): L, the peak order of
the mean vector spectrum and the per-image peak order, κ^v (also / L), C≤3, the trunk share,
K_eff^v / 2^L, the vector ranking's Γ_K at 1/8, 1/4 and 1/2 of 2^L, the smallest grid K (as a
fraction of 2^L) whose mean top-1 agreement with the full network reaches 90 %, and Experiment 4's
leave-one-out 1-NN accuracy (scalar ranking, binary signature, true label) with its chance level.

The claims are judged on images both rungs evaluated (matched by sample-list position, with the
same sample list; :func:`paired_difference`), deeper minus shallower:

- *peak order grows with depth*: the per-image peak order of the vector spectrum. This is expected
  of subset counting alone — the binomial null's peak is L/2 (tied at (L−1)/2 and (L+1)/2 for odd L,
  :func:`binomial_null_peaks`) — so its verdict says it is trivial, and the shape is judged by:
- *the peak outgrows the null's*: per image, peak order − L/2 (the null's peak, the midpoint of a tie);
- *the spectrum shifts to higher relative orders*: per image, κ^v / L;
- *prediction-preserving sparsity weakens with depth*: per image, the *preserving fraction* — the
  smallest grid K / 2^L from which the magnitude top-K reconstruction (vector ranking) keeps the
  full network's top-1 class at every larger grid K (:func:`preserving_fraction`); weaker sparsity
  means a larger fraction.

The rules (:mod:`paper.depth_verdicts`): a depth step by the paired difference and its sign test, a width or
resolution step ("no change") by equivalence within a fraction of the depth effect; saturated where a network sits at
the measure's bound. The resolution control
also re-judges each depth claim at one input size (``<measure>.depth_at_input.*``). The trunk-removed preserving
fraction (Experiment 3's ``trunk_removed_vector`` source, where a run has it) is judged like the preserving fraction. Every depth and width claim names the
input resolution of both networks (EfficientNet-Lite0/1/2 run at 224, 240 and 260 px), which changes
with L here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import binomtest

from experiment_1.errors import PipelineError
from experiment_1.files import load_run_arrays, name_from_file, read_json
from experiment_1.report import (
    ALPHA,
    SATURATION_SHARE,
    bootstrap_mean_ci,
    saturation,
)
from paper.depth_verdicts import (
    DEPTH_MARGIN_FRACTION,
    MIN_PAIRED_IMAGES,
    equivalence_block,
    equivalence_verdict,
    paired_verdict,
)

QUESTION = "Do the interaction statistics move with depth (and not with width), as the paper claims?"
GAMMA_FRACTIONS = (1 / 8, 1 / 4, 1 / 2)
AGREEMENT_TARGET = 0.9
SPECTRUM_MEASURES = ("peak_order", "peak_minus_null", "kappa_over_l")
TRUNK_REMOVED_SOURCE = "trunk_removed_vector"  # experiment_3.topk.TRUNK_REMOVED (paper/ reads the arrays by name)


@dataclass(frozen=True)
class Rung:
    """One network's results: the summaries and per-image arrays that exist (``None`` where a folder is missing)."""

    arch: str
    spectrum: dict[str, Any] | None
    spectrum_arrays: dict[str, np.ndarray] | None
    topk: dict[str, Any] | None
    topk_arrays: dict[str, np.ndarray] | None
    overlap: dict[str, Any] | None
    label: str = ""  # a resolution control's input size (e.g. "240px"), empty for a rung of the ladder

    @property
    def num_blocks(self) -> int | None:
        for summary in (self.spectrum, self.topk, self.overlap):
            if summary is not None:
                return int(summary["config"]["num_blocks"])
        return None

    @property
    def input_size(self) -> int | None:
        """The input resolution (px) the network ran at, where a summary records it."""
        for summary in (self.spectrum, self.topk, self.overlap):
            if summary is not None and summary["config"].get("input_size") is not None:
                return int(summary["config"]["input_size"])
        return None


def binomial_null_peaks(num_blocks: int) -> list[int]:
    """The peak order(s) of the binomial null C(L, k) / 2^L over k = 0 … L: L/2, or the tie (L−1)/2, (L+1)/2 for odd L."""
    return sorted({num_blocks // 2, (num_blocks + 1) // 2})


def null_peak_text(num_blocks: int) -> str:
    """``7`` or ``4 and 5 (tied)``."""
    peaks = binomial_null_peaks(num_blocks)
    return str(peaks[0]) if len(peaks) == 1 else f"{peaks[0]} and {peaks[1]} (tied)"


def _resolution(rung: Rung) -> str:
    return "unrecorded" if rung.input_size is None else f"{rung.input_size} px"


def _json(path: Path) -> dict[str, Any] | None:
    return read_json(path) if path.exists() else None


def _arrays(folder: Path, summary: dict[str, Any] | None) -> dict[str, np.ndarray] | None:
    """``folder``'s per_image.npz, checked to be of the run of its summary (None when either is absent)."""
    path = folder / "per_image.npz"
    if not path.exists() or summary is None:
        return None
    return load_run_arrays(path, summary, folder / "summary.json")


def load_rung(root: Path, arch: str, suffix: str, label: str = "") -> Rung:
    """The results folders of ``arch`` under ``root`` (``experiment_<N>/results_<arch><suffix>/``)."""
    folder = {
        number: Path(root)
        / f"experiment_{number}"
        / f"results_{name_from_file(arch, 'a rung of the ladder', Path(root), flag='--ladder')}{suffix}"
        for number in (2, 3, 4)
    }
    spectrum, topk = _json(folder[2] / "summary.json"), _json(folder[3] / "summary.json")
    return Rung(
        arch,
        spectrum,
        _arrays(folder[2], spectrum),
        topk,
        _arrays(folder[3], topk),
        _json(folder[4] / "overlap.json"),
        label,
    )


def _scaled(stat: dict[str, Any], scale: float) -> dict[str, Any]:
    return {
        name: (value / scale if name in ("mean", "ci_low", "ci_high", "median", "min", "max") else value)
        for name, value in stat.items()
    }


def _curve_at(summary: dict[str, Any], metric: str, k: int) -> dict[str, float] | None:
    """The magnitude-vector curve ``metric`` at grid K = ``k`` (mean and CI), or ``None`` off the grid."""
    if k not in summary["ks"]:
        return None
    position = summary["ks"].index(k)
    curve = summary["sources"]["magnitude_vector"]["curves"][metric]
    return {name: curve[name][position] for name in ("mean", "ci_low", "ci_high")}


def _nn_accuracy(overlap: dict[str, Any]) -> dict[str, Any] | None:
    """Experiment 4's 1-NN accuracy (scalar ranking, binary signature, true label) and its chance level."""
    try:
        nn = overlap["rankings"]["scalar"]["binary"]["true_label"]
        return {
            "accuracy": nn["nn_accuracy_ci"],
            "chance": nn["chance"],
            "num_images": overlap["num_valid"],
            "num_classes": overlap.get("num_classes"),
            "nn_k": overlap.get("settings", {}).get("nn_k"),
        }
    except (KeyError, TypeError):
        return None


def rung_row(rung: Rung) -> dict[str, Any]:
    """Every statistic of the depth table for one rung (``None`` where its experiment was not run)."""
    num_blocks = rung.num_blocks
    row: dict[str, Any] = {
        "arch": rung.arch,
        "label": rung.label,
        "num_blocks": num_blocks,
        "num_masks": None if num_blocks is None else 2**num_blocks,
        "input_size": rung.input_size,
    }
    if rung.spectrum is not None:
        vector = rung.spectrum["projections"]["vector"]
        row["spectrum"] = {
            "num_images": rung.spectrum["num_valid"],
            "mean_spectrum_peak_order": vector["mean_spectrum_peak_order"],
            "peak_order": vector["peak_order"],
            "peak_order_over_l": _scaled(vector["peak_order"], num_blocks),
            "kappa": vector["kappa"],
            "kappa_over_l": _scaled(vector["kappa"], num_blocks),
            "c_le3": vector["c_le3"],
            "trunk_share": vector["trunk_share"],
            "binomial_null_peak_order": num_blocks / 2,  # the null's peak: L/2, the midpoint of the tie for odd L
            "binomial_null_peak_orders": binomial_null_peaks(num_blocks),
        }
    if rung.topk is not None:
        masks = rung.topk["num_masks"]
        reaching = rung.topk["sources"]["magnitude_vector"]["grid_k_reaching"].get(
            f"top1_agreement_{AGREEMENT_TARGET:g}"
        )
        row["topk"] = {
            "num_images": rung.topk["num_valid"],
            "k_eff_fraction": _scaled(rung.topk["k_eff"]["vector"], masks),
            "captured_energy": {
                f"{fraction:g}": _curve_at(rung.topk, "captured_energy", round(fraction * masks))
                for fraction in GAMMA_FRACTIONS
            },
            "agreement_k_fraction": None if reaching is None else reaching / masks,
        }
        measures = per_image_measures(rung)
        for name in (
            "preserving_fraction",
            "preserving_fraction_trunk_removed",
        ):  # the second only in runs that have it
            values = measures.get(name, (None, None))[1]
            row["topk"][name] = (
                None
                if values is None
                else {**bootstrap_mean_ci(values), "at_bound_share": float(np.mean(values == 1.0)), "bound": 1.0}
            )
    if rung.overlap is not None:
        row["nearest_neighbour"] = _nn_accuracy(rung.overlap)
    return row


def preserving_fraction(agreement: np.ndarray, ks: list[int], num_masks: int) -> np.ndarray:
    """Per image: the smallest grid K / 2^L from which top-1 agreement (``(N, len(ks))``, 0/1) holds at every larger grid K
    (1.0 when only K = 2^L agrees; NaN when not even that does)."""
    agreement = np.asarray(agreement, dtype=bool)
    stable_from = np.full(len(agreement), np.nan)
    suffix_all = np.flip(
        np.logical_and.accumulate(np.flip(agreement, axis=1), axis=1), axis=1
    )  # agreement at this K and every larger one
    for image, row in enumerate(suffix_all):
        first = np.flatnonzero(row)
        if len(first):
            stable_from[image] = ks[first[0]] / num_masks
    return stable_from


def per_image_measures(rung: Rung) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{measure: (sample-list positions, values)}`` of the valid images, for the paired comparisons."""
    measures: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    if rung.spectrum_arrays is not None:
        arrays = rung.spectrum_arrays
        valid = arrays["valid"].astype(bool)
        measures["peak_order"] = (arrays["index"][valid], arrays["peak_order_vector"][valid].astype(np.float64))
        measures["peak_minus_null"] = (arrays["index"][valid], measures["peak_order"][1] - rung.num_blocks / 2)
        if "kappa_vector" in arrays:
            measures["kappa_over_l"] = (
                arrays["index"][valid],
                arrays["kappa_vector"][valid].astype(np.float64) / rung.num_blocks,
            )
    if rung.topk_arrays is not None and rung.topk is not None:
        arrays = rung.topk_arrays
        valid = arrays["valid"].astype(bool)
        agreement = arrays["top1_agreement_magnitude_vector"][:, 0, :]
        measures["preserving_fraction"] = (
            arrays["index"][valid],
            preserving_fraction(agreement, rung.topk["ks"], rung.topk["num_masks"])[valid],
        )
        if f"top1_agreement_{TRUNK_REMOVED_SOURCE}" in arrays:  # runs from the trunk-removed variant on
            removed = arrays[f"top1_agreement_{TRUNK_REMOVED_SOURCE}"][:, 0, :]
            measures["preserving_fraction_trunk_removed"] = (
                arrays["index"][valid],
                preserving_fraction(removed, rung.topk["ks"], rung.topk["num_masks"])[valid],
            )
    return measures


def _sample_list(summary: dict[str, Any] | None) -> str | None:
    """What pairs images across runs: the whole sample list's content (its sha256, before --limit, so runs on its first N
    images pair by position; the path for summaries written before they recorded it)."""
    if summary is None:
        return None
    config = summary["config"]
    return config.get("sample_list_sha256") or config.get("sample_index")


def paired_values(
    first: tuple[np.ndarray, np.ndarray], second: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """The sample-list positions both hold, and the finite per-image ``second − first`` there (matched by position)."""
    shared, first_at, second_at = np.intersect1d(first[0], second[0], return_indices=True)
    difference = second[1][second_at] - first[1][first_at]
    return shared, difference[np.isfinite(difference)]


def paired_difference(
    first: tuple[np.ndarray, np.ndarray], second: tuple[np.ndarray, np.ndarray], seed: int = 0
) -> dict[str, Any]:
    """``second − first`` over the images both hold (matched by position): mean with bootstrap CI, sign counts, sign test."""
    shared, difference = paired_values(first, second)
    positive, negative = int((difference > 0).sum()), int((difference < 0).sum())
    p_value = float(binomtest(positive, positive + negative).pvalue) if positive + negative else 1.0
    return {
        "num_shared": int(len(shared)),
        "shared_positions": shared.tolist(),
        "num_finite": int(len(difference)),
        "difference": bootstrap_mean_ci(difference, seed=seed),
        "positive": positive,
        "negative": negative,
        "ties": int(len(difference)) - positive - negative,
        "sign_test_p": p_value,
    }


def _saturated(values: np.ndarray, bound: float | None) -> dict[str, Any] | None:
    diagnosis = saturation(values, bounds=() if bound is None else (bound,))
    return diagnosis if diagnosis is not None and diagnosis["at"] == "bound" else None


def _comparison(measure: str, shallow: Rung, deep: Rung, seed: int, kind: str) -> dict[str, Any] | None:
    """The paired difference of ``measure`` between two rungs, with each rung's share at the measure's bound, or ``None``
    when they share no sample list or lack it."""
    first, second = per_image_measures(shallow).get(measure), per_image_measures(deep).get(measure)
    summary = "spectrum" if measure in SPECTRUM_MEASURES else "topk"
    same_list = _sample_list(getattr(shallow, summary)) == _sample_list(getattr(deep, summary))
    if first is None or second is None or not same_list:
        return None
    at_bound = [_bound(measure, rung, CLAIMS[measure][2]) for rung in (shallow, deep)]
    return {
        "from": _name(shallow),
        "to": _name(deep),
        "measure": measure,
        **paired_difference(first, second, seed),
        "kind": kind,
        "at_bound": [None if at is None else {"value": at["value"], "share": at["share"]} for at in at_bound],
    }


def _differences(measure: str, shallow: Rung, deep: Rung) -> np.ndarray:
    return paired_values(per_image_measures(shallow)[measure], per_image_measures(deep)[measure])[1]


def _name(rung: Rung) -> str:
    """The rung's name in ids and notes: its architecture, with its input size where it is a resolution control."""
    return rung.arch if not rung.label else f"{rung.arch}_{rung.label}"


def representativeness(rung: Rung, paired: dict[str, Any], bound: float) -> str:
    """How often ``rung`` sits at the preserving fraction's ``bound`` on all its images and on the images the comparison shares."""
    positions, values = per_image_measures(rung)["preserving_fraction"]
    shared = np.isin(positions, paired["shared_positions"])
    return (
        f"{_name(rung)} sits at the bound {bound:g} on {int((values == bound).sum())} of its {len(values)} images but on "
        f"{int((values[shared] == bound).sum())} of the {int(shared.sum())} shared ones: the shared images need not represent its sample"
    )


CLAIMS = {
    "peak_order": (
        "the peak order of the interaction spectrum grows with depth (expected of subset counting alone: the binomial null's peak, L/2, grows too)",
        "peak order (per image, vector)",
        None,
    ),
    "peak_minus_null": (
        "the peak order outgrows the binomial null's with depth (peak order − L/2 grows)",
        "peak order − L/2 (per image, vector)",
        None,
    ),
    "kappa_over_l": (
        "the spectrum shifts to higher relative orders with depth (κ^v / L grows)",
        "κ^v / L (per image)",
        None,
    ),
    "preserving_fraction": (
        "prediction-preserving sparsity weakens with depth",
        "preserving fraction K/2^L (per image, vector ranking)",
        1.0,
    ),
    "preserving_fraction_trunk_removed": (
        "prediction-preserving sparsity of the interactions weakens with depth (trunk removed: ranking S ≠ ∅, target h(full) − h(∅))",
        "trunk-removed preserving fraction K/2^L (per image)",
        1.0,
    ),
}


def check_ladder(rungs: list[Rung]) -> None:
    """Refuse a ladder that names one network twice or is not ordered shallow to deep (L never decreases)."""
    names = [rung.arch for rung in rungs]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise PipelineError(f"the depth ladder names {repeated[0]} twice; each rung must be another network")
    depths = [rung.num_blocks for rung in rungs if rung.num_blocks is not None]
    if depths != sorted(depths):
        raise PipelineError(
            f"the depth ladder is not ordered shallow to deep (L = {' → '.join(map(str, depths))}); list the networks by increasing number of blocks"
        )


def _bound(measure: str, rung: Rung, bound: float | None) -> dict[str, Any] | None:
    values = per_image_measures(rung).get(measure)
    return None if values is None else _saturated(values[1], bound)


def _at_bound_notes(measure: str, rungs: list[Rung], bound: float | None) -> list[str]:
    """Why a comparison of these rungs cannot read ``measure``: each rung at its bound on ≥ 90 % of images (censored)."""
    notes = []
    for rung in rungs:
        at = _bound(measure, rung, bound)
        if at is not None:
            notes.append(
                f"censored: {_name(rung)} sits at the bound {at['value']:g} on {at['share']:.0%} of images "
                f"(≥ {SATURATION_SHARE:.0%}), so the measure cannot move there"
            )
    return notes


def _width_verdict(
    measure: str, first: Rung, second: Rung, depth: dict[int, dict[str, Any]], seed: int
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    claim, effect_name, bound = CLAIMS[measure]
    paired = _comparison(measure, first, second, seed, "width")
    if paired is None:
        return None, None
    reference = depth.get(first.num_blocks)
    paired["equivalence"] = equivalence_block(_differences(measure, first, second), reference)
    entry = equivalence_verdict(
        f"{measure}.width.{_name(first)}-{_name(second)}",
        f"at equal depth (L = {first.num_blocks}), {second.arch} (wider; input {_resolution(first)} → "
        f"{_resolution(second)}) moves {effect_name} by less than {DEPTH_MARGIN_FRACTION:.0%} of the depth effect",
        paired,
        f"{_name(second)} − {_name(first)}",
        _at_bound_notes(measure, [first, second], bound),
        [
            f"width step at L = {first.num_blocks} ({first.arch} → {second.arch}); the input resolution changes with it "
            f"({_resolution(first)} → {_resolution(second)}), so width and resolution are not separated"
        ],
        reference,
    )
    return paired, entry


def _depth_verdict(
    measure: str, first: Rung, second: Rung, paired: dict[str, Any], width: dict[int, Any], kind: str
) -> dict[str, Any]:
    claim, effect_name, bound = CLAIMS[measure]
    at_bound = paired["at_bound"]
    saturated = []
    if at_bound[0] is not None:
        saturated.append(
            f"{_name(first)} (the shallower network): {measure} already at its bound {at_bound[0]['value']:g} "
            f"on {at_bound[0]['share']:.0%} of images, so it cannot move in the claimed direction"
        )
    if at_bound[1] is not None:
        saturated.append(
            f"censored: {_name(second)} (the deeper network) sits at the bound {at_bound[1]['value']:g} on "
            f"{at_bound[1]['share']:.0%} of images, so every image where the shallower one is below it counts as up: the "
            "comparison reads the shallower network alone"
        )
    same_input = first.input_size == second.input_size and first.input_size is not None
    notes = [
        f"depth step L = {first.num_blocks} → {second.num_blocks} ({_name(first)} → {_name(second)}); "
        + (
            f"both at {_resolution(first)}: depth separated from resolution"
            if same_input
            else f"the input resolution changes with it ({_resolution(first)} → {_resolution(second)}), so depth and "
            "resolution are not separated here (the resolution control, where run, holds the input fixed)"
        )
    ]
    if measure == "peak_order":
        notes.insert(
            0,
            f"trivial: the binomial null's peak moves too ({null_peak_text(first.num_blocks)} → {null_peak_text(second.num_blocks)}); "
            "growth with L alone is what equal energy per subset gives — the shape is judged by peak − L/2 and κ^v / L",
        )
    control = width.get(second.num_blocks)
    if kind == "depth" and control is not None:
        notes.append(
            f"width control at L = {second.num_blocks} ({control['from']} → {control['to']}): "
            f"mean difference {control['difference']['mean']:+.3g} [{control['difference']['ci_low']:.3g}, {control['difference']['ci_high']:.3g}] "
            f"on {control['num_finite']} image(s)"
        )
    elif kind == "depth":
        notes.append(f"no width control at L = {second.num_blocks}: depth and width are not separated")
    if measure.startswith("preserving_fraction") and bound is not None:
        notes.append(representativeness(first, paired, bound) if measure == "preserving_fraction" else "")
    return paired_verdict(
        f"{measure}.{kind}.{_name(first)}-{_name(second)}",
        f"{claim} ({_name(first)} → {_name(second)}: L = {first.num_blocks} → {second.num_blocks}, input "
        f"{_resolution(first)} → {_resolution(second)})",
        paired,
        f"{_name(second)} − {_name(first)}",
        saturated,
        notes=[note for note in notes if note],
    )


def _resolution_verdicts(
    measure: str, rungs: list[Rung], control: Rung, depth: dict[int, dict[str, Any]], seed: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The resolution control of ``measure``: the same network at the deeper rung's input size, (a) against itself at its
    own size ("no change", TOST within a fraction of the depth effect) and (b) against the deeper rung at one size."""
    base = next(rung for rung in rungs if rung.arch == control.arch)
    deeper = next((rung for rung in rungs if (rung.num_blocks or 0) > (base.num_blocks or 0)), None)
    comparisons, verdicts = [], []
    claim, effect_name, bound = CLAIMS[measure]
    paired = _comparison(measure, base, control, seed, "resolution")
    if paired is not None:
        reference = depth.get(deeper.num_blocks) if deeper is not None else None
        paired["equivalence"] = equivalence_block(_differences(measure, base, control), reference)
        comparisons.append(paired)
        verdicts.append(
            equivalence_verdict(
                f"{measure}.resolution.{_name(base)}-{_name(control)}",
                f"at equal depth (L = {base.num_blocks}), {base.arch} at {_resolution(control)} instead of "
                f"{_resolution(base)} moves {effect_name} by less than {DEPTH_MARGIN_FRACTION:.0%} of the depth effect",
                paired,
                f"{_name(control)} − {_name(base)}",
                _at_bound_notes(measure, [base, control], bound),
                [
                    f"resolution control: the same network and images, input {_resolution(base)} → {_resolution(control)}"
                ],
                reference,
            )
        )
    if deeper is not None:
        step = _comparison(measure, control, deeper, seed, "depth_at_input")
        if step is not None:
            comparisons.append(step)
            verdicts.append(_depth_verdict(measure, control, deeper, step, {}, "depth_at_input"))
    return comparisons, verdicts


def depth_analysis(rungs: list[Rung], seed: int = 0, control: Rung | None = None) -> dict[str, Any]:
    """The depth table, the paired comparisons and the verdicts for a ladder of rungs (in the order given).

    Consecutive rungs of increasing L are *depth* steps; consecutive rungs of equal L are *width*
    controls (the later one the wider). Each claim is judged on every depth step; the notes of a
    depth verdict report the width control at the deeper rung's L. ``control``: a rung's network at another
    input size (the resolution control, :func:`_resolution_verdicts`).
    """
    check_ladder(rungs)
    rows = [rung_row(rung) for rung in rungs] + ([rung_row(control)] if control is not None else [])
    comparisons, verdicts = [], []
    steps = list(zip(rungs, rungs[1:]))
    for measure in CLAIMS:
        depth: dict[int, dict[str, Any]] = {}
        depth_steps = []
        for first, second in steps:
            if first.num_blocks is None or second.num_blocks is None or second.num_blocks <= first.num_blocks:
                continue
            paired = _comparison(measure, first, second, seed, "depth")
            if paired is not None:
                depth[second.num_blocks] = paired
                depth_steps.append((first, second, paired))
        width, width_verdicts = {}, []
        for first, second in steps:
            if first.num_blocks is not None and first.num_blocks == second.num_blocks:
                paired, entry = _width_verdict(measure, first, second, depth, seed)
                if paired is not None:
                    comparisons.append(paired)
                    width[first.num_blocks] = paired
                    width_verdicts.append(entry)
        for first, second, paired in depth_steps:
            comparisons.append(paired)
            verdicts.append(_depth_verdict(measure, first, second, paired, width, "depth"))
        verdicts += width_verdicts  # each claim's depth verdicts, then its width controls
        if control is not None:
            extra_comparisons, extra_verdicts = _resolution_verdicts(measure, rungs, control, depth, seed)
            comparisons += extra_comparisons
            verdicts += extra_verdicts
    return {
        "experiment": "depth",
        "question": QUESTION,
        "rungs": rows,
        "comparisons": comparisons,
        "verdicts": verdicts,
        "rule_parameters": {
            "alpha": ALPHA,
            "min_paired_images": MIN_PAIRED_IMAGES,
            "equivalence_margin_fraction": DEPTH_MARGIN_FRACTION,
            "gamma_fractions": list(GAMMA_FRACTIONS),
            "agreement_target": AGREEMENT_TARGET,
            "seed": seed,
        },
    }
