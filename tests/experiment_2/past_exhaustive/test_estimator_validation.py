"""Experiment 2 step 11 (estimator validation): the step end to end on a tiny network (its exact checks against a
committed step-1 run and the dense butterfly, a resume that evaluates nothing), the low-order butterfly against
brute-force subset sums, and the verdict rule on planted estimators (a biased or undercovering one is not validated)."""

from __future__ import annotations

import argparse
import shutil
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
import torch

import experiment_1.run.loop as loop
from conftest import evaluation_flags
from experiment_1.data.shards import load_sample_list
from experiment_1.files import atomic_write_json, read_json
from experiment_1.network import MaskFamily
from experiment_1.report import check_verdicts
from experiment_1.run import build_setup
from experiment_2 import step_1_evaluate, step_11_estimator_validation
from experiment_2.past_exhaustive.sampling import subcubes, walsh
from experiment_2.past_exhaustive.validation import exhaustive
from experiment_2.past_exhaustive.validation import replications as rep
from experiment_2.past_exhaustive.validation import report as validation_report
from experiment_2.past_exhaustive.validation.passes import table_config
from experiment_2.past_exhaustive.validation.table_spec import TableSpec
from experiment_2.past_exhaustive.validation.tables import butterfly_low, family_coefficients, low_sets


def brute_force_coefficient(table: torch.Tensor, subset: int) -> torch.Tensor:
    """``Δ_S = Σ_{T⊆S} (−1)^{|S−T|} h(T)`` by enumeration (``table`` ``(2^L, C)``, float64)."""
    bits = [bit for bit in range(table.shape[0].bit_length() - 1) if subset >> bit & 1]
    total = torch.zeros(table.shape[1], dtype=torch.float64)
    for size in range(len(bits) + 1):
        for chosen in combinations(bits, size):
            total += (-1) ** (len(bits) - size) * table[sum(1 << bit for bit in chosen)].double()
    return total


def test_low_order_butterfly_and_family_equal_brute_force() -> None:
    generator = torch.Generator().manual_seed(3)
    logits = torch.randn(1, 2**6, 3, generator=generator)
    full = 2**6 - 1
    for base in ("off", "on"):
        ours = butterfly_low(logits, 2, base, torch.float64)[0]
        table = logits[0] if base == "off" else logits[0, full ^ torch.arange(2**6)]
        expected = torch.stack([brute_force_coefficient(table, subset) for subset in low_sets(6, 2).tolist()])
        torch.testing.assert_close(ours, expected, rtol=1e-12, atol=1e-12)
        family = MaskFamily(2, base)
        members = logits[:, family.mask_ids(6)]
        got = family_coefficients(members, family, 6, torch.float64)["coefficients"][0]
        assert torch.equal(got, ours)  # the same updates in the same order: bit for bit


def test_verdict_rule_decides_planted_estimators() -> None:
    rng = np.random.default_rng(0)
    exact, spread, count = 2.0, 0.5, 2000
    half = 1.959964 * spread
    calibrated = exact + spread * rng.standard_normal(count)
    good = rep.cell(calibrated, calibrated - half, calibrated + half, exact)
    assert good["passes"] and 0.93 <= good["coverage"] <= 0.97 and abs(good["bias_in_se"]) < 0.1
    biased = calibrated + 1.5 * spread  # bias of 1.5 SE; its intervals still 95 % wide
    bad = rep.cell(biased, biased - half, biased + half, exact)
    assert not bad["passes"] and bad["bias_in_se"] > 1
    narrow = rep.cell(calibrated, calibrated - half / 2, calibrated + half / 2, exact)  # undercovers, unbiased
    assert not narrow["passes"] and narrow["coverage_ci"][1] < 0.93
    assert rep.decide([{**good, "budget": "a"}])["verdict"] == rep.VALIDATED
    verdict = rep.decide([{**good, "budget": "a"}, {**bad, "budget": "b"}])
    assert verdict["verdict"] == rep.NOT_VALIDATED and [cell["budget"] for cell in verdict["failing"]] == ["b"]
    assert 0.0 < rep.chance_failure(500) < rep.chance_failure(200) < 0.2


