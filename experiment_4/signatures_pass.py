"""Experiment 4's part of an all-mask pass: ``--store-K``/``--class-store-K`` (its step's flags,
experiment_4.step_1_signatures), per-batch subset rankings → signatures.pt
and its compact, committed signatures.npz (experiment_4.compact)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from experiment_1.errors import PipelineError
from experiment_1.files import atomic_torch_save
from experiment_1.run import (
    MOBIUS_DTYPES,
    BatchFunction,
    EvaluationSetup,
    ExperimentPass,
    distributed,
    provenance,
    write_timing,
)
from experiment_4.compact import COMPACT_NAME, write_compact
from experiment_4.formats import FORMAT
from experiment_4.signatures import SIGNATURE_RANKINGS, default_class_store_k, default_store_k, signature_batch

QUESTION = "Do the dominant subsets depend on the input and on its class?"
STAGE = "experiment_4.step_1_signatures/signatures"


def check_labelled(setup: EvaluationSetup) -> None:
    """Experiment 4 compares classes: every image of the sample list needs its true label."""
    unlabelled = sum(1 for sample in setup.samples if sample.label < 0)
    if unlabelled:
        raise PipelineError(
            f"{setup.config.sample_index}: {unlabelled} of {len(setup.samples)} images have no label (-1); Experiment 4 needs a labelled "
            "per-class list (experiment_1.step_2_sample --pattern 'validation-*.parquet' --mode per-class)"
        )


def resolve_store_k(flag: str, requested: int | None, default: int, num_blocks: int) -> int:
    """``requested`` (the value of ``flag``), or ``default``; checked against 2^L."""
    store_k = default if requested is None else requested
    if not 1 <= store_k <= 2**num_blocks:
        raise PipelineError(
            f"{flag} {store_k}: must lie in 1 … 2^L = {2**num_blocks} for this architecture (L = {num_blocks})"
        )
    return store_k


def class_coordinates(setup: EvaluationSetup) -> torch.Tensor:
    """The sorted labels present in the sample list: the class coordinates of ``ranked_class``."""
    return torch.tensor(sorted({sample.label for sample in setup.samples}), dtype=torch.long)


def store_sizes(setup: EvaluationSetup) -> tuple[int, int]:
    """``(store_k, class_store_k)``: the flags, or their defaults for this L; checked against 2^L."""
    config, num_blocks = setup.config, setup.model.num_blocks
    return (
        resolve_store_k("--store-K", config.store_k, default_store_k(num_blocks), num_blocks),
        resolve_store_k("--class-store-K", config.class_store_k, default_class_store_k(num_blocks), num_blocks),
    )


def prepare(setup: EvaluationSetup) -> dict[str, Any]:
    """Labels checked; the numbers of stored subsets: options of the configuration (the resume key)."""
    check_labelled(setup)
    store_k, class_store_k = store_sizes(setup)
    options: dict[str, Any] = {"store_k": store_k}
    if setup.config.class_store_k is not None:  # a new option enters the partial-store key only when given
        options["class_store_k"] = class_store_k
    return options


def batch_function(setup: EvaluationSetup) -> BatchFunction:
    """One batch's logits → :func:`experiment_4.signatures.signature_batch` (rankings, class coordinates, full-mask logits)."""
    dtype, (store_k, class_store_k), classes = (
        MOBIUS_DTYPES[setup.config.mobius_dtype],
        store_sizes(setup),
        class_coordinates(setup),
    )

    def compute(logits: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
        return signature_batch(logits, labels, dtype, store_k, classes, class_store_k)

    return compute


def signatures_document(setup: EvaluationSetup, arrays: dict[str, torch.Tensor]) -> dict[str, Any]:
    """What signatures.pt holds: the per-image tensors plus the metadata step 2 needs."""
    return {
        "format": FORMAT,
        "question": QUESTION,
        "config": provenance(setup),
        "rankings": list(SIGNATURE_RANKINGS),
        "num_subsets": 2**setup.model.num_blocks,
        "store_k": store_sizes(setup)[0],
        "class_coordinates": class_coordinates(setup).tolist(),
        "class_store_k": store_sizes(setup)[1],
        "samples": [{"source": sample.source, "row": sample.row, "label": sample.label} for sample in setup.samples],
        **arrays,
    }


def finish(setup: EvaluationSetup, arrays: dict[str, np.ndarray], timing: dict[str, Any]) -> None:
    """Write signatures.pt and timing (rank 0); one line on stdout."""
    if not distributed.is_main():
        return
    tensors = {name: torch.from_numpy(value) for name, value in arrays.items()}
    store_k = setup.config["store_k"]
    document = signatures_document(setup, tensors)
    path = Path(setup.config.output_dir) / "signatures.pt"
    atomic_torch_save(document, path)
    write_compact(document, path.with_name(COMPACT_NAME))
    write_timing(setup, timing, document["config"]["device_name"])
    valid = tensors["valid"]
    accuracy = (tensors["predicted"][valid] == tensors["label"][valid]).double().mean().item()
    print(
        f"wrote {path} and {COMPACT_NAME}: {int(valid.sum())} images, top {store_k} of {document['num_subsets']} subsets "
        f"per ranking, full-mask top-1 {accuracy:.1%}"
    )


EXPERIMENT_4 = ExperimentPass(4, STAGE, "Exp 4 signatures", batch_function, finish, prepare)
