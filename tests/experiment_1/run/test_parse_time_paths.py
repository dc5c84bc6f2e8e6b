"""A missing input folder or file is refused once the flags are parsed, in one line, before any model is built: a
misspelled --data-dir or --sample-index is named with the look-alike beside it (not as a missing download), a missing
--sample-index with a command that creates it — one that runs as written —, a relative path present only in the
checkout with the checkout's path, and every bad path of one command in the same line — in every step that shares
the evaluation flags, in step_2_sample and in the steps that read other steps' files."""

from __future__ import annotations

import importlib
import re
import shlex
from pathlib import Path

import pytest

from experiment_1.paths import REPO_ROOT, missing_path
from experiment_1.run import setup as run_setup
from experiment_1.step_2_sample import main as sample_main

SAMPLE_LIST = "experiment_1/sample_index_sample_test.json"
SAMPLE_DATA = "imagenet-1k/sample-1750"
STEPS = [  # every step whose flags are RunConfig's
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
REQUIRED = {  # the steps' required flags (a missing one is argparse's first complaint)
    "experiment_2.step_11_estimator_validation": ["--table", "resnet18:random:32:2"],
    "paper.single_pass": ["--experiments", "1", "--results-name", "r"],
}


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
    argv = ["--sample-index", str(tiny_sample_index), "--data-dir", str(typo), *REQUIRED.get(module, [])]
    line = expect_one_line(main, argv)
    assert line == f"error: {typo}: data directory not found; did you mean {tiny_shards}?"
    assert "step_1.sh" not in line and "shard" not in line  # a typo, not a missing download


@pytest.mark.parametrize("module", STEPS)
def test_a_missing_sample_list_is_one_line_at_parse_time(
    module: str, tiny_shards: Path, tmp_path: Path, expect_one_line
) -> None:
    missing = tmp_path / "no_such_list.json"
    main = importlib.import_module(module).main
    line = expect_one_line(
        main, ["--data-dir", str(tiny_shards), "--sample-index", str(missing), *REQUIRED.get(module, [])]
    )
    assert line == (
        f"error: {missing}: sample list not found; create it with "
        f"`python -m experiment_1.step_2_sample --data-dir {tiny_shards} --output {missing}`"
    )


def test_the_advice_for_a_missing_sample_list_works_when_followed(
    tiny_shards: Path, tmp_path: Path, expect_one_line
) -> None:
    step_1 = importlib.import_module("experiment_2.step_1_evaluate")
    argv = ["--data-dir", str(tiny_shards), "--sample-index", str(tmp_path / "lists" / "mine.json")]
    advice = re.search(r"`python -m (\S+) (.*)`$", expect_one_line(step_1.main, argv))
    importlib.import_module(advice.group(1)).main(shlex.split(advice.group(2)))
    assert step_1.COMMAND.parse(argv).sample_index == tmp_path / "lists" / "mine.json"


def test_a_misspelled_sample_list_or_folder_is_named_with_its_look_alike(
    tiny_shards: Path, tiny_sample_index: Path, tmp_path: Path, expect_one_line
) -> None:
    step_3 = importlib.import_module("experiment_1.step_3_evaluate").main
    for typo in (tmp_path / "sample_indx.json", tmp_path.parent / f"{tmp_path.name}x" / "sample_index.json"):
        line = expect_one_line(step_3, ["--data-dir", str(tiny_shards), "--sample-index", str(typo)])
        assert line == f"error: {typo}: sample list not found; did you mean {tiny_sample_index}?"


def test_relative_paths_found_only_in_the_checkout_are_named_together_at_parse_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, expect_one_line
) -> None:
    """The README's command from another folder: both paths refused in one run, each with the checkout's copy."""
    monkeypatch.chdir(tmp_path)
    step_3 = importlib.import_module("experiment_1.step_3_evaluate").main
    line = expect_one_line(step_3, ["--sample-index", SAMPLE_LIST, "--data-dir", SAMPLE_DATA])
    sample_list, data = line.removeprefix("error: ").split("; also ")
    assert sample_list.startswith(f"{SAMPLE_LIST}: sample list not in the working folder {tmp_path}")
    assert f"found at {REPO_ROOT / SAMPLE_LIST} in the checkout" in sample_list and "create it" not in sample_list
    assert data.startswith(f"{SAMPLE_DATA}: data directory not in the working folder {tmp_path}")
    assert f"found at {REPO_ROOT / SAMPLE_DATA} in the checkout" in data


def test_every_bad_path_of_a_reading_step_is_named_in_one_line(tmp_path: Path, expect_one_line) -> None:
    plot = importlib.import_module("experiment_5.step_3_plot").main
    analysis, record = tmp_path / "analysis.json", tmp_path / "per_image.pt"
    line = expect_one_line(plot, ["--analysis", str(analysis), "--per-image", str(record)])
    assert line == (
        f"error: {analysis}: --analysis not found; run `python -m experiment_5.step_2_analyze` first; also "
        f"{record}: --per-image not found; run `python -m experiment_5.step_1_evaluate` first"
    )


def test_a_relative_typo_names_the_folder_it_was_read_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sample-1750").mkdir()
    assert missing_path("sample1750", True, "data directory", "check the path", given=True) == (
        f"sample1750: data directory not found (relative paths are read from the folder you run in, {tmp_path}); "
        "did you mean sample-1750?"
    )
    assert missing_path("nowhere", True, "data directory", "check the path", given=True).endswith(
        "; check the path"
    )  # nothing alike: it may not be downloaded yet


def test_a_file_given_as_data_dir_is_refused(tmp_path: Path, expect_one_line) -> None:
    shard = tmp_path / "test-00000-of-00001.parquet"
    shard.write_bytes(b"")
    line = expect_one_line(sample_main, ["--data-dir", str(shard), "--output", str(tmp_path / "list.json")])
    assert line == f"error: {shard}: data directory is a file, not a folder; pass its folder, {tmp_path}"
    assert not (tmp_path / "list.json").exists()


def test_the_default_sample_list_is_checked_too_but_not_the_default_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, expect_one_line
) -> None:
    monkeypatch.chdir(tmp_path)  # neither experiment_1/sample_index.json nor a data folder here or in the checkout
    line = expect_one_line(importlib.import_module("experiment_2.step_1_evaluate").main, [])
    assert line == (
        "error: experiment_1/sample_index.json: sample list not found (relative paths are read from the folder you "
        f"run in, {tmp_path}); create it with `python -m experiment_1.step_2_sample --output "
        "experiment_1/sample_index.json`"
    )  # --data-dir's default ($MOE_DATA, imagenet-1k/data) is checked where the run reads it
