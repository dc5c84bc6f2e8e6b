"""Two stages of one step with the same key: two passes of one experiment (one partial-store stage name) into one
output folder would share one store, the second overwriting the first's batches. ``run_passes`` refuses that in one
line naming the fix, before anything is built; and `run_stages`, the pass under it, refuses two stages whose
partial stores would be one folder."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from experiment_1.errors import PipelineError
from experiment_1.run import ExperimentPass, RunConfig, loop, run_passes


def one_pass() -> ExperimentPass:
    return ExperimentPass(
        experiment=1,
        stage="experiment_1.step_3_evaluate/all_masks",
        description="Exp 1",
        batch_function=lambda setup: pytest.fail("a batch function was built"),
        finish=lambda setup, arrays, timing: pytest.fail("finished"),
    )


@pytest.mark.parametrize("spelling", ["same", "dotted"])
def test_two_passes_of_one_stage_into_one_folder_are_refused_in_one_line(
    spelling: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loop, "build_setup", lambda args: pytest.fail("a model was built"))
    second = tmp_path / "out" if spelling == "same" else tmp_path / "out" / ".." / "out"
    with pytest.raises(PipelineError) as raised:
        run_passes([(one_pass(), RunConfig(output_dir=tmp_path / "out")), (one_pass(), RunConfig(output_dir=second))])
    message = str(raised.value)
    assert "\n" not in message and "needs its own output folder" in message and "give each experiment" in message


@pytest.mark.parametrize("spelling", ["same", "dotted"])
def test_two_stages_with_one_store_are_refused_by_the_pass_itself(
    spelling: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``run_stages`` (the library entry below ``run_passes``) refuses two stages whose stores would be one folder."""
    monkeypatch.setattr(loop, "run_key", lambda config, data_dir, samples: {"run": "one"})

    def started(*args: object) -> None:
        raise LookupError("the pass started")

    monkeypatch.setattr(loop.distributed, "check_job", started)

    def setup(folder: Path) -> SimpleNamespace:
        config = SimpleNamespace(output_dir=folder, batch_size=1)
        return SimpleNamespace(config=config, dataset=SimpleNamespace(data_dir=tmp_path), samples=[])

    second = tmp_path / "out" if spelling == "same" else tmp_path / "out" / ".." / "out"
    stages = [
        loop.Stage(setup(folder), "one_stage", lambda logits, labels: {}) for folder in (tmp_path / "out", second)
    ]
    with pytest.raises(PipelineError) as raised:
        loop.run_stages(stages)
    message = str(raised.value)
    assert "\n" not in message and "share this partial store" in message and str(tmp_path / "out") in message
    other = [loop.Stage(setup(tmp_path / "out"), name, lambda logits, labels: {}) for name in ("first", "second")]
    with pytest.raises(LookupError, match="the pass started"):  # two names in one folder are two stores
        loop.run_stages(other)
