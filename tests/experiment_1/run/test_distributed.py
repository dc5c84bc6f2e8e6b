"""torchrun sharding of the batch loop: the pure batch split, rank/device rules, and gloo runs on CPU.

The end-to-end tests launch ``python -m torch.distributed.run --standalone --nproc-per-node N`` on
``tests/launch_small.py`` (64-px inputs, random-init ResNet-18) and compare with single-process runs of the same
flags in this process: one 3-rank single pass feeding all five experiments (9 images in 5 uneven batches, shares of
1, 2 and 2 batches), the same resumed by 3 ranks from stores with gaps, a 2-rank run whose rank crashes, a 2-rank λ
sweep and a bad --arch. Byte equality of the results is expected: every batch runs the same operations on the same
batch shape with the same thread count (this process's, forwarded to the ranks) whichever process evaluates it, and
the merge follows the sample list.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import experiment_1.run.loop as run_loop
import experiment_1.run.setup as run_setup
import experiment_1.step_3_evaluate as step_3
from conftest import jpeg_bytes, write_shard
from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.run import distributed
from experiment_1.run.distributed import Rank, rank_device, rank_from_environment, shard
from experiment_1.step_2_sample import main as sample_main
from experiment_2 import step_3_lambda_sweep
from launch_small import small_builder
from paper.single_pass import main as single_pass_main

REPO = Path(__file__).resolve().parents[3]
LAUNCHER = REPO / "tests" / "launch_small.py"
NUM_IMAGES = 3
SWEEP_FLAGS = ["--lambdas", "0.5"]
TORCHRUN_TIMEOUT = 1800  # seconds; only guards against a hung job (a loaded CI machine can take minutes per launch)


# --- the batch split and the rank rules, as pure functions ---------------------------------------


def test_shard_covers_every_batch_exactly_once_in_balanced_contiguous_shares() -> None:
    for num_batches in range(0, 30):
        for world_size in range(1, 10):
            shares = [list(shard(num_batches, world_size, rank)) for rank in range(world_size)]
            assert [number for part in shares for number in part] == list(range(num_batches))  # each once, in order
            sizes = [len(part) for part in shares]
            assert max(sizes) - min(sizes) <= 1
            assert shares == [list(shard(num_batches, world_size, rank)) for rank in range(world_size)]  # deterministic
    assert list(shard(10, 4, 0)) == [0, 1] and list(shard(10, 4, 3)) == [7, 8, 9]
    for bad in [(5, 0, 0), (5, 2, 2), (5, 2, -1), (-1, 2, 0)]:
        with pytest.raises(ValueError):
            shard(*bad)


def test_a_single_process_evaluates_every_pending_batch() -> None:
    assert distributed.current() == Rank() and distributed.is_main()
    assert distributed.share([0, 3, 5]) == [0, 3, 5]


def test_rank_from_environment() -> None:
    assert rank_from_environment({}) == Rank()
    assert rank_from_environment({"RANK": "5", "WORLD_SIZE": "8", "LOCAL_RANK": "1"}) == Rank(5, 8, 1, launched=True)
    for environ, message in [
        ({"RANK": "0"}, "not WORLD_SIZE, LOCAL_RANK"),
        ({"RANK": "a", "WORLD_SIZE": "2", "LOCAL_RANK": "0"}, "must be integers"),
        ({"RANK": "2", "WORLD_SIZE": "2", "LOCAL_RANK": "0"}, "0 ≤ RANK < WORLD_SIZE"),
    ]:
        with pytest.raises(PipelineError, match=message):
            rank_from_environment(environ)


def test_rank_device() -> None:
    rank = Rank(3, 4, 1, launched=True)
    assert rank_device(torch.device("cpu"), rank, 0) == torch.device("cpu")
    assert rank_device(torch.device("cuda"), rank, 2) == torch.device("cuda", 1)
    assert rank_device(torch.device("cuda", 1), Rank(), 2) == torch.device("cuda", 1)  # no torchrun: as given
    with pytest.raises(PipelineError, match=r"rank 3 \(LOCAL_RANK 1\) asks for cuda:1 but this node has 1 GPU"):
        rank_device(torch.device("cuda"), rank, 1)
    with pytest.raises(PipelineError, match="every rank would share one GPU"):
        rank_device(torch.device("cuda", 0), rank, 2)


@pytest.mark.parametrize("rank", [0, 1])
def test_ranks_with_different_settings_are_refused(rank: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(distributed, "_current", Rank(rank, 2, rank, launched=True))
    settings = {"batch_size": 2, "seed": 0, "arch": "resnet18"}
    monkeypatch.setattr(
        distributed, "_all_gather", lambda value: [settings, {**settings, "seed": 1, "arch": "resnet34"}]
    )
    if rank == 0:  # rank 0 says it in one line …
        with pytest.raises(PipelineError, match=r"rank 1 was launched with other settings than rank 0 \(arch, seed\)"):
            distributed.check_job(4, settings)
    else:  # … the others leave quietly
        with pytest.raises(SystemExit) as exit_info:
            distributed.check_job(4, settings)
        assert exit_info.value.code == 0
    monkeypatch.setattr(distributed, "_all_gather", lambda value: [settings, settings])
    distributed.check_job(2, settings)  # two batches for two ranks, same settings: fine


@pytest.mark.parametrize("rank", [0, 1])
def test_more_ranks_than_batches_is_refused(rank: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # A resumed job may have fewer *pending* batches than ranks (idle ranks wait); only the job's size counts.
    monkeypatch.setattr(distributed, "_current", Rank(rank, 2, rank, launched=True))
    monkeypatch.setattr(distributed, "_all_gather", lambda value: [value, value])
    if rank == 0:
        with pytest.raises(
            PipelineError, match=r"^2 ranks but the job has only 1 batch\(es\) of --batch-size; launch at most 1 ranks"
        ):
            distributed.check_job(1, {})
    else:
        with pytest.raises(SystemExit) as exit_info:
            distributed.check_job(1, {})
        assert exit_info.value.code == 0


@pytest.mark.parametrize("rank", [0, 1])
def test_an_error_of_every_rank_is_said_once_and_one_of_some_ranks_by_each(
    rank: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(distributed, "_current", Rank(rank, 2, rank, launched=True))

    def bad_arch() -> None:
        raise PipelineError("--arch user:build: cannot import user")

    monkeypatch.setattr(distributed, "_all_gather", lambda value: [value, value])  # every rank failed alike
    if rank == 0:
        with pytest.raises(PipelineError, match=r"^--arch user:build: cannot import user$"):
            distributed.alike(bad_arch)
    else:
        with pytest.raises(SystemExit) as exit_info:
            distributed.alike(bad_arch)
        assert exit_info.value.code == 0
    monkeypatch.setattr(
        distributed, "_all_gather", lambda value: [value, None] if rank == 0 else [None, value]
    )  # only this rank failed
    with pytest.raises(PipelineError, match="cannot import user"):
        distributed.alike(bad_arch)
    monkeypatch.setattr(
        distributed,
        "_all_gather",
        lambda value: [value, "rank 1's own error"] if rank == 0 else ["rank 0's own error", value],
    )
    assert distributed.alike(lambda: 7) == 7  # the failing rank says it itself; this one carries on


# --- 2 ranks (gloo) against a single process ----------------------------------------------------


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Shards and a 3-image sample list shared by the end-to-end tests."""
    root = tmp_path_factory.mktemp("distributed")
    data_dir = root / "data"
    write_shard(
        data_dir / "validation-00000-of-00001.parquet", [jpeg_bytes(100 + i) for i in range(6)], [0, 1, 2, 0, 1, 2]
    )
    sample_index = root / "sample_index.json"
    sample_main(
        [
            "--data-dir",
            str(data_dir),
            "--pattern",
            "validation-*.parquet",
            "--mode",
            "uniform",
            "--num-images",
            str(NUM_IMAGES),
            "--output",
            str(sample_index),
        ]
    )
    return data_dir, sample_index


