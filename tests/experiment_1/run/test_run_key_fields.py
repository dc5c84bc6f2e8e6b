"""The run key of a partial store, written out whole: every field and the content each holds, computed here from the
files themselves (not read from experiment_1.run.partial_store's own lists), so a field dropped from the key — or a
path left in it — shows."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow.parquet as pq
import torch

from conftest import jpeg_bytes, write_shard
from experiment_1.data.shards import SampleRef
from experiment_1.run import partial_store

SHARD = "train-00000.parquet"
CONFIG = {
    "arch": "resnet18",
    "engine": "tree",
    "dtype": "float32",
    "mobius_dtype": "float64",
    "batch_size": 2,
    "mask_chunk": 256,
    "seed": 0,
    "limit": None,
    "skip_corrupt": False,
    "device_type": "cpu",
    "input_size": 224,
    "sample_index": "some/where/list.json",
}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_run_key_whole(tmp_path: Path) -> None:
    write_shard(tmp_path / SHARD, [jpeg_bytes(0), jpeg_bytes(1)], [3, 7])
    (tmp_path / "images").mkdir()
    image = tmp_path / "images" / "a.jpeg"
    image.write_bytes(jpeg_bytes(2))
    weights = tmp_path / "weights.pth"
    torch.save({"w": torch.arange(3.0)}, weights)
    samples = [SampleRef(SHARD, 1, 7), SampleRef(SHARD, 0, 3), SampleRef("images/a.jpeg", 0, 5)]
    key = partial_store.run_key({**CONFIG, "weights": str(weights)}, tmp_path, samples)
    shard = (tmp_path / SHARD).read_bytes()
    footer_length = int.from_bytes(shard[-8:-4], "little")
    entries = [[SHARD, 1, 7], [SHARD, 0, 3], ["images/a.jpeg", 0, 5]]
    assert (
        key
        == {
            "arch": "resnet18",
            "engine": "tree",
            "dtype": "float32",
            "mobius_dtype": "float64",
            "batch_size": 2,
            "mask_chunk": 256,
            "seed": 0,
            "limit": None,
            "skip_corrupt": False,
            "device_type": "cpu",
            "input_size": 224,
            "weights": f"sha256:{sha256(weights.read_bytes())}",  # the content, not the path
            "key_format": 2,
            "samples_sha256": sha256(json.dumps(entries, separators=(",", ":")).encode()),  # in order, labels included
            "sources": {
                "images/a.jpeg": {"size": image.stat().st_size, "sha256": sha256(image.read_bytes())},
                SHARD: {
                    "size": len(shard),
                    "rows": pq.ParquetFile(tmp_path / SHARD).metadata.num_rows,
                    "footer_sha256": sha256(shard[-8 - footer_length :]),
                },
            },
        }
    )  # no "sample_index": a path, whose content the entries and sources carry
    assert key["sources"][SHARD]["rows"] == 2


def test_a_named_weights_set_stays_its_name(tmp_path: Path) -> None:
    write_shard(tmp_path / SHARD, [jpeg_bytes(0)], [1])
    key = partial_store.run_key({**CONFIG, "weights": "IMAGENET1K_V1"}, tmp_path, [SampleRef(SHARD, 0, 1)])
    assert key["weights"] == "IMAGENET1K_V1" and "sample_index" not in key
