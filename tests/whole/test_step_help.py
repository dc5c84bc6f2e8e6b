"""Every step script (experiment_*/step_*.py and paper/depth_compare.py, found on disk so new steps are
covered) and the single-pass runner answer --help with their docstring, which states its question — and answer it,
and every refusal of their flags, before importing torch or matplotlib."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STEPS = sorted(
    f"{path.parent.name}.{path.stem}"
    for pattern in ("experiment_*/step_*.py", "paper/depth_compare.py")
    for path in REPO.glob(pattern)
) + ["paper.single_pass"]


def test_the_steps_are_found() -> None:
    assert (
        "experiment_1.step_3_evaluate" in STEPS
        and "experiment_5.step_3_plot" in STEPS
        and "paper.depth_compare" in STEPS
    )


@pytest.mark.parametrize("module", STEPS)
def test_every_step_has_help(module: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        importlib.import_module(module).main(["--help"])
    assert exit_info.value.code == 0
    assert "Question:" in capsys.readouterr().out


LIGHT_STEPS = [module for module in STEPS if module != "paper.depth_compare"]
# Steps that read no input path (step 15 draws its functions from --seed): no refusal of a missing path to ask for.
NO_INPUT_PATH = {"experiment_2.step_15_estimator_stress"}
HEAVY = ("torch", "torchvision", "matplotlib")
PROBE = """
import json, runpy, sys
from dataclasses import MISSING

from experiment_1.run.run_config import RunConfig, default_of, flag_fields

REQUIRED = {
    "experiments": ["1"],
    "results_name": ["r"],
    "seeds": ["0", "1"],
    "output_dir": ["/tmp/unwritten"],
    "table": ["resnet18:random:32:2"],
}


def run(module, argv):
    sys.argv = [module, *argv]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        return stop.code
    return None


def bad_paths(module):
    command = getattr(__import__(module, fromlist=["main"]), "COMMAND", None)
    argv = [] if command else ["--experiments", "1", "--results-name", "r"]
    for item, spec in flag_fields(command.flags if command else RunConfig):
        if spec.path in ("file", "folder"):
            argv += [spec.option_of(item.name), f"/no/such/{item.name}"]
        elif default_of(item) is MISSING:
            argv += [spec.option_of(item.name), *REQUIRED[item.name]]
    return argv


found = {}
for module in sys.argv[1:]:
    codes = [run(module, ["--help"]), run(module, ["--no-such-flag"])]
    if module not in %r:
        codes.append(run(module, bad_paths(module)))
    found[module] = {"codes": codes, "heavy": sorted(name for name in %r if name in sys.modules)}
print(json.dumps(found))
""" % (NO_INPUT_PATH, HEAVY)


def test_help_and_every_refusal_of_the_flags_import_neither_torch_nor_matplotlib() -> None:
    """In one fresh interpreter, step after step: --help, an unknown flag and a command whose every path is missing
    answer (0, 2, 2) before torch, torchvision or matplotlib is imported — a step's work loads only once its flags
    are checked (the first step that imports one is named); a step that reads no input path answers (0, 2)."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *LIGHT_STEPS], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert list(found) == LIGHT_STEPS and "experiment_2.step_1_evaluate" in found
    expected = {module: [0, 2] if module in NO_INPUT_PATH else [0, 2, 2] for module in found}
    wrong = {module: result for module, result in found.items() if result != {"codes": expected[module], "heavy": []}}
    assert not wrong, next(iter(wrong.items()))
