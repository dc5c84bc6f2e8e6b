"""Fault injection: every fault stops with exit status ≠ 0 and one `error:` line, and leaves results alone.

One Experiment 1 run (random-init ResNet-18 at 64 px, 3 images in 2 batches) is made once per
module; each case works on a copy of it, injects one fault, runs a step in-process through
``run_cli`` (an unexpected exception would escape as itself, so "no traceback" is checked by the
test not erroring) and compares every file of the results folder before and after. One case runs
as a subprocess to show the real exit status and stderr.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
import torchvision

import experiment_1.files as io_utils
import experiment_1.step_3_evaluate as step_3
import experiment_2.step_1_evaluate as step_2_1
from conftest import jpeg_bytes, shrink_inputs, write_shard
from experiment_1.data import shards as data
from experiment_1.run import partial_store
from experiment_1.errors import PipelineError, run_cli
from experiment_1.data.shards import SampleRef
from experiment_1.files import atomic_write_json
from experiment_1.data.sample_list import sample_list_json
from experiment_1.step_2_sample import main as sample_main
from experiment_1.step_4_plot import main as plot_1
from experiment_2.step_2_plot import main as plot_2
from experiment_2.step_4_lambda_plot import main as plot_lambda

REPO = Path(__file__).resolve().parents[1]
SHARD = "test-00000-of-00001.parquet"
STAGE = Path("partial") / "experiment_1.step_3_evaluate" / "all_masks"


def write_samples(path: Path, rows: list[int], source: str = SHARD) -> Path:
    atomic_write_json(path, sample_list_json([SampleRef(source, row, -1) for row in rows], "test-*.parquet", "uniform", 0, None))
    return path


def flags(root: Path, *extra: str, output: Path | None = None, samples: Path | None = None) -> list[str]:
    return ["--data-dir", str(root / "data"), "--sample-index", str(samples or root / "samples.json"), "--weights", "random", "--batch-size", "2",
            "--num-workers", "0", "--device", "cpu", "--output-dir", str(output or root / "results"), *extra]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path → bytes) but the run lock, which names the last run that opened the folder."""
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file() and path.name != partial_store.LOCK_FILE}


