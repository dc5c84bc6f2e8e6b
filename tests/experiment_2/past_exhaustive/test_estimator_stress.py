"""Step 15's synthetic set functions and the step end to end: every family's closed-form spectrum (Möbius ē_j and the
Walsh summaries) equals the dense butterflies of its exhaustive table at L = 10; the scalar projection is the first
output; the store's key reads the functions' module; a tiny run writes its summary and REPORT, and a rerun replicates
nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_2 import step_15_estimator_stress
from experiment_2.past_exhaustive.sampled import NOT_VALIDATED_AT_DEPTH
from experiment_2.past_exhaustive.validation import replications, resume, stress, synthetic
from experiment_2.past_exhaustive.validation.synthetic import FAMILIES, synthetic_function
from paper.checks import checked_json


@pytest.mark.parametrize("family", FAMILIES)
def test_the_closed_form_spectrum_is_the_exhaustive_tables(family: str) -> None:
    function = synthetic_function(family, 10, 3, seed=4)
    table = replications.DenseTable(function.values(np.arange(2**10)))
    dense_ebar = table.exact_per_coefficient(10)  # the butterfly's round-off is absolute: of the largest order's size
    np.testing.assert_allclose(function.exact_per_coefficient(10), dense_ebar, rtol=1e-9, atol=1e-12 * dense_ebar.max())
    exact, dense = function.walsh_exact(), table.walsh_exact()
    assert exact.keys() == dense.keys()
    for name in exact:
        assert exact[name] == pytest.approx(dense[name], rel=1e-9), name


def test_values_keep_the_shape_of_the_ids_and_the_scalar_is_the_first_output() -> None:
    function = synthetic_function("spread", 12, 3, seed=1)
    ids = np.array([[0, 5], [4095, 17]], dtype=np.int64)
    values = function.values(ids)
    assert values.shape == (2, 2, 3) and np.isrealobj(values)
    np.testing.assert_array_equal(function.column(0).values(ids)[..., 0], values[..., 0])
    assert function.digest() != synthetic_function("spread", 12, 3, seed=2).digest()
    assert function.digest() == synthetic_function("spread", 12, 3, seed=1).digest()
    with pytest.raises(ValueError, match="no synthetic family"):
        synthetic_function("flat", 12, 3, seed=1)


def test_the_exploding_family_grows_with_the_blocks_on() -> None:
    function = synthetic_function("exploding", 50, 2, seed=0)
    off, full = function.values(np.array([0, (1 << 50) - 1]))
    assert np.all(np.abs(full) > 1e6 * np.abs(off))


def test_the_store_key_reads_the_functions_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    function = synthetic_function("low_degree", 9, 2, seed=0)
    budgets = replications.budget_list([3], [4], [8])
    before = resume.replication_key(function, budgets, 5, 0, "walsh")
    edited = tmp_path / "synthetic.py"
    shutil.copy(synthetic.__file__, edited)
    with edited.open("a") as handle:
        handle.write("# an edit\n")
    monkeypatch.setattr(synthetic, "__file__", str(edited))
    assert resume.replication_key(function, budgets, 5, 0, "walsh") != before


TINY = ["--depths", "9", "10", "--columns", "2", "--replications", "3", "--walsh-samples", "12", "--subcube-size", "3"]


def test_a_tiny_run_writes_its_summary_and_a_rerun_replicates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flags = [*TINY, "--subcube-draws", "5", "--output-dir", str(tmp_path)]
    step_15_estimator_stress.main(flags)
    summary = read_json(tmp_path / "summary.json")
    assert len(summary["functions"]) == len(FAMILIES) * 2
    names = {row["statistic"] for row in summary["statistics"]}
    assert {"ebar_1", "ebar_3", "variance", "kappa_w_per_block", "low_degree_share"} <= names
    for row in summary["statistics"]:
        assert set(row["depths"]) == {"9", "10"}
        assert all(entry["decision"] in ("holds", "fails") for entry in row["depths"].values())
    assert summary["failing_at_deepest"] == [
        row["statistic"] for row in summary["statistics"] if row["depths"]["10"]["decision"] == "fails"
    ]
    assert summary["design"]["band"] == list(stress.BAND)
    assert summary["provenance"]["seed"] == 0 and "config" not in summary  # no run's config: no network, no run id
    checked_json(tmp_path / "summary.json")  # as make tables reads every committed results file
    assert all(cell["replications"] == 3 for cell in summary["cells"])
    report = (tmp_path / "REPORT.md").read_text()
    assert report.startswith("# Experiment 2") and "## Short answer" in report and "| ebar_1 |" in report
    before = (tmp_path / "summary.json").read_bytes()

    def no_replication(*args: object, **kwargs: object) -> None:
        raise AssertionError("a rerun replicated a function it holds")

    monkeypatch.setattr(replications, "replicate_table", no_replication)
    step_15_estimator_stress.main(flags)
    assert read_json(tmp_path / "summary.json")["cells"] == json.loads(before)["cells"]


def test_a_depth_below_the_sub_cube_size_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PipelineError, match="--depths"):
        step_15_estimator_stress.COMMAND.parse([*TINY[:2], "2", "--output-dir", str(tmp_path)])


def test_step_8_withholds_exactly_what_the_committed_stress_check_fails() -> None:
    """NOT_VALIDATED_AT_DEPTH is the committed step-15 run's failing list at its deepest L, in its order."""
    summary = read_json(
        Path(__file__).resolve().parents[3] / "experiment_2" / "results_estimator_stress" / "summary.json"
    )
    assert max(summary["design"]["depths"]) == 50
    assert list(NOT_VALIDATED_AT_DEPTH) == summary["failing_at_deepest"]
