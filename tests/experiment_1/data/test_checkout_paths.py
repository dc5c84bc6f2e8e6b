"""Relative paths are read from the working folder; one missing there but present in the checkout (a README command
run from another folder) is named in the one-line error — the checkout's path to pass — instead of "create it"."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiment_1.data.shards import load_sample_list
from experiment_1.errors import PipelineError
from experiment_1.paths import REPO_ROOT, checkout_hint, found_in_checkout
from experiment_1.step_2_sample import main as sample_main
from experiment_2.step_2_plot import main as plot_2

SAMPLE_LIST = "experiment_1/sample_index_sample_test.json"
SAMPLE_DATA = "imagenet-1k/sample-1750"
SUMMARY = "experiment_2/results_efficientnet_lite0_sample/summary.json"


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's own folder outside the checkout, as the working folder."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_found_in_checkout_only_for_relative_paths_missing_here(elsewhere: Path) -> None:
    assert found_in_checkout(SAMPLE_LIST) == REPO_ROOT / SAMPLE_LIST
    assert found_in_checkout(REPO_ROOT / SAMPLE_LIST) is None  # absolute: read as given
    assert found_in_checkout("experiment_1/no_such_list.json") is None  # nowhere: the usual "not found" error
    (elsewhere / "experiment_1").mkdir()
    (elsewhere / "experiment_1" / "sample_index_sample_test.json").write_text("{}")
    assert found_in_checkout(SAMPLE_LIST) is None  # the working folder's own file wins


def test_sample_list_error_names_the_checkouts_file(elsewhere: Path) -> None:
    with pytest.raises(PipelineError) as error:
        load_sample_list(Path(SAMPLE_LIST))
    message = str(error.value)
    assert str(REPO_ROOT / SAMPLE_LIST) in message and "pass that path" in message and "create it" not in message
    assert str(elsewhere) in message  # says which folder the relative path was read from
    with pytest.raises(PipelineError, match="sample list not found; create it"):
        load_sample_list(Path("experiment_1/no_such_list.json"))


def test_step_errors_name_the_checkouts_path(elsewhere: Path, expect_one_line) -> None:
    line = expect_one_line(plot_2, ["--summary", SUMMARY])
    assert line == f"error: {SUMMARY}: --summary {checkout_hint(SUMMARY)}"
    assert str(REPO_ROOT / SUMMARY) in line
    line = expect_one_line(sample_main, ["--data-dir", SAMPLE_DATA, "--output", str(elsewhere / "list.json")])
    assert str(REPO_ROOT / SAMPLE_DATA) in line and "data directory" in line and "step_1.sh" not in line
    assert not (elsewhere / "list.json").exists()
