"""Every step script (experiment_*/step_*.py and paper/depth_compare.py, found on disk so new steps are
covered) and the single-pass runner answer --help with their docstring, which states its question."""

from __future__ import annotations

import importlib
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
