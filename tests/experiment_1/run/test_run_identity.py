"""A run's identity: a frozen configuration, one run per store, batch files that name their store,
the user's network in the key, and nothing executable or path-like taken from a results file.

Each case reproduces a fault of the third fault round on small data and shows it refused with one
line (or handled): two runs into one folder, a batch file of another run, an edited factory module
resuming from old batches, a summary naming a module to import, a ``config.arch`` that climbs out of
the results folder.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import experiment_1.step_3_evaluate as step_3
import experiment_2.limit.limit_report as limit_report
import experiment_2.step_5_limit_report as step_5
from conftest import evaluation_flags
from experiment_1.errors import PipelineError
from experiment_1.files import inside, name_from_file, read_json
from experiment_1.network.registry import build_gated_stack, network_sha256
from experiment_1.run import partial_store
from experiment_1.run.run_config import RunConfig, from_flags
from paper.resummarize import main as resummarize

REPO = Path(__file__).resolve().parents[3]
FACTORY_SOURCE = REPO / "experiment_1" / "examples" / "cifar_resnet20.py"


def run_config() -> RunConfig:
    flags = argparse.Namespace(
        sample_index=Path("s.json"),
        data_dir=None,
        arch="resnet18",
        weights="random",
        engine="tree",
        batch_size=2,
        mask_chunk=256,
        num_workers=0,
        seed=0,
        device="cpu",
        dtype="float32",
        compile=False,
        fold_batchnorm=False,
        smooth_activations=None,
        calibrate_batchnorm=None,
        mobius_dtype="float64",
        limit=None,
        skip_corrupt=False,
        output_dir=Path("out"),
    )
    return from_flags(RunConfig, flags).with_content({"arch": "resnet18", "block_names": ["a", "b"], "seed": 0})


# --------------------------------------------------------------------------------------------
# The frozen configuration


def test_the_run_configuration_cannot_be_changed_in_place() -> None:
    config = run_config()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.seed = 1  # type: ignore[misc]
    config["block_names"].append("c")  # a caller's copy
    assert config["block_names"] == ["a", "b"] and dict(config) == {
        "arch": "resnet18",
        "block_names": ["a", "b"],
        "seed": 0,
    }
    extended = config.with_options(ks=[1, 2])
    assert "ks" not in config and extended["ks"] == [1, 2] and extended.seed == 0
    with pytest.raises(PipelineError, match="would overwrite the run configuration's seed"):
        config.with_options(seed=3)
    with pytest.raises(PipelineError, match="set once"):
        config.with_content({"arch": "resnet50"})


# --------------------------------------------------------------------------------------------
# One run per store


def hold_lock(folder: Path) -> subprocess.Popen:
    """Another process holding ``folder``'s run lock until its stdin closes."""
    code = (
        "import sys; from experiment_1.run.partial_store import lock_output_dir; "
        f"lock_output_dir({str(folder)!r}); print('held', flush=True); sys.stdin.read()"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_second_run_into_a_locked_folder_refuses_naming_the_holder(
    tiny_shards: Path, tiny_sample_index: Path, tmp_path: Path, small_input: int, expect_one_line
) -> None:
    output = tmp_path / "results"
    holder = hold_lock(output)
    try:
        line = expect_one_line(step_3.main, evaluation_flags(tiny_shards, tiny_sample_index, output))
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert "another run is writing into this folder" in line and f"pid {holder.pid}" in line and "--output-dir" in line
    assert not (output / "summary.json").exists()


def test_the_key_file_is_created_once_and_compared_on_every_open(tmp_path: Path) -> None:
    first = partial_store.PartialStore(tmp_path, "step/part", {"key_format": 2, "seed": 0})
    first.open()
    assert not partial_store.create_json_once(
        first.directory / partial_store.KEY_FILE, {"key_format": 2, "seed": 1}
    )  # a racing run cannot replace it
    with pytest.raises(PipelineError, match="different run \\(changed: seed\\)"):
        partial_store.PartialStore(tmp_path, "step/part", {"key_format": 2, "seed": 1}).open()
    first.open()  # the same run reopens


def test_a_batch_file_of_another_run_is_refused(tmp_path: Path) -> None:
    ours, theirs = (
        partial_store.PartialStore(tmp_path / name, "step/part", {"key_format": 2, "seed": seed})
        for seed, name in ((0, "ours"), (1, "theirs"))
    )
    for store in (ours, theirs):
        store.open()
    batch = {"index": torch.tensor([0, 1]), "value": torch.tensor([1.0, 2.0])}
    theirs.save(0, batch)
    shutil.copy(theirs.path(0), ours.path(0))  # same positions, another run
    with pytest.raises(PipelineError, match="batch_000000.pt: a batch file of another run"):
        ours.load(0, [0, 1])
    torch.save(batch, ours.path(0))  # no store id (an older file, or one with the entry deleted): any run's, so refused
    with pytest.raises(
        PipelineError,
        match="batch_000000.pt: names no store id, so it cannot be shown to be this run's batch; delete it",
    ):
        ours.load(0, [0, 1])
    ours.save(1, batch)
    assert partial_store.STORE_ID not in ours.load(1, [0, 1])


# --------------------------------------------------------------------------------------------
# The user's network in the identity


def user_factory(folder: Path, name: str) -> str:
    """A copy of the ResNet-20 example as an importable module of the user's; returns its ``--arch``."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(FACTORY_SOURCE, folder / f"{name}.py")
    return f"{name}:build_model"


def test_the_network_identity_covers_the_factory_source_and_tensors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    arch = user_factory(tmp_path, "identity_factory")
    model = build_gated_stack(arch, "random", seed=0)
    identity = network_sha256(arch, model)
    assert network_sha256(arch, build_gated_stack(arch, "random", seed=0)) == identity
    assert network_sha256(arch, build_gated_stack(arch, "random", seed=1)) != identity  # other weights
    with open(tmp_path / "identity_factory.py", "a") as source:
        source.write("\n# edited\n")
    assert network_sha256(arch, model) != identity  # an edited module


def test_an_edited_factory_never_resumes_from_the_old_networks_batches(
    tiny_shards: Path, tiny_sample_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, expect_one_line
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path / "user"))
    arch = user_factory(tmp_path / "user", "resume_factory")
    output = tmp_path / "results"
    flags = evaluation_flags(tiny_shards, tiny_sample_index, output, "--arch", arch, "--limit", "2")
    step_3.main(flags)
    assert len(read_json(output / "summary.json")["config"]["network_sha256"]) == 64
    (output / "summary.json").unlink()
    step_3.main(flags)  # the same network resumes
    with open(tmp_path / "user" / "resume_factory.py", "a") as source:
        source.write("\n# edited\n")
    line = expect_one_line(step_3.main, flags)
    assert "different run (changed: network_sha256)" in line


# --------------------------------------------------------------------------------------------
# Nothing executable or path-like from a results file


def test_resummarize_never_imports_the_module_a_summary_names(
    tiny_shards: Path,
    tiny_sample_index: Path,
    tmp_path: Path,
    small_input: int,
    monkeypatch: pytest.MonkeyPatch,
    expect_one_line,
) -> None:
    output = tmp_path / "results"
    step_3.main(evaluation_flags(tiny_shards, tiny_sample_index, output, "--limit", "2"))
    marker = tmp_path / "payload_ran"
    (output / "payload.py").write_text(
        f"open({str(marker)!r}, 'w').close()\ndef build(weights):\n    raise SystemExit('ran')\n"
    )
    monkeypatch.syspath_prepend(str(output))
    monkeypatch.chdir(output)
    summary_path = output / "summary.json"
    summary = read_json(summary_path)
    planted = {**summary, "config": {**summary["config"], "arch": "payload:build"}}
    summary_path.write_text(json.dumps(planted))
    resummarize(["--summary", str(summary_path)])  # the recorded recursion is used: nothing is built
    assert not marker.exists() and read_json(summary_path)["config"]["arch"] == "payload:build"
    del planted["config"]["gated_recursion"]
    summary_path.write_text(json.dumps(planted))
    line = expect_one_line(resummarize, ["--summary", str(summary_path)])
    assert (
        "config.arch 'payload:build' is not a registered architecture" in line and "never names code to import" in line
    )
    assert not marker.exists() and "payload" not in sys.modules


@pytest.mark.parametrize("arch", ["x/../../..", "..", ".", "", "a\\b", "tab\there"])
def test_a_name_from_a_results_file_never_becomes_a_path(arch: str) -> None:
    with pytest.raises(PipelineError, match="is not a plain name"):
        name_from_file(arch, "config.arch", Path("summary_all.json"))
    assert name_from_file("resnet18", "config.arch", Path("s.json")) == "resnet18"


def test_an_output_path_must_resolve_inside_its_root(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "link").symlink_to(tmp_path)
    assert inside(tmp_path / "root" / "a", tmp_path / "root") == tmp_path / "root" / "a"
    for escaping in (tmp_path / "root" / ".." / "x", tmp_path / "root" / "link" / "x"):
        with pytest.raises(PipelineError, match="outside"):
            inside(escaping, tmp_path / "root")


def test_the_limit_report_refuses_an_arch_that_climbs_out_of_the_results_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, expect_one_line
) -> None:
    monkeypatch.chdir(tmp_path)
    summary = {"config": {"arch": "x/../../../escaped", "seed": 0}}
    monkeypatch.setattr(limit_report, "load_variants", lambda native, smooth: {"native": summary, "smooth": summary})
    monkeypatch.setattr(limit_report, "swap_agreement", lambda native, smooth, seed: {})
    monkeypatch.setattr(limit_report, "summarize", lambda summaries, agreement: summary)
    for name in ("n", "s"):  # the inputs are there (their reading is replaced above)
        (tmp_path / name).mkdir()
        (tmp_path / name / "summary_all.json").write_text("{}")
    line = expect_one_line(step_5.main, ["--native", "n/summary_all.json", "--smooth", "s/summary_all.json"])
    assert "n/summary_all.json: config.arch 'x/../../../escaped' is not a plain name" in line
    assert not any(tmp_path.rglob("summary_3c.json")) and not (tmp_path.parent / "escaped").exists()
