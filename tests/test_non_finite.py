"""Fault injection, second round: nothing non-finite, nothing mislabelled, nothing foreign.

Families: (1) finite or nothing — a non-finite logit stops the run naming the image, λ and weights,
a non-finite statistic is never written nor read, and renderers show "n/a — non-finite";
(2) ImageFolder labels by WordNet id or torchvision class name; (3) every file proves its run;
(4) decode or refuse; (5) one line everywhere (interrupts, schema errors, devices, long names,
torchrun ranks). One Experiment 1 run (random-init ResNet-18 at 64 px, 3 images in 2 batches) is
made once per module; cases that change files work on a copy.
"""
from __future__ import annotations

import importlib
import io
import math
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
import torchvision
from PIL import Image

import experiment_1.step_3_evaluate as step_3
from conftest import jpeg_bytes, shrink_inputs, write_shard
from experiment_1 import reconstruction_pass
from experiment_1.run import pipeline
from experiment_1.data.shards import SampleRef, check_sources, decode_image, list_items
from experiment_1.run import partial_store
from experiment_1.errors import PipelineError, run_cli
from experiment_1.data.imagenet_classes import imagenet_names, imagenet_wnids
from experiment_1.files import RUN_ID_ARRAY, SCHEMA_VERSION, atomic_save_npz, atomic_write_json, check_random_init_null, read_json
from experiment_1.report.markdown import NON_FINITE, format_number, format_percent, format_stat
from experiment_1.data.sample_list import sample_list_json
from experiment_1.step_2_sample import main as sample_main
from experiment_1.step_4_plot import main as plot_1
from experiment_1.reconstruction_verdicts import verdicts as reconstruction_verdicts
from experiment_2 import step_3_lambda_sweep
from experiment_5 import step_1_evaluate as step_5_1
from experiment_5.step_2_analyze import main as analyze_5
from paper.resummarize import main as resummarize

SHARD = "test-00000-of-00001.parquet"
REPO = Path(__file__).resolve().parents[1]


def write_samples(path: Path, entries: list[tuple[str, int, int]]) -> Path:
    atomic_write_json(path, sample_list_json([SampleRef(*entry) for entry in entries], "test-*.parquet", "uniform", 0, None))
    return path


