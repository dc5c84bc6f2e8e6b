"""Experiment 2 step 8's and step 11's flags: bad values are one line — a range while the flags are parsed, a bound
set by L once the network is built and before any pass —; --dry-run prints the cost of every pass and writes
nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import evaluation_flags
from experiment_1.errors import PipelineError
from experiment_1.run import setup as run_setup
from experiment_2 import step_8_low_orders, step_11_estimator_validation, step_12_depth_trend
from experiment_2.past_exhaustive import evaluation
from experiment_2.past_exhaustive.sampling.subcubes import VALIDATED_DRAWS
from experiment_2.past_exhaustive.validation import passes

FLAGS = ("--arch", "resnet18", "--order", "2", "--resolution", "32", "--random-masks", "12", "--limit", "2")
SUBCUBES = ("--subcube-size", "3", "--subcubes", "3")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--subcube-size", "9"), r"^--subcube-size 9: the network has L = 8"),
        (("--subcube-size", "2", "--subcubes", "2"), r"^--subcubes 2: the interval over sub-cubes needs at least 3"),
        (("--budget", "50"), r"^--budget 50: the run evaluates \d+ masks per image \(family off 37"),
    ],
)
def test_bad_flags_are_one_line(
    tiny_shards: Path, tiny_sample_index: Path, tmp_path: Path, extra: tuple[str, ...], message: str
) -> None:
    with pytest.raises(PipelineError, match=message) as error:
        step_8_low_orders.main(evaluation_flags(tiny_shards, tiny_sample_index, tmp_path / "x", *FLAGS, *extra))
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("module", "extra", "message"),
    [
        (step_8_low_orders, ("--random-masks", "1"), "--random-masks: 1 is not allowed; use an integer ≥ 2"),
        (step_8_low_orders, ("--subcube-size", "-1"), "--subcube-size: -1 is not allowed; use an integer ≥ 0"),
        (step_8_low_orders, ("--order", "0"), "--order: 0 is not allowed; use an integer ≥ 1"),
        (step_11_estimator_validation, ("--subcube-sizes", "4", "0"), "--subcube-sizes: 0 is not allowed"),
        (
            step_11_estimator_validation,
            ("--subcube-draws", "0"),
            "--subcube-draws: 0 is not allowed; use an integer ≥ 3",
        ),
        (
            step_11_estimator_validation,
            ("--walsh-samples", "1"),
            "--walsh-samples: 1 is not allowed; use an integer ≥ 2",
        ),
        (step_11_estimator_validation, ("--order", "0"), "--order: 0 is not allowed"),
        (step_11_estimator_validation, ("--replications", "1"), "--replications: 1 is not allowed; use an integer ≥ 2"),
        (step_11_estimator_validation, ("--workers", "0"), "--workers: 0 is not allowed"),
    ],
)
def test_a_flag_out_of_its_range_is_refused_while_parsing(
    module,  # noqa: ANN001 (a step module)
    extra: tuple[str, ...],
    message: str,
    tiny_shards: Path,
    tiny_sample_index: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """At the range's edge (one below the least value): argparse's one line, before any model is built."""
    monkeypatch.setattr(run_setup, "build_model", lambda *arguments: pytest.fail("built a model"))
    committed = tmp_path / "per_image.npz"
    committed.write_bytes(b"")
    step_11 = ("--committed", str(committed), "--table", "resnet18:random:32:2")
    own = step_11 if module is step_11_estimator_validation else ()
    with pytest.raises(SystemExit) as exit_info:
        module.main(evaluation_flags(tiny_shards, tiny_sample_index, tmp_path / "x", *own, *extra))
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--order", "9"), r"^--order 9: resnet18 has L = 8 gated blocks; use 8 or less"),
        (("--subcube-sizes", "4", "9"), r"^--subcube-sizes 9: resnet18 has L = 8 gated blocks; use 8 or less"),
    ],
)
def test_step_11_s_bounds_by_l_are_checked_once_every_network_is_built_before_any_pass(
    extra: tuple[str, ...],
    message: str,
    tiny_shards: Path,
    tiny_sample_index: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built = []
    build = passes.build_setup
    monkeypatch.setattr(passes, "build_setup", lambda config: built.append(config.arch) or build(config))
    monkeypatch.setattr(passes, "run_per_image", lambda *arguments, **keywords: pytest.fail("a pass ran"))
    committed = tmp_path / "per_image.npz"
    committed.write_bytes(b"")
    flags = ("--arch", "resnet18", "--resolution", "32", "--limit", "2", "--committed", str(committed))
    tables = ("--table", "resnet18:random:32:2", "--table", "resnet34:random:32:2")
    with pytest.raises(PipelineError, match=message) as error:
        step_11_estimator_validation.main(
            evaluation_flags(tiny_shards, tiny_sample_index, tmp_path / "x", *flags, *tables, *extra)
        )
    assert "\n" not in str(error.value) and built == ["resnet18", "resnet18", "resnet34"]


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
    args = step_8_low_orders.COMMAND.parse(evaluation_flags(tiny_shards, tiny_sample_index, tmp_path, *FLAGS))
    assert args.subcubes == VALIDATED_DRAWS
    at = {"draws": VALIDATED_DRAWS, "validated_draws": VALIDATED_DRAWS, "draws_validated": True}
    assert evaluation.draws_sentence(at) == (
        f"The intervals over draws: {VALIDATED_DRAWS} draws, at or above the {VALIDATED_DRAWS} at which step 11 "
        "validates them."
    )
    below = {"draws": VALIDATED_DRAWS - 1, "validated_draws": VALIDATED_DRAWS, "draws_validated": False}
    assert f"**{VALIDATED_DRAWS - 1} draws, fewer than the {VALIDATED_DRAWS}" in evaluation.draws_sentence(below)