def test_an_interval_that_only_covers_too_much_is_conservative() -> None:
    """Twice as wide: coverage above the band, no bias: conservative, also beside a validated budget; a budget that
    also under-covers or is biased, or a wide one without an interval's bias check passing, keeps it not validated."""
    rng = np.random.default_rng(1)
    exact, spread, count = 2.0, 0.5, 2000
    half = 1.959964 * spread
    estimate = exact + spread * rng.standard_normal(count)
    good = {**rep.cell(estimate, estimate - half, estimate + half, exact), "budget": "a"}
    wide = {**rep.cell(estimate, estimate - 2 * half, estimate + 2 * half, exact), "budget": "b"}
    narrow = {**rep.cell(estimate, estimate - half / 2, estimate + half / 2, exact), "budget": "c"}
    shifted = estimate + 1.5 * spread
    biased_wide = {**rep.cell(shifted, shifted - 6 * half, shifted + 6 * half, exact), "budget": "d"}
    assert wide["coverage"] > 0.97 and not wide["passes"] and biased_wide["coverage"] > 0.97
    assert rep.decide([wide])["verdict"] == rep.CONSERVATIVE
    assert rep.decide([good, wide])["verdict"] == rep.CONSERVATIVE
    assert [cell["budget"] for cell in rep.decide([good, wide])["failing"]] == ["b"]
    assert rep.decide([wide, narrow])["verdict"] == rep.NOT_VALIDATED
    assert rep.decide([good, biased_wide])["verdict"] == rep.NOT_VALIDATED
    # at the band's upper edge: 97 % covered passes, one replication more does not
    edge = np.zeros(1000)
    covering = np.r_[np.full(970, -1.0), np.full(30, 1.0)]  # [covering, covering + 1.5] holds 0 in 970 of 1000
    at = rep.cell(edge + rng.normal(0, 1e-3, 1000), covering, covering + 1.5, 0.0)
    assert at["coverage"] == 0.97 and at["passes"]
    above = rep.cell(edge + rng.normal(0, 1e-3, 1000), np.r_[np.full(971, -1.0), np.full(29, 1.0)], covering + 1.5, 0.0)
    assert above["coverage"] == pytest.approx(0.971) and rep.decide([{**above, "budget": "x"}])["verdict"] == (
        rep.CONSERVATIVE
    )


def test_a_cell_without_an_interval_is_judged_on_its_bias() -> None:
    """The top sub-cube order has no interval by design: its cell has no coverage, passes on the bias alone, and a
    (table, statistic) without an interval at any budget is estimate only (not validated when biased)."""
    rng = np.random.default_rng(2)
    estimate, none = 2.0 + 0.5 * rng.standard_normal(500), np.full(500, np.nan)
    unbiased, biased = rep.cell(estimate, none, none, 2.0), rep.cell(estimate + 1.0, none, none, 2.0)
    assert unbiased["coverage"] is None and not unbiased["interval_reported"] and unbiased["passes"]
    assert not biased["passes"] and biased["bias_in_se"] > 1
    assert rep.decide([{**unbiased, "budget": "u=4×30"}])["verdict"] == rep.ESTIMATE_ONLY
    assert rep.decide([{**biased, "budget": "u=4×30"}])["verdict"] == rep.NOT_VALIDATED
    half = 1.959964 * 0.5
    with_interval = {**rep.cell(estimate, estimate - half, estimate + half, 2.0), "budget": "u=6×30"}
    verdict = rep.decide([{**unbiased, "budget": "u=4×30"}, with_interval])
    assert verdict["verdict"] == rep.VALIDATED and verdict["budgets_with_interval"] == 1
    # where the misses fall: an interval shifted down misses with the exact value above it
    low = rep.cell(estimate, estimate - half - 1.0, estimate + half - 1.0, 2.0)
    assert low["exact_above_interval"] > 0.3 > low["exact_below_interval"] and not low["passes"]
    assert low["exact_above_interval"] + low["exact_below_interval"] == pytest.approx(1 - low["coverage"])


