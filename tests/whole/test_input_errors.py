"""Inputs are validated before anything is evaluated or written, each fault ending in one `error:` line that names
the file and the fix: sample-list fields, shards, images (also with --skip-corrupt), labels outside the model's
classes, numeric flags, devices, seeds, over-long names, weights files, damaged or foreign summaries and records,
and a step's output that is its input. Cases that change files damage a copy of one finished run
(tests/fault_harness.py)."""

from __future__ import annotations

import errno
import importlib
import json
from pathlib import Path

import pytest
import torch
import torchvision

import experiment_1.files as io_utils
import experiment_1.step_3_evaluate as step_3
from conftest import jpeg_bytes, write_shard
from experiment_1.data import shards as data
from experiment_1.data.shards import SampleRef, sample_list_json
from experiment_1.errors import PipelineError
from experiment_1.files import atomic_write_json, read_json
from experiment_1.run import setup as run_setup
from experiment_1.run.run_config import flag_fields
from experiment_1.step_2_sample import main as sample_main
from experiment_1.step_4_plot import main as plot_1
from experiment_2.step_2_plot import main as plot_2
from experiment_2.step_4_lambda_plot import main as plot_lambda
from experiment_5 import step_1_evaluate as step_5_1
from experiment_5.step_2_analyze import main as analyze_5
from fault_harness import (
    REPO,
    SHARD,
    STAGE,
    expect_error,
    expect_line,
    flags,
    snapshot,
    write_entries,
    write_samples,
)