def flags(job: tuple[Path, Path], output_dir: Path, *extra: str) -> list[str]:
    data_dir, sample_index = job
    return [
        "--data-dir",
        str(data_dir),
        "--sample-index",
        str(sample_index),
        "--weights",
        "random",
        "--batch-size",
        "1",
        "--num-workers",
        "0",
        "--device",
        "cpu",
        "--output-dir",
        str(output_dir),
        *extra,
    ]


def torchrun(module: str, arguments: list[str], ranks: int = 2, **environment: str) -> subprocess.CompletedProcess:
    """``torchrun --standalone --nproc-per-node <ranks>`` of a step with 64-px inputs.

    Each rank gets this process's thread count (torchrun would set OMP_NUM_THREADS=1): CPU kernels may
    block their sums by thread count, and the byte comparisons need the same operations as the
    single-process reference run here."""
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        str(ranks),
        str(LAUNCHER),
        module,
        *arguments,
    ]
    threads = {"OMP_NUM_THREADS": str(torch.get_num_threads())}
    return subprocess.run(
        command,
        cwd=REPO,
        env={**os.environ, **threads, **environment},
        capture_output=True,
        text=True,
        timeout=TORCHRUN_TIMEOUT,
    )


def single_process(main, arguments: list[str]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(run_setup, "build_gated_stack", small_builder(run_setup.build_gated_stack))
        main(arguments)


@pytest.fixture(scope="module")
def experiment_1_single(job: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("exp1_single")
    single_process(step_3.main, flags(job, output))
    return output


def test_a_crashed_rank_leaves_only_whole_batches_and_one_process_finishes_them(
    job: tuple[Path, Path], experiment_1_single: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Rank 1 owns batches 1 and 2 and dies as it starts batch 2; torchrun then stops rank 0 (which may not have finished batch 0).
    result = torchrun("experiment_1.step_3_evaluate", flags(job, tmp_path), MOE_TEST_DIE_AT="1:2")
    assert result.returncode != 0
    partial = tmp_path / "partial" / "experiment_1.step_3_evaluate" / "all_masks"
    finished = sorted(path.name for path in partial.glob("batch_*.pt"))
    assert "batch_000001.pt" in finished and "batch_000002.pt" not in finished
    assert not (tmp_path / "summary.json").exists()

    evaluated = []
    original = run_loop.evaluate_all_masks
    monkeypatch.setattr(
        run_loop,
        "evaluate_all_masks",
        lambda model, images, **kwargs: evaluated.append(len(images)) or original(model, images, **kwargs),
    )
    single_process(step_3.main, flags(job, tmp_path))
    assert len(evaluated) == NUM_IMAGES - len(finished)  # only the missing batches ran
    assert (tmp_path / "summary.json").read_bytes() == (experiment_1_single / "summary.json").read_bytes()
    timing = read_json(
        tmp_path / "timing.json"
    )  # the crashed job's records (up to its last finished batch) and this process's
    crashed = [record for record in timing["processes"] if record["pass"] != timing["processes"][-1]["pass"]]
    assert timing["last_call"]["images_evaluated"] == len(evaluated) == timing["processes"][-1]["images_evaluated"]
    assert 1 <= sum(record["images_evaluated"] for record in crashed) <= len(finished) and {
        record["rank"] for record in crashed
    } <= {0, 1}
    assert timing["images_evaluated"] == len(evaluated) + sum(record["images_evaluated"] for record in crashed)


def test_lambda_sweep_two_ranks_give_the_single_process_bytes(job: tuple[Path, Path], tmp_path: Path) -> None:
    single_process(step_3_lambda_sweep.main, flags(job, tmp_path / "single", *SWEEP_FLAGS))
    result = torchrun("experiment_2.step_3_lambda_sweep", flags(job, tmp_path / "two", *SWEEP_FLAGS))
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "two" / "summary_all.json").read_bytes() == (
        tmp_path / "single" / "summary_all.json"
    ).read_bytes()
    assert read_json(tmp_path / "two" / "timing.json")["per_lambda"]["0.5"]["world_size"] == 2


def test_a_bad_arch_under_torchrun_prints_one_line(job: tuple[Path, Path], tmp_path: Path) -> None:
    result = torchrun("experiment_1.step_3_evaluate", [*flags(job, tmp_path), "--arch", "no_such_package.models:build"])
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: --arch no_such_package.models:build: no module no_such_package on the import path (moved, renamed or misspelled?); name the module "
        "as it is now, as package.module from the folder above its top package (the repository root for experiment_N.…), or add that folder to PYTHONPATH"
    ], result.stderr[-3000:]


# --- three ranks, uneven shares, every experiment: one single pass (Experiments 1–5) per scenario ------------------

PASS_IMAGES, PASS_BATCH = 9, 2  # 5 batches (2, 2, 2, 2, 1 images): 3 ranks get batches [0], [1, 2], [3, 4]
PASS_EXPERIMENTS = ["1", "2", "3", "4", "5"]


@pytest.fixture(scope="module")
def labelled_job(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("labelled")
    write_shard(
        root / "data" / "validation-00000-of-00001.parquet",
        [jpeg_bytes(200 + i) for i in range(PASS_IMAGES)],
        [0, 1, 2] * 3,
    )
    sample_main(
        [
            "--data-dir",
            str(root / "data"),
            "--pattern",
            "validation-*.parquet",
            "--mode",
            "uniform",
            "--num-images",
            str(PASS_IMAGES),
            "--output",
            str(root / "sample_index.json"),
        ]
    )
    return root / "data", root / "sample_index.json"


def pass_flags(job: tuple[Path, Path], results_root: Path) -> list[str]:
    data_dir, sample_index = job
    return [
        "--data-dir",
        str(data_dir),
        "--sample-index",
        str(sample_index),
        "--weights",
        "random",
        "--batch-size",
        str(PASS_BATCH),
        "--num-workers",
        "0",
        "--device",
        "cpu",
        "--experiments",
        *PASS_EXPERIMENTS,
        "--num-random-seeds",
        "1",
        "--results-name",
        "r",
        "--results-root",
        str(results_root),
    ]


def outputs(results_root: Path) -> dict[str, bytes]:
    """Every file the experiments' own steps write (summaries, per-image arrays, signatures), timing aside."""
    return {
        path.relative_to(results_root).as_posix(): path.read_bytes()
        for path in sorted(results_root.rglob("*"))
        if path.is_file() and "partial" not in path.parts and path.name != "timing.json"
    }


@pytest.fixture(scope="module")
def single_pass_reference(labelled_job: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    results_root = tmp_path_factory.mktemp("single_pass")
    single_process(single_pass_main, pass_flags(labelled_job, results_root))
    return results_root


def test_three_ranks_with_uneven_shares_give_every_experiments_single_process_bytes(
    labelled_job: tuple[Path, Path], single_pass_reference: Path, tmp_path: Path
) -> None:
    result = torchrun("paper.single_pass", pass_flags(labelled_job, tmp_path), ranks=3)
    assert result.returncode == 0, result.stderr[-3000:]
    expected = outputs(single_pass_reference)
    assert {name.split("/")[0] for name in expected} == {f"experiment_{number}" for number in PASS_EXPERIMENTS}
    assert outputs(tmp_path) == expected
    timing = read_json(tmp_path / "experiment_1" / "r" / "timing.json")
    assert timing["world_size"] == 3 and timing["images_evaluated"] == PASS_IMAGES
    assert timing["per_rank_images_evaluated"] == [2, 4, 3]  # shares of 1, 2 and 2 batches, the last batch of 1 image
    assert "world_size" not in read_json(tmp_path / "experiment_1" / "r" / "summary.json")["config"]
    assert sum(line.startswith("wrote ") for line in result.stdout.splitlines()) == len(
        PASS_EXPERIMENTS
    )  # ranks 1 and 2 print nothing


def test_three_ranks_resume_a_store_with_gaps_and_give_the_same_bytes(
    labelled_job: tuple[Path, Path], single_pass_reference: Path, tmp_path: Path
) -> None:
    """Batches 0, 2, 3 and 4 are removed from every experiment's store (batch 1 kept: a gap); three ranks share the
    four unfinished batches ([0], [2], [3, 4]), evaluate only those and write every experiment's single-process bytes."""
    shutil.copytree(single_pass_reference, tmp_path, dirs_exist_ok=True)
    for path in list(tmp_path.rglob("*")):
        if path.is_file() and (
            "partial" not in path.parts or path.name in {f"batch_{number:06d}.pt" for number in (0, 2, 3, 4)}
        ):
            path.unlink()
    assert len(list(tmp_path.rglob("batch_000001.pt"))) == len(PASS_EXPERIMENTS)
    result = torchrun("paper.single_pass", pass_flags(labelled_job, tmp_path), ranks=3)
    assert result.returncode == 0, result.stderr[-3000:]
    assert outputs(tmp_path) == outputs(single_pass_reference)
    timing = read_json(tmp_path / "experiment_1" / "r" / "timing.json")
    this_call = timing.get(
        "last_call", timing
    )  # where timing.json also sums earlier processes, this launch's own record
    assert this_call["images_evaluated"] == PASS_IMAGES - PASS_BATCH and this_call["per_rank_images_evaluated"] == [
        2,
        2,
        3,
    ]