def test_the_estimate_half_width_correlation_is_by_rank() -> None:
    """The estimate–half-width correlation of a cell is Spearman's: a half-width that grows monotonically but not
    linearly with the estimate gives exactly 1 (Pearson's would be below 1), a reversed one −1; a constant half-width
    or estimate gives none; non-finite half-widths are left out."""
    estimate = np.linspace(0.1, 3.0, 200)
    convex = np.exp(4 * estimate)  # monotone, far from linear
    assert np.corrcoef(estimate, convex)[0, 1] < 0.9
    rising = rep.cell(estimate, estimate - convex, estimate + convex, 1.0)
    assert rising["estimate_half_width_rank_correlation"] == pytest.approx(1.0)
    falling = rep.cell(estimate, estimate - 1 / convex, estimate + 1 / convex, 1.0)
    assert falling["estimate_half_width_rank_correlation"] == pytest.approx(-1.0)
    constant = rep.cell(estimate, estimate - 0.5, estimate + 0.5, 1.0)
    assert constant["estimate_half_width_rank_correlation"] is None
    flat = rep.cell(np.ones(200), 1 - convex, 1 + convex, 1.0)
    assert flat["estimate_half_width_rank_correlation"] is None
    gapped = rep.cell(estimate, np.where(estimate < 2, estimate - convex, -np.inf), estimate + convex, 1.0)
    assert gapped["estimate_half_width_rank_correlation"] == pytest.approx(1.0)
    two = rep.cell(estimate[:2], estimate[:2] - convex[:2], estimate[:2] + convex[:2], 1.0)
    assert two["estimate_half_width_rank_correlation"] is None


def test_a_real_estimator_against_a_wrong_exact_value_is_not_validated() -> None:
    table = np.random.default_rng(1).standard_normal((2**6, 2))
    exact = rep.exact_per_coefficient(table)
    out = rep.subcube_replications(
        rep.DenseTable(table), 4, 6, 300, seed=5
    )  # order 2: C(4, 2) = 6 coefficients a draw, an interval
    right = rep.cell(out["estimate"][:, 1], out["ci_low"][:, 1], out["ci_high"][:, 1], exact[2])
    wrong = rep.cell(out["estimate"][:, 1], out["ci_low"][:, 1], out["ci_high"][:, 1], exact[2] * 1.5)
    assert right["coverage"] is not None and wrong["coverage"] is not None
    assert abs(right["bias_in_se"]) < 0.3 and not wrong["passes"]


@pytest.fixture
def committed_run(tiny_shards: Path, tiny_sample_index: Path, tmp_path: Path) -> Path:
    out = tmp_path / "committed"
    step_1_evaluate.main(
        evaluation_flags(tiny_shards, tiny_sample_index, out, "--arch", "resnet18", "--resolution", "32")
    )
    return out / "per_image.npz"


