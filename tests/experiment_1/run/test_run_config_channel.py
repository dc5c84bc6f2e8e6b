"""RunConfig is the one channel of the shared flags: ``masks_per_image`` and ``confirm_long_run`` are its
fields (read from the flags, or set with ``dataclasses.replace``), and neither enters the run's content —
its resume key and every summary's ``config`` — so no run's key or committed summary changes. Its flags are its
fields' metadata (declared once); a step's own options are typed fields of its subclass."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from experiment_1.paths import REPO_ROOT
from experiment_1.run.run_config import RunConfig, add_flags, flag, flag_fields, from_flags
from experiment_1.run.setup import run_content

SAMPLE_LIST = REPO_ROOT / "experiment_1" / "sample_index_sample_test.json"


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_flags(parser, RunConfig, {"output_dir": "out"})
    return parser.parse_args(list(argv))


@dataclasses.dataclass(frozen=True, kw_only=True)
class StepConfig(RunConfig):
    """A step's own options beside the shared flags."""

    draws: int = flag("draws (default: %(default)s)", default=3, low=2, high=9)
    names: list[str] = flag("names", factory=lambda: ["a"], nargs="+")


def content_of(config: RunConfig) -> dict:
    model = SimpleNamespace(weights="random", num_blocks=2, block_names=["a", "b"], preprocess=SimpleNamespace(crop=64))
    return run_content(config, model, 3, torch.device("cpu"))


def test_the_flags_reach_the_config_and_an_undeclared_one_keeps_its_default() -> None:
    assert from_flags(RunConfig, parsed("--confirm-long-run")).confirm_long_run is True
    plain = from_flags(RunConfig, parsed())
    assert plain.confirm_long_run is False and plain.masks_per_image is None  # no flag sets masks_per_image
    without_output = argparse.ArgumentParser()
    add_flags(without_output, RunConfig, skip=["output_dir"])
    assert from_flags(RunConfig, without_output.parse_args([])).output_dir is None
    assert from_flags(RunConfig, argparse.Namespace(**vars(parsed()), step_option=1)) == plain  # not the config's


def test_every_flag_is_declared_once_and_its_default_is_the_field_s() -> None:
    parser = argparse.ArgumentParser()
    add_flags(parser, RunConfig)
    options = [option for action in parser._actions for option in action.option_strings if action.dest != "help"]
    assert len(options) == len(set(options)) == len(flag_fields(RunConfig))
    assert from_flags(RunConfig, parser.parse_args([])) == RunConfig()  # the flags' defaults are the fields'


def test_a_step_s_options_are_typed_fields_of_its_configuration(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    add_flags(parser, StepConfig, {"output_dir": "out"})
    config = from_flags(StepConfig, parser.parse_args(["--draws", "9", "--names", "x", "y", "--seed", "4"]))
    assert (config.draws, config.names, config.seed, config.output_dir) == (9, ["x", "y"], 4, Path("out"))
    assert StepConfig().names is not StepConfig().names  # a list default per configuration
    for bad in ("1", "10", "two"):  # the range's both ends, and not an integer
        with pytest.raises(SystemExit):
            parser.parse_args(["--draws", bad])
    assert "--draws: 10 is not allowed; use an integer in 2 … 9" in capsys.readouterr().err


def test_masks_per_image_and_confirm_long_run_do_not_enter_the_content() -> None:
    plain = from_flags(RunConfig, parsed("--sample-index", str(SAMPLE_LIST)))
    steered = dataclasses.replace(plain, masks_per_image=1, confirm_long_run=True)
    assert content_of(steered) == content_of(plain)
    assert not {"masks_per_image", "confirm_long_run"} & set(content_of(plain))
    keyed = plain.with_content(content_of(plain)), steered.with_content(content_of(steered))
    assert (
        dict(keyed[0]) == dict(keyed[1]) and keyed[0].content_json == keyed[1].content_json
    )  # the resume key and the summary's config
    assert Path(keyed[1].sample_index) == SAMPLE_LIST
