"""The content identity a partial store is keyed by (experiment_1/run/partial_store.py), compared whole to a hand
computation: a file's sha256 (and its cache, which a rewrite of another size must miss), the sample list's hash over
its exact bytes, a parquet shard's size, row count and footer hash, an image file's hash, a run without weights, and a
CUDA device's identity (the CUDA calls faked, so it runs on CPU). A store written by one version must be found by the
next, so every key name and byte of these is part of the format. Written against the survivors of `make mutation
MODULES=experiment_1/run/partial_store.py`."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import socket
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from experiment_1.data.shards import SampleRef
from experiment_1.errors import PipelineError
from experiment_1.files import file_sha256
from experiment_1.run import partial_store
from experiment_1.run.partial_store import (
    device_identity,
    run_key,
    sample_list_sha256,
    source_identity,
)


def test_a_rewrite_of_another_size_at_the_same_mtime_is_hashed_again(tmp_path: Path) -> None:
    path = tmp_path / "image.jpg"
    path.write_bytes(b"first")
    stamp = path.stat().st_mtime_ns
    assert file_sha256(path) == hashlib.sha256(b"first").hexdigest()
    path.write_bytes(b"second, longer")
    os.utime(path, ns=(stamp, stamp))  # the same modification time: only the size tells the cache
    assert file_sha256(path) == hashlib.sha256(b"second, longer").hexdigest()


def test_the_sample_list_hash_is_over_its_compact_json_bytes() -> None:
    samples = [SampleRef("validation-00000.parquet", 3, 7), SampleRef("a/b.jpg", 0, 12)]
    wanted = hashlib.sha256(b'[["validation-00000.parquet",3,7],["a/b.jpg",0,12]]').hexdigest()
    assert sample_list_sha256(samples) == wanted


def test_an_image_file_is_identified_by_its_size_and_hash(tmp_path: Path) -> None:
    path = tmp_path / "n01440764" / "image.JPEG"
    path.parent.mkdir()
    path.write_bytes(b"\xff\xd8 not really a jpeg")
    assert source_identity(path) == {"size": 20, "sha256": hashlib.sha256(b"\xff\xd8 not really a jpeg").hexdigest()}


def test_a_parquet_shard_is_identified_by_its_size_rows_and_footer(tmp_path: Path) -> None:
    path = tmp_path / "validation-00000.parquet"
    pq.write_table(pa.table({"label": list(range(5)), "name": [f"img{i}" for i in range(5)]}), path)
    data = path.read_bytes()
    footer_length = int.from_bytes(data[-8:-4], "little")
    assert data[-4:] == b"PAR1" and 0 < footer_length < len(data) - 12
    footer = data[-(footer_length + 8) :]  # the footer, its length and the magic
    assert source_identity(path) == {
        "size": len(data),
        "rows": 5,
        "footer_sha256": hashlib.sha256(footer).hexdigest(),
    }


def test_a_run_without_weights_never_hashes_a_file_of_the_default_name(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("None", "XXXX"):  # what str(None) or another default would name
        (tmp_path / name).write_bytes(b"not weights")
    key = run_key({"arch": "resnet18", "seed": 0}, tmp_path, [])
    assert key == {
        "arch": "resnet18",
        "seed": 0,
        "key_format": partial_store.KEY_FORMAT,
        "samples_sha256": sample_list_sha256([]),
        "sources": {},
    }


def test_a_cuda_device_is_identified_by_its_model_and_software_stack(monkeypatch) -> None:
    device = torch.device("cuda", 1)

    def only(expected: torch.device, value):
        def call(asked: torch.device):
            assert asked == expected
            return value

        return call

    monkeypatch.setattr(torch.cuda, "get_device_capability", only(device, (9, 0)))
    monkeypatch.setattr(torch.cuda, "get_device_name", only(device, "NVIDIA H100 80GB HBM3"))
    monkeypatch.setattr(torch.version, "cuda", "12.4")
    monkeypatch.setattr(torch.backends.cudnn, "version", lambda: 90100)
    matmul = torch.backends.cuda.matmul  # torch's own flags (monkeypatch cannot restore them): set, then put back
    saved = matmul.allow_bf16_reduced_precision_reduction, matmul.allow_fp16_reduced_precision_reduction
    identities = []
    try:
        for flags in ((True, False), (False, True)):
            matmul.allow_bf16_reduced_precision_reduction, matmul.allow_fp16_reduced_precision_reduction = flags
            identities.append(device_identity(device))
    finally:
        matmul.allow_bf16_reduced_precision_reduction, matmul.allow_fp16_reduced_precision_reduction = saved
    for identity, (bf16, fp16) in zip(identities, ((True, False), (False, True))):
        assert identity == {
            "cuda_device": {
                "name": "NVIDIA H100 80GB HBM3",
                "capability": "9.0",
                "torch": torch.__version__,
                "cuda": "12.4",
                "cudnn": 90100,
                "reduced_precision_reduction": {"bfloat16": bf16, "float16": fp16},
            }
        }
    assert device_identity(torch.device("cpu")) == {}


def test_a_changed_key_is_described_field_by_field_and_source_by_source() -> None:
    previous = {
        "arch": "resnet18",
        "seed": 0,
        "samples_sha256": "a",
        "sources": {
            "a.parquet": {"size": 10, "rows": 2, "footer_sha256": "f"},
            "b.parquet": {"size": 5, "rows": 1, "footer_sha256": "g"},
            "d.parquet": {"size": 7, "rows": 3, "footer_sha256": "h"},
            "e.parquet": {"size": 1, "rows": 1, "footer_sha256": "i"},
        },
    }
    current = {
        "arch": "resnet34",
        "seed": 0,
        "samples_sha256": "b",
        "sources": {
            "a.parquet": {"size": 10, "rows": 3, "footer_sha256": "f"},
            "c.parquet": {"size": 5, "rows": 1, "footer_sha256": "g"},
            "d.parquet": {"size": 7, "rows": 4, "footer_sha256": "j"},
            "e.parquet": {"size": 1, "rows": 1, "footer_sha256": "i"},
        },
    }
    assert partial_store.describe_changes(previous, current) == (
        "arch, the sample-list entries in use, source a.parquet (rows), source b.parquet no longer read, "
        "source c.parquet added, source d.parquet (footer_sha256, rows)"
    )
    assert partial_store.describe_changes(previous, previous) == ""


def test_only_temporaries_older_than_the_limit_are_removed_and_a_vanished_one_is_skipped(
    tmp_path: Path, monkeypatch
) -> None:
    now = 1_000_000.0
    vanished, at_limit, stale = (tmp_path / f".{name}.tmp" for name in ("vanished", "at_limit", "stale"))
    vanished.symlink_to(tmp_path / "gone")  # stat raises FileNotFoundError, as for a file renamed meanwhile
    for path, age in ((at_limit, 120.0), (stale, 120.5)):
        path.write_bytes(b"")
        os.utime(path, (now - age, now - age))
    monkeypatch.setattr(partial_store.time, "time", lambda: now)
    monkeypatch.setattr(Path, "glob", lambda self, pattern: iter([vanished, at_limit, stale]))
    assert partial_store.remove_stale_temporaries(tmp_path, max_age=120.0) == [stale]
    assert at_limit.exists() and not stale.exists()


def test_create_json_once_says_whether_it_created_the_file(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "run_config.json"
    assert partial_store.create_json_once(path, {"seed": 0}) is True
    assert partial_store.create_json_once(path, {"seed": 1}) is False
    assert path.read_text().strip().replace(" ", "").replace("\n", "") == '{"seed":0}'
    raced = tmp_path / "raced.json"
    real_link = os.link

    def another_rank_first(source, target):  # another rank creates the file between the check and the link
        Path(target).write_text("theirs")
        return real_link(source, target)

    monkeypatch.setattr(partial_store.os, "link", another_rank_first)
    assert partial_store.create_json_once(raced, {"seed": 2}) is False
    assert raced.read_text() == "theirs"  # theirs kept, and the temporary removed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["raced.json", "run_config.json"]


class _NotATensor:
    pass


def opened_store(tmp_path: Path) -> partial_store.PartialStore:
    store = partial_store.PartialStore(tmp_path, "step/part", {"key_format": 2, "seed": 0})
    store.open()
    return store


def test_a_batch_file_holding_a_pickled_object_is_refused_as_damaged(tmp_path: Path) -> None:
    store = opened_store(tmp_path)
    torch.save({"index": torch.tensor([0, 1]), "extra": _NotATensor(), "store_id": store.id}, store.path(0))
    with pytest.raises(PipelineError, match=r"batch_000000\.pt: damaged partial batch file \(UnpicklingError\); "):
        store.load(0, [0, 1])


def test_a_batch_file_that_is_not_a_dict_is_another_runs(tmp_path: Path) -> None:
    store = opened_store(tmp_path)
    torch.save(torch.tensor([0, 1]), store.path(0))
    with pytest.raises(PipelineError, match=r"does not hold batch 0 of this run \(images 0–1\)"):
        store.load(0, [0, 1])


def test_a_batch_of_another_store_names_both_ids_by_their_first_twelve_digits(tmp_path: Path) -> None:
    store = opened_store(tmp_path)
    other = "0123456789abcdef" * 4
    torch.save({"index": torch.tensor([0, 1]), "store_id": other}, store.path(0))
    with pytest.raises(PipelineError) as raised:
        store.load(0, [0, 1])
    assert str(raised.value) == (
        f"{store.path(0)}: a batch file of another run (its store id 0123456789ab…, this store's {store.id[:12]}…); "
        "delete it to recompute that batch (rerun the same command)"
    )


def test_a_store_id_is_the_hash_of_its_keys_canonical_json() -> None:
    assert partial_store.key_id({"b": 1, "a": [1, 2]}) == hashlib.sha256(b'{"a":[1,2],"b":1}').hexdigest()


def test_the_store_key_names_its_stage_and_is_written_as_its_run_config(tmp_path: Path) -> None:
    store = opened_store(tmp_path)
    assert store.stage == "step/part"
    assert store.key == {"key_format": 2, "seed": 0, "stage": "step/part"}
    assert json.loads((tmp_path / "partial" / "step" / "part" / "run_config.json").read_text()) == store.key


def test_a_run_config_without_key_format_is_an_older_versions_store(tmp_path: Path) -> None:
    folder = tmp_path / "partial" / "step" / "part"
    folder.mkdir(parents=True)
    (folder / "run_config.json").write_text(json.dumps({"seed": 0, "stage": "step/part"}))
    with pytest.raises(PipelineError) as raised:
        opened_store(tmp_path)
    assert str(raised.value) == (
        f"{folder}: partial results written by an older version that did not record their inputs' content; "
        "use another --output-dir, or delete that folder to start over"
    )


def test_the_lock_file_holds_this_process_alone(tmp_path: Path, monkeypatch) -> None:
    lock = tmp_path / "partial" / "run.lock"
    lock.parent.mkdir()
    lock.write_text("pid 1 on an old host since 2020-01-01 00:00:00: a killed run\n")
    long_argument = "x" * 400
    monkeypatch.setattr(partial_store.sys, "argv", ["prog", "--flag", long_argument])
    partial_store.lock_output_dir(tmp_path)
    text = lock.read_text(encoding="utf-8")
    assert re.fullmatch(r"pid (\d+) on (\S+) since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d: (.*)\n", text)
    pid, host, command = re.fullmatch(r"pid (\d+) on (\S+) since [^:]+:\d\d:\d\d: (.*)\n", text).groups()
    assert (int(pid), host) == (os.getpid(), socket.gethostname())
    assert command == ("prog --flag " + long_argument)[:300]


def test_a_lock_held_before_its_holder_wrote_names_another_process(tmp_path: Path) -> None:
    lock = tmp_path / "partial" / "run.lock"
    lock.parent.mkdir()
    lock.touch()
    with open(lock, "a+") as holder:  # another open file: flock conflicts even within one process
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(PipelineError) as raised:
            partial_store.lock_output_dir(tmp_path)
    assert str(raised.value) == (
        f"{tmp_path}: another run is writing into this folder (another process); wait for it to finish, or use "
        "another --output-dir"
    )