def test_step_end_to_end_exact_and_resumes_without_forwards(
    tiny_shards: Path, tiny_sample_index: Path, tmp_path: Path, committed_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "validation"
    flags = evaluation_flags(
        tiny_shards,
        tiny_sample_index,
        out,
        "--arch",
        "resnet18",
        "--resolution",
        "32",
        "--committed",
        str(committed_run),
        "--table",
        "resnet18:random:32:2",
        "--classes",
        "8",
        "--replications",
        "40",
        "--subcube-sizes",
        "4",
        "6",
        "--subcube-draws",
        "6",
        "--walsh-samples",
        "16",
    )
    step_11_estimator_validation.main(flags)
    summary = read_json(out / "summary.json")
    exact = summary["exact"]
    assert exact["all_within_tolerance"] and exact["committed"]["num_valid"] == 3
    assert exact["committed"]["predicted_class_matches_committed"]
    assert all(entry["worst_relative_difference"] < 1e-5 for entry in exact["committed"]["projections"].values())
    check = exact["family_vs_butterfly"][0]
    assert check["images"] == 2 and all(base["worst_relative"] < check["tolerance"] for base in check["bases"].values())
    # every (table, statistic): 2 images × 2 projections × (6 orders + 12 Walsh summaries)
    assert summary["counts"]["verdicts"] == 2 * 2 * (6 + 12)
    assert {entry["verdict"] for entry in summary["estimator_verdicts"]} <= {
        rep.VALIDATED,
        rep.NOT_VALIDATED,
        rep.ESTIMATE_ONLY,
        rep.CONSERVATIVE,
    }
    # an order with C(u, j) < 6 coefficients a draw has no interval: ē_1, ē_3, ē_4 at u = 4 and ē_6 at u = 6, so ē_6
    # (only at u = 6) is estimate only and ē_1 … ē_5 keep an interval at u = 6
    assert summary["counts"]["with_interval"] == 2 * 2 * (5 + 12)
    without = {("u=4×6", "ebar_1"), ("u=4×6", "ebar_3"), ("u=4×6", "ebar_4"), ("u=6×6", "ebar_6")}
    few = [entry for entry in summary["cells"] if (entry["budget"], entry["statistic"]) in without]
    assert len(few) == 2 * 2 * len(without)
    assert all(not entry["interval_reported"] and entry["coverage"] is None for entry in few)
    others = [entry for entry in summary["cells"] if (entry["budget"], entry["statistic"]) not in without]
    assert all(entry["interval_reported"] for entry in others)
    assert summary["counts"]["cells_with_interval"] == len(others) == len(summary["cells"]) - len(few)
    check_verdicts(summary, out / "summary.json", ())  # the project's verdict checker (make tables) accepts the summary
    groups = summary["calibration"][
        "groups"
    ]  # per (estimator, statistic, budget) with an interval: ē_2 at u = 4, ē_1…5 at 6, 12 Walsh
    assert len(groups) == 1 + 5 + 12 and all(row["tables"] == 2 * 2 for row in groups)
    assert sum(summary["calibration"]["counts"].values()) == len(groups)
    assert len(summary["networks"][0]["classes"]) == 8
    assert not (out / "error_by_budget.md").exists()  # the REPORT is a page: one table, every cell in the summary
    report = (out / "REPORT.md").read_text()
    assert "validated" in report and "estimate only" in report and report.count("\n|---") == 2  # its table, the config
    assert "### Calibration over tables: " in report and f"| {len(groups)} (estimator" not in report
    assert all(f"| {row['statistic']} | {row['budget']} | 4 |" in report for row in groups)
    assert f"sub-cube ē_j, {subcubes.INTERVAL}" in report and f"Walsh summaries, {walsh.INTERVALS}." in report
    (out / "REPORT.md").unlink()  # rendered again from the summary alone
    validation_report.main(["--output-dir", str(out)])
    assert (out / "REPORT.md").read_text() == report

    def no_forward(*args: object, **kwargs: object) -> None:
        raise AssertionError("a resumed run evaluated masks")

    for name in ("evaluate_all_masks", "evaluate_mask_family", "evaluate_masks_naive"):
        monkeypatch.setattr(loop, name, no_forward)
    before = (out / "summary.json").read_bytes()
    store = out / "partial" / exhaustive.STEP / "replications"
    assert len(list(store.glob("*.json"))) == 2 * 2 * 2  # one file of cells per table (image, projection) and estimator
    shutil.rmtree(store)
    step_11_estimator_validation.main([*flags, "--workers", "2"])  # the same cells from two processes
    assert (out / "summary.json").read_bytes() == before

    def no_replication(*args: object, **kwargs: object) -> None:
        raise AssertionError("a resumed run replicated a table it holds")

    spent = read_json(out / "timing.json")["replication_seconds"]
    monkeypatch.setattr(rep, "replicate_table", no_replication)
    step_11_estimator_validation.main(flags)  # every table's cells from the store
    assert (out / "summary.json").read_bytes() == before
    timing = read_json(out / "timing.json")  # the stored tables' seconds, not the resume's
    assert timing["replication_seconds"] == spent > timing["replication_wall_seconds_this_call"]
    with pytest.raises(AssertionError, match="replicated"):  # another count is another key
        step_11_estimator_validation.main([*flags, "--replications", "41"])


def parse_only_flags(shards: Path, sample_index: Path, tmp_path: Path, *extra: str) -> list[str]:
    """Step 11's flags for a test that only parses them: an empty file stands in for --committed (parse checks that
    it exists, nothing reads it)."""
    committed = tmp_path / "per_image.npz"
    committed.write_bytes(b"")
    return evaluation_flags(shards, sample_index, tmp_path / "out", "--committed", str(committed), *extra)


def test_a_table_reads_the_images_of_its_own_sample_list(
    tiny_shards: Path, tiny_sample_index: Path, tmp_path: Path
) -> None:
    """A table's fifth field is a sample list of its own (images no estimator was chosen on): the table evaluates its
    first IMAGES entries, not the run's, and the list's name (less ``sample_index_``) marks the table's label, so its
    passes are kept apart from a table of the same network on the run's images; a missing list is a one-line error
    while the flags are parsed."""
    listing = read_json(tiny_sample_index)
    own = tmp_path / "sample_index_later.json"
    atomic_write_json(own, {**listing, "samples": listing["samples"][1:]})
    args = step_11_estimator_validation.COMMAND.parse(
        parse_only_flags(
            tiny_shards,
            tiny_sample_index,
            tmp_path,
            "--table",
            f"resnet18:random:32:2:{own}",
            "--table",
            "resnet18:random:32:2",
        )
    )
    held_out, first = args.table
    assert (held_out.label, first.label) == ("resnet18_random_32px_later", "resnet18_random_32px")
    assert held_out.describe().endswith(f"2 image(s) of {own}") and first.describe().endswith("2 image(s)")
    run_images = load_sample_list(tiny_sample_index)
    assert build_setup(table_config(args, held_out)).dataset.samples == run_images[1:3]
    assert build_setup(table_config(args, first)).dataset.samples == run_images[:2]
    with pytest.raises(argparse.ArgumentTypeError, match=r"^\S*nowhere.json: sample list not found; create it with"):
        TableSpec.parse(f"resnet18:random:32:2:{tmp_path / 'nowhere.json'}")
    with pytest.raises(argparse.ArgumentTypeError, match="is not ARCH:WEIGHTS:RESOLUTION:IMAGES"):
        TableSpec.parse("resnet18:random:32")


def test_the_walsh_flag_alone_validates_the_sub_cubes_only(
    tiny_shards: Path, tiny_sample_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--walsh-samples`` with no value: the budgets are the sub-cubes' alone (every size × draws pair), and the
    question names them alone."""
    flags = parse_only_flags(tiny_shards, tiny_sample_index, tmp_path, "--table", "resnet18:random:32:2")
    args = step_11_estimator_validation.COMMAND.parse(
        [*flags, "--subcube-sizes", "4", "6", "--subcube-draws", "30", "120", "--walsh-samples"]
    )
    budgets = exhaustive.budgets(args)
    assert args.walsh_samples == [] and [budget["name"] for budget in budgets] == [
        "u=4×30",
        "u=4×120",
        "u=6×30",
        "u=6×120",
    ]
    assert [budget["forwards"] for budget in budgets] == [30 * 16, 120 * 16, 30 * 64, 120 * 64]
    both = exhaustive.budgets(step_11_estimator_validation.COMMAND.parse(flags))
    assert {budget["estimator"] for budget in both} == {"subcubes", "walsh"}
    assert "do the random sub-cube estimators cover" in exhaustive.question(budgets)
    assert "do the random sub-cube and Walsh random-mask estimators cover" in exhaustive.question(both)


def test_the_failing_cells_are_counted_by_how_they_fail() -> None:
    """Cells above, below and inside the band (one biased), one without an interval failing on its bias: each counted
    where it belongs, and the count expected by chance is the cells with an interval times chance_failure."""

    def planted(coverage: float | None, passes: bool) -> dict:
        return {"interval_reported": coverage is not None, "coverage": coverage, "passes": passes}

    cells = [
        planted(0.95, True),
        planted(0.971, False),
        planted(0.99, False),
        planted(0.929, False),
        planted(0.93, False),  # at the band's lower edge, failing on its bias
        planted(None, False),  # no interval, biased
        planted(None, True),
    ]
    counts = exhaustive.failing_cell_counts(cells, 1000)
    assert counts == {
        "cells_with_interval": 5,
        "failing_cells": 5,
        "cells_above_band": 2,
        "cells_below_band": 1,
        "cells_biased_in_band": 1,
        "expected_failing_by_chance": pytest.approx(5 * rep.chance_failure(1000)),
    }
