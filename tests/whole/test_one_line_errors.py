"""Failures of the environment end in one line too and leave what was written intact: a full disk or a read-only
folder, an output path under a file, an empty summary read from the command line (a real subprocess, for the exit
status and stderr), a multi-line cause, an interrupt (what is kept, how to resume), each torchrun rank's error;
and outputs keep normal permissions. Cases work on a copy of one finished run (tests/fault_harness.py)."""

from __future__ import annotations

import errno
import io
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import experiment_1.files as io_utils
import experiment_1.step_3_evaluate as step_3
from experiment_1.errors import PipelineError, run_cli
from experiment_1.reconstruction import single_pass as reconstruction_pass
from fault_harness import REPO, STAGE, expect_error, expect_line, flags, snapshot


@pytest.mark.parametrize(
    ("target", "error", "expected"),
    [
        ("fsync", OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), "the disk is full"),
        (
            "mkstemp",
            PermissionError(errno.EACCES, os.strerror(errno.EACCES)),
            "no permission to write there",
        ),  # a read-only folder (even for root)
    ],
)
def test_write_failures_name_the_path_and_keep_what_was_written(
    run: Path,
    monkeypatch: pytest.MonkeyPatch,
    target: str,
    error: OSError,
    expected: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = snapshot(run / "results")

    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(io_utils.os if target == "fsync" else io_utils.tempfile, target, fail)
    line = expect_error(step_3.main, flags(run), capsys)
    assert f"{run / 'results' / 'per_image.npz'}: cannot write ({error.strerror}); {expected}" in line
    assert snapshot(run / "results") == before  # no temporary left behind, nothing else touched


def test_a_disk_that_fills_inside_torch_s_writer_is_one_line(
    run: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The disk fills while a partial-store batch (torch.save) is written: one line naming the file, not torch's
    "PytorchStreamWriter failed" or "unexpected pos" error; no temporary left behind."""
    real_fdopen = os.fdopen

    class FullDisk(io.RawIOBase):
        written = 0

        def writable(self) -> bool:
            return True

        def write(self, data) -> int:  # noqa: ANN001 (a bytes-like object)
            self.written += len(data)
            if self.written > 64:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return len(data)

    def fdopen(handle: int, mode: str = "r", *args, **kwargs):  # noqa: ANN002, ANN003
        if mode != "wb":
            return real_fdopen(handle, mode, *args, **kwargs)
        os.close(handle)
        return FullDisk()  # unbuffered: torch.save writes straight into it

    monkeypatch.setattr(io_utils.os, "fdopen", fdopen)
    line = expect_error(step_3.main, flags(run, output=run / "full"), capsys)
    assert "batch_" in line and ".pt: cannot write (No space left on device); the disk is full" in line, line
    assert not [path for path in (run / "full").rglob("*") if path.name.endswith(".tmp")]


def test_an_output_dir_that_is_a_file_or_under_a_file(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (run / "a_file").write_text("x")
    line = expect_error(step_3.main, flags(run, output=run / "a_file"), capsys)
    assert f"{run / 'a_file'}" in line and "a file stands where a folder is needed" in line
    line = expect_error(step_3.main, flags(run, output=run / "a_file" / "results"), capsys)
    assert "Not a directory" in line and "a file stands where a folder is needed" in line
    assert (run / "a_file").read_text() == "x"


def test_an_empty_summary_is_one_line_from_the_command_line(run: Path) -> None:
    summary = run / "results" / "summary.json"
    summary.write_text("")
    result = subprocess.run(
        [sys.executable, "-m", "experiment_1.step_4_plot", "--summary", str(summary)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {summary}: damaged or not JSON (JSONDecodeError: Expecting value: line 1 column 1 (char 0)); rerun "
        f"`python -m experiment_1.step_3_evaluate` to rewrite it"
    ]


def test_a_multi_line_cause_is_printed_on_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    def main(argv: list[str] | None) -> None:
        raise PipelineError("shard.parquet: cannot read (ArrowInvalid: first line\n  second line); delete it")

    line = expect_error(main, [], capsys)
    assert line == "error: shard.parquet: cannot read (ArrowInvalid: first line second line); delete it"


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_says_what_is_kept_and_how_to_resume(
    run: Path, signal_number: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []

    def interrupted_on_second_batch(logits: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
        calls.append(1)
        if len(calls) == 2:
            if signal_number == signal.SIGINT:
                raise KeyboardInterrupt
            os.kill(os.getpid(), signal.SIGTERM)
        return metrics(logits, labels)

    metrics = reconstruction_pass.reconstruction_metrics
    monkeypatch.setattr(reconstruction_pass, "reconstruction_metrics", interrupted_on_second_batch)
    line = expect_line(step_3.main, flags(run, output=run / "stopped"), capsys, code=128 + signal_number)
    assert line == "interrupted after 2 of 3 images; rerun the same command to resume"
    assert signal.getsignal(signal.SIGTERM) is not None and len(list((run / "stopped").rglob("batch_*.pt"))) == 1


def test_under_torchrun_each_ranks_error_is_a_line_of_its_own(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")

    def failing(argv: list[str] | None) -> None:
        print("Exp 1 all masks:  40%", end="", file=sys.stderr)  # another bar owns the line
        raise PipelineError("broken image")

    with pytest.raises(SystemExit):
        run_cli(failing, [])
    assert capsys.readouterr().err.split("\n")[-2:] == ["error: broken image", ""]


def test_outputs_have_normal_permissions(finished: Path) -> None:
    umask = os.umask(0)
    os.umask(umask)
    for name in (
        "results/summary.json",
        "results/per_image.npz",
        f"results/{STAGE.as_posix()}/batch_000000.pt",
        f"results/{STAGE.as_posix()}/run_config.json",
    ):
        assert (finished / name).stat().st_mode & 0o777 == 0o666 & ~umask, name
