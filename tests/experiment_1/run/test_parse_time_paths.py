"""A missing input folder or file is refused while the flags are parsed, in one line, before any model is built: a
misspelled --data-dir is named with the look-alike folder beside it (not as a missing shard with download advice),
a missing --sample-index with how to create it, and a relative path present only in the checkout with the
checkout's path — in every step that shares the evaluation flags, and in step_2_sample. The defaults (no
--data-dir: $MOE_DATA or imagenet-1k/data; the step's default sample list) are not checked at parse time."""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

import pytest

from experiment_1.paths import REPO_ROOT
from experiment_1.run import setup as run_setup
from experiment_1.step_2_sample import main as sample_main

SAMPLE_LIST = "experiment_1/sample_index_sample_test.json"
SAMPLE_DATA = "imagenet-1k/sample-1750"
STEPS = [  # every step whose flags come from add_evaluation_arguments
    "experiment_1.step_3_evaluate",
    "experiment_2.step_1_evaluate",
    "experiment_2.step_3_lambda_sweep",
    "experiment_2.step_6_swap_cost",
    "experiment_2.step_8_low_orders",
    "experiment_2.step_11_estimator_validation",
    "experiment_3.step_1_evaluate",
    "experiment_4.step_1_signatures",
    "experiment_5.step_1_evaluate",
    "paper.single_pass",
]


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building a model (or anything after the flags) fails the test."""
    monkeypatch.setattr(run_setup, "build_model", lambda *arguments: pytest.fail("built a model"))
    monkeypatch.setattr(run_setup, "build_setup", lambda *arguments, **keywords: pytest.fail("reached the set-up"))


@pytest.mark.parametrize("module", STEPS)
def test_a_misspelled_data_dir_is_one_line_at_parse_time(
    module: str, tiny_shards: Path, tiny_sample_index: Path, tmp_path: Path, expect_one_line
) -> None:
    typo = tiny_shards.parent / "dat"  # the folder is "data"
    main = importlib.import_module(module).main
    line = expect_one_line(main, ["--sample-index", str(tiny_sample_index), "--data-dir", str(typo)])
    assert line == f"error: {typo}: --data-dir names no folder; did you mean {tiny_shards}?"
    assert "step_1.sh" not in line and "shard" not in line  # a typo, not a missing download


@pytest.mark.parametrize("module", STEPS)
def test_a_missing_sample_list_is_one_line_at_parse_time(
    module: str, tiny_shards: Path, tmp_path: Path, expect_one_line
) -> None:
    missing = tmp_path / "no_such_list.json"
    main = importlib.import_module(module).main
    line = expect_one_line(main, ["--data-dir", str(tiny_shards), "--sample-index", str(missing)])
    assert line == (
        f"error: {missing}: sample list not found; create it with `python -m experiment_1.step_2_sample --output {missing}`"
    )


def test_relative_paths_found_only_in_the_checkout_name_it_at_parse_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, expect_one_line
) -> None:
    monkeypatch.chdir(tmp_path)
    step_3 = importlib.import_module("experiment_1.step_3_evaluate").main
    line = expect_one_line(step_3, ["--sample-index", SAMPLE_LIST, "--data-dir", str(REPO_ROOT / SAMPLE_DATA)])
    assert line.startswith(f"error: {SAMPLE_LIST}: sample list not in the working folder {tmp_path}")
    assert f"found at {REPO_ROOT / SAMPLE_LIST} in the checkout" in line and "create it" not in line
    line = expect_one_line(step_3, ["--data-dir", SAMPLE_DATA, "--sample-index", str(REPO_ROOT / SAMPLE_LIST)])
    assert line.startswith(f"error: {SAMPLE_DATA}: data directory not in the working folder {tmp_path}")
    assert f"found at {REPO_ROOT / SAMPLE_DATA} in the checkout" in line


def test_a_relative_typo_names_the_folder_it_was_read_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sample-1750").mkdir()
    with pytest.raises(Exception) as error:
        run_setup.run_config.data_folder("sample1750")
    assert str(error.value) == (
        f"sample1750: --data-dir names no folder (relative paths are read from the folder you run in, {tmp_path}); "
        "did you mean sample-1750?"
    )
    with pytest.raises(Exception, match=r"^nowhere: --data-dir names no folder .*; check the path, or download"):
        run_setup.run_config.data_folder("nowhere")  # nothing alike: it may not be downloaded yet


def test_a_file_given_as_data_dir_is_refused(tmp_path: Path, expect_one_line) -> None:
    shard = tmp_path / "test-00000-of-00001.parquet"
    shard.write_bytes(b"")
    line = expect_one_line(sample_main, ["--data-dir", str(shard), "--output", str(tmp_path / "list.json")])
    assert line == f"error: {shard}: data directory is a file, not a folder; pass the folder that holds the shards"
    assert not (tmp_path / "list.json").exists()


def test_the_defaults_are_not_checked_at_parse_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # neither experiment_1/sample_index.json nor a data folder here or in the checkout
    parser = argparse.ArgumentParser()
    run_setup.add_evaluation_arguments(parser, "out", "experiment_1/no_such_default.json")
    args = parser.parse_args([])
    assert args.data_dir is None and args.sample_index == Path("experiment_1/no_such_default.json")
