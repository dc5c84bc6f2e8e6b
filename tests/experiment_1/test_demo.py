"""`make demo` (experiment_1.demo): which data and model it picks, and a run on the embedded sample."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import experiment_1.demo as demo
from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.network import gating
from experiment_1.paths import REPO_ROOT


def test_data_choice_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MOE_DATA", raising=False)
    monkeypatch.setattr(demo, "REPO_ROOT", tmp_path)  # a fresh clone: imagenet-1k/data has no shards
    fresh = demo.choose_data(None, None)
    assert (fresh.data_dir, fresh.pattern) == (
        demo.EMBEDDED_SAMPLE,
        "validation-*.parquet",
    ) and "embedded sample" in fresh.reason
    (tmp_path / "imagenet-1k" / "data").mkdir(parents=True)
    (tmp_path / "imagenet-1k" / "data" / "test-00000-of-00028.parquet").touch()
    assert demo.choose_data(None, None).data_dir == tmp_path / "imagenet-1k" / "data"
    monkeypatch.setenv("MOE_DATA", str(tmp_path / "elsewhere"))
    assert demo.choose_data(None, None).data_dir == tmp_path / "elsewhere"
    assert demo.choose_data(tmp_path / "flag", "validation-*.parquet") == demo.DemoData(
        tmp_path / "flag", "validation-*.parquet", "--data-dir"
    )


def test_default_model_falls_back_offline_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def offline(weights: object) -> dict:
        raise PipelineError("could not download …")

    monkeypatch.setattr(demo, "load_torchvision_state_dict", offline)  # the host answers, the download fails
    assert demo.choose_arch(None) == "efficientnet_lite0"
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and "resnet18-f37072fd.pth" in lines[0]
    assert demo.choose_arch("resnet18") == "resnet18"  # an explicit arch never falls back
    monkeypatch.setattr(demo, "load_torchvision_state_dict", lambda weights: {})
    assert demo.choose_arch(None) == "resnet18"


def test_an_unreachable_host_falls_back_without_a_download_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Offline, nothing is downloaded or tried: no torch "Downloading: …" line before the fallback line."""
    monkeypatch.setenv("MOE_CHECKPOINTS", str(tmp_path / "checkpoints"))
    monkeypatch.setattr(torch.hub, "get_dir", lambda: str(tmp_path / "hub"))
    monkeypatch.setattr(gating, "host_reachable", lambda url: False)

    def never(*arguments: object, **keywords: object) -> dict:
        raise AssertionError("a download was tried although the host is unreachable")

    monkeypatch.setattr(torch.hub, "load_state_dict_from_url", never)
    assert demo.choose_arch(None) == "efficientnet_lite0"
    captured = capsys.readouterr()
    assert captured.err == "" and len(captured.out.strip().splitlines()) == 1 and "Downloading" not in captured.out
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "resnet18-f37072fd.pth").touch()  # cached: loaded without probing the host
    monkeypatch.setattr(demo, "load_torchvision_state_dict", lambda weights: {})
    assert demo.choose_arch(None) == "resnet18"


def test_demo_runs_on_the_embedded_sample(tmp_path: Path, small_input: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MOE_DATA", raising=False)
    output = tmp_path / "demo"
    demo.main(
        [
            "--arch",
            "resnet18",
            "--weights",
            "random",
            "--num-images",
            "2",
            "--device",
            "cpu",
            "--output-dir",
            str(output),
        ]
    )
    summary = read_json(output / "summary.json")
    assert summary["config"]["data_dir"] == str(demo.EMBEDDED_SAMPLE) and summary["num_labelled"] == 2
    report = (output / "REPORT.md").read_text()
    assert (
        "for every subset S to round-off: **holds**" in report
    )  # the Möbius identity verdict, rendered from the summary
    assert (
        "(shards in `imagenet-1k/sample`;" in report and str(REPO_ROOT) not in report
    )  # no absolute path of this machine
    assert "image evaluations per second" in report
