"""experiment_1.tools.gpu_check: without CUDA one line and exit 2; the named checks run in order, each outcome
written to the JSON, a failing or raising check recorded without stopping the others (exit 1); the memory plan
runs without CUDA."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
import torch

from experiment_1.errors import run_cli
from experiment_1.network.allocator import tune_allocator
from experiment_1.network.memory import REDUCTION_LOGIT_MULTIPLE, peak_estimate, stack_profile
from experiment_1.network.registry import build_gated_stack
from experiment_1.tools import gpu_check


def test_without_cuda_it_says_so_in_one_line_and_exits_non_zero(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit) as exit_info:
        run_cli(gpu_check.main, ["--json", str(tmp_path / "gpu.json")])
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert (
        len(lines) == 1 and lines[0].startswith("error: no CUDA device here") and not (tmp_path / "gpu.json").exists()
    )


def test_checks_run_in_order_and_a_failure_is_recorded_without_stopping_the_rest(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ran = []

    def passing(args, device):
        ran.append("passing")
        return True, {"rows": [{"arch": "x"}], "value": 1}

    def raising(args, device):
        ran.append("raising")
        raise RuntimeError("CUDA error: an illegal memory access\nsecond line")

    monkeypatch.setattr(gpu_check, "CHECKS", [])
    gpu_check.check("raising", "raises")(raising)
    gpu_check.check("passing", "passes")(passing)
    with pytest.raises(ValueError, match="already registered"):
        gpu_check.check("passing", "again")(passing)
    monkeypatch.setattr(gpu_check, "require_cuda", lambda: torch.device("cpu"))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device: "fake GPU")
    output = tmp_path / "gpu.json"
    with pytest.raises(SystemExit) as exit_info:
        gpu_check.main(["--json", str(output)])
    assert exit_info.value.code == 1 and ran == ["raising", "passing"]
    document = json.loads(output.read_text())
    assert (
        document["checks"]["raising"]["status"] == "failed"
        and document["checks"]["raising"]["error"] == "RuntimeError: CUDA error: an illegal memory access"
    )
    assert document["checks"]["passing"]["status"] == "passed" and document["checks"]["passing"]["value"] == 1
    assert document["rows"] == [{"arch": "x"}] and "rows" not in document["checks"]["passing"]
    gpu_check.main(["--json", str(output), "--checks", "passing"])  # all chosen checks pass: exit 0
    assert list(json.loads(output.read_text())["checks"]) == ["passing"]
    assert json.loads(output.read_text())["allocator"] == tune_allocator()  # recorded, as the CPU benchmark records it


def test_the_throughput_rows_carry_their_rate_against_resnet18(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The throughput check's rows are the benchmark's, rate column included (run here on CPU, 2 naive masks)."""
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device: "fake GPU")
    args = argparse.Namespace(seed=0, naive_masks=2, mask_chunk=256, throughput_archs=["resnet18"], tolerance=1e-4)
    passed, details = gpu_check.throughput(args, torch.device("cpu"))
    assert passed and [row["tree_gmac_per_s_vs_resnet18"] for row in details["rows"]] == [1.0]
    assert "100%" in capsys.readouterr().out  # the printed table's rate column


def test_the_memory_plan_runs_without_cuda_and_picks_the_largest_batch_that_fits(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    output = tmp_path / "plan.json"
    gpu_check.main(
        ["--checks", "memory_plan", "--plan-archs", "resnet18", "--device-gib", "0.5", "--json", str(output)]
    )
    document = json.loads(output.read_text())
    assert document["device"].startswith("cpu (") and list(document["checks"]) == ["memory_plan"]
    plan = document["checks"]["memory_plan"]
    assert plan["status"] == "passed" and plan["device_gib"] == 0.5
    [entry] = plan["plans"]
    assert (entry["arch"], entry["num_blocks"], entry["input_size"]) == ("resnet18", 8, 224)
    with torch.no_grad():
        profile = stack_profile(build_gated_stack("resnet18", "random", seed=0))
    budget = 0.9 * 0.5 * 2**30
    for row in entry["rows"]:  # the boundary: the chosen batch fits, one more does not
        batch = row["batch_size_any_step"]
        assert 1 <= batch < 1024 and row["mask_chunk"] in (64, 256, 1024)
        assert peak_estimate(profile, batch, row["mask_chunk"], REDUCTION_LOGIT_MULTIPLE) <= budget
        assert peak_estimate(profile, batch + 1, row["mask_chunk"], REDUCTION_LOGIT_MULTIPLE) > budget
