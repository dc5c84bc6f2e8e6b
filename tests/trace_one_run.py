"""How long is the way through one run? Run one Experiment 2 run (step 1 + step 2, the cifar ResNet-20 example on 2
generated images) under a profiler installed before any project import, and print, as JSON, each project file in which
a function ran ("files"; tests/ and the virtualenv left out) and the run's data path
("data_path": the project files on the stack whenever a function of experiment_1/data/ runs — the way from the
step's command through reading the shards to the batch tensor — and the files those functions call).
What runs while a module is imported is not counted: its module body, its class bodies, its module-level
comprehensions and the calls they make (a registration, a face's ``__getattr__`` answering a module-level import) —
importing a file is not a way through it.

    python tests/trace_one_run.py | python -c "import json, sys; run = json.load(sys.stdin); print(len(run['files']))"

``--functions`` adds, per file, the functions that ran. tests/whole/test_one_run_trace.py holds both to the bounds of issue #35.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = "experiment_1/data/"
touched: dict[str, set[str]] = {}
data_path: set[str] = set()


def project_file(frame) -> str | None:  # noqa: ANN001 (a frame)
    """The frame's file relative to the repository if it is a project file, else None."""
    path = frame.f_code.co_filename
    if path.startswith(str(REPO)) and not any(part in path for part in ("/tests/", "/.venv/", "/site-packages/")):
        return os.path.relpath(path, REPO)
    return None


def profile(frame, event, arg):  # noqa: ANN001, ANN201 (the sys.setprofile signature)
    if event != "call" or (path := project_file(frame)) is None:
        return
    stack = []
    caller = frame
    while caller is not None:
        if caller.f_code.co_name == "<module>" and caller.f_globals.get("__name__") != "__main__":
            return  # run by an import (of a project module, or of the test helpers that import the project)
        if (name := project_file(caller)) is not None:
            stack.append(name)
        caller = caller.f_back
    touched.setdefault(path, set()).add(frame.f_code.co_qualname)
    if any(name.startswith(DATA) for name in stack):
        data_path.update(stack)


def main(folder: Path) -> None:
    sys.setprofile(profile)
    from conftest import jpeg_bytes, write_shard  # the test helpers (not counted)
    from experiment_1.errors import run_cli
    from experiment_1.files import atomic_write_json
    from experiment_2 import step_1_evaluate, step_2_plot

    sys.setprofile(None)
    write_shard(
        folder / "data" / "validation-00000-of-00001.parquet", [jpeg_bytes(index) for index in range(2)], [0, 1]
    )
    entries = [{"source": "validation-00000-of-00001.parquet", "row": row, "label": row} for row in range(2)]
    sample_list = {
        "pattern": "validation-*.parquet",
        "mode": "uniform",
        "seed": 0,
        "per_class": None,
        "num_images": 2,
        "samples": entries,
    }
    atomic_write_json(folder / "samples.json", sample_list)
    sys.setprofile(profile)
    run_cli(
        step_1_evaluate.main,
        [
            "--arch",
            "experiment_1.examples.cifar_resnet20:build_model",
            "--weights",
            "random",
            "--sample-index",
            str(folder / "samples.json"),
            "--data-dir",
            str(folder / "data"),
            "--output-dir",
            str(folder / "out"),
            "--device",
            "cpu",
            "--num-workers",
            "0",
        ],
    )
    run_cli(step_2_plot.main, ["--summary", str(folder / "out" / "summary.json")])
    sys.setprofile(None)
    run = {"files": sorted(touched), "data_path": sorted(data_path)}
    if "--functions" in sys.argv:
        run["functions"] = {path: sorted(names) for path, names in sorted(touched.items())}
    print(json.dumps(run, indent=1 if "--functions" in sys.argv else None))


if __name__ == "__main__":
    sys.path[:0] = [str(REPO), str(REPO / "tests")]
    main(Path(tempfile.mkdtemp()))