def flags(root: Path, *extra: str, output: Path | None = None, samples: Path | None = None) -> list[str]:
    return ["--data-dir", str(root / "data"), "--sample-index", str(samples or root / "samples.json"), "--weights", "random", "--batch-size", "2",
            "--num-workers", "0", "--device", "cpu", "--output-dir", str(output or root / "results"), *extra]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path → bytes) but the run lock, which names the last run that opened the folder."""
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file() and path.name != partial_store.LOCK_FILE}


def expect_line(main: Callable[[list[str] | None], None], argv: list[str], capsys: pytest.CaptureFixture[str], code: int = 2) -> str:
    """Run a step as the command line would; return its one stderr line (no traceback) and check the exit status."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        run_cli(main, argv)
    assert exit_info.value.code == code
    lines = [line for line in capsys.readouterr().err.split("\n") if line.strip() and "%|" not in line]  # tqdm bars aside
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    return lines[0]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A shard of 4 images, a sample list of rows 0–2 and a finished Experiment 1 run on it."""
    root = tmp_path_factory.mktemp("finished")
    write_shard(root / "data" / SHARD, [jpeg_bytes(row) for row in range(4)], [-1] * 4)
    write_samples(root / "samples.json", [(SHARD, row, -1) for row in range(3)])
    with pytest.MonkeyPatch.context() as patch:
        shrink_inputs(patch)
        step_3.main(flags(root))
    return root


@pytest.fixture
def run(finished: Path, tmp_path: Path, small_input: int) -> Path:
    shutil.copytree(finished, tmp_path / "run")
    return tmp_path / "run"


# --------------------------------------------------------------------------------------------
# 1. Finite or nothing


def test_a_nan_parameter_stops_the_run_naming_image_lambda_and_weights(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = torchvision.models.resnet18().state_dict()
    state["layer4.1.conv2.weight"][0, 0, 0, 0] = float("nan")
    weights = run / "nan.pth"
    torch.save(state, weights)
    argv = [*flags(run, output=run / "nan"), "--weights", str(weights)]
    line = expect_line(step_3.main, argv, capsys)
    assert line.startswith("error: non-finite logits") and f"{SHARD} row 0" in line and "λ = 1" in line and str(weights) in line
    assert not (run / "nan" / "summary.json").exists() and not list((run / "nan").rglob("batch_*.pt"))


def test_a_huge_lambda_stops_the_sweep_naming_it(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*flags(run, output=run / "sweep"), "--lambdas", "1e6", "0.5", "--limit", "2"]
    line = expect_line(step_3_lambda_sweep.main, argv, capsys)
    assert line.startswith("error: non-finite logits") and "λ = 1e+06" in line and "weights random" in line
    assert not list((run / "sweep").glob("summary*.json"))


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # the bootstrap of an inf column
def test_non_finite_statistics_are_never_written_read_or_concluded(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary_path = run / "results" / "summary.json"
    summary = read_json(summary_path)
    summary["metrics"]["naive_sum_rel_error"]["mean"] = float("nan")
    assert {entry["id"]: entry["decision"] for entry in reconstruction_verdicts(summary)}["naive.misses"] == NON_FINITE
    atomic_write_json(summary_path, summary)
    before = snapshot(run / "results")
    line = expect_line(plot_1, ["--summary", str(summary_path)], capsys)
    assert "metrics.naive_sum_rel_error.mean is nan" in line and "no verdict" in line
    assert snapshot(run / "results") == before  # no figure, no REPORT
    summary["metrics"]["naive_sum_rel_error"]["mean"] = 1.0
    atomic_write_json(summary_path, summary)
    arrays = dict(np.load(run / "results" / "per_image.npz"))
    arrays["naive_sum_rel_error"][:] = np.inf
    atomic_save_npz(run / "results" / "per_image.npz", arrays)
    before = snapshot(run / "results")
    line = expect_line(resummarize, ["--summary", str(summary_path)], capsys)
    assert "summary.json (not rewritten): metrics.naive_sum_rel_error" in line
    assert snapshot(run / "results") == before
    assert format_number(float("inf")) == format_percent(float("nan")) == NON_FINITE
    assert format_stat({"mean": math.nan, "ci_low": 0.1, "ci_high": 0.2}).startswith(NON_FINITE)


# --------------------------------------------------------------------------------------------
# 2. ImageNet labels by name


def test_the_wnid_table_is_torchvision_order_for_all_1000_classes() -> None:
    wnids, names = imagenet_wnids(), imagenet_names()
    assert len(wnids) == len(set(wnids)) == len(names) == len(set(names)) == 1000
    assert list(wnids) == sorted(wnids) and all(len(wnid) == 9 and wnid[0] == "n" and wnid[1:].isdigit() for wnid in wnids)
    for wnid, index, name in [("n01440764", 0, "tench"), ("n02012849", 134, "crane bird"), ("n03126707", 517, "crane"),
                              ("n03710721", 639, "maillot tank suit"), ("n15075141", 999, "toilet tissue")]:
        assert wnids.index(wnid) == index and names[index] == name


def make_folder(root: Path, classes: dict[str, int]) -> None:
    for name, count in classes.items():
        (root / name).mkdir(parents=True)
        for index in range(count):
            (root / name / f"{index}.JPEG").write_bytes(jpeg_bytes(index))


def test_folders_are_labelled_by_imagenet_class_not_by_position(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_folder(tmp_path / "val", {"n01443537": 1, "n15075141": 1})
    (tmp_path / "val" / ".ipynb_checkpoints").mkdir()  # hidden: ignored
    (tmp_path / "val" / "n00000000_empty").mkdir()  # no images: ignored
    (tmp_path / "val" / "n01443537" / "scan.tif").write_bytes(jpeg_bytes(7))  # a format ImageFolder reads
    labels = {item.source: item.label for item in list_items(tmp_path, "val")}
    assert labels == {"val/n01443537/0.JPEG": 1, "val/n01443537/scan.tif": 1, "val/n15075141/0.JPEG": 999}
    make_folder(tmp_path / "named", {"goldfish": 1, "great_white_shark": 1, "crane bird": 1})
    assert sorted(item.label for item in list_items(tmp_path, "named")) == [1, 2, 134]


def test_unsupported_files_are_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_folder(tmp_path / "val", {"n01443537": 1})
    (tmp_path / "val" / "n01443537" / "notes.txt").write_text("x")
    list_items(tmp_path, "val")
    err = capsys.readouterr().err
    assert "left out 1 file(s)" in err and "notes.txt" in err


def test_folders_that_are_not_imagenet_classes_need_the_mapping_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_folder(tmp_path / "data" / "pets", {"cat": 2, "dog": 2})
    output = tmp_path / "samples.json"
    argv = ["--data-dir", str(tmp_path / "data"), "--pattern", "pets", "--mode", "per-class", "--per-class", "2", "--output", str(output)]
    line = expect_line(sample_main, argv, capsys)
    assert "pets/cat: not an ImageNet class" in line and "--folder-labels sorted" in line and not output.exists()
    run_cli(sample_main, [*argv, "--folder-labels", "sorted"])
    document = read_json(output)
    assert document["folder_labels"] == "sorted" and sorted({entry["label"] for entry in document["samples"]}) == [0, 1]


# --------------------------------------------------------------------------------------------
# 3. Every file proves its run


def test_summary_and_per_image_arrays_carry_the_run(finished: Path) -> None:
    config = read_json(finished / "results" / "summary.json")["config"]
    with np.load(finished / "results" / "per_image.npz") as stored:
        assert str(stored[RUN_ID_ARRAY]) == config["run_id"] and len(config["run_id"]) == 64
    assert config["schema_version"] == SCHEMA_VERSION and len(config["sample_list_sha256"]) == 64


def test_resummarize_refuses_another_runs_arrays_and_a_truncated_npz(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary = run / "results" / "summary.json"
    arrays = dict(np.load(run / "results" / "per_image.npz"))
    atomic_save_npz(run / "results" / "per_image.npz", {**arrays, RUN_ID_ARRAY: np.array("f" * 64)})
    before = snapshot(run / "results")
    line = expect_line(resummarize, ["--summary", str(summary)], capsys)
    assert "per_image.npz: from run ffffffffffff" in line and "summary.json is from run" in line
    data = (run / "results" / "per_image.npz").read_bytes()
    (run / "results" / "per_image.npz").write_bytes(data[: len(data) // 2])
    line = expect_line(resummarize, ["--summary", str(summary)], capsys)
    assert "per_image.npz: damaged or not a per_image.npz" in line
    assert snapshot(run / "results").keys() == before.keys() and (run / "results" / "summary.json").read_bytes() == before["summary.json"]


def test_resummarize_upgrades_a_legacy_pair_only_when_the_counts_agree(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary_path = run / "results" / "summary.json"
    summary = read_json(summary_path)
    legacy = {**summary, "config": {key: value for key, value in summary["config"].items() if key not in ("run_id", "schema_version")}}
    atomic_write_json(summary_path, {**legacy, "num_images": 2})
    arrays = {name: value for name, value in np.load(run / "results" / "per_image.npz").items() if name != RUN_ID_ARRAY}
    atomic_save_npz(run / "results" / "per_image.npz", arrays)
    assert "they are not of one run" in expect_line(resummarize, ["--summary", str(summary_path)], capsys)
    atomic_write_json(summary_path, legacy)
    line = expect_line(plot_1, ["--summary", str(summary_path)], capsys)
    assert f"schema version 1, this code reads version {SCHEMA_VERSION}" in line
    run_cli(resummarize, ["--summary", str(summary_path)])
    rebuilt = read_json(summary_path)
    assert rebuilt["config"]["run_id"].startswith("npz-sha256:") and rebuilt["config"]["schema_version"] == SCHEMA_VERSION
    assert rebuilt["metrics"] == summary["metrics"]


def test_the_random_init_null_must_match_architecture_and_sample_list(tmp_path: Path) -> None:
    base = {"run_id": "a", "weights": "IMAGENET1K_V1", "arch": "resnet18", "sample_list_sha256": "s", "num_images": 10, "sample_index": "l.json"}
    summary, path, null_path = {"config": base}, tmp_path / "summary.json", tmp_path / "null.json"
    good = {"config": {**base, "run_id": "b", "weights": "random", "num_images": 4}}  # the first 4 images of the same list
    check_random_init_null(summary, path, good, null_path)
    cases = [
        (good, path, "is the same run"),
        ({"config": {**good["config"], "weights": "IMAGENET1K_V1"}}, null_path, "not a random-init null"),
        ({"config": {**good["config"], "arch": "resnet50"}}, null_path, "a resnet50 run"),
        ({"config": {**good["config"], "sample_list_sha256": "t"}}, null_path, "another sample list"),
        ({"config": {**good["config"], "num_images": 11}}, null_path, "another sample list"),
    ]
    for null, where, message in cases:
        with pytest.raises(PipelineError, match=message):
            check_random_init_null(summary, path, null, where)


def test_no_step_writes_over_its_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = tmp_path / "per_image.pt"
    record.write_bytes(b"x")
    assert "is also this step's input" in expect_line(analyze_5, ["--per-image", str(record), "--output", str(tmp_path / "." / "per_image.pt")], capsys)
    assert record.read_bytes() == b"x"


# --------------------------------------------------------------------------------------------
# 4. Decode or refuse


def png_bytes(image: Image.Image, format: str = "PNG") -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=format)
    return buffer.getvalue()


def test_sixteen_bit_greyscale_is_rescaled_and_float_images_are_refused() -> None:
    grey = Image.fromarray(np.full((8, 8), 32768, dtype=np.uint16))
    decoded = np.asarray(decode_image(png_bytes(grey)))
    assert decoded.shape == (8, 8, 3) and (decoded == 128).all()  # PIL's own conversion gives 255 (white)
    with pytest.raises(ValueError, match="image mode F is not supported"):
        decode_image(png_bytes(Image.fromarray(np.full((8, 8), 0.5, dtype=np.float32)), format="TIFF"))


def test_one_file_under_two_spellings_is_one_image(tmp_path: Path) -> None:
    write_shard(tmp_path / SHARD, [jpeg_bytes(0), jpeg_bytes(1)], [-1, -1])
    (tmp_path / "link.parquet").symlink_to(tmp_path / SHARD)
    check_sources(tmp_path, [SampleRef(SHARD, 0, -1), SampleRef(SHARD, 1, -1)])
    for twin in (f"./{SHARD}", "link.parquet"):
        with pytest.raises(PipelineError, match="same image as"):
            check_sources(tmp_path, [SampleRef(SHARD, 0, -1), SampleRef(twin, 0, -1)])


def test_labels_outside_the_model_classes_are_refused_before_evaluating(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = write_samples(run / "bad_labels.json", [(SHARD, 0, 3), (SHARD, 1, 1000)])
    line = expect_line(step_3.main, flags(run, samples=samples, output=run / "bad"), capsys)
    assert "label 1000" in line and "outside [0, 1000)" in line and not (run / "bad").exists()


def test_null_labels_in_a_shard_are_unlabelled(tmp_path: Path) -> None:
    table = pa.table({"image": pa.array([jpeg_bytes(0), jpeg_bytes(1)], type=pa.binary()), "label": pa.array([None, 4], type=pa.int64())})
    pq.write_table(table, tmp_path / SHARD)
    assert [item.label for item in list_items(tmp_path, SHARD)] == [-1, 4]


# --------------------------------------------------------------------------------------------
# 5. One line everywhere


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_says_what_is_kept_and_how_to_resume(run: Path, signal_number: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
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


@pytest.mark.parametrize("device", ["mps", "xpu", "meta"])
def test_devices_other_than_cpu_and_cuda_are_refused(device: str) -> None:
    with pytest.raises(PipelineError, match=f"--device {device}: only cpu and cuda"):
        pipeline.resolve_device(device)


SEEDED_STEPS = sorted(
    ".".join(path.relative_to(REPO).with_suffix("").parts)
    for path in [*REPO.glob("experiment_*/*.py"), *REPO.glob("paper/*.py")]
    if "def main(" in path.read_text() and ('add_argument("--seed"' in path.read_text() or "add_evaluation_arguments(parser" in path.read_text())
)


@pytest.mark.parametrize("module", SEEDED_STEPS)
def test_a_negative_seed_is_refused_by_every_step_that_takes_one(module: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        importlib.import_module(module).main(["--seed", "-1"])
    assert exit_info.value.code == 2 and "argument --seed: -1 is not allowed" in capsys.readouterr().err


def test_a_name_longer_than_the_file_system_allows(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        step_3.main(flags(run, output=run / ("x" * 300)))
    assert exit_info.value.code == 2 and "has 300 bytes; file systems allow at most 255 per name" in capsys.readouterr().err
    with pytest.raises(PipelineError, match="longer than the file system allows"):  # the writers' own check, for names made at run time
        atomic_write_json(run / ("y" * 300), {})


def test_a_summary_lacking_a_nested_key_is_refused_before_anything_is_written(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary_path = run / "results" / "summary.json"
    summary = read_json(summary_path)
    del summary["metrics"]["first_order_top1_agreement"]
    atomic_write_json(summary_path, summary)
    before = snapshot(run / "results")
    line = expect_line(plot_1, ["--summary", str(summary_path)], capsys)
    assert "lacks metrics.first_order_top1_agreement" in line
    assert snapshot(run / "results") == before


def test_under_torchrun_each_ranks_error_is_a_line_of_its_own(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")

    def failing(argv: list[str] | None) -> None:
        print("Exp 1 all masks:  40%", end="", file=sys.stderr)  # another bar owns the line
        raise PipelineError("broken image")

    with pytest.raises(SystemExit):
        run_cli(failing, [])
    assert capsys.readouterr().err.split("\n")[-2:] == ["error: broken image", ""]


def test_experiment_5_checks_the_sample_lists_pattern_before_evaluating(tmp_path: Path, small_input: int, capsys: pytest.CaptureFixture[str]) -> None:
    write_shard(tmp_path / "data" / "validation-00000-of-00001.parquet", [jpeg_bytes(row) for row in range(2)], [0, 1])
    samples = tmp_path / "samples.json"
    atomic_write_json(samples, sample_list_json([SampleRef("validation-00000-of-00001.parquet", row, row) for row in range(2)], "moved-*.parquet", "per-class", 0, 1))
    line = expect_line(step_5_1.main, flags(tmp_path, samples=samples, output=tmp_path / "out"), capsys)
    assert "no shards or image folders match 'moved-*.parquet'" in line and not list((tmp_path / "out").rglob("batch_*.pt"))
