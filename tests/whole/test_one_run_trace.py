"""The way through one run stays short (issue #35): one Experiment 2 run (step 1 + step 2, tests/trace_one_run.py)
runs functions in at most 28 project files (25 before network/gating.py was split by job into four modules), its data
path (the files on the stack while experiment_1/data/ reads the shards into the batch) holds at most 14, and the core
guide's reading path for that run has at most 14 rows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.whole.test_core_guide import GUIDE, reading_path

REPO = Path(__file__).resolve().parents[2]


def test_one_experiment_2_run_touches_few_files() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "tests" / "trace_one_run.py")], capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stderr[-2000:]
    run = json.loads(done.stdout.strip().splitlines()[-1])
    assert "experiment_1/run/run_config.py" in run["files"] and "experiment_1/data/shards.py" in run["data_path"]
    assert set(run["data_path"]) <= set(run["files"])
    assert len(run["files"]) <= 28, run["files"]
    assert len(run["data_path"]) <= 14, run["data_path"]


def test_the_reading_path_of_that_run_is_short() -> None:
    table = reading_path(GUIDE.read_text(encoding="utf-8"))
    assert 0 < len(table) <= 14, table
