"""The benchmark's MAC counts against the work the engines really do, its four measurements end to end, and its tables."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from experiment_1.network.allocator import tune_allocator
from experiment_1.network.engines import evaluate_masks_naive, evaluate_masks_tree, family_gmac, work_ratio
from experiment_1.network.mask_family import MaskFamily
from experiment_1.network.registry import build_gated_stack
from experiment_1.paths import REPO_ROOT
from experiment_1.tools import bench_allocator
from experiment_1.tools.bench import main as bench_main
from experiment_1.tools.bench_engines import add_rate_versus_baseline
from paper.committed_runs import allow_all_runs
from paper.make_tables import section_blocks
from paper.render_markdown import render_markdown


def executed_macs(model: nn.Module, run) -> int:
    """MACs of every convolution and linear layer that ``run()`` executes, over the whole batch."""
    total = 0

    def hook(layer: nn.Module, inputs: tuple[torch.Tensor], output: torch.Tensor) -> None:
        nonlocal total
        if isinstance(layer, nn.Conv2d):
            total += output.numel() * layer.in_channels // layer.groups * layer.kernel_size[0] * layer.kernel_size[1]
        else:
            total += output.numel() * layer.in_features

    handles = [
        layer.register_forward_hook(hook) for layer in model.modules() if isinstance(layer, (nn.Conv2d, nn.Linear))
    ]
    try:
        run()
    finally:
        for handle in handles:
            handle.remove()
    return total


def test_mac_counts_are_what_the_engines_execute() -> None:
    model = build_gated_stack("resnet18", "random", seed=0)
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    work = work_ratio(model, 32, torch.device("cpu"))
    assert executed_macs(model, lambda: evaluate_masks_tree(model, x, mask_chunk=16)) == round(work["tree_gmac"] * 1e9)
    assert executed_macs(model, lambda: evaluate_masks_naive(model, x, mask_chunk=64)) == round(
        work["naive_gmac"] * 1e9
    )
    assert 0 < work["head_share_of_tree_macs"] < 1


def test_benchmark_and_profile_tables_show_the_new_columns(tmp_path: Path) -> None:
    row = {
        "arch": "efficientnet_lite0",
        "num_blocks": 9,
        "dtype": "float32",
        "compiled": False,
        "memory_format": "channels_last",
        "images": 1,
        "resolution": 224,
        "naive_masks_timed": 64,
        "tree_seconds": 2.0,
        "naive_seconds": 30.0,
        "speedup": 15.0,
        "work_ratio": 6.25,
        "tree_gmac": 40.0,
        "tree_images_per_s": 0.5,
        "tree_gmac_per_s": 20.0,
        "naive_gmac_per_s": 8.5,
        "tree_speedup_vs_contiguous": 1.66,
        "max_abs_disagreement": 1e-5,
    }
    (tmp_path / "experiment_1" / "results_bench").mkdir(parents=True)
    (tmp_path / "experiment_1" / "results_bench" / "bench_cpu.json").write_text(
        json.dumps({"device": "cpu (2 threads)", "rows": [row]})
    )
    allow_all_runs(tmp_path)
    table = render_markdown(section_blocks("benchmark", tmp_path))
    assert (
        "| cpu (2 threads), allocator untuned (written before the benchmark tuned it) | efficientnet_lite0 | float32, "
        "eager, channels_last | 1 × 224 px | 2 | 30 (from 64 masks) | 0.5 | 40 | 20 | 8.5 | 15.0× | 6.2× | 1.66× |"
        in table
    )
    assert "vs ResNet-18" not in table  # a column no row holds a value of is left out
    profile = {
        "arch": "resnet18",
        "images": 1,
        "resolution": 224,
        "memory_format": "channels_last",
        "mask_chunk": 256,
        "wall_seconds": 1.5,
        "parts": [
            {"part": "stem", "calls": 1, "share": 0.01},
            {"part": "head (×256)", "calls": 2, "share": 0.3},
            {"part": "layer4.1 branch (×128)", "calls": 2, "share": 0.4},
            {"part": "layer1.0 branch (×1)", "calls": 1, "share": 0.02},
        ],
        "operator_groups": {"convolution": 0.8, "batch_norm": 0.1, "linear": 0.01},
    }
    (tmp_path / "experiment_1" / "results_profile").mkdir(parents=True)
    (tmp_path / "experiment_1" / "results_profile" / "p.json").write_text(json.dumps(profile))
    assert (
        "| layer4.1 branch (×128) 40.0 %; head (×256) 30.0 %; layer1.0 branch (×1) 2.0 % | 80.0 % | 10.0 % | 1.0 % |"
        in render_markdown(section_blocks("profile", tmp_path))
    )


def test_the_benchmark_runs_end_to_end_and_records_its_weights(tmp_path: Path) -> None:
    output = tmp_path / "bench.json"
    bench_main(
        [
            "engines",
            "--archs",
            "resnet18",
            "--resolution",
            "32",
            "--naive-masks",
            "4",
            "--repeats",
            "1",
            "--memory-formats",
            "channels_last",
            "--device",
            "cpu",
            "--json",
            str(output),
        ]
    )
    bench = json.loads(output.read_text())
    rows = bench["rows"]
    assert [(row["arch"], row["weights"], row["memory_format"]) for row in rows] == [
        ("resnet18", "random", "channels_last")
    ]
    assert rows[0]["tree_gmac_per_s_vs_resnet18"] == 1.0
    assert bench["allocator"] == tune_allocator()  # tuned before timing, as the evaluation steps do, and recorded
    assert bench["command"].startswith("python -m experiment_1.tools.bench engines --archs resnet18 ")


def test_each_rate_is_compared_with_resnet18_in_the_same_variant_only() -> None:
    def row(arch: str, rate: float, batchnorm: str = "kept", images: int = 1) -> dict:
        return {
            "arch": arch,
            "dtype": "float32",
            "compile_requested": False,
            "memory_format": "channels_last",
            "batchnorm": batchnorm,
            "images": images,
            "tree_gmac_per_s": rate,
        }

    rows = [
        row("resnet18", 80.0),
        row("resnet18", 100.0, "folded"),
        row("efficientnet_lite1", 40.0),
        row("efficientnet_lite1", 30.0, "folded"),
        row("efficientnet_lite1", 20.0, images=4),
    ]
    add_rate_versus_baseline(rows)
    assert [r["tree_gmac_per_s_vs_resnet18"] for r in rows] == [
        1.0,
        1.0,
        0.5,
        0.3,
        None,
    ]  # no ResNet-18 row at 4 images


def test_the_family_benchmark_times_both_passes_in_one_run_and_its_table_shows_the_ratio(tmp_path: Path) -> None:
    output = tmp_path / "experiment_1" / "results_bench" / "family_cpu.json"
    bench_main(
        ["family", "--family-arch", "resnet18", "--dense-arch", "resnet18", "--order", "2", "--resolution", "32"]
        + ["--rounds", "2", "--naive-members", "5", "--target", "0.01", "--json", str(output)]
    )
    bench = json.loads(output.read_text())
    assert bench["allocator"] == tune_allocator() and bench["rounds"] == 2
    model = build_gated_stack("resnet18", "random", seed=0)
    for row, base in zip(bench["rows"], ["off", "on"]):
        assert (row["base"], row["order"], row["members"], row["family_num_blocks"]) == (base, 2, 37, 8)
        assert row["family_gmac"] == family_gmac(model, 32, torch.device("cpu"), MaskFamily(2, base))
        assert row["dense_tree_gmac"] == work_ratio(model, 32, torch.device("cpu"))["tree_gmac"]
        assert row["dense_seconds"] == bench["rows"][0]["dense_seconds"]  # one dense timing per round, shared
        rates = [row["family_gmac"] / seconds for seconds in row["family_seconds"]]
        dense = [row["dense_tree_gmac"] / seconds for seconds in row["dense_seconds"]]
        assert row["ratio_per_round"] == pytest.approx([mine / theirs for mine, theirs in zip(rates, dense)])
        assert row["ratio_median"] == pytest.approx(sum(row["ratio_per_round"]) / 2)  # the median of two rounds
        assert row["meets_target"] == (row["ratio_median"] >= 0.01)
        assert row["naive_members_checked"] == 5 and 0 <= row["max_abs_disagreement"] < 1e-4
        assert row["max_abs_logit"] > 0
    row = bench["rows"][0] | {"ratio_median": 0.625, "ratio_min": 0.5, "ratio_max": 0.75, "meets_target": True}
    row |= {"max_abs_disagreement": 2.0, "max_abs_logit": 4e8}  # the disagreement read against the logits' size
    output.write_text(json.dumps(bench | {"rows": [row]}))
    allow_all_runs(tmp_path)
    table = render_markdown(section_blocks("family_benchmark", tmp_path))
    assert (
        "| `family_cpu.json` | cpu (1 threads), allocator tuned | resnet18 (L = 8), k ≤ 2, base off | 1 × 32 px | 37 |"
        in table
    )
    assert (
        "| resnet18 (L = 8) |" in table and "| 62 % (50 %–75 %) | yes (≥ 1 %) | 2 | 2 | 4.00e+08 | 5.00e-09 |" in table
    )


def test_the_allocator_table_shows_each_paths_ratios(tmp_path: Path) -> None:
    ratio = {"median": 1.02, "min": 0.98, "max": 1.1, "per_round": [1.02]}
    bench = {
        "path": "library",
        "workload": {
            "arch": "efficientnet_lite0",
            "images": 1,
            "resolution": 224,
            "passes": 2,
            "threads": 1,
            "rounds": 5,
        },
        "medians": {
            name: {"wall_seconds": wall} for name, wall in (("default", 2.04), ("tuned", 2.0), ("untuned", 4.0))
        },
        "wall_ratios": {
            "default_over_tuned": ratio,
            "untuned_over_tuned": ratio | {"median": 2.0, "min": 1.5, "max": 3.0},
        },
        "allocator": {"default": {"tuning": "mallopt"}, "tuned": {"tuning": "none"}, "untuned": {"tuning": "none"}},
    }
    (tmp_path / "experiment_1" / "results_bench").mkdir(parents=True)
    (tmp_path / "experiment_1" / "results_bench" / "allocator_library.json").write_text(json.dumps(bench))
    allow_all_runs(tmp_path)
    assert (
        "| `allocator_library.json` | library | efficientnet_lite0, 1 × 224 px, 2 tree pass(es), 1 thread(s) | 5 | "
        "2.04 / 2 / 4 | 1.02× (0.98–1.10) | 2.00× (1.50–3.00) | mallopt |"
    ) in render_markdown(section_blocks("allocator", tmp_path))


def test_the_allocator_benchmark_runs_each_environment_in_its_own_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every round starts one child per environment, its workload as JSON on the command line (run here in this
    process: a real child costs seconds of start-up), and the record holds each child's measurement."""
    started = []

    def child_process(command: list[str], cwd: Path, env: dict[str, str], **kwargs) -> subprocess.CompletedProcess:
        assert command[:3] == [sys.executable, "-m", "experiment_1.tools.bench_allocator"] and cwd == REPO_ROOT
        started.append((env.get("GLIBC_TUNABLES"), env.get("MOE_MALLOC_TUNING"), env["OMP_NUM_THREADS"]))
        return subprocess.CompletedProcess(command, 0, json.dumps(bench_allocator.child(json.loads(command[3]))), "")

    monkeypatch.setattr(subprocess, "run", child_process)
    output = tmp_path / "allocator.json"
    workload = ["--arch", "resnet18", "--resolution", "32", "--passes", "1", "--mask-chunk", "64", "--rounds", "2"]
    bench_main(["allocator", "--path", "library", *workload, "--json", str(output)])
    assert started == 2 * [(None, None, "1"), (bench_allocator.TUNABLES, None, "1"), (None, "off", "1")]
    record = json.loads(output.read_text())
    assert record["command"] == "python -m experiment_1.tools.bench allocator --path library " + " ".join(
        workload + ["--json", str(output)]
    )
    assert record["workload"] == {
        "arch": "resnet18",
        "images": 1,
        "resolution": 32,
        "passes": 1,
        "mask_chunk": 64,
        "threads": 1,
        "rounds": 2,
    }
    runs = record["runs"]
    assert [len(measured) for measured in runs.values()] == [2, 2, 2]
    ratios = [mine["wall_seconds"] / tuned["wall_seconds"] for mine, tuned in zip(runs["untuned"], runs["tuned"])]
    assert record["wall_ratios"]["untuned_over_tuned"]["per_round"] == ratios


def test_the_profile_records_every_part_of_the_pass(tmp_path: Path) -> None:
    output = tmp_path / "profile.json"
    bench_main(["profile", "--arch", "resnet18", "--resolution", "32", "--top", "3", "--json", str(output)])
    record = json.loads(output.read_text())
    model = build_gated_stack("resnet18", "random", seed=0)
    assert [row["part"] for row in record["parts"]][:1] == ["stem"] and record["parts"][-1]["part"] == "head (×256)"
    assert len(record["parts"]) == 2 + sum(
        not isinstance(getattr(block, name), nn.Identity)
        for block in model.blocks
        for name in ("pre", "shortcut", "branch")
    )
    assert len(record["top_operators"]) == 3 and (record["arch"], record["resolution"]) == ("resnet18", 32)


@pytest.mark.parametrize("measurement", ["engines", "family", "profile"])
def test_a_negative_seed_is_refused_by_every_seeded_measurement(
    measurement: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        bench_main([measurement, "--seed", "-1"])
    assert exit_info.value.code == 2 and "argument --seed: -1 is not allowed" in capsys.readouterr().err
