"""The depth ladder on planted summaries: the table, the paired comparisons and each verdict rule.

Three planted networks: "shallow" (L = 3), "deep" and "wide" (both L = 5, the width control). Only
the fields the ladder reads are planted; the per-image arrays decide the verdicts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from experiment_1.errors import PipelineError
from experiment_1.files import RUN_ID_ARRAY, atomic_save_npz, atomic_write_json, read_json
from experiment_1.report.verdicts import by_id
from paper.committed_runs import allow_all_runs
from paper.depth_compare import main as compare_main
from paper.depth_ladder import binomial_null_peaks, depth_analysis, load_rung, preserving_fraction
from paper.make_tables import tables_markdown

SAMPLE_LIST = "experiment_1/sample_index_sample_test.json"


def stat(mean: float) -> dict[str, float]:
    return {"mean": mean, "ci_low": mean - 0.1, "ci_high": mean + 0.1, "median": mean, "min": mean, "max": mean, "n": 8}


def plant(
    root: Path,
    arch: str,
    num_blocks: int,
    peak_orders: list[float],
    agreement: np.ndarray,
    sample_list: str = SAMPLE_LIST,
    nn_accuracy: float | None = None,
    kappas: list[float] | None = None,
    input_size: int | None = None,
) -> None:
    """Experiment 2, 3 (and 4) results folders of one network with the given per-image peak orders (and κ^v) and top-1 agreement rows."""
    count, ks = len(peak_orders), [2**power for power in range(num_blocks + 1)]
    config = {
        "run_id": f"planted-{arch}",
        "num_blocks": num_blocks,
        "sample_index": sample_list,
        **({"input_size": input_size} if input_size else {}),
    }
    index, valid = np.arange(count), np.ones(count, dtype=bool)
    spectrum = root / "experiment_2" / f"results_{arch}_sample"
    atomic_write_json(
        spectrum / "summary.json",
        {
            "experiment": 2,
            "config": config,
            "num_valid": count,
            "binomial_null": {"peak_order": (num_blocks + 1) // 2},
            "projections": {
                "vector": {
                    "mean_spectrum_peak_order": int(np.median(peak_orders)),
                    "peak_order": stat(float(np.mean(peak_orders))),
                    "kappa": stat(num_blocks / 2),
                    "c_le3": stat(0.3),
                    "trunk_share": stat(0.05),
                }
            },
        },
    )
    atomic_save_npz(
        spectrum / "per_image.npz",
        {
            RUN_ID_ARRAY: np.array(config["run_id"]),
            "index": index,
            "valid": valid,
            "peak_order_vector": np.asarray(peak_orders, dtype=np.int64),
            **({"kappa_vector": np.asarray(kappas, dtype=np.float64)} if kappas is not None else {}),
        },
    )
    topk = root / "experiment_3" / f"results_{arch}_sample"
    curve = {
        "mean": np.linspace(0.1, 1.0, len(ks)).tolist(),
        "ci_low": np.linspace(0.05, 1.0, len(ks)).tolist(),
        "ci_high": np.linspace(0.15, 1.0, len(ks)).tolist(),
    }
    atomic_write_json(
        topk / "summary.json",
        {
            "experiment": 3,
            "config": config,
            "num_valid": count,
            "num_masks": 2**num_blocks,
            "ks": ks,
            "k_eff": {"vector": stat(2.0)},
            "sources": {
                "magnitude_vector": {
                    "grid_k_reaching": {"top1_agreement_0.9": 2**num_blocks},
                    "curves": {"captured_energy": curve},
                }
            },
        },
    )
    atomic_save_npz(
        topk / "per_image.npz",
        {
            RUN_ID_ARRAY: np.array(config["run_id"]),
            "index": index,
            "valid": valid,
            "top1_agreement_magnitude_vector": agreement[:, None, :].astype(np.float32),
        },
    )
    if nn_accuracy is not None:
        atomic_write_json(
            root / "experiment_4" / f"results_{arch}_sample" / "overlap.json",
            {
                "config": config,
                "num_valid": count,
                "num_classes": 4,
                "chance": 0.25,
                "settings": {"nn_k": 32},
                "rankings": {
                    "scalar": {"binary": {"true_label": {"nn_accuracy_ci": stat(nn_accuracy), "chance": 0.25}}}
                },
            },
        )


def agreeing_from(first: list[int], num_blocks: int) -> np.ndarray:
    """Top-1 agreement rows (one per image) that hold from grid position ``first[i]`` on."""
    return np.array([[position >= start for position in range(num_blocks + 1)] for start in first])


def test_preserving_fraction_is_the_smallest_grid_k_from_which_agreement_always_holds() -> None:
    agreement = np.array([[0, 1, 1, 0, 1, 1], [1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 1], [1, 0, 0, 0, 0, 0]], dtype=bool)
    ks = [1, 2, 4, 8, 16, 32]
    assert preserving_fraction(agreement, ks, 32).tolist()[:3] == [16 / 32, 1 / 32, 1.0]
    assert np.isnan(preserving_fraction(agreement, ks, 32)[3])  # not even the full network's own class: no fraction


def test_a_planted_depth_effect_holds_and_the_width_control_shows_none(tmp_path: Path) -> None:
    plant(tmp_path, "shallow", 3, [2] * 8, agreeing_from([1] * 8, 3), nn_accuracy=0.5)
    plant(
        tmp_path, "deep", 5, [4] * 8, agreeing_from([3, 3, 3, 3, 4, 4, 4, 4], 5)
    )  # fractions 8/32 and 16/32 vs 2/8 = 0.25
    plant(tmp_path, "wide", 5, [4] * 8, agreeing_from([3, 3, 3, 3, 4, 4, 4, 4], 5))
    analysis = depth_analysis([load_rung(tmp_path, arch, "_sample") for arch in ("shallow", "deep", "wide")])
    verdicts = by_id(analysis["verdicts"])
    peak = verdicts["peak_order.depth.shallow-deep"]
    assert (
        peak["decision"] == "holds"
        and peak["effect"]["value"] == 2
        and peak["test"]["p_value"] == pytest.approx(2 / 2**8)
    )
    assert "width control at L = 5 (deep → wide): mean difference +0" in " ".join(peak["notes"])
    assert verdicts["peak_order.width.deep-wide"]["decision"] == "holds"  # no width change: inside ±0.5 (¼ of +2)
    fraction = verdicts["preserving_fraction.depth.shallow-deep"]
    assert (
        fraction["decision"] == "cannot tell"
    )  # 4 up (0.5 vs 0.25), 4 tied (0.25): the sign test cannot reach p < 0.05
    assert fraction["effect"]["value"] == pytest.approx(0.125)
    rows = {row["arch"]: row for row in analysis["rungs"]}
    assert rows["deep"]["spectrum"]["kappa_over_l"]["mean"] == pytest.approx(0.5) and rows["deep"]["topk"][
        "k_eff_fraction"
    ]["mean"] == pytest.approx(2 / 32)
    assert rows["shallow"]["nearest_neighbour"]["accuracy"]["mean"] == 0.5 and "nearest_neighbour" not in rows["deep"]
    assert (
        set(rows["deep"]["topk"]["captured_energy"]) == {"0.125", "0.25", "0.5"}
        and rows["deep"]["topk"]["agreement_k_fraction"] == 1.0
    )


def test_an_opposite_effect_fails_few_images_cannot_tell_and_a_bound_is_saturated(tmp_path: Path) -> None:
    plant(tmp_path, "shallow", 3, [3] * 8, agreeing_from([3] * 8, 3))  # every image needs all 2^L: at the bound
    plant(tmp_path, "deep", 5, [1] * 8, agreeing_from([5] * 8, 5))
    verdicts = by_id(depth_analysis([load_rung(tmp_path, arch, "_sample") for arch in ("shallow", "deep")])["verdicts"])
    assert verdicts["peak_order.depth.shallow-deep"]["decision"] == "fails"
    saturated = verdicts["preserving_fraction.depth.shallow-deep"]
    assert saturated["decision"] == "saturated" and any(
        "already at its bound 1 on 100%" in note for note in saturated["notes"]
    )

    censored = tmp_path / "censored"  # the deeper network at the bound, the shallower below it: censored, not "holds"
    plant(censored, "shallow", 3, [2] * 8, agreeing_from([1] * 8, 3))
    plant(censored, "deep", 5, [4] * 8, agreeing_from([5] * 8, 5))
    weakens = by_id(depth_analysis([load_rung(censored, arch, "_sample") for arch in ("shallow", "deep")])["verdicts"])[
        "preserving_fraction.depth.shallow-deep"
    ]
    assert weakens["decision"] == "saturated" and weakens["effect"]["value"] == pytest.approx(0.75)
    assert any("censored: deep (the deeper network) sits at the bound 1 on 100%" in note for note in weakens["notes"])
    below = censored / "below"  # at the bound on 7 of 8 images (88 %), just below the 90 % share: the test decides
    plant(below, "shallow", 3, [2] * 8, agreeing_from([1] * 8, 3))
    plant(below, "deep", 5, [4] * 8, agreeing_from([5] * 7 + [4], 5))
    weakens = by_id(depth_analysis([load_rung(below, arch, "_sample") for arch in ("shallow", "deep")])["verdicts"])[
        "preserving_fraction.depth.shallow-deep"
    ]
    assert weakens["decision"] == "holds"

    few = tmp_path / "few"
    plant(few, "shallow", 3, [2] * 4, agreeing_from([1] * 4, 3))
    plant(few, "deep", 5, [4] * 4, agreeing_from([1] * 4, 5))
    peak = by_id(depth_analysis([load_rung(few, arch, "_sample") for arch in ("shallow", "deep")])["verdicts"])[
        "peak_order.depth.shallow-deep"
    ]
    assert (
        peak["decision"] == "cannot tell" and peak["effect"]["ci_low"] == peak["effect"]["ci_high"] == 2
    )  # a collapsed CI decides nothing
    assert any("fewer than 6 shared images" in note for note in peak["notes"])


def test_networks_on_different_sample_lists_are_not_paired(tmp_path: Path) -> None:
    plant(tmp_path, "shallow", 3, [2] * 8, agreeing_from([1] * 8, 3))
    plant(tmp_path, "deep", 5, [4] * 8, agreeing_from([1] * 8, 5), sample_list="another.json")
    analysis = depth_analysis([load_rung(tmp_path, arch, "_sample") for arch in ("shallow", "deep")])
    assert analysis["verdicts"] == [] and analysis["comparisons"] == [] and len(analysis["rungs"]) == 2


def test_the_step_writes_depth_json_that_tables_render(tmp_path: Path) -> None:
    plant(tmp_path, "shallow", 3, [2] * 8, agreeing_from([1] * 8, 3), nn_accuracy=0.5)
    plant(tmp_path, "deep", 5, [4] * 8, agreeing_from([1] * 8, 5))
    output = tmp_path / "paper" / "results_depth_tiny" / "depth.json"
    compare_main(["--root", str(tmp_path), "--ladder", "shallow", "deep", "--output", str(output)])
    analysis = read_json(output)
    assert [entry["id"] for entry in analysis["verdicts"]] == [
        "peak_order.depth.shallow-deep",
        "peak_minus_null.depth.shallow-deep",
        "preserving_fraction.depth.shallow-deep",
    ]
    repo = tmp_path / "repo"  # tables.md of a checkout that holds only the depth ladder's JSON
    allow_all_runs(repo)
    (repo / "paper" / "results_depth_tiny").mkdir(parents=True)
    (repo / "paper" / "results_depth_tiny" / "depth.json").write_bytes(output.read_bytes())
    tables = tables_markdown(repo)
    assert "## Depth ladder" in tables and "`paper/results_depth_tiny`" in tables
    assert (
        "| deep | 5 | 8 / 8 | 4 (null 2.5); 4 [3.9, 4.1] |" in tables
        and "50.0 % [40.0 %, 60.0 %] (N = 8, chance 25.0 %)" in tables
    )
    assert "the peak order of the interaction spectrum grows with depth (expected of subset counting alone" in tables
    compare_main(
        ["--root", str(tmp_path), "--ladder", "shallow", "missing", "deep", "--output", str(output)]
    )  # a network not run yet: an empty row
    assert [row["num_blocks"] for row in read_json(output)["rungs"]] == [3, None, 5]
    with pytest.raises(PipelineError, match="no Experiment 2, 3 or 4 results for missing"):
        compare_main(["--root", str(tmp_path), "--ladder", "shallow", "missing", "--output", str(output)])


def test_the_binomial_null_peak_is_tie_aware() -> None:
    assert binomial_null_peaks(9) == [4, 5] and binomial_null_peaks(14) == [7] and binomial_null_peaks(1) == [0, 1]


def test_a_peak_that_only_follows_the_null_is_trivial_and_the_shape_cannot_tell(tmp_path: Path) -> None:
    # the peak sits at L/2 on both networks and κ^v = L/2: growth with depth is counting alone, the shape does not move
    plant(tmp_path, "shallow", 4, [2] * 8, agreeing_from([1] * 8, 4), kappas=[2.0] * 8, input_size=224)
    plant(tmp_path, "deep", 8, [4] * 8, agreeing_from([1] * 8, 8), kappas=[4.0] * 8, input_size=240)
    analysis = depth_analysis([load_rung(tmp_path, arch, "_sample") for arch in ("shallow", "deep")])
    verdicts = by_id(analysis["verdicts"])
    peak = verdicts["peak_order.depth.shallow-deep"]
    assert peak["decision"] == "holds" and peak["notes"][1].startswith(
        "trivial: the binomial null's peak moves too (2 → 4)"
    )
    assert (
        verdicts["peak_minus_null.depth.shallow-deep"]["decision"]
        == verdicts["kappa_over_l.depth.shallow-deep"]["decision"]
        == "cannot tell"
    )
    assert all("input 224 px → 240 px" in entry["claim"] for entry in analysis["verdicts"])
    odd = tmp_path / "odd"  # L = 9: the null is tied at 4 and 5, never printed as 4
    plant(odd, "shallow", 9, [5] * 8, agreeing_from([1] * 8, 9))
    plant(odd, "deep", 14, [8] * 8, agreeing_from([1] * 8, 14))
    analysis = depth_analysis([load_rung(odd, arch, "_sample") for arch in ("shallow", "deep")])
    assert (
        analysis["rungs"][0]["spectrum"]["binomial_null_peak_orders"] == [4, 5]
        and analysis["rungs"][0]["spectrum"]["binomial_null_peak_order"] == 4.5
    )
    assert "(4 and 5 (tied) → 7)" in by_id(analysis["verdicts"])["peak_order.depth.shallow-deep"]["notes"][1]
    assert by_id(analysis["verdicts"])["peak_minus_null.depth.shallow-deep"]["effect"]["value"] == pytest.approx(
        0.5
    )  # (8 − 7) − (5 − 4.5)


def _width_case(root: Path, wide_kappas: list[float], with_depth: bool = True) -> dict:
    """shallow (L = 3, κ/L 0.5) → deep (L = 5, κ/L 0.6): a depth effect of +0.1, so the width margin is ±0.025."""
    if with_depth:
        plant(root, "shallow", 3, [2] * 8, agreeing_from([1] * 8, 3), kappas=[1.5] * 8)
    plant(root, "deep", 5, [3] * 8, agreeing_from([1] * 8, 5), kappas=[3.0] * 8)
    plant(root, "wide", 5, [3] * 8, agreeing_from([1] * 8, 5), kappas=wide_kappas)
    ladder = ("shallow", "deep", "wide") if with_depth else ("deep", "wide")
    return by_id(depth_analysis([load_rung(root, arch, "_sample") for arch in ladder])["verdicts"])


def test_the_width_step_is_equivalence_within_a_quarter_of_the_depth_effect(tmp_path: Path) -> None:
    jitter = np.linspace(-0.01, 0.01, 8)  # κ^v spread 0.02 → κ/L spread 0.004
    # κ/L drops by 0.01 on every image: significant, but inside ±0.025 (25 % of the depth effect 0.1): holds
    width = _width_case(tmp_path / "inside", list(2.95 + jitter))["kappa_over_l.width.deep-wide"]
    assert width["decision"] == "holds" and width["parameters"]["margin"] == pytest.approx(0.025)
    assert width["test"]["name"].startswith("TOST") and width["test"]["p_value"] <= 0.05
    assert any("a consistent shift inside the margin" in note for note in width["notes"])
    # −0.1 on every image: wholly beyond the margin
    assert _width_case(tmp_path / "beyond", list(2.5 + jitter))["kappa_over_l.width.deep-wide"]["decision"] == "fails"
    # a mean of −0.025 (at the margin), its interval across it: cannot tell
    straddling = _width_case(tmp_path / "across", list(3.0 - 0.125 + 10 * jitter))["kappa_over_l.width.deep-wide"]
    assert straddling["effect"]["ci_low"] < -0.025 < straddling["effect"]["ci_high"]
    assert straddling["decision"] == "cannot tell"
    # without a depth step there is no effect to size the margin: cannot tell
    alone = _width_case(tmp_path / "alone", list(2.95 + jitter), with_depth=False)["kappa_over_l.width.deep-wide"]
    assert alone["decision"] == "cannot tell" and alone["parameters"]["margin"] is None


def test_a_width_step_on_a_measure_at_its_bound_is_saturated(tmp_path: Path) -> None:
    plant(tmp_path, "shallow", 3, [2] * 8, agreeing_from([1] * 8, 3))
    plant(tmp_path, "deep", 5, [4] * 8, agreeing_from([5] * 8, 5))  # at the bound on every image
    plant(tmp_path, "wide", 5, [4] * 8, agreeing_from([5] * 7 + [4], 5))  # on 7 of 8
    verdicts = by_id(
        depth_analysis([load_rung(tmp_path, arch, "_sample") for arch in ("shallow", "deep", "wide")])["verdicts"]
    )
    width = verdicts["preserving_fraction.width.deep-wide"]
    assert width["decision"] == "saturated" and any(
        "censored: deep sits at the bound 1 on 100%" in n for n in width["notes"]
    )


def test_the_resolution_control_separates_depth_from_resolution(tmp_path: Path) -> None:
    plant(tmp_path, "shallow", 3, [2] * 8, agreeing_from([1] * 8, 3), kappas=[1.5] * 8, input_size=224)
    plant(tmp_path, "deep", 5, [4] * 8, agreeing_from([1] * 8, 5), kappas=[3.0] * 8, input_size=240)
    # the shallow network at the deep one's 240 px: κ/L moves by +0.005 per image (5 % of the depth effect 0.1)
    plant(
        tmp_path, "shallow_240px", 3, [2] * 8, agreeing_from([1] * 8, 3),
        kappas=list(1.515 + np.linspace(-0.003, 0.003, 8)), input_size=240,
    )  # fmt: skip
    control = load_rung(tmp_path, "shallow", "_240px_sample", label="240px")
    analysis = depth_analysis([load_rung(tmp_path, arch, "_sample") for arch in ("shallow", "deep")], control=control)
    verdicts = by_id(analysis["verdicts"])
    resolution = verdicts["kappa_over_l.resolution.shallow-shallow_240px"]
    assert resolution["decision"] == "holds" and resolution["parameters"]["margin"] == pytest.approx(0.025)
    survives = verdicts["kappa_over_l.depth_at_input.shallow_240px-deep"]
    assert survives["decision"] == "holds" and "both at 240 px: depth separated from resolution" in " ".join(
        survives["notes"]
    )
    assert [row["label"] for row in analysis["rungs"]] == ["", "", "240px"]
    # a resolution change as large as the depth effect: the "no change" claim fails
    plant(tmp_path, "shallow_240px", 3, [2] * 8, agreeing_from([1] * 8, 3),
          kappas=list(1.8 + np.linspace(-0.003, 0.003, 8)), input_size=240)  # fmt: skip
    control = load_rung(tmp_path, "shallow", "_240px_sample", label="240px")
    analysis = depth_analysis([load_rung(tmp_path, arch, "_sample") for arch in ("shallow", "deep")], control=control)
    assert by_id(analysis["verdicts"])["kappa_over_l.resolution.shallow-shallow_240px"]["decision"] == "fails"


def test_the_verdict_checker_rederives_the_equivalence_rule_and_refuses_an_edited_decision(tmp_path: Path) -> None:
    from experiment_1.report import check_verdicts
    from paper.experiments import VERDICTS

    jitter = np.linspace(-0.01, 0.01, 8)
    plant(tmp_path, "shallow", 3, [2] * 8, agreeing_from([1] * 8, 3), kappas=[1.5] * 8)
    plant(tmp_path, "deep", 5, [3] * 8, agreeing_from([1] * 8, 5), kappas=[3.0] * 8)
    plant(tmp_path, "wide", 5, [3] * 8, agreeing_from([1] * 8, 5), kappas=list(2.95 + jitter))
    analysis = depth_analysis([load_rung(tmp_path, arch, "_sample") for arch in ("shallow", "deep", "wide")])
    check_verdicts(analysis, "depth.json", VERDICTS["depth"])
    width = by_id(analysis["verdicts"])["kappa_over_l.width.deep-wide"]
    assert width["decision"] == "holds"
    width["parameters"]["margin"], width["decision"] = 0.001, "fails"  # planted: a margin the interval lies beyond
    with pytest.raises(
        PipelineError, match=r"verdict kappa_over_l\.width\.deep-wide: its margin 0\.001 is not 0\.25 ×"
    ):
        check_verdicts(analysis, "depth.json", VERDICTS["depth"])
    width["parameters"]["margin"] = 0.025  # the margin as derived, the decision still edited
    with pytest.raises(PipelineError, match=r"says 'fails' but its rule depth\.no_change gives 'holds'"):
        check_verdicts(analysis, "depth.json", VERDICTS["depth"])
