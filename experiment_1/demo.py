"""Demo — Experiment 1 end to end on a few images, on any machine (``make demo``).

Question: does the pipeline (sample → evaluate all 2^L masks → plot) run here, and what does
Experiment 1 say on a handful of images?

Data: --data-dir, else $MOE_DATA, else imagenet-1k/data when it holds shards, else the embedded
imagenet-1k/sample/ (32 labelled ImageNet images of 8 classes; see its README). Model: --arch
(default: the seed's ResNet-18 with torchvision's IMAGENET1K_V1 weights, cached in checkpoints/ or
downloaded). Only here, and only for that default, a machine that can neither find nor download
the ResNet-18 weights runs EfficientNet-Lite0 instead (its weights install with
requirements.txt), saying so in one line; an explicit --arch never falls back, and the
experiment steps always fail loudly on missing weights.

Inputs:  the data and model above.
Outputs: <output-dir>/sample_index.json, step_3_evaluate's outputs, REPORT.md and the figure
         (default folder: experiment_1/results_demo_<arch>); the data and model used are printed.

    python -m experiment_1.demo                     # what `make demo` runs
    python -m experiment_1.demo --arch efficientnet_lite0 --data-dir imagenet-1k/sample-1750
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiment_1 import step_2_sample, step_3_evaluate, step_4_plot
from experiment_1.data.shards import default_data_dir
from experiment_1.errors import PipelineError, run_cli
from experiment_1.network.choices import parse_weights
from experiment_1.network.gating import checkpoints_dir, load_torchvision_state_dict, torch_hub_cache
from experiment_1.paths import DOWNLOAD_HINT, REPO_ROOT
from experiment_1.run import Command, flag

DEFAULT_ARCH = "resnet18"
OFFLINE_ARCH = "efficientnet_lite0"
EMBEDDED_SAMPLE = REPO_ROOT / "imagenet-1k" / "sample"
DOWNLOAD_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class DemoData:
    """Where the demo's images come from, which shards it samples, and why."""

    data_dir: Path
    pattern: str
    reason: str


def choose_data(data_dir: Path | None, pattern: str | None) -> DemoData:
    """--data-dir, else $MOE_DATA, else imagenet-1k/data if it holds shards, else the embedded sample."""
    if data_dir is not None:
        return DemoData(data_dir, pattern or "test-*.parquet", "--data-dir")
    if os.environ.get("MOE_DATA"):
        return DemoData(default_data_dir(), pattern or "test-*.parquet", "MOE_DATA")
    downloaded = REPO_ROOT / "imagenet-1k" / "data"
    if any(downloaded.glob("*.parquet")):
        return DemoData(downloaded, pattern or "test-*.parquet", "the downloaded shards")
    return DemoData(
        EMBEDDED_SAMPLE,
        pattern or "validation-*.parquet",
        "the embedded sample: no MOE_DATA given and imagenet-1k/data has no shards",
    )


def resnet18_weights_available() -> str | None:
    """``None`` when ResNet-18's IMAGENET1K_V1 weights are cached or could be downloaded now, else why not (an
    unreachable host is found before a download is tried: :func:`experiment_1.network.gating.load_torchvision_state_dict`)."""
    from torchvision.models import ResNet18_Weights

    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(DOWNLOAD_TIMEOUT_S)  # a network that drops packets fails in seconds, not hours
    try:
        load_torchvision_state_dict(ResNet18_Weights.IMAGENET1K_V1)
    except PipelineError as error:
        return str(error)
    finally:
        socket.setdefaulttimeout(previous)
    return None


def choose_arch(requested: str | None) -> str:
    """``requested`` as given; by default ResNet-18, or EfficientNet-Lite0 when ResNet-18's weights are unreachable."""
    if requested is not None:
        return requested
    problem = resnet18_weights_available()
    if problem is None:
        return DEFAULT_ARCH
    url = "https://download.pytorch.org/models/resnet18-f37072fd.pth"
    print(
        f"demo: ResNet-18 weights are neither in {checkpoints_dir()} nor in torch's cache ({torch_hub_cache()}) nor "
        f"downloadable here, so this demo runs {OFFLINE_ARCH} "
        f"(weights installed with requirements.txt); for ResNet-18, put {url} into {checkpoints_dir()}/ or run once with internet access."
    )
    return OFFLINE_ARCH


@dataclass(frozen=True)
class DemoFlags:
    """The demo's data, model and folder (each with its fallback when not given)."""

    arch: str | None = flag(
        f"architecture; default {DEFAULT_ARCH}, or {OFFLINE_ARCH} when ResNet-18's weights are unreachable",
        default=None,
    )
    weights: Any = flag(
        "weights for an explicit --arch: pretrained, random, a state-dict path or a named entry (default: the "
        "arch's pretrained weights)",
        type=parse_weights,
        default=None,
    )
    data_dir: Path | None = flag(
        "folder of shards (default: $MOE_DATA, else imagenet-1k/data if it has shards, else imagenet-1k/sample)",
        path="folder",
        what="data directory",
        fix=f"check the path, or {DOWNLOAD_HINT}",
        default=None,
    )
    pattern: str | None = flag(
        "shards to sample from (default: test-*.parquet; validation-*.parquet for the embedded sample)", default=None
    )
    num_images: int = flag("images to evaluate (default: %(default)s)", low=1, default=8)
    device: str = flag("auto, cpu, cuda … (default: %(default)s)", default="auto")
    output_dir: Path | None = flag(
        "results folder (default: experiment_1/results_demo_<arch>)", path="output", default=None
    )

    def problems(self) -> list[str]:
        """Weights without the architecture they are for."""
        if self.weights is not None and self.arch is None:
            return ["--weights needs an explicit --arch (the default model may fall back to another architecture)"]
        return []


COMMAND = Command(__doc__, DemoFlags, None)


def main(argv: list[str] | None = None) -> None:
    args = COMMAND.parse(argv)
    data = choose_data(args.data_dir, args.pattern)
    print(f"demo data: {data.data_dir} ({data.pattern}; {data.reason})")
    arch = choose_arch(args.arch)
    print(f"demo model: {arch}")
    output_dir = args.output_dir or Path("experiment_1") / f"results_demo_{arch}"
    sample_index = output_dir / "sample_index.json"
    step_2_sample.main(
        [
            "--data-dir",
            str(data.data_dir),
            "--pattern",
            data.pattern,
            "--mode",
            "uniform",
            "--num-images",
            str(args.num_images),
            "--seed",
            "0",
            "--output",
            str(sample_index),
        ]
    )
    weights = ["--weights", str(args.weights)] if args.weights else []
    step_3_evaluate.main(
        [
            "--sample-index",
            str(sample_index),
            "--data-dir",
            str(data.data_dir),
            "--arch",
            arch,
            *weights,
            "--batch-size",
            "4",
            "--num-workers",
            "2",
            "--device",
            args.device,
            "--seed",
            "0",
            "--output-dir",
            str(output_dir),
        ]
    )
    step_4_plot.main(["--summary", str(output_dir / "summary.json")])
    print(f"Experiment 1 report: {output_dir / 'REPORT.md'}")


if __name__ == "__main__":
    run_cli(main)
