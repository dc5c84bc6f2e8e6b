"""Decode or refuse (experiment_1.data.shards): 16-bit greyscale rescaled, float images refused, one file under two
spellings (./name, a symlink) counted as one image."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import jpeg_bytes, write_shard
from experiment_1.data.shards import SampleRef, check_sources, decode_image
from experiment_1.errors import PipelineError
from fault_harness import SHARD


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
