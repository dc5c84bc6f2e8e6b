"""Resume never mixes inputs: a partial store is refused, with one line naming what changed, when any input or
evaluation setting differs (sample list, data, weights content, engine, chunk, dtypes, seed, batch size, network,
its rewrites, the device) or when it belongs to another step or an older version; a damaged store names its file;
stale temporaries of killed writes are cleared. Each case damages a copy of one finished run (tests/fault_harness.py)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Callable

import pytest
import torch

import experiment_1.step_3_evaluate as step_3
import experiment_2.step_1_evaluate as step_2_1
from conftest import jpeg_bytes, write_shard
from experiment_1.data.shards import SampleRef
from experiment_1.errors import PipelineError
from experiment_1.run import partial_store
from fault_harness import SHARD, STAGE, expect_error, flags, snapshot, write_samples


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
    os.utime(
        weights, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9)
    )  # a new mtime, as a rewrite a second later has
    changed = partial_store.run_key(config, tmp_path, samples)
    assert partial_store.describe_changes(key, changed) == "weights"


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--engine", "naive"], "engine"),
        (["--mask-chunk", "64"], "mask_chunk"),
        (["--dtype", "float64"], "dtype"),
        (["--mobius-dtype", "float32"], "mobius_dtype"),
        (["--seed", "1"], "seed"),
        (["--batch-size", "1"], "batch_size"),
        (["--arch", "resnet34"], "arch"),
        (["--fold-batchnorm"], "fold_batchnorm"),
        (["--smooth-activations"], "smooth_activations"),
    ],
)
def test_changing_any_evaluation_setting_refuses_the_store(
    run: Path, extra: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
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
    config = {
        "arch": "resnet18",
        "weights": "random",
        "engine": "tree",
        "dtype": "float32",
        "mobius_dtype": "float64",
        "batch_size": 2,
        "mask_chunk": 256,
        "seed": 0,
        "limit": None,
        "skip_corrupt": False,
        "device_type": "cpu",
        "input_size": 224,
    }
    key = partial_store.run_key(config, tmp_path, samples)
    for name, other in {
        "arch": "resnet34",
        "weights": "IMAGENET1K_V2",
        "engine": "naive",
        "dtype": "bfloat16",
        "mobius_dtype": "float32",
        "batch_size": 3,
        "mask_chunk": 64,
        "seed": 5,
        "limit": 1,
        "skip_corrupt": True,
        "device_type": "cuda",
        "input_size": 64,
    }.items():
        changed = partial_store.run_key({**config, name: other}, tmp_path, samples)
        assert partial_store.describe_changes(key, changed) == name


def test_a_relabelled_sample_list_is_another_run(tmp_path: Path) -> None:
    """Labels are part of the sample-list entries in the key: the same rows with one label changed are another run
    (Experiments 4 and 5 read the labels)."""
    write_shard(tmp_path / SHARD, [jpeg_bytes(0), jpeg_bytes(1)], [3, 4])
    config = {"arch": "resnet18", "weights": "random"}
    key = partial_store.run_key(config, tmp_path, [SampleRef(SHARD, 0, 3), SampleRef(SHARD, 1, 4)])
    relabelled = partial_store.run_key(config, tmp_path, [SampleRef(SHARD, 0, 3), SampleRef(SHARD, 1, 5)])
    assert partial_store.describe_changes(key, relabelled) == "the sample-list entries in use"


def test_an_old_store_without_a_content_key_is_refused(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = run / "old"
    (old / "partial" / "all_masks").mkdir(parents=True)
    (old / "partial" / "all_masks" / "run_config.json").write_text('{"arch": "resnet18", "stage": "all_masks"}\n')
    before = snapshot(old)
    line = expect_error(step_3.main, flags(run, output=old), capsys)
    assert "older version" in line and "delete that folder" in line and "all_masks" in line
    assert snapshot(old) == before


def test_another_steps_folder_is_refused_before_and_after_evaluating(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(run / "results")
    line = expect_error(step_2_1.main, flags(run), capsys)
    assert "holds results of another step (experiment_1.step_3_evaluate)" in line
    assert snapshot(run / "results") == before
    shutil.rmtree(run / "results" / "partial")  # without the resume state, the summary still guards the folder
    before = snapshot(run / "results")
    line = expect_error(step_2_1.main, flags(run, "--limit", "1"), capsys)
    assert "holds the results of another step (summary.json, experiment 1" in line
    assert {
        name: value for name, value in snapshot(run / "results").items() if not name.startswith("partial/")
    } == before


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (
            lambda stage: (stage / "batch_000001.pt").write_bytes((stage / "batch_000001.pt").read_bytes()[:300]),
            "batch_000001.pt: damaged partial batch file",
        ),
        (lambda stage: (stage / "batch_000000.pt").write_bytes(b""), "batch_000000.pt: damaged partial batch file"),
        (
            lambda stage: shutil.copy(stage / "batch_000000.pt", stage / "batch_000001.pt"),
            "batch_000001.pt: does not hold batch 1 of this run",
        ),
        (
            lambda stage: (stage / "run_config.json").write_text('{"arch": "resn'),
            "run_config.json: damaged or not JSON",
        ),
    ],
)
def test_a_damaged_partial_store_names_the_file(
    run: Path, damage: Callable[[Path], object], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    damage(run / "results" / STAGE)
    before = snapshot(run / "results")
    line = expect_error(step_3.main, flags(run), capsys)
    assert expected in line and "delete" in line and "recompute" in line
    assert snapshot(run / "results") == before


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
    assert {
        name: value for name, value in snapshot(stage).items() if name.startswith("batch_")
    } == batches  # nothing recomputed


def test_a_folder_belongs_to_one_run(tmp_path: Path) -> None:
    """A rerun of a λ sweep into its folder keeps the 3C summary scored from that very run; a summary of another run
    (of the same experiment too), one without a run id, a same-named summary of another experiment, or a REPORT.md
    beside no summary of this run stops it with one line naming the folder."""
    import json

    from experiment_1.run.partial_store import claim_output

    sweep = {"experiment": "3A/3B", "config": {"run_id": "r1"}}
    scored = {"experiment": "3C", "config": {"run_id": "r1"}}

    def claim(folder: str, files: dict[str, object]) -> None:
        (tmp_path / folder).mkdir()
        for name, document in files.items():
            (tmp_path / folder / name).write_text(document if isinstance(document, str) else json.dumps(document))
        claim_output(tmp_path / folder, sweep, "summary_all.json")

    claim("derived", {"summary_3c.json": scored, "summary_all.json": sweep, "REPORT.md": "# the sweep"})  # its own run
    claim("empty", {})
    claim("older", {"summary_all.json": {"experiment": "3A/3B", "config": {}}})  # its own, before run ids: rebuilt
    refused = {
        "other_run": ({"summary_all.json": {**sweep, "config": {"run_id": "r0"}}}, "another run \\(summary_all.json"),
        "other_derived": (
            {"summary_3c.json": {**scored, "config": {"run_id": "r2"}}},
            "another run \\(summary_3c.json",
        ),
        "same_name": ({"summary_all.json": scored}, "another step \\(summary_all.json, experiment '3C'"),
        "no_id": ({"summary_3c.json": {"experiment": "3C"}}, "another run .* a run without its run id"),
        "report": ({"REPORT.md": "# another run"}, "a REPORT.md of another run"),
    }
    for folder, (files, message) in refused.items():
        with pytest.raises(
            PipelineError,
            match=f"^{tmp_path / folder}: holds {'' if folder == 'report' else 'the results of '}{message}",
        ):
            claim(folder, files)