def expect_error(main: Callable[[list[str] | None], None], argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run a step as the command line would; return its single error line (checked to start a line)."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        run_cli(main, argv)
    assert exit_info.value.code not in (0, None)
    stderr = capsys.readouterr().err
    lines = [line for line in stderr.split("\n") if "error:" in line]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ") or ": error: argument" in lines[0], lines[0]  # run_cli's line, or argparse's
    assert "Traceback" not in stderr
    return lines[0]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder (4 good images and one corrupt in the test shard, a wrong-schema and a garbage
    shard), a sample list of rows 0–2, and a finished Experiment 1 run on it."""
    root = tmp_path_factory.mktemp("finished")
    write_shard(root / "data" / SHARD, [jpeg_bytes(row) for row in range(4)] + [b"broken"], [-1] * 5)
    pq.write_table(pa.table({"img": [b"x"], "label": [0]}), root / "data" / "wrong-schema.parquet")
    (root / "data" / "garbage.parquet").write_bytes(b"not parquet at all")
    write_samples(root / "samples.json", [0, 1, 2])
    with pytest.MonkeyPatch.context() as patch:
        shrink_inputs(patch)
        step_3.main(flags(root))
    return root


@pytest.fixture
def run(finished: Path, tmp_path: Path, small_input: int) -> Path:
    """A private copy of the finished run."""
    shutil.copytree(finished, tmp_path / "run")
    return tmp_path / "run"


# --------------------------------------------------------------------------------------------
# Resume never mixes inputs


def test_a_regenerated_sample_list_at_the_same_path_is_refused(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(run / "results")
    write_samples(run / "samples.json", [1, 2, 3])
    line = expect_error(step_3.main, flags(run), capsys)
    assert "different run" in line and "the sample-list entries in use" in line and "--output-dir" in line
    assert snapshot(run / "results") == before


def test_another_data_dir_with_the_same_shard_names_is_refused(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(run / "results")
    write_shard(run / "data" / SHARD, [jpeg_bytes(100 + row) for row in range(5)], [-1] * 5)
    line = expect_error(step_3.main, flags(run), capsys)
    assert f"source {SHARD} (" in line and "footer_sha256" in line and "sample-list" not in line
    assert snapshot(run / "results") == before


def test_the_key_covers_weights_file_content_not_paths(tmp_path: Path) -> None:
    write_shard(tmp_path / SHARD, [jpeg_bytes(0)], [-1])
    weights = tmp_path / "w.pth"
    torch.save({"a": torch.zeros(2)}, weights)
    samples = [SampleRef(SHARD, 0, -1)]
    config = {"weights": str(weights), "sample_index": "one/path.json"}
    key = partial_store.run_key(config, tmp_path, samples)
    assert partial_store.run_key({**config, "sample_index": "another/path.json"}, tmp_path, samples) == key
    torch.save({"a": torch.ones(2)}, weights)
    os.utime(weights, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))  # a new mtime, as a rewrite a second later has
    changed = partial_store.run_key(config, tmp_path, samples)
    assert partial_store.describe_changes(key, changed) == "weights"


@pytest.mark.parametrize(("extra", "named"), [
    (["--engine", "naive"], "engine"),
    (["--mask-chunk", "64"], "mask_chunk"),
    (["--dtype", "float64"], "dtype"),
    (["--mobius-dtype", "float32"], "mobius_dtype"),
    (["--seed", "1"], "seed"),
    (["--batch-size", "1"], "batch_size"),
    (["--arch", "resnet34"], "arch"),
    (["--fold-batchnorm"], "fold_batchnorm"),
    (["--smooth-activations"], "smooth_activations"),
])
def test_changing_any_evaluation_setting_refuses_the_store(run: Path, extra: list[str], named: str, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(run / "results")
    line = expect_error(step_3.main, flags(run, *extra), capsys)
    changed = line.split("(changed: ")[1].split(")")[0].split(", ")
    assert "different run" in line and named in changed, line
    assert snapshot(run / "results") == before


def test_the_key_holds_every_configuration_field_and_the_device(tmp_path: Path) -> None:
    """Each field of the run configuration (the device type included, which a CPU-only machine cannot change by flag)
    is part of the key: changing it alone changes the key, and the change is named."""
    write_shard(tmp_path / SHARD, [jpeg_bytes(0)], [-1])
    samples = [SampleRef(SHARD, 0, -1)]
    config = {"arch": "resnet18", "weights": "random", "engine": "tree", "dtype": "float32", "mobius_dtype": "float64", "batch_size": 2,
              "mask_chunk": 256, "seed": 0, "limit": None, "skip_corrupt": False, "device_type": "cpu", "input_size": 224}
    key = partial_store.run_key(config, tmp_path, samples)
    for name, other in {"arch": "resnet34", "weights": "IMAGENET1K_V2", "engine": "naive", "dtype": "bfloat16", "mobius_dtype": "float32",
                        "batch_size": 3, "mask_chunk": 64, "seed": 5, "limit": 1, "skip_corrupt": True, "device_type": "cuda",
                        "input_size": 64}.items():
        changed = partial_store.run_key({**config, name: other}, tmp_path, samples)
        assert partial_store.describe_changes(key, changed) == name


def test_an_old_store_without_a_content_key_is_refused(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = run / "old"
    (old / "partial" / "all_masks").mkdir(parents=True)
    (old / "partial" / "all_masks" / "run_config.json").write_text('{"arch": "resnet18", "stage": "all_masks"}\n')
    before = snapshot(old)
    line = expect_error(step_3.main, flags(run, output=old), capsys)
    assert "older version" in line and "delete that folder" in line and "all_masks" in line
    assert snapshot(old) == before


def test_another_steps_folder_is_refused_before_and_after_evaluating(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(run / "results")
    line = expect_error(step_2_1.main, flags(run), capsys)
    assert "holds results of another step (experiment_1.step_3_evaluate)" in line
    assert snapshot(run / "results") == before
    shutil.rmtree(run / "results" / "partial")  # without the resume state, the summary still guards the folder
    before = snapshot(run / "results")
    line = expect_error(step_2_1.main, flags(run, "--limit", "1"), capsys)
    assert "another experiment (summary.json)" in line
    assert {name: value for name, value in snapshot(run / "results").items() if not name.startswith("partial/")} == before


# --------------------------------------------------------------------------------------------
# --skip-corrupt skips images only; everything is validated


@pytest.mark.parametrize(
    ("rows", "source", "expected"),
    [
        ([0, 99], SHARD, "row 99 out of range (shard has 5 rows)"),
        ([0], "wrong-schema.parquet", "wrong parquet schema"),
        ([0], "garbage.parquet", "not a readable parquet file"),
        ([0], "missing.parquet", "listed in the sample list but missing"),
    ],
)
def test_shard_and_sample_list_errors_stop_even_with_skip_corrupt(run: Path, rows: list[int], source: str, expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    samples = write_samples(run / "other.json", rows, source)
    line = expect_error(step_3.main, flags(run, "--skip-corrupt", samples=samples, output=run / "new"), capsys)
    assert expected in line and "--skip-corrupt" not in line
    assert not (run / "new" / "summary.json").exists()


def test_an_unreadable_shard_stops_even_with_skip_corrupt(run: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def failing_read(self, row):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(data._RowGroupReader, "image_bytes", failing_read)
    line = expect_error(step_3.main, flags(run, "--skip-corrupt", output=run / "new"), capsys)
    assert f"{SHARD}: cannot read {SHARD} row 0 (OSError" in line and "download it again" in line and "--skip-corrupt" not in line
    assert not list((run / "new").rglob("batch_*.pt"))


def test_a_corrupt_image_mid_run_is_named_on_its_own_line(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = write_samples(run / "other.json", [0, 4])
    line = expect_error(step_3.main, [*flags(run, samples=samples, output=run / "new"), "--batch-size", "1"], capsys)  # the bar has run one batch
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
def test_every_sample_list_field_is_validated(run: Path, entry: dict, expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(run / "results")
    (run / "samples.json").write_text(json.dumps({"samples": [{"source": SHARD, "row": 0, "label": -1}, entry]}))
    line = expect_error(step_3.main, flags(run, "--limit", "1"), capsys)  # entries beyond --limit are checked too
    assert "samples.json: sample 1" in line
    assert expected in line and "step_2_sample" in line
    assert snapshot(run / "results") == before


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
def test_numeric_flags_are_validated_at_parse_time(run: Path, flag: str, value: str, expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(run / "results")
    line = expect_error(step_3.main, flags(run, flag, value), capsys)
    assert f"argument {flag}: {expected}" in line
    assert snapshot(run / "results") == before


def test_sample_step_flags_are_validated(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = expect_error(sample_main, ["--data-dir", str(run / "data"), "--num-images", "0", "--output", str(run / "x.json")], capsys)
    assert "argument --num-images: 0 is not allowed" in line and not (run / "x.json").exists()


# --------------------------------------------------------------------------------------------
# Damaged resume state, I/O failures, weights, summaries


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda stage: (stage / "batch_000001.pt").write_bytes((stage / "batch_000001.pt").read_bytes()[:300]), "batch_000001.pt: damaged partial batch file"),
        (lambda stage: (stage / "batch_000000.pt").write_bytes(b""), "batch_000000.pt: damaged partial batch file"),
        (lambda stage: shutil.copy(stage / "batch_000000.pt", stage / "batch_000001.pt"), "batch_000001.pt: does not hold batch 1 of this run"),
        (lambda stage: (stage / "run_config.json").write_text('{"arch": "resn'), "run_config.json: damaged or not JSON"),
    ],
)
def test_a_damaged_partial_store_names_the_file(run: Path, damage: Callable[[Path], object], expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    damage(run / "results" / STAGE)
    before = snapshot(run / "results")
    line = expect_error(step_3.main, flags(run), capsys)
    assert expected in line and "delete" in line and "recompute" in line
    assert snapshot(run / "results") == before


def test_an_empty_summary_is_one_line_from_the_command_line(run: Path) -> None:
    summary = run / "results" / "summary.json"
    summary.write_text("")
    result = subprocess.run([sys.executable, "-m", "experiment_1.step_4_plot", "--summary", str(summary)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"error: {summary}: damaged or not JSON (JSONDecodeError: Expecting value: line 1 column 1 (char 0)); rerun `python -m experiment_1.step_3_evaluate` to rewrite it"]


def test_an_output_dir_that_is_a_file_or_under_a_file(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (run / "a_file").write_text("x")
    line = expect_error(step_3.main, flags(run, output=run / "a_file"), capsys)
    assert f"{run / 'a_file'}" in line and "a file stands where a folder is needed" in line
    line = expect_error(step_3.main, flags(run, output=run / "a_file" / "results"), capsys)
    assert "Not a directory" in line and "a file stands where a folder is needed" in line
    assert (run / "a_file").read_text() == "x"


@pytest.mark.parametrize(
    ("target", "error", "expected"),
    [
        ("fsync", OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), "the disk is full"),
        ("mkstemp", PermissionError(errno.EACCES, os.strerror(errno.EACCES)), "no permission to write there"),  # a read-only folder (even for root)
    ],
)
def test_write_failures_name_the_path_and_keep_what_was_written(run: Path, monkeypatch: pytest.MonkeyPatch, target: str, error: OSError, expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(run / "results")

    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(io_utils.os if target == "fsync" else io_utils.tempfile, target, fail)
    line = expect_error(step_3.main, flags(run), capsys)
    assert f"{run / 'results' / 'per_image.npz'}: cannot write ({error.strerror}); {expected}" in line
    assert snapshot(run / "results") == before  # no temporary left behind, nothing else touched


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
    assert "1 missing keys: layer4.1.bn2.weight; 60 unexpected keys: extra.0.weight, extra.1.weight, extra.10.weight, … 57 more" in line
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


# --------------------------------------------------------------------------------------------
# Housekeeping that is not an error


def test_stale_temporaries_are_removed_and_fresh_ones_kept(run: Path) -> None:
    stage = run / "results" / STAGE
    stale = [stage / ".batch_000001.pt.abc123.tmp", run / "results" / ".summary.json.def456.tmp"]
    fresh = stage / ".batch_000000.pt.ghi789.tmp"  # might be a concurrent rank's write in progress
    for path in [*stale, fresh]:
        path.write_bytes(b"half")
    old = time.time() - 2 * partial_store.STALE_TMP_SECONDS
    for path in stale:
        os.utime(path, (old, old))
    batches = {name: value for name, value in snapshot(stage).items() if name.startswith("batch_")}
    step_3.main(flags(run))
    assert not any(path.exists() for path in stale) and fresh.exists()
    assert {name: value for name, value in snapshot(stage).items() if name.startswith("batch_")} == batches  # nothing recomputed


def test_outputs_have_normal_permissions(finished: Path) -> None:
    umask = os.umask(0)
    os.umask(umask)
    for name in ("results/summary.json", "results/per_image.npz", f"results/{STAGE.as_posix()}/batch_000000.pt", f"results/{STAGE.as_posix()}/run_config.json"):
        assert (finished / name).stat().st_mode & 0o777 == 0o666 & ~umask, name


def test_a_multi_line_cause_is_printed_on_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    def main(argv: list[str] | None) -> None:
        raise PipelineError("shard.parquet: cannot read (ArrowInvalid: first line\n  second line); delete it")

    line = expect_error(main, [], capsys)
    assert line == "error: shard.parquet: cannot read (ArrowInvalid: first line second line); delete it"


def test_a_damaged_or_foreign_torch_record_is_named_in_one_line(tmp_path: Path) -> None:
    record = tmp_path / "per_image.pt"
    record.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(PipelineError, match=r"per_image.pt: cannot be read \(.*\); rerun `python -m experiment_5.step_1_evaluate`"):
        io_utils.load_torch_record(record, "--per-image", "experiment_5.step_1_evaluate", lambda document: True)
    torch.save({"experiment": 4}, record)
    with pytest.raises(PipelineError, match="not a file of experiment_5.step_1_evaluate .*--per-image"):
        io_utils.load_torch_record(record, "--per-image", "experiment_5.step_1_evaluate", lambda document: document.get("experiment") == 5)
