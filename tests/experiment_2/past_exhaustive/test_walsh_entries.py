"""The Walsh module's (experiment_2.past_exhaustive.sampling.walsh) records and edges, each compared whole: the design's descriptor,
the exact summaries of float32 and two-block tables, the surrogate's R² over chunked masks and on a table of small
spread, and every error message."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from sampling_tables import mobius_by_definition, residual_game_table

from experiment_1.errors import PipelineError
from experiment_2.past_exhaustive.sampling import walsh
from experiment_2.past_exhaustive.sampling.walsh import (
    RHOS,
    surrogate_r2_by_size,
    walsh_design,
    walsh_estimates,
    walsh_exact,
)


def test_the_descriptor_whole() -> None:
    design = walsh_design(5, 6, seed=3)
    ids = np.unique(np.concatenate([design.base, design.flipped, design.correlated.ravel()]))
    assert design.describe() == {
        "design": "walsh random masks",
        "num_blocks": 5,
        "num_samples": 6,
        "seed": 3,
        "rhos": list(RHOS),
        "num_ids": len(ids),
        "ids_sha256": hashlib.sha256(np.asarray(ids, dtype="<i8").tobytes()).hexdigest(),
    }
    assert len(ids) > 6  # the flips and copies add masks of their own


def test_exact_summaries_read_float32_in_float64() -> None:
    """A float32 table is transformed in float64: the same summaries as its float64 copy, to the last bits."""
    table = residual_game_table(6, 3, seed=8).astype(np.float32)
    single, double = walsh_exact(table), walsh_exact(table.astype(np.float64))
    assert single == double


def test_exact_summaries_of_two_blocks_have_no_third_degree() -> None:
    """L = 2: the degrees stop at 2, w3 = 0 and the share is (w1 + w2) / variance = 1."""
    table = residual_game_table(2, 2, seed=1)
    exact = walsh_exact(table)
    assert exact["w3"] == 0.0 and exact["w1"] > 0 and exact["w2"] > 0
    assert exact["low_degree_share"] == pytest.approx(1.0, rel=1e-12)
    assert exact["variance"] == pytest.approx(exact["w1"] + exact["w2"], rel=1e-12)


def test_exact_summaries_refuse_a_flat_table() -> None:
    with pytest.raises(ValueError, match=r"^table must be \(2\^L, C\), got shape \(16,\)$"):
        walsh_exact(np.zeros(16))


def test_the_surrogate_is_the_same_over_any_chunking(monkeypatch: pytest.MonkeyPatch) -> None:
    """The masks are taken in chunks of the subset matrix: with chunks of one mask the rows equal one chunk's; the
    coefficient ids, masks and values may come as lists of Python ints."""
    num_blocks = 5
    table = residual_game_table(num_blocks, 2, seed=2)
    coefficients = mobius_by_definition(table)
    kept = np.array([s for s in range(32) if bin(s).count("1") <= 2])
    masks = np.arange(32)
    whole = surrogate_r2_by_size(kept, coefficients[kept], masks, table, num_blocks)
    monkeypatch.setattr(walsh, "_CHUNK_ENTRIES", 1)
    chunked = surrogate_r2_by_size(kept.tolist(), coefficients[kept].tolist(), masks.tolist(), table.tolist(), 5)
    assert [(row["size"], row["count"]) for row in chunked] == [(row["size"], row["count"]) for row in whole]
    # one-row products sum in another order than the whole matrix's: equal to round-off
    assert [row["r2"] for row in chunked] == pytest.approx([row["r2"] for row in whole], rel=1e-12, nan_ok=True)
    assert [row["count"] for row in whole] == [1, 5, 10, 10, 5, 1, 32]
    assert 0 < whole[-1]["r2"] < 1 and np.isnan(whole[0]["r2"])  # one empty mask: no spread
    assert whole[1]["r2"] == pytest.approx(1.0) and whole[2]["r2"] == pytest.approx(1.0)  # |T| ≤ 2: exact


def test_the_surrogate_r2_on_a_small_spread_and_a_constant() -> None:
    """Values of spread below 1 still give an R²; masks that share one value give NaN."""
    num_blocks = 3
    table = residual_game_table(num_blocks, 1, seed=4) * 1e-3
    coefficients = mobius_by_definition(table)
    masks = np.arange(8)
    rows = surrogate_r2_by_size(np.arange(8), coefficients, masks, table, num_blocks)
    assert [row["count"] for row in rows] == [1, 3, 3, 1, 8]
    assert all(row["r2"] == pytest.approx(1.0, abs=1e-9) for row in rows[1:3]) and np.isnan(rows[0]["r2"])
    assert np.isnan(rows[3]["r2"])  # one mask of size 3: no spread
    assert rows[-1]["r2"] == pytest.approx(1.0, abs=1e-9)
    assert float(np.square(table - table.mean()).sum()) < 1


@pytest.mark.parametrize(
    ("ids", "values", "message"),
    [
        (np.arange(8), np.zeros((7, 1)), "coefficients must have one row per coefficient id and values one row per"),
        (np.array([8]), np.zeros((1, 1)), r"mask ids must lie below 2\^3"),
    ],
)
def test_the_surrogate_refuses_mismatched_or_foreign_masks(ids: np.ndarray, values: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message}"):
        surrogate_r2_by_size(np.arange(8), np.zeros((8, 1)), ids, values, 3)


def test_the_surrogate_refuses_a_coefficient_count_mismatch_alone() -> None:
    with pytest.raises(ValueError, match="one row per coefficient id"):
        surrogate_r2_by_size(np.arange(8), np.zeros((7, 1)), np.arange(8), np.zeros((8, 1)), 3)


def test_the_surrogate_reads_any_numeric_input_in_int64_and_float64() -> None:
    """Mask and coefficient ids as floats (a JSON list read back), coefficients and values in float32: the same rows
    as the int64 / float64 call on the same numbers."""
    num_blocks = 4
    table = residual_game_table(num_blocks, 2, seed=9).astype(np.float32)
    coefficients = mobius_by_definition(table.astype(np.float64)).astype(np.float32)
    kept = np.array([s for s in range(16) if bin(s).count("1") <= 1])
    masks = np.arange(16)
    exact = surrogate_r2_by_size(
        kept, coefficients[kept].astype(np.float64), masks, table.astype(np.float64), num_blocks
    )
    loose = surrogate_r2_by_size(kept.astype(float), coefficients[kept], masks.astype(float), table, num_blocks)
    assert repr(loose) == repr(exact)


def test_the_estimates_read_any_numeric_input_in_int64_and_float64_with_seed_0_by_default() -> None:
    num_blocks = 4
    table = residual_game_table(num_blocks, 2, seed=3).astype(np.float32)
    design = walsh_design(num_blocks, 6, seed=1)
    ids = np.arange(16)
    exact = walsh_estimates(design, ids, table.astype(np.float64), seed=0)
    assert repr(walsh_estimates(design, ids.astype(float), table)) == repr(exact)
    assert repr(walsh_estimates(design, ids, table.astype(np.float64), seed=1)) != repr(exact)


def test_the_estimates_need_four_samples() -> None:
    table = residual_game_table(3, 1, seed=0)
    walsh_estimates(walsh_design(3, 4, seed=0), np.arange(8), table)  # four: enough
    with pytest.raises(PipelineError, match=r"^walsh_estimates: the design has 3 samples; draw at least 4$"):
        walsh_estimates(walsh_design(3, 3, seed=0), np.arange(8), table)


def test_the_estimates_refuse_values_of_the_wrong_shape() -> None:
    design = walsh_design(3, 4, seed=0)
    message = r"^walsh_estimates: values must be \(len\(ids\), C\) = \(8, C\), got \(8,\)$"
    with pytest.raises(PipelineError, match=message):
        walsh_estimates(design, np.arange(8), np.zeros(8))  # one value per id, but not a column
    with pytest.raises(PipelineError, match=r"= \(8, C\), got \(7, 1\)$"):
        walsh_estimates(design, np.arange(8), np.zeros((7, 1)))


def test_a_missing_mask_above_every_id_is_named() -> None:
    """The design's largest mask left out of ``ids``: the error names it (and no index runs past the ids)."""
    design = walsh_design(3, 4, seed=2)
    table = residual_game_table(3, 1, seed=0)
    largest = int(design.all_ids().max())
    kept = np.arange(largest)  # every id below the largest
    with pytest.raises(PipelineError, match=rf"^walsh_estimates: 1 design masks \(e.g. id {largest}\) have no value"):
        walsh_estimates(design, kept, table[kept])