@pytest.mark.parametrize(
    ("rows", "source", "expected"),
    [
        ([0, 99], SHARD, "row 99 out of range (shard has 5 rows)"),
        ([0], "wrong-schema.parquet", "wrong parquet schema"),
        ([0], "garbage.parquet", "not a readable parquet file"),
        ([0], "missing.parquet", "listed in the sample list but missing"),
    ],
)
def test_shard_and_sample_list_errors_stop_even_with_skip_corrupt(
    run: Path, rows: list[int], source: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = write_samples(run / "other.json", rows, source)
    line = expect_error(step_3.main, flags(run, "--skip-corrupt", samples=samples, output=run / "new"), capsys)
    assert expected in line and "--skip-corrupt" not in line
    assert not (run / "new" / "summary.json").exists()


def test_an_unreadable_shard_stops_even_with_skip_corrupt(
    run: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def failing_read(self, row):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(data._RowGroupReader, "image_bytes", failing_read)
    line = expect_error(step_3.main, flags(run, "--skip-corrupt", output=run / "new"), capsys)
    assert (
        f"{SHARD}: cannot read {SHARD} row 0 (OSError" in line
        and "download it again" in line
        and "--skip-corrupt" not in line
    )
    assert not list((run / "new").rglob("batch_*.pt"))


def test_a_corrupt_image_mid_run_is_named_on_its_own_line(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = write_samples(run / "other.json", [0, 4])
    line = expect_error(
        step_3.main, [*flags(run, samples=samples, output=run / "new"), "--batch-size", "1"], capsys
    )  # the bar has run one batch
    assert f"{SHARD} row 4: cannot decode image" in line and "pass --skip-corrupt" in line
    assert [path.name for path in (run / "new" / STAGE).glob("batch_*.pt")] == ["batch_000000.pt"]


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"source": SHARD, "row": 1.5, "label": -1}, "row 1.5 of shard"),
        ({"source": SHARD, "row": -1, "label": -1}, "row -1 of shard"),
        ({"source": SHARD, "row": "1", "label": -1}, 'row "1" of shard'),
        ({"source": SHARD, "row": True, "label": -1}, "row true of shard"),
        ({"source": SHARD, "row": 1, "label": 2.5}, "label 2.5 must be"),
        ({"source": SHARD, "row": 1, "label": -2}, "label -2 must be"),
        ({"source": "images.csv", "row": 1, "label": -1}, "neither a .parquet shard nor an image"),
        ({"source": "../" + SHARD, "row": 1, "label": -1}, "relative path inside the data directory"),
        ({"source": "a.JPEG", "row": 3, "label": -1}, "row 3 of image file a.JPEG must be -1"),
        ({"source": SHARD, "row": 1}, "not an object with source, row and label"),
        ({"source": SHARD, "row": 0, "label": -1}, "sample 1 repeats sample 0"),
    ],
)
def test_every_sample_list_field_is_validated(
    run: Path, entry: dict, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(run / "results")
    (run / "samples.json").write_text(json.dumps({"samples": [{"source": SHARD, "row": 0, "label": -1}, entry]}))
    line = expect_error(step_3.main, flags(run, "--limit", "1"), capsys)  # entries beyond --limit are checked too
    assert "samples.json: sample 1" in line
    assert expected in line and "step_2_sample" in line
    assert snapshot(run / "results") == before


def test_labels_outside_the_model_classes_are_refused_before_evaluating(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = write_entries(run / "bad_labels.json", [(SHARD, 0, 3), (SHARD, 1, 1000)])
    line = expect_line(step_3.main, flags(run, samples=samples, output=run / "bad"), capsys)
    assert "label 1000" in line and "outside [0, 1000)" in line and not (run / "bad").exists()


def test_experiment_5_checks_the_sample_lists_pattern_before_evaluating(
    tmp_path: Path, small_input: int, capsys: pytest.CaptureFixture[str]
) -> None:
    write_shard(tmp_path / "data" / "validation-00000-of-00001.parquet", [jpeg_bytes(row) for row in range(2)], [0, 1])
    samples = tmp_path / "samples.json"
    atomic_write_json(
        samples,
        sample_list_json(
            [SampleRef("validation-00000-of-00001.parquet", row, row) for row in range(2)],
            "moved-*.parquet",
            "per-class",
            0,
            1,
        ),
    )
    line = expect_line(step_5_1.main, flags(tmp_path, samples=samples, output=tmp_path / "out"), capsys)
    assert "no shards or image folders match 'moved-*.parquet'" in line and not list(
        (tmp_path / "out").rglob("batch_*.pt")
    )


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        ("--limit", "0", "0 is not allowed; use an integer ≥ 1"),
        ("--limit", "-1", "-1 is not allowed; use an integer ≥ 1"),
        ("--limit", "1.5", "'1.5' is not an integer"),
        ("--batch-size", "0", "0 is not allowed; use an integer ≥ 1"),
        ("--num-workers", "-1", "-1 is not allowed; use an integer ≥ 0"),
        ("--mask-chunk", "3", "3 is not a power of two"),
        ("--seed", "-1", "-1 is not allowed; use an integer in [0, 2^32)"),
    ],
)
def test_numeric_flags_are_validated_at_parse_time(
    run: Path, flag: str, value: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(run / "results")
    line = expect_error(step_3.main, flags(run, flag, value), capsys)
    assert f"argument {flag}: {expected}" in line
    assert snapshot(run / "results") == before


def test_sample_step_flags_are_validated(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = expect_error(
        sample_main, ["--data-dir", str(run / "data"), "--num-images", "0", "--output", str(run / "x.json")], capsys
    )
    assert "argument --num-images: 0 is not allowed" in line and not (run / "x.json").exists()


@pytest.mark.parametrize("device", ["mps", "xpu", "meta"])
def test_devices_other_than_cpu_and_cuda_are_refused(device: str) -> None:
    with pytest.raises(PipelineError, match=f"--device {device}: only cpu and cuda"):
        run_setup.resolve_device(device)


def takes_a_seed(path: Path) -> bool:
    """Whether the command declares --seed: a field of its flags (its Command's dataclass, RunConfig's included) or an
    argparse flag of its own."""
    text = path.read_text()
    if "COMMAND = Command(" in text:
        module = importlib.import_module(".".join(path.relative_to(REPO).with_suffix("").parts))
        return "seed" in {item.name for item, _ in flag_fields(module.COMMAND.flags)}
    return "def main(" in text and 'add_argument("--seed"' in text


SEEDED_STEPS = sorted(
    ".".join(path.relative_to(REPO).with_suffix("").parts)
    for path in [*REPO.glob("experiment_*/*.py"), *REPO.glob("paper/*.py")]
    if takes_a_seed(path)
)


@pytest.mark.parametrize("module", SEEDED_STEPS)
def test_a_negative_seed_is_refused_by_every_step_that_takes_one(
    module: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        importlib.import_module(module).main(["--seed", "-1"])
    assert exit_info.value.code == 2 and "argument --seed: -1 is not allowed" in capsys.readouterr().err


def test_a_name_longer_than_the_file_system_allows(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        step_3.main(flags(run, output=run / ("x" * 300)))
    assert (
        exit_info.value.code == 2
        and "has 300 bytes; file systems allow at most 255 per name" in capsys.readouterr().err
    )
    with pytest.raises(
        PipelineError, match="longer than the file system allows"
    ):  # the writers' own check, for names made at run time
        atomic_write_json(run / ("y" * 300), {})


def test_weights_that_are_not_a_state_dict_or_do_not_fit(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listed = run / "list.pt"
    torch.save([torch.zeros(1)], listed)
    line = expect_error(step_3.main, [*flags(run, output=run / "new"), "--weights", str(listed)], capsys)
    assert "list.pt: holds a list, not a state dict of tensors" in line
    state = torchvision.models.resnet18(num_classes=10).state_dict()
    del state["layer4.1.bn2.weight"]
    state.update({f"extra.{index}.weight": torch.zeros(1) for index in range(60)})
    other = run / "other.pth"
    torch.save(state, other)
    line = expect_error(step_3.main, [*flags(run, output=run / "new"), "--weights", str(other)], capsys)
    assert (
        "1 missing keys: layer4.1.bn2.weight; 60 unexpected keys: extra.0.weight, extra.1.weight, extra.10.weight, … 57 more"
        in line
    )
    assert "2 keys of another shape: fc.bias (10,) vs (1000,), fc.weight (10, 512) vs (1000, 512)" in line
    assert len(line) < 400
    assert not (run / "new").exists()


def test_plot_steps_refuse_missing_damaged_and_foreign_summaries(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary = run / "results" / "summary.json"
    line = expect_error(plot_2, ["--summary", str(summary)], capsys)
    assert "a summary of Experiment 1, not the Experiment 2 summary of experiment_2.step_1_evaluate" in line
    line = expect_error(plot_lambda, ["--summary", str(summary)], capsys)
    assert "not the Experiment 3A/3B summary of experiment_2.step_3_lambda_sweep" in line
    line = expect_error(plot_1, ["--summary", str(run / "results" / "missing.json")], capsys)
    assert "--summary not found; run `python -m experiment_1.step_3_evaluate` first" in line
    summary.write_text(summary.read_text()[:200])
    line = expect_error(plot_1, ["--summary", str(summary)], capsys)
    assert "summary.json: damaged or not JSON" in line and "rerun `python -m experiment_1.step_3_evaluate`" in line
    assert not (run / "results" / "REPORT.md").exists()


def test_a_summary_lacking_a_nested_key_is_refused_before_anything_is_written(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary_path = run / "results" / "summary.json"
    summary = read_json(summary_path)
    del summary["metrics"]["first_order_top1_agreement"]
    atomic_write_json(summary_path, summary)
    before = snapshot(run / "results")
    line = expect_line(plot_1, ["--summary", str(summary_path)], capsys)
    assert "lacks metrics.first_order_top1_agreement" in line
    assert snapshot(run / "results") == before


def test_a_damaged_or_foreign_torch_record_is_named_in_one_line(tmp_path: Path) -> None:
    record = tmp_path / "per_image.pt"
    record.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(
        PipelineError, match=r"per_image.pt: cannot be read \(.*\); rerun `python -m experiment_5.step_1_evaluate`"
    ):
        io_utils.load_torch_record(record, "--per-image", "experiment_5.step_1_evaluate", lambda document: True)
    torch.save({"experiment": 4}, record)
    with pytest.raises(PipelineError, match="not a file of experiment_5.step_1_evaluate .*--per-image"):
        io_utils.load_torch_record(
            record, "--per-image", "experiment_5.step_1_evaluate", lambda document: document.get("experiment") == 5
        )


def test_no_step_writes_over_its_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = tmp_path / "per_image.pt"
    record.write_bytes(b"x")
    assert "is also this step's input" in expect_line(
        analyze_5, ["--per-image", str(record), "--output", str(tmp_path / "." / "per_image.pt")], capsys
    )
    assert record.read_bytes() == b"x"
