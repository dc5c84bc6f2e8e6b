"""Defaults that depend on the machine (data-loader workers, torch's weights cache) and small usability guards."""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from experiment_1.errors import PipelineError
from experiment_1.network.weights import load_torchvision_state_dict
from experiment_1.run.run_config import MAX_DEFAULT_WORKERS, default_num_workers


def test_num_workers_default_leaves_a_core_to_the_evaluation() -> None:
    assert [default_num_workers(cores) for cores in (1, 2, 3, 64)] == [0, 1, 2, MAX_DEFAULT_WORKERS]


def test_weights_in_torchs_hub_cache_are_used_without_a_download(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = {"weight": torch.arange(6.0).reshape(2, 3)}
    hub = tmp_path / "hub"
    (hub / "checkpoints").mkdir(parents=True)
    staging = tmp_path / "staging.pth"
    torch.save(state, staging)
    digest = hashlib.sha256(staging.read_bytes()).hexdigest()[:8]
    name = f"toy-{digest}.pth"  # torchvision's naming: the hash prefix in the file name
    staging.rename(hub / "checkpoints" / name)
    monkeypatch.setattr(torch.hub, "get_dir", lambda: str(hub))
    monkeypatch.setenv("MOE_CHECKPOINTS", str(tmp_path / "checkpoints"))

    def no_download(*args, **kwargs):
        raise AssertionError("downloaded although torch's cache holds the file")

    monkeypatch.setattr(torch.hub, "load_state_dict_from_url", no_download)
    loaded = load_torchvision_state_dict(SimpleNamespace(url=f"https://download.pytorch.org/models/{name}"))
    assert torch.equal(loaded["weight"], state["weight"])
    assert not (tmp_path / "checkpoints").exists()  # nothing copied into checkpoints/
    (hub / "checkpoints" / name).write_bytes(b"truncated")  # a damaged cached file is named, not loaded
    with pytest.raises(PipelineError, match="corrupt or truncated"):
        load_torchvision_state_dict(SimpleNamespace(url=f"https://download.pytorch.org/models/{name}"))


def test_a_folder_given_as_the_summary_names_the_file_inside(tmp_path: Path) -> None:
    from experiment_1.files import load_summary

    (tmp_path / "summary.json").write_text("{}")
    (tmp_path / "timing.json").write_text("{}")
    with pytest.raises(PipelineError, match=r"--summary is a folder; pass the summary inside it \(summary.json\)$"):
        load_summary(tmp_path, 2, "experiment_2.step_1_evaluate")


def test_pip_install_covers_every_package_and_requirement() -> None:
    """pyproject.toml installs every top-level package of the repository, with requirements.txt as its dependencies."""
    tomllib = pytest.importorskip("tomllib")  # Python ≥ 3.11

    root = Path(__file__).resolve().parents[3]
    project = tomllib.loads((root / "pyproject.toml").read_text())
    include = project["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = sorted(path.parent.name for path in root.glob("*/__init__.py"))
    assert packages == ["experiment_1", "experiment_2", "experiment_3", "experiment_4", "experiment_5", "paper"]
    assert all(any(name == pattern.rstrip("*") for pattern in include) for name in packages)
    assert project["tool"]["setuptools"]["dynamic"]["dependencies"]["file"] == ["requirements.txt"]
