"""torchvision weights offline (issue #62): the host is probed before a download is tried, so an evaluation step of the
original study's (ResNet-18, pretrained) stops with its one error line and no torch "Downloading: …" line before it."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest
import torch

import experiment_1.step_3_evaluate as step_3
from conftest import evaluation_flags
from experiment_1.network import gating, host_reachable
from fault_harness import expect_line


def test_host_reachable_is_a_connection_that_opens() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:  # listening: the connection opens
        assert host_reachable(f"http://127.0.0.1:{server.getsockname()[1]}/x.pth", timeout=5.0)
    assert not host_reachable("https://host.invalid/x.pth", timeout=1.0)  # a name that never resolves


def test_an_offline_step_prints_its_error_line_and_no_download_line(
    tiny_shards: Path,
    tiny_sample_index: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("MOE_CHECKPOINTS", str(tmp_path / "checkpoints"))
    monkeypatch.setattr(torch.hub, "get_dir", lambda: str(tmp_path / "hub"))  # a user's torch cache may hold the file
    monkeypatch.setattr(gating, "host_reachable", lambda url: False)

    def torchvision_download(url: str, *arguments: object, **keywords: object) -> dict:
        sys.stderr.write(f'Downloading: "{url}" to {tmp_path}\n')  # what torch.hub prints before it tries
        raise OSError("Name or service not known")

    monkeypatch.setattr(torch.hub, "load_state_dict_from_url", torchvision_download)
    argv = evaluation_flags(
        tiny_shards, tiny_sample_index, tmp_path / "out", "--arch", "resnet18", "--weights", "pretrained"
    )
    line = expect_line(step_3.main, argv, capsys)
    assert line.startswith("error: resnet18-f37072fd.pth: not in ") and "download.pytorch.org is not reachable" in line
    assert f"put the file at {tmp_path / 'checkpoints' / 'resnet18-f37072fd.pth'}" in line
    assert "--arch efficientnet_lite0" in line
