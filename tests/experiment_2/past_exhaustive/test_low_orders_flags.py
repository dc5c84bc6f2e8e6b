"""Experiment 2 step 8's and step 11's flags: bad values are one line; --dry-run prints the cost of every pass and
writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import evaluation_flags
from experiment_1.errors import PipelineError
from experiment_2 import step_8_low_orders, step_12_depth_trend
from experiment_2.past_exhaustive.sampling.subcubes import VALIDATED_DRAWS

FLAGS = ("--arch", "resnet18", "--order", "2", "--resolution", "32", "--random-masks", "12", "--limit", "2")
SUBCUBES = ("--subcube-size", "3", "--subcubes", "3")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--subcube-size", "9"), r"^--subcube-size 9: the network has L = 8"),
        (("--subcube-size", "2", "--subcubes", "2"), r"^--subcubes 2: the interval over sub-cubes needs at least 3"),
        (("--budget", "50"), r"^--budget 50: the run evaluates \d+ masks per image \(family off 37"),
        (("--random-masks", "1"), r"^--random-masks 1: the sample variance needs at least 2"),
    ],
)
def test_bad_flags_are_one_line(
    tiny_shards: Path, tiny_sample_index: Path, tmp_path: Path, extra: tuple[str, ...], message: str
) -> None:
    with pytest.raises(PipelineError, match=message) as error:
        step_8_low_orders.main(evaluation_flags(tiny_shards, tiny_sample_index, tmp_path / "x", *FLAGS, *extra))
    assert "\n" not in str(error.value)


def test_a_dry_run_prints_the_cost_of_every_pass_and_writes_nothing(
    tiny_shards: Path, tiny_sample_index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "dry"
    step_8_low_orders.main(evaluation_flags(tiny_shards, tiny_sample_index, out, *FLAGS, *SUBCUBES, "--dry-run"))
    printed = capsys.readouterr().out
    for part in ("family off: 37 masks", "family on: 37 masks", "random masks:", "sub-cubes: 24 masks"):
        assert part in printed
    assert not out.exists() or not any(out.rglob("*.json"))


def test_the_depth_reader_refuses_one_run(tmp_path: Path) -> None:
    with pytest.raises(PipelineError, match=r"^--runs: a change with depth needs two or more"):
        step_12_depth_trend.main(["--runs", str(tmp_path), "--output-dir", str(tmp_path / "o")])
    with pytest.raises(PipelineError, match=r"summary.json: no summary; run python -m experiment_2.step_8"):
        step_12_depth_trend.main(["--runs", str(tmp_path), str(tmp_path), "--output-dir", str(tmp_path / "o")])


def test_the_default_draws_are_the_validated_ones_and_the_report_says_so(
    tiny_shards: Path, tiny_sample_index: Path, tmp_path: Path
) -> None:
    """Step 8 draws, by default, the sub-cubes step 11 validates the intervals at; a run at that many says it reaches
    them, one below says it does not (in bold)."""
    args = step_8_low_orders.parse(evaluation_flags(tiny_shards, tiny_sample_index, tmp_path, *FLAGS))
    assert args.subcubes == VALIDATED_DRAWS
    at = {"draws": VALIDATED_DRAWS, "validated_draws": VALIDATED_DRAWS, "draws_validated": True}
    assert step_8_low_orders.draws_sentence(at) == (
        f"The intervals over draws: {VALIDATED_DRAWS} draws, at or above the {VALIDATED_DRAWS} at which step 11 "
        "validates them."
    )
    below = {"draws": VALIDATED_DRAWS - 1, "validated_draws": VALIDATED_DRAWS, "draws_validated": False}
    assert f"**{VALIDATED_DRAWS - 1} draws, fewer than the {VALIDATED_DRAWS}" in step_8_low_orders.draws_sentence(below)
