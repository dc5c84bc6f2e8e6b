"""The compact, committed form of step 1's signatures: ``signatures.npz``, small integer arrays from which step 2
recomputes every number of overlap.json.

signatures.pt (git-ignored, tens of MB) keeps every ranked subset with its float32 magnitude. Step 2 reads only
prefixes of it: the binary top-K sets up to the K sweep's largest size, the magnitudes of the top-``--nn-K`` (the
weighted signatures) and the class control's stored subset ids. :func:`compact_arrays` keeps exactly those:

- ``ranked_<ranking>`` ``(N, min(store_K, COMPACT_K))`` uint16 mask ids (uint32 beyond 2^16 subsets), for the three
  per-image rankings; ``magnitude_<ranking>`` ``(N, min(store_K, COMPACT_MAGNITUDE_K))`` float32, the magnitudes of
  the first subsets only (the weighted signatures divide them by their top-K sum);
- ``ranked_class`` ``(N, M, min(class_store_K, COMPACT_CLASS_K))`` uint16, the class control's first ids (no
  magnitudes: the control is binary; 32 keeps its verdict's K = 32, so its K sweep stops at 32 — at 64 the file
  would be twice the size, 14 MB for the 900-image sample);
- ``label``, ``predicted`` int16 (int32 beyond 2^15 classes), ``valid`` bool; ``format`` and ``metadata`` (the
  question, the evaluation's configuration, the class coordinates, the store sizes, the sample list) as strings.

No full logits: no Experiment 4 statistic reads them. :func:`load_compact` returns the same dict as
signatures.pt's, with ``store_k``, ``class_store_k`` the kept ranking lengths and ``magnitude_k`` the kept magnitudes, so step 2 runs
unchanged on either file (it refuses a ``--nn-K`` or ``--sweep-K`` beyond what is kept).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch

from experiment_1.errors import PipelineError
from experiment_1.files import atomic_save_npz, check_schema

COMPACT_FORMAT = "experiment_4.compact_signatures"
COMPACT_NAME = "signatures.npz"
COMPACT_K = 256  # the default K sweep's largest size (step_2_overlap.MAX_SWEEP_K)
COMPACT_MAGNITUDE_K = 64  # magnitudes kept per ranking: weighted signatures up to --nn-K 64
COMPACT_CLASS_K = 32  # class-control ids kept per image and coordinate: its --nn-K 32 and its sweep up to 32
PER_IMAGE_RANKINGS = ("vector", "scalar", "scalar_true")
METADATA = ("question", "config", "rankings", "num_subsets", "store_k", "class_store_k", "class_coordinates", "samples")


def _ids(values: torch.Tensor, num_subsets: int) -> np.ndarray:
    return values.numpy().astype(np.uint16 if num_subsets <= 2**16 else np.uint32)


def compact_arrays(document: dict[str, Any]) -> dict[str, np.ndarray]:
    """The arrays of ``signatures.npz`` from a signatures.pt ``document`` (see the module docstring)."""
    num_subsets = int(document["num_subsets"])
    kept, weighted = min(int(document["store_k"]), COMPACT_K), min(int(document["store_k"]), COMPACT_MAGNITUDE_K)
    metadata = {key: document[key] for key in METADATA if key in document}
    arrays = {
        "format": np.array(COMPACT_FORMAT),
        "metadata": np.array(json.dumps(metadata, sort_keys=True)),
        "label": document["label"].numpy().astype(np.int32),
        "predicted": document["predicted"].numpy().astype(np.int32),
        "valid": document["valid"].numpy().astype(bool),
        "ranked_class": _ids(document["ranked_class"][:, :, :COMPACT_CLASS_K], num_subsets),
    }
    if max(int(np.abs(arrays["label"]).max(initial=0)), int(arrays["predicted"].max(initial=0))) < 2**15:
        arrays["label"], arrays["predicted"] = arrays["label"].astype(np.int16), arrays["predicted"].astype(np.int16)
    for ranking in PER_IMAGE_RANKINGS:
        arrays[f"ranked_{ranking}"] = _ids(document[f"ranked_{ranking}"][:, :kept], num_subsets)
        arrays[f"magnitude_{ranking}"] = document[f"magnitude_{ranking}"][:, :weighted].numpy().astype(np.float32)
    return arrays


def write_compact(document: dict[str, Any], path: Path) -> None:
    """Write ``signatures.npz`` (compressed) atomically."""
    atomic_save_npz(path, compact_arrays(document))


def _index_tensor(values: np.ndarray, num_subsets: int) -> torch.Tensor:
    """Mask ids as step 1 stores them in signatures.pt (int16 up to 2^15 subsets, int32 beyond)."""
    return torch.from_numpy(values.astype(np.int16 if num_subsets <= 2**15 else np.int32))


def load_compact(path: Path, producer_step: str) -> dict[str, Any]:
    """``signatures.npz`` as the dict signatures.pt holds; one-line errors for a missing, damaged or foreign file."""
    path = Path(path)
    if not path.exists():
        raise PipelineError(
            f"{path}: --signatures not found; a results folder from before the compact signatures has only signatures.pt "
            f"(pass it), or rerun `python -m {producer_step}` to write both"
        )
    try:
        with np.load(path) as stored:
            arrays = {name: stored[name] for name in stored.files}
        found = str(arrays["format"])
        metadata = json.loads(str(arrays["metadata"]))
    except Exception as error:  # truncated or foreign files raise many types (BadZipFile, KeyError, ValueError …)
        raise PipelineError(
            f"{path}: damaged or not a {COMPACT_NAME} ({type(error).__name__}); rerun `python -m {producer_step}`"
        ) from None
    if found != COMPACT_FORMAT:
        raise PipelineError(f"{path}: not a file of {producer_step} (format {found!r}; pass its {COMPACT_NAME})")
    check_schema(metadata, path, producer_step)
    num_subsets = int(metadata["num_subsets"])
    document = {
        **metadata,
        "store_k": int(arrays["ranked_vector"].shape[1]),
        "magnitude_k": int(arrays["magnitude_vector"].shape[1]),
        "class_store_k": int(arrays["ranked_class"].shape[2]),
        "label": torch.from_numpy(arrays["label"].astype(np.int64)),
        "predicted": torch.from_numpy(arrays["predicted"].astype(np.int64)),
        "valid": torch.from_numpy(arrays["valid"].astype(bool)),
        "ranked_class": _index_tensor(arrays["ranked_class"], num_subsets),
    }
    for ranking in PER_IMAGE_RANKINGS:
        document[f"ranked_{ranking}"] = _index_tensor(arrays[f"ranked_{ranking}"], num_subsets)
        document[f"magnitude_{ranking}"] = torch.from_numpy(arrays[f"magnitude_{ranking}"])
    return document
