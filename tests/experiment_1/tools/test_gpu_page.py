"""experiment_1/GPU.md, the one page for a GPU run: its two tables are what the GPU check's memory plan prints from the
committed plan (results_bench/gpu_memory_plan.json), its time estimates are labelled as estimates, and the README
links it before any other page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiment_1.tools.gpu_memory_plan import ASSUMED_H100_TMAC_PER_S, duration_span, markdown_tables

REPO = Path(__file__).resolve().parents[3]
PAGE = REPO / "experiment_1" / "GPU.md"
PLAN = REPO / "experiment_1" / "results_bench" / "gpu_memory_plan.json"


def test_the_pages_tables_are_the_committed_plans() -> None:
    page = PAGE.read_text(encoding="utf-8")
    plan = json.loads(PLAN.read_text())["checks"]["memory_plan"]
    memory, times = markdown_tables(plan)
    for line in memory + times:
        assert line in page, (
            f"GPU.md lacks `{line}`: rerun python -m experiment_1.tools.gpu_check --checks memory_plan --device-gib 80 and copy its tables"
        )
    assert all("(estimate)" in column for column in times[0].split("|")[5:-1])
    assert plan["assumed_h100_tmac_per_s"] == {name: list(rates) for name, rates in ASSUMED_H100_TMAC_PER_S.items()}
    for entry in plan["plans"]:  # seconds = GMAC / rate, the fast end first
        for name, (low, high) in ASSUMED_H100_TMAC_PER_S.items():
            assert entry["estimated_h100_seconds_per_image"][name] == pytest.approx(
                [entry["tree_gmac_per_image"] / (high * 1e3), entry["tree_gmac_per_image"] / (low * 1e3)]
            )
    assert "TODO" not in page


def test_the_pages_precision_figures_are_the_committed_comparisons() -> None:
    page = " ".join(PAGE.read_text(encoding="utf-8").split())
    measured = json.loads((REPO / "experiment_1" / "results_bench" / "precision_cpu.json").read_text())
    assert (measured["reference"]["dtype"], measured["other"]["dtype"]) == ("float32", "bfloat16")
    assert f"first {measured['num_images']} images" in page and measured["prediction_changed"] == 0
    for projection in ("vector", "scalar"):
        row = measured[projection]
        for value in (
            row["kappa_mean_difference"],
            row["kappa_max_abs_difference"],
            row["spectrum_max_abs_difference"],
        ):
            assert f"{value:.2g}" in page, (projection, value)
        assert f"{100 * row['c_le3_max_abs_difference']:.2g} " in page
    assert f"peak order changed on {measured['scalar']['peak_order_changed']} of the" in page
    assert measured["vector"]["peak_order_changed"] == 0 and "no image's peak order changed" in page
    from experiment_1.report import format_stat

    committed = json.loads((REPO / "experiment_2" / "results_efficientnet_lite0_sample" / "summary.json").read_text())
    for projection in ("vector", "scalar"):
        assert format_stat(committed["projections"][projection]["kappa"]) in page


@pytest.mark.parametrize(
    "low, high, text",
    [
        (1.0, 119.0, "1–1.2e+02 s"),
        (12.0, 119.0, "12–119 s"),
        (60.0, 120.0, "1–2 min"),
        (3600.0, 7199.0, "60–120 min"),
        (3600.0, 7200.0, "1–2 h"),
    ],
)
def test_a_duration_takes_the_unit_of_its_upper_end(low: float, high: float, text: str) -> None:
    assert duration_span(low, high) == text


def test_the_readme_links_the_gpu_page_first() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    links = [part.split(")", 1)[0] for part in readme.split("](")[1:] if ".md" in part.split(")", 1)[0]]
    assert links[0] == "experiment_1/GPU.md", links[:3]


@pytest.mark.parametrize("dtype, tf32", [("float32", False), ("bfloat16", False), ("tf32", True)])
def test_the_steps_set_both_tf32_switches_from_the_dtype_whatever_they_were(dtype: str, tf32: bool) -> None:
    """The page's precision policy: a step's model is built with TF32 off unless --dtype tf32 (torch's own default
    leaves cuDNN's switch on)."""
    import argparse

    import torch

    from experiment_1.run.run_config import RunConfig, add_flags, from_flags
    from experiment_1.run.setup import build_model

    parser = argparse.ArgumentParser()
    add_flags(parser, RunConfig, {"output_dir": "out"})
    flags = from_flags(RunConfig, parser.parse_args(["--weights", "random", "--dtype", dtype]))
    saved = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    try:
        for before in (True, False):
            torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = before
            build_model(flags, torch.device("cpu"))
            assert (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32) == (tf32, tf32)
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved
