"""Experiment 4, step 1 — per-image subset rankings (the raw material of expert-set signatures).

Question: do the dominant subsets depend on the input and on its class? This step evaluates every
image of a labelled sample list under all 2^L masks, takes the Möbius coefficients (in
--mobius-dtype) and ranks the 2^L subsets (the empty mask included) three ways: vector
‖Δ_S h‖₂, scalar |Δ_S h[c*]| at the full-mask predicted class c*, and scalar |Δ_S h[y]| at the
true label y (the earlier class control, which leaks the label; step 2 shows it beside the
leak-free one). Ties go to the lower mask index. It keeps the first
--store-K subsets of each ranking with their magnitudes (default: all 2^L when L ≤ 12, else the top
1024), the first --class-store-K subsets (ids only, default 64) of the scalar ranking in **every
class coordinate present in the sample list** (step 2's leak-free class control compares two images
in one coordinate), plus each image's full-mask logits and predicted class; step_2_overlap builds
the signatures from them.

Inputs:  --sample-index (a labelled per-class list from experiment_1.step_2_sample), shards in
         --data-dir, --arch/--weights.
Outputs: <output-dir>/signatures.pt (torch.save of a dict: per-image tensors index, label, valid,
         predicted, full_logits (N, C) float32, ranked_<ranking> (N, store_K) int16/int32 mask
         indices, magnitude_<ranking> (N, store_K) float32, ranked_class (N, M, class_store_K)
         int16/int32 mask indices in the M class coordinates; plus config, samples (source, row,
         label), rankings, num_subsets, store_k, class_coordinates (the M sorted labels),
         class_store_k), <output-dir>/timing.json,
         <output-dir>/partial/ (resume state). Under torchrun, rank 0 writes.

    python -m experiment_4.step_1_signatures --sample-index experiment_1/sample_index_val.json \\
        --batch-size 8 --mask-chunk 256 --num-workers 8 --seed 0 --output-dir experiment_4/results
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import torch

from experiment_1 import distributed
from experiment_1.errors import PipelineError, run_cli
from experiment_1.io_utils import atomic_torch_save
from experiment_1.pipeline import MOBIUS_DTYPES, EvaluationSetup, add_evaluation_arguments, build_setup, provenance, run_per_image, write_timing
from experiment_4.records import FORMAT
from experiment_4.signatures import SIGNATURE_RANKINGS, default_class_store_k, default_store_k, signature_batch

QUESTION = "Do the dominant subsets depend on the input and on its class?"
STAGE = "experiment_4.step_1_signatures/signatures"


def check_labelled(setup: EvaluationSetup) -> None:
    """Experiment 4 compares classes: every image of the sample list needs its true label."""
    unlabelled = sum(1 for sample in setup.samples if sample.label < 0)
    if unlabelled:
        raise PipelineError(
            f"{setup.args.sample_index}: {unlabelled} of {len(setup.samples)} images have no label (-1); Experiment 4 needs a labelled "
            "per-class list (experiment_1.step_2_sample --pattern 'validation-*.parquet' --mode per-class)"
        )


def resolve_store_k(flag: str, requested: int | None, default: int, num_blocks: int) -> int:
    """``requested`` (the value of ``flag``), or ``default``; checked against 2^L."""
    store_k = default if requested is None else requested
    if not 1 <= store_k <= 2**num_blocks:
        raise PipelineError(f"{flag} {store_k}: must lie in 1 … 2^L = {2**num_blocks} for this architecture (L = {num_blocks})")
    return store_k


def class_coordinates(setup: EvaluationSetup) -> torch.Tensor:
    """The sorted labels present in the sample list: the class coordinates of ``ranked_class``."""
    return torch.tensor(sorted({sample.label for sample in setup.samples}), dtype=torch.long)


def evaluate_signatures(setup: EvaluationSetup, store_k: int, classes: torch.Tensor, class_store_k: int) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
    """Per-image rankings of every image, resumably; the arrays as tensors and this call's timing."""
    dtype = MOBIUS_DTYPES[setup.args.mobius_dtype]

    def compute(logits: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
        return signature_batch(logits, labels, dtype, store_k, classes, class_store_k)

    arrays, timing = run_per_image(setup, STAGE, compute, description="Exp 4 signatures")
    return {name: torch.from_numpy(value) for name, value in arrays.items()}, timing


def signatures_document(setup: EvaluationSetup, arrays: dict[str, torch.Tensor], store_k: int, classes: torch.Tensor, class_store_k: int) -> dict[str, Any]:
    """What signatures.pt holds: the per-image tensors plus the metadata step 2 needs."""
    return {
        "format": FORMAT,
        "question": QUESTION,
        "config": provenance(setup),
        "rankings": list(SIGNATURE_RANKINGS),
        "num_subsets": 2**setup.model.num_blocks,
        "store_k": store_k,
        "class_coordinates": classes.tolist(),
        "class_store_k": class_store_k,
        "samples": [{"source": sample.source, "row": sample.row, "label": sample.label} for sample in setup.samples],
        **arrays,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_evaluation_arguments(parser, "experiment_4/results", default_sample_index="experiment_1/sample_index_val.json")
    parser.add_argument("--store-K", dest="store_k", type=int, default=None, help="ranked subsets kept per image and ranking (default: all 2^L when L ≤ 12, else 1024)")
    parser.add_argument("--class-store-K", dest="class_store_k", type=int, default=None,
                        help="ranked subsets kept per image and class coordinate, for the class control (default: 64, or 2^L when smaller)")
    args = parser.parse_args(argv)
    setup = build_setup(args)
    check_labelled(setup)
    store_k = resolve_store_k("--store-K", args.store_k, default_store_k(setup.model.num_blocks), setup.model.num_blocks)
    class_store_k = resolve_store_k("--class-store-K", args.class_store_k, default_class_store_k(setup.model.num_blocks), setup.model.num_blocks)
    setup.config["store_k"] = store_k
    if args.class_store_k is not None:  # a new option enters the partial-store key only when given
        setup.config["class_store_k"] = class_store_k
    classes = class_coordinates(setup)
    arrays, timing = evaluate_signatures(setup, store_k, classes, class_store_k)
    if not distributed.is_main():
        return
    document = signatures_document(setup, arrays, store_k, classes, class_store_k)
    path = Path(args.output_dir) / "signatures.pt"
    atomic_torch_save(document, path)
    write_timing(setup, timing, document["config"]["device_name"])
    valid = arrays["valid"]
    accuracy = (arrays["predicted"][valid] == arrays["label"][valid]).double().mean().item()
    print(f"wrote {path}: {int(valid.sum())} images, top {store_k} of {document['num_subsets']} subsets per ranking, full-mask top-1 {accuracy:.1%}")


if __name__ == "__main__":
    run_cli(main)
