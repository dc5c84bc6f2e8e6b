"""ImageNet labels: the WordNet-id table in torchvision's order, image folders labelled by WordNet id or class name
(never by position; other folders need --folder-labels), unsupported files reported, null shard labels unlabelled."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import jpeg_bytes
from experiment_1.data.imagenet_classes import imagenet_names, imagenet_wnids
from experiment_1.data.shards import list_items
from experiment_1.errors import run_cli
from experiment_1.files import read_json
from experiment_1.step_2_sample import main as sample_main
from fault_harness import SHARD, expect_line


def test_the_wnid_table_is_torchvision_order_for_all_1000_classes() -> None:
    wnids, names = imagenet_wnids(), imagenet_names()
    assert len(wnids) == len(set(wnids)) == len(names) == len(set(names)) == 1000
    assert list(wnids) == sorted(wnids) and all(
        len(wnid) == 9 and wnid[0] == "n" and wnid[1:].isdigit() for wnid in wnids
    )
    for wnid, index, name in [
        ("n01440764", 0, "tench"),
        ("n02012849", 134, "crane bird"),
        ("n03126707", 517, "crane"),
        ("n03710721", 639, "maillot tank suit"),
        ("n15075141", 999, "toilet tissue"),
    ]:
        assert wnids.index(wnid) == index and names[index] == name


def make_folder(root: Path, classes: dict[str, int]) -> None:
    for name, count in classes.items():
        (root / name).mkdir(parents=True)
        for index in range(count):
            (root / name / f"{index}.JPEG").write_bytes(jpeg_bytes(index))


def test_folders_are_labelled_by_imagenet_class_not_by_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_folder(tmp_path / "val", {"n01443537": 1, "n15075141": 1})
    (tmp_path / "val" / ".ipynb_checkpoints").mkdir()  # hidden: ignored
    (tmp_path / "val" / "n00000000_empty").mkdir()  # no images: ignored
    (tmp_path / "val" / "n01443537" / "scan.tif").write_bytes(jpeg_bytes(7))  # a format ImageFolder reads
    labels = {item.source: item.label for item in list_items(tmp_path, "val")}
    assert labels == {"val/n01443537/0.JPEG": 1, "val/n01443537/scan.tif": 1, "val/n15075141/0.JPEG": 999}
    make_folder(tmp_path / "named", {"goldfish": 1, "great_white_shark": 1, "crane bird": 1})
    assert sorted(item.label for item in list_items(tmp_path, "named")) == [1, 2, 134]


def test_unsupported_files_are_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_folder(tmp_path / "val", {"n01443537": 1})
    (tmp_path / "val" / "n01443537" / "notes.txt").write_text("x")
    list_items(tmp_path, "val")
    err = capsys.readouterr().err
    assert "left out 1 file(s)" in err and "notes.txt" in err


def test_folders_that_are_not_imagenet_classes_need_the_mapping_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_folder(tmp_path / "data" / "pets", {"cat": 2, "dog": 2})
    output = tmp_path / "samples.json"
    argv = [
        "--data-dir",
        str(tmp_path / "data"),
        "--pattern",
        "pets",
        "--mode",
        "per-class",
        "--per-class",
        "2",
        "--output",
        str(output),
    ]
    line = expect_line(sample_main, argv, capsys)
    assert "pets/cat: not an ImageNet class" in line and "--folder-labels sorted" in line and not output.exists()
    run_cli(sample_main, [*argv, "--folder-labels", "sorted"])
    document = read_json(output)
    assert document["folder_labels"] == "sorted" and sorted({entry["label"] for entry in document["samples"]}) == [0, 1]


def test_null_labels_in_a_shard_are_unlabelled(tmp_path: Path) -> None:
    table = pa.table(
        {
            "image": pa.array([jpeg_bytes(0), jpeg_bytes(1)], type=pa.binary()),
            "label": pa.array([None, 4], type=pa.int64()),
        }
    )
    pq.write_table(table, tmp_path / SHARD)
    assert [item.label for item in list_items(tmp_path, SHARD)] == [-1, 4]
