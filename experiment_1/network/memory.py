"""How much memory an all-mask pass holds: live tensor bytes, measured on any device, and the tree engine's bound.

:class:`LiveTensorBytes` counts the bytes of every tensor storage created while it is active and still
referenced (a ``TorchDispatchMode``: the count is the same on CPU and CUDA and does not depend on an
allocator's caching), and keeps the peak. :func:`stack_profile` measures, on one image, each part's
output size and working set; :func:`tree_activation_bound` turns them into the most bytes the prefix-tree
engine (:func:`experiment_1.network.engines.evaluate_masks_tree`) holds for a batch:

- below level ``log2(mask_chunk)`` a group grows breadth-first, ``n_l = min(2^l, mask_chunk)`` states;
- at each level from there on the gate-on half (``mask_chunk`` states of that level's output) waits while
  the gate-off half is walked, so the waiting halves add up level by level;
- the group at work holds its input plus the block's working set (its outputs included), and a merge
  holds both halves and their concatenation;
- the ``(B, 2^L, C)`` logits buffer is alive from the first leaf on; the image copy and the int64 prefix ids
  throughout.

:func:`peak_estimate` adds the per-batch reductions of a step (a multiple of the logits' bytes, measured
the same way) for the out-of-memory message and experiment_1/PERFORMANCE.md's GPU table.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from experiment_1.network.stack import ResidualStack

# live bytes of a step's per-batch reductions besides the logits, in units of the float32 logits' bytes: the
# largest of Experiment 1's (reconstruction_metrics), Experiment 2's (spectrum_metrics) and Experiment 3's
# (topk_metrics, its trunk-removed source included): 2.6, 6.25 and at most 5.9 (L ≥ 14), measured by tests/experiment_1/network/test_gpu_readiness.py
REDUCTION_LOGIT_MULTIPLE = 6.5


class LiveTensorBytes(TorchDispatchMode):
    """Within ``with LiveTensorBytes() as live:``, ``live.current`` and ``live.peak`` are the bytes of the tensor
    storages created inside the block and still referenced (tensors that existed before are not counted)."""

    def __init__(self) -> None:
        super().__init__()
        self.current = 0
        self.peak = 0
        self._storages: dict[tuple[str, int], list[int]] = {}  # (device, data pointer) → [bytes, referencing tensors]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 — the dispatch protocol
        result = func(*args, **(kwargs or {}))
        inputs = {self._key(value) for value in tree_leaves((args, kwargs)) if isinstance(value, torch.Tensor)}
        for value in tree_leaves(result):
            if isinstance(value, torch.Tensor):
                self._track(value, inputs)
        return result

    @staticmethod
    def _key(tensor: torch.Tensor) -> tuple[str, int]:
        return (str(tensor.device), tensor.untyped_storage().data_ptr())

    def _track(self, tensor: torch.Tensor, inputs: set[tuple[str, int]]) -> None:
        storage = tensor.untyped_storage()
        if storage.nbytes() == 0 or tensor.device.type == "meta":
            return
        key = self._key(tensor)
        entry = self._storages.get(key)
        if entry is None and key in inputs:  # a view (or in-place result) of a storage made before: not counted
            return
        if entry is None:
            entry = self._storages[key] = [storage.nbytes(), 0]
            self.current += entry[0]
            self.peak = max(self.peak, self.current)
        entry[1] += 1
        weakref.finalize(tensor, self._release, key)

    def _release(self, key: tuple[str, int]) -> None:
        entry = self._storages.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] == 0:
            self.current -= entry[0]
            del self._storages[key]


@dataclass(frozen=True)
class StackProfile:
    """Per image: the input image's bytes (the engine's copy in the model's dtype and layout), the stem's output bytes,
    each block's output bytes and working set (peak live bytes of
    ``forward_both`` on one state, both outputs included), the head's working set and the logits' size."""

    image: int
    stem_output: int
    block_outputs: list[int]
    block_working_sets: list[int]
    head_working_set: int
    num_classes: int
    logit_bytes: int


@torch.no_grad()
def stack_profile(model: ResidualStack, resolution: int | None = None, residual_scale: float = 1.0) -> StackProfile:
    """Measure :class:`StackProfile` (per image) on a batch of two zero images at ``resolution`` (default: the
    model's input size) on the model's device (two: a batch of one can take other layouts and kernels)."""
    parameter = next(model.parameters())
    size = resolution or model.preprocess.crop
    count = 2
    image = torch.zeros(count, 3, size, size, device=parameter.device, dtype=parameter.dtype).contiguous(
        memory_format=model.memory_format
    )
    state = model.stem(image)
    stem_output = state.untyped_storage().nbytes() // count
    outputs, working_sets = [], []
    for block in model.blocks:
        with LiveTensorBytes() as live:
            gate_off, gate_on = block.forward_both(state, residual_scale)
        working_sets.append(-(-live.peak // count))
        outputs.append(gate_on.untyped_storage().nbytes() // count)
        state = gate_on
        del gate_off
    with LiveTensorBytes() as live:
        logits = model.head(state)
    logit_bytes = 8 if parameter.dtype == torch.float64 else 4
    return StackProfile(
        image.untyped_storage().nbytes() // count,
        stem_output,
        outputs,
        working_sets,
        -(-live.peak // count),
        logits.shape[-1],
        logit_bytes,
    )


def tree_activation_bound(profile: StackProfile, batch: int, mask_chunk: int) -> int:
    """The most bytes :func:`~experiment_1.network.engines.evaluate_masks_tree` holds for ``batch`` images (module docstring)."""
    num_blocks = len(profile.block_outputs)
    inputs = [profile.stem_output, *profile.block_outputs]  # the input of block l, then of the head
    prefix_ids = (
        8 * 3 * sum(min(2**level, mask_chunk) for level in range(num_blocks + 1))
    )  # int64 ids: a group's, its children's, the waiting halves'
    waiting = profile.image + prefix_ids  # both alive throughout
    peak = 0
    for level in range(num_blocks):
        group = min(2**level, mask_chunk)
        merged = 2 * group <= mask_chunk
        output = profile.block_outputs[level]
        working = group * (inputs[level] + profile.block_working_sets[level])
        if merged:  # both halves and their concatenation
            working = max(working, 4 * group * output)
        peak = max(peak, waiting + working)
        if not merged:
            waiting += group * output
    peak = max(peak, waiting + mask_chunk * (inputs[num_blocks] + profile.head_working_set))
    logits = 2**num_blocks * profile.num_classes * profile.logit_bytes
    return batch * (peak + logits)


def peak_estimate(profile: StackProfile, batch: int, mask_chunk: int, reduction_multiple: float) -> int:
    """Engine bound plus the step's reductions, ``reduction_multiple`` × the float32 logits' bytes."""
    logits = batch * 2 ** len(profile.block_outputs) * profile.num_classes * 4
    return tree_activation_bound(profile, batch, mask_chunk) + int(reduction_multiple * logits)
