"""The parquet / ImageFolder loader and the sample-list sampler."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from conftest import jpeg_bytes, write_shard
from experiment_1.data.shards import (
    SampleDataset,
    SampleRef,
    check_batch_errors,
    draw_sample,
    list_items,
    load_sample_list,
)
from experiment_1.errors import PipelineError
from experiment_1.network.stack import Preprocess
from experiment_1.step_2_sample import main as sample_main

SMALL = Preprocess(resize=36, crop=32)


def test_items_and_labels_from_struct_shards(tiny_shards: Path) -> None:
    items = list_items(tiny_shards, "validation-*.parquet")
    assert len(items) == 12
    assert items[0] == SampleRef("validation-00000-of-00002.parquet", 0, 0)
    assert [item.label for item in items[:6]] == [0, 1, 2, 0, 1, 2]
    assert {item.label for item in list_items(tiny_shards, "test-*.parquet")} == {-1}


def test_loader_reads_the_named_rows_across_row_groups(tiny_shards: Path) -> None:
    samples = [
        SampleRef("validation-00001-of-00002.parquet", 4, 1),
        SampleRef("validation-00000-of-00002.parquet", 1, 1),
    ]
    dataset = SampleDataset(tiny_shards, samples, SMALL)
    item = dataset[0]
    assert item["error"] == "" and item["label"] == 1 and item["image"].shape == (3, 32, 32)
    # the same row decoded directly must give the same tensor
    from experiment_1.data.shards import decode_image, eval_transform

    expected = eval_transform(SMALL)(decode_image(jpeg_bytes(14)))
    assert torch.equal(item["image"], expected)


def test_greyscale_cmyk_rgba_become_rgb(tmp_path: Path) -> None:
    modes = ["L", "CMYK", "RGBA"]
    write_shard(tmp_path / "s.parquet", [jpeg_bytes(i, mode=mode) for i, mode in enumerate(modes)], [0, 1, 2])
    dataset = SampleDataset(tmp_path, [SampleRef("s.parquet", row, row) for row in range(3)], SMALL)
    for row in range(3):
        assert dataset[row]["image"].shape == (3, 32, 32) and dataset[row]["error"] == ""
    grey = dataset[0]["image"]
    # a greyscale image has equal R, G, B before normalisation
    mean, std = torch.tensor(SMALL.mean)[:, None, None], torch.tensor(SMALL.std)[:, None, None]
    raw = grey * std + mean
    torch.testing.assert_close(raw[0], raw[1], rtol=0, atol=1e-6)


def test_plain_binary_image_column(tmp_path: Path) -> None:
    write_shard(tmp_path / "b.parquet", [jpeg_bytes(0), jpeg_bytes(1)], [5, 6], binary_column=True)
    assert [item.label for item in list_items(tmp_path, "*.parquet")] == [5, 6]
    assert SampleDataset(tmp_path, [SampleRef("b.parquet", 1, 6)], SMALL)[0]["error"] == ""


def test_corrupt_image_names_shard_and_row_or_is_skipped(tmp_path: Path) -> None:
    write_shard(tmp_path / "c.parquet", [jpeg_bytes(0), b"\xff\xd8 not a jpeg", jpeg_bytes(2)], [0, 1, 2])
    dataset = SampleDataset(tmp_path, [SampleRef("c.parquet", row, row) for row in range(3)], SMALL)
    errors = [dataset[row]["error"] for row in range(3)]
    assert errors[0] == "" and errors[2] == ""
    assert "c.parquet row 1: cannot decode image" in errors[1]
    with pytest.raises(PipelineError, match=r"c\.parquet row 1.*--skip-corrupt"):
        check_batch_errors(errors, skip_corrupt=False)
    assert check_batch_errors(errors, skip_corrupt=True) == [True, False, True]


def test_wrong_schema_missing_shard_and_bad_rows_are_one_line_errors(tmp_path: Path) -> None:
    pq.write_table(pa.table({"img": [b"x"], "label": [0]}), tmp_path / "wrong.parquet")
    with pytest.raises(PipelineError, match=r"wrong\.parquet: wrong parquet schema"):
        list_items(tmp_path, "wrong.parquet")
    with pytest.raises(PipelineError, match="no shards or image folders match"):
        list_items(tmp_path, "validation-*.parquet")
    with pytest.raises(PipelineError, match=r"missing.parquet: listed in the sample list but missing"):
        SampleDataset(tmp_path, [SampleRef("missing.parquet", 0, 0)], SMALL)
    write_shard(tmp_path / "ok.parquet", [jpeg_bytes(0)], [0])
    with pytest.raises(PipelineError, match=r"ok\.parquet: row 5 out of range \(shard has 1 rows\)"):
        SampleDataset(tmp_path, [SampleRef("ok.parquet", 5, 0)], SMALL)
    (tmp_path / "garbage.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(PipelineError, match="not a readable parquet file"):
        list_items(tmp_path, "garbage.parquet")


def test_image_folder_tree_and_flat_folder(tmp_path: Path) -> None:
    for label, wnid in enumerate(["n01443537", "n15075141"]):  # ImageNet classes 1 (goldfish) and 999 (toilet tissue)
        (tmp_path / "val" / wnid).mkdir(parents=True)
        for index in range(2):
            (tmp_path / "val" / wnid / f"{index}.JPEG").write_bytes(jpeg_bytes(10 * label + index))
    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "a.jpg").write_bytes(jpeg_bytes(99))
    items = list_items(tmp_path, "val")
    assert [(item.source, item.label) for item in items] == [
        ("val/n01443537/0.JPEG", 1),
        ("val/n01443537/1.JPEG", 1),
        ("val/n15075141/0.JPEG", 999),
        ("val/n15075141/1.JPEG", 999),
    ]
    assert list_items(tmp_path, "flat") == [SampleRef("flat/a.jpg", -1, -1)]
    assert SampleDataset(tmp_path, items[2:3], SMALL)[0]["error"] == ""


def test_uniform_sampler_is_deterministic_and_sorted(tiny_shards: Path) -> None:
    items = list_items(tiny_shards, "*.parquet")
    first = draw_sample(items, "uniform", 8, 0, seed=0)
    assert first == draw_sample(items, "uniform", 8, 0, seed=0)
    assert first != draw_sample(items, "uniform", 8, 0, seed=1)
    assert len(set(first)) == 8 and first == sorted(first, key=lambda s: (s.source, s.row))


def test_per_class_sampler_takes_k_per_class(tiny_shards: Path) -> None:
    items = list_items(tiny_shards, "validation-*.parquet")
    drawn = draw_sample(items, "per-class", 0, 3, seed=0)
    counts = np.bincount([item.label for item in drawn])
    assert counts.tolist() == [3, 3, 3]
    with pytest.raises(PipelineError, match="needs labelled images"):
        draw_sample(list_items(tiny_shards, "test-*.parquet"), "per-class", 0, 3, seed=0)


def test_sample_step_writes_a_loadable_list(tiny_shards: Path, tmp_path: Path) -> None:
    output = tmp_path / "list.json"
    sample_main(
        [
            "--data-dir",
            str(tiny_shards),
            "--pattern",
            "validation-*.parquet",
            "--mode",
            "per-class",
            "--per-class",
            "2",
            "--seed",
            "0",
            "--output",
            str(output),
        ]
    )
    again = tmp_path / "again.json"
    sample_main(
        [
            "--data-dir",
            str(tiny_shards),
            "--pattern",
            "validation-*.parquet",
            "--mode",
            "per-class",
            "--per-class",
            "2",
            "--seed",
            "0",
            "--output",
            str(again),
        ]
    )
    assert output.read_bytes() == again.read_bytes()
    document = json.loads(output.read_text())
    assert document["num_images"] == 6 and document["mode"] == "per-class"
    assert len(load_sample_list(output, limit=4)) == 4
    (tmp_path / "bad.json").write_text("{\"samples\": [{\"row\": 1}]}")
    with pytest.raises(PipelineError, match="bad.json: sample 0: .* not an object with source, row and label"):
        load_sample_list(tmp_path / "bad.json")


def test_sample_1750_shards_load(sample_1750_dir: Path) -> None:
    items = list_items(sample_1750_dir, "validation-*.parquet")
    assert len(items) == 1750 and min(item.label for item in items) == 0 and max(item.label for item in items) == 999
    assert len({item.label for item in items}) == 1000
    dataset = SampleDataset(sample_1750_dir, items[::250], Preprocess())
    for index in range(len(dataset)):
        item = dataset[index]
        assert item["error"] == "" and item["image"].shape == (3, 224, 224)
        assert abs(float(item["image"].mean())) < 3
    assert {item.label for item in list_items(sample_1750_dir, "test-*.parquet")} == {-1}


def test_download_verification_counts_rows(tiny_shards: Path) -> None:
    from experiment_1.data.download import verify_row_counts

    assert verify_row_counts(tiny_shards, {"validation": 12, "test": 7}) == {"validation": 12, "test": 7}
    with pytest.raises(PipelineError, match="validation shards hold 12 rows in 2 files, expected 50000.*resume"):
        verify_row_counts(tiny_shards)


def test_embedded_sample_is_32_labelled_images_of_8_classes() -> None:
    sample = Path(__file__).resolve().parents[3] / "imagenet-1k" / "sample"
    items = list_items(sample, "validation-*.parquet")
    assert len(items) == 32 and Counter(item.label for item in items) == Counter(
        {label: 4 for label in (78, 113, 309, 486, 513, 650, 742, 880)}
    )
    source = json.loads((sample / "SOURCE.json").read_text())
    assert [(row["row"], row["label"]) for row in source["rows"]] == [(item.row, item.label) for item in items]
    dataset = SampleDataset(sample, items, SMALL)
    assert all(dataset[index]["error"] == "" for index in range(len(items)))


def test_embedded_sample_rows_are_the_sample_1750_rows_its_source_names(sample_1750_dir: Path) -> None:
    """SOURCE.json's provenance is exact: every demo row holds the JPEG bytes and label of the sample-1750 row it names."""
    sample = Path(__file__).resolve().parents[3] / "imagenet-1k" / "sample"
    rows = json.loads((sample / "SOURCE.json").read_text())["rows"]
    demo = pq.read_table(sample / "validation-00000-of-00001.parquet").to_pylist()
    shards = {name: pq.read_table(sample_1750_dir / name).to_pylist() for name in {row["source_shard"] for row in rows}}
    assert len(rows) == len(demo) == 32
    for row in rows:
        origin = shards[row["source_shard"]][row["source_row"]]
        assert (
            demo[row["row"]]["image"]["bytes"] == origin["image"]["bytes"]
            and demo[row["row"]]["label"] == origin["label"] == row["label"]
        )


def test_per_class_sampler_can_draw_a_few_classes(tiny_shards: Path) -> None:
    items = list_items(tiny_shards, "validation-*.parquet")
    drawn = draw_sample(items, "per-class", 0, 2, seed=0, num_classes=2)
    counts = np.bincount([item.label for item in drawn], minlength=3)
    assert sorted(counts.tolist()) == [0, 2, 2]  # two of the three classes, two images each
    assert drawn == draw_sample(items, "per-class", 0, 2, seed=0, num_classes=2)
    assert {item.label for item in draw_sample(items, "per-class", 0, 2, seed=0, num_classes=5)} == {
        0,
        1,
        2,
    }  # more than there are: all
