#!/usr/bin/env bash
# Experiment 1, step 1 — download ImageNet-1k validation + test parquet shards into imagenet-1k/data/
# (resumable; row counts verified). The dataset is gated: accept its terms on the Hugging Face Hub,
# then `hf auth login` or `export HF_TOKEN=<read token>`. See experiment_1/data/download.py.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python -m experiment_1.data.download "$@"
