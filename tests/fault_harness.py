"""The shared harness of the fault tests: one finished Experiment 1 run to damage, the CLI flags for it, a snapshot of
a results folder, and the checks that a step ended in exactly one error line (no traceback).

The finished run (random-init ResNet-18 at 64 px, rows 0–2 of a 5-row test shard whose row 4 is corrupt, in 2
batches; beside it a wrong-schema and a garbage shard) is made once per session; the ``run`` fixture hands each test
a private copy, so a test may damage anything in it.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import jpeg_bytes, shrink_inputs, write_shard
from experiment_1.data.shards import SampleRef, sample_list_json
from experiment_1.errors import run_cli
from experiment_1.files import atomic_write_json, read_json
from experiment_1.run import partial_store

REPO = Path(__file__).resolve().parents[1]
SHARD = "test-00000-of-00001.parquet"
STAGE = Path("partial") / "experiment_1.step_3_evaluate" / "all_masks"

_finished: dict[str, Path] = {}  # one finished run per session, shared by every module that imports the fixture


def write_samples(path: Path, rows: list[int], source: str = SHARD) -> Path:
    """A sample list of unlabelled ``rows`` of one shard."""
    return write_entries(path, [(source, row, -1) for row in rows])


def write_entries(path: Path, entries: list[tuple[str, int, int]]) -> Path:
    """A sample list of ``(source, row, label)`` entries."""
    atomic_write_json(
        path, sample_list_json([SampleRef(*entry) for entry in entries], "test-*.parquet", "uniform", 0, None)
    )
    return path


def flags(root: Path, *extra: str, output: Path | None = None, samples: Path | None = None) -> list[str]:
    return [
        "--data-dir",
        str(root / "data"),
        "--sample-index",
        str(samples or root / "samples.json"),
        "--weights",
        "random",
        "--batch-size",
        "2",
        "--num-workers",
        "0",
        "--device",
        "cpu",
        "--output-dir",
        str(output or root / "results"),
        *extra,
    ]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path → bytes) but the run lock, which names the last run that opened the folder."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != partial_store.LOCK_FILE
    }


def expect_error(
    main: Callable[[list[str] | None], None],
    argv: list[str],
    capsys: pytest.CaptureFixture[str],
    argparse_line: bool = True,
) -> str:
    """Run a step as the command line would; return its single error line, checked to be one line without a
    traceback that starts ``error: `` (run_cli's) or, where ``argparse_line``, is argparse's ``…: error: argument …``."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        run_cli(main, argv)
    assert exit_info.value.code not in (0, None)
    stderr = capsys.readouterr().err
    lines = [line for line in stderr.split("\n") if "error:" in line]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ") or (argparse_line and ": error: argument" in lines[0]), lines[0]
    assert "Traceback" not in stderr
    return lines[0]


def expect_line(
    main: Callable[[list[str] | None], None], argv: list[str], capsys: pytest.CaptureFixture[str], code: int = 2
) -> str:
    """Run a step as the command line would; return its one stderr line (no traceback) and check the exit status."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        run_cli(main, argv)
    assert exit_info.value.code == code
    lines = [
        line for line in capsys.readouterr().err.split("\n") if line.strip() and "%|" not in line
    ]  # tqdm bars aside
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    return lines[0]


@pytest.fixture(scope="session")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder (4 good images and one corrupt in the test shard, a wrong-schema and a garbage
    shard), a sample list of rows 0–2, and a finished Experiment 1 run on it (made once per session)."""
    if "root" not in _finished:
        import experiment_1.step_3_evaluate as step_3

        root = tmp_path_factory.mktemp("finished")
        write_shard(root / "data" / SHARD, [jpeg_bytes(row) for row in range(4)] + [b"broken"], [-1] * 5)
        pq.write_table(pa.table({"img": [b"x"], "label": [0]}), root / "data" / "wrong-schema.parquet")
        (root / "data" / "garbage.parquet").write_bytes(b"not parquet at all")
        write_samples(root / "samples.json", [0, 1, 2])
        with pytest.MonkeyPatch.context() as patch:
            small = shrink_inputs(patch)
            step_3.main(flags(root))
        # loud if the 64-px patch stopped applying (the pipeline building its model another way): 224 px would only be slow
        assert read_json(root / "results" / "summary.json")["config"]["input_size"] == small
        _finished["root"] = root
    return _finished["root"]


@pytest.fixture
def run(finished: Path, tmp_path: Path, small_input: int) -> Path:
    """A private copy of the finished run."""
    shutil.copytree(finished, tmp_path / "run")
    return tmp_path / "run"
