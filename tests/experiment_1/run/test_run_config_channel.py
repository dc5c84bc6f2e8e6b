"""RunConfig is the one channel of the shared flags: ``masks_per_image`` and ``confirm_long_run`` are its
fields (read from the flags, or set with ``dataclasses.replace``), and neither enters the run's content —
its resume key and every summary's ``config`` — so no run's key or committed summary changes."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from types import SimpleNamespace

import torch

from experiment_1.paths import REPO_ROOT
from experiment_1.run.run_config import RunConfig
from experiment_1.run.setup import add_evaluation_arguments, run_content

SAMPLE_LIST = REPO_ROOT / "experiment_1" / "sample_index_sample_test.json"


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_evaluation_arguments(parser, "out")
    return parser.parse_args(list(argv))


def content_of(config: RunConfig) -> dict:
    model = SimpleNamespace(weights="random", num_blocks=2, block_names=["a", "b"], preprocess=SimpleNamespace(crop=64))
    return run_content(config, model, 3, torch.device("cpu"))


def test_the_flags_reach_the_config_and_an_undeclared_one_keeps_its_default() -> None:
    assert RunConfig.from_flags(parsed("--confirm-long-run")).confirm_long_run is True
    plain = RunConfig.from_flags(parsed())
    assert plain.confirm_long_run is False and plain.masks_per_image is None  # no flag sets masks_per_image
    without_output = argparse.ArgumentParser()
    add_evaluation_arguments(without_output, None)
    assert RunConfig.from_flags(without_output.parse_args([])).output_dir is None
    assert (
        RunConfig.from_flags(argparse.Namespace(**vars(parsed()), step_option=1)) == plain
    )  # a step's own option is not the config's


def test_masks_per_image_and_confirm_long_run_do_not_enter_the_content() -> None:
    plain = RunConfig.from_flags(
        parsed("--sample-index", str(SAMPLE_LIST))
    )  # a list that exists (checked while parsing)
    steered = dataclasses.replace(plain, masks_per_image=1, confirm_long_run=True)
    assert content_of(steered) == content_of(plain)
    assert not {"masks_per_image", "confirm_long_run"} & set(content_of(plain))
    keyed = plain.with_content(content_of(plain)), steered.with_content(content_of(steered))
    assert (
        dict(keyed[0]) == dict(keyed[1]) and keyed[0].content_json == keyed[1].content_json
    )  # the resume key and the summary's config
    assert Path(keyed[1].sample_index) == SAMPLE_LIST
