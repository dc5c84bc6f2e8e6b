"""Experiment 1, step 1 — download the ImageNet-1k validation and test parquet shards.

Question: none; this fetches the data every experiment reads. ``ILSVRC/imagenet-1k`` on the
Hugging Face Hub is *gated*: accept its terms on the dataset page while logged in, create a
read token (Settings → Access Tokens), then either ``hf auth login`` once or export
``HF_TOKEN=<token>``. The download resumes where it stopped, and the row counts are verified
(validation 50 000, test 100 000).

Inputs:  the Hub (network), HF_TOKEN or a stored login.
Outputs: <data-dir>/validation-*.parquet (14 shards), <data-dir>/test-*.parquet (28 shards).

    bash experiment_1/step_1.sh                    # = python -m experiment_1.data.download
    python -m experiment_1.data.download --verify-only  # just check what is there
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pyarrow.parquet as pq
from tqdm import tqdm

from experiment_1.data.shards import default_data_dir
from experiment_1.errors import PipelineError, run_cli

REPO_ID = "ILSVRC/imagenet-1k"
EXPECTED_ROWS = {"validation": 50_000, "test": 100_000}


def verify_row_counts(data_dir: Path, expected: dict[str, int] = EXPECTED_ROWS) -> dict[str, int]:
    """Rows per split (``<split>-*.parquet``) from parquet metadata; a PipelineError if any differ."""
    counts = {}
    for split, rows in expected.items():
        shards = sorted(data_dir.glob(f"{split}-*.parquet"))
        counts[split] = sum(pq.ParquetFile(shard).metadata.num_rows for shard in shards)
        if counts[split] != rows:
            raise PipelineError(
                f"{data_dir}: {split} shards hold {counts[split]} rows in {len(shards)} files, expected {rows}; "
                "run `bash experiment_1/step_1.sh` again to resume the download"
            )
    return counts


def download(data_dir: Path, splits: list[str]) -> None:
    """Fetch ``data/<split>-*.parquet`` from the Hub into ``data_dir``, one shard at a time.

    A shard already present with the Hub's size is skipped; an interrupted shard resumes from
    its partial file in ``<data_dir>/.hf_download``; a finished shard is moved into place.
    """
    from huggingface_hub import HfApi, hf_hub_download
    from huggingface_hub.errors import GatedRepoError

    token = os.environ.get("HF_TOKEN")
    staging = data_dir / ".hf_download"
    data_dir.mkdir(parents=True, exist_ok=True)
    try:
        entries = HfApi().list_repo_tree(REPO_ID, path_in_repo="data", repo_type="dataset", token=token)
        wanted = [entry for entry in entries if any(Path(entry.path).name.startswith(f"{split}-") for split in splits)]
        for entry in tqdm(wanted, desc="shards", unit="shard"):
            target = data_dir / Path(entry.path).name
            if target.exists() and target.stat().st_size == entry.size:
                continue
            local = hf_hub_download(REPO_ID, entry.path, repo_type="dataset", local_dir=staging, token=token)
            os.replace(local, target)
    except GatedRepoError:
        raise PipelineError(
            f"{REPO_ID} is gated: accept its terms on the Hub, then `hf auth login` or export HF_TOKEN=<read token>"
        ) from None
    except Exception as error:  # HTTP, connection and file errors arrive from several libraries
        raise PipelineError(
            f"download from {REPO_ID} failed ({type(error).__name__}: {str(error).splitlines()[0]}); check the network and token, then rerun to resume"
        ) from None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--data-dir", type=Path, default=None, help="where the shards go (default: $MOE_DATA or imagenet-1k/data)"
    )
    parser.add_argument(
        "--splits",
        nargs="+",
        choices=sorted(EXPECTED_ROWS),
        default=sorted(EXPECTED_ROWS),
        help="splits to fetch (default: both)",
    )
    parser.add_argument("--verify-only", action="store_true", help="only check the row counts of what is there")
    args = parser.parse_args(argv)
    data_dir = args.data_dir or default_data_dir()
    if not args.verify_only:
        download(data_dir, args.splits)
    counts = verify_row_counts(data_dir, {split: EXPECTED_ROWS[split] for split in args.splits})
    print(f"{data_dir}: " + ", ".join(f"{split} {rows} rows" for split, rows in counts.items()) + " — complete")


if __name__ == "__main__":
    run_cli(main)
