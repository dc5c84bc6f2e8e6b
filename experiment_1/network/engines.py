"""Evaluate a gated residual stack under all ``2^L`` gate masks.

Two engines, which agree to float32 round-off on every (image, mask):

- ``naive`` (the reference and test oracle): replicate each image over the mask dimension and
  run the whole network once per (image, mask), ``mask_chunk`` masks at a time. It can also
  evaluate an explicit list of mask indices.
- ``tree`` (default): masks that agree on gates ``0 … l−1`` share the input of block ``l``, so
  block ``l`` runs its branch on the ``2^l`` distinct prefix states only and each state spawns
  two children (gate off, gate on). The stem runs once per image and the head ``2^L`` times.
  Prefix states are processed breadth-first while a group holds at most ``mask_chunk`` of
  them; a group that would grow past that is split into its gate-off and gate-on halves, which
  are walked one after the other (depth first). Each prefix state is computed exactly once, and
  the live activations are bounded by about ``(L − log2(mask_chunk) + 2) · mask_chunk`` states per
  image instead of ``2^L``.

``evaluate_family_tree`` walks the same tree restricted to a mask family (the low orders at either corner,
:class:`experiment_1.network.mask_family.MaskFamily`) and returns a sparse table, the family's mask ids and their logits.

Logits come back as ``(B, M, C)``, ``M = 2^L`` indexed by mask integer (bit ``l`` = block ``l``),
in float32 — or float64 when the model itself runs in float64. Each engine applies the CPU allocator setting
(:func:`experiment_1.network.allocator.tune_allocator`) on its first call in a process. Images are moved to the model's
device, dtype and memory format (``model.memory_format``: channels-last unless built otherwise).
λ (``residual_scale``) is an argument of every engine; the engines set no state on the model, so one
model can serve concurrent calls with different λ.

Multiply-accumulates (MACs) of a gated stack's forward and of the two all-mask engines.

MACs are counted with forward hooks on every ``Conv2d`` and ``Linear`` (batch-norm, activations,
additions and pooling are not counted): the naive engine runs 2^L full forwards, the tree engine
the stem once, block l on 2^l states and the head 2^L times; the family walk as :func:`family_gmac` says. Used by the engine benchmark
(``experiment_1.tools.bench_engines``) and the cost estimate every run prints (``experiment_1.run.preflight``).
"""

from __future__ import annotations

from math import comb
from typing import Sequence

import torch
from torch import nn

from experiment_1.errors import PipelineError
from experiment_1.network.allocator import tune_allocator
from experiment_1.network.choices import ENGINES
from experiment_1.network.gating import ResidualStack
from experiment_1.network.mask_family import MaskFamily


def check_mask_chunk(mask_chunk: int) -> None:
    """A :class:`PipelineError` unless ``mask_chunk`` is a power of two."""
    if mask_chunk < 1 or mask_chunk & (mask_chunk - 1):
        raise PipelineError(f"--mask-chunk {mask_chunk} must be a power of two (e.g. 256)")


def _model_device_dtype(model: ResidualStack) -> tuple[torch.device, torch.dtype]:
    parameter = next(model.parameters())
    return parameter.device, parameter.dtype


def _logit_dtype(dtype: torch.dtype) -> torch.dtype:
    """Logits are float32, or float64 for a float64 network (high orders at small λ)."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def _to_model(images: torch.Tensor, model: ResidualStack) -> torch.Tensor:
    """The images on the model's device, in its dtype and memory format (channels-last by default)."""
    device, dtype = _model_device_dtype(model)
    return images.to(device=device, dtype=dtype, non_blocking=True).contiguous(memory_format=model.memory_format)


@torch.no_grad()
def evaluate_masks_naive(
    model: ResidualStack,
    images: torch.Tensor,
    mask_indices: Sequence[int] | torch.Tensor | None = None,
    mask_chunk: int = 256,
    residual_scale: float = 1.0,
) -> torch.Tensor:
    """Reference engine: one full forward per (image, mask) at λ = ``residual_scale``. Returns ``(B, len(mask_indices), C)``."""
    tune_allocator()  # once per process: glibc keeps the large activation buffers (experiment_1.network.allocator)
    device, dtype = _model_device_dtype(model)
    num_blocks = model.num_blocks
    if mask_indices is None:
        mask_indices = torch.arange(2**num_blocks)
    mask_indices = torch.as_tensor(mask_indices, dtype=torch.long).to(device)  # one copy, none per chunk
    bits = torch.arange(num_blocks, device=device)
    images = _to_model(images, model)
    batch = images.shape[0]
    outputs = []
    for start in range(0, len(mask_indices), mask_chunk):
        chunk = mask_indices[start : start + mask_chunk]
        masks = ((chunk[:, None] >> bits[None, :]) & 1).bool()  # (m, L)
        replicated = images.repeat_interleave(len(chunk), dim=0)  # image-major: (B·m, ...)
        logits = model(replicated, masks=masks.repeat(batch, 1), residual_scale=float(residual_scale))
        outputs.append(logits.to(_logit_dtype(dtype)).view(batch, len(chunk), -1))
    return torch.cat(outputs, dim=1)


@torch.no_grad()
def evaluate_masks_tree(
    model: ResidualStack, images: torch.Tensor, mask_chunk: int = 256, residual_scale: float = 1.0
) -> torch.Tensor:
    """Prefix-tree engine over all ``2^L`` masks at λ = ``residual_scale``. Returns ``(B, 2^L, C)`` logits."""
    tune_allocator()  # once per process, as in the naive engine
    check_mask_chunk(mask_chunk)
    device, dtype = _model_device_dtype(model)
    images = _to_model(images, model)
    batch = images.shape[0]
    num_blocks = model.num_blocks
    scale = float(residual_scale)
    out: torch.Tensor | None = None

    def descend(handed: list[torch.Tensor], prefix_ids: torch.Tensor, level: int) -> None:
        # handed: [states (n·B, ...)] grouped prefix-major, handed over (popped: the caller keeps no reference,
        # so each group's input is freed as soon as its children exist); prefix_ids: (n,) mask bits 0…level−1
        # of each, on the device (no host copy in the loop)
        nonlocal out
        states = handed.pop()
        if level == num_blocks:
            logits = model.head(states).to(_logit_dtype(dtype)).view(len(prefix_ids), batch, -1)
            del states
            if out is None:
                out = torch.empty(batch, 2**num_blocks, logits.shape[-1], device=device, dtype=logits.dtype)
            out[:, prefix_ids] = logits.transpose(0, 1)
            return
        gate_off, gate_on = model.blocks[level].forward_both(states, scale)
        del states
        on_ids = prefix_ids + (1 << level)
        if 2 * len(prefix_ids) <= mask_chunk:
            merged = [torch.cat([gate_off, gate_on])]
            del gate_off, gate_on
            descend(merged, torch.cat([prefix_ids, on_ids]), level + 1)
        else:
            first, second = [gate_off], [gate_on]  # the gate-on half waits while the gate-off half is walked
            del gate_off, gate_on
            descend(first, prefix_ids, level + 1)
            descend(second, on_ids, level + 1)

    descend([model.stem(images)], torch.zeros(1, dtype=torch.long, device=device), 0)
    assert out is not None
    return out


def _off_child(block: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """A block's gate-off output ``post(shortcut(pre(x)))`` (forward_both's gate-off child)."""
    return block.post(block.shortcut(block.pre(x)))


def _on_child(block: torch.nn.Module, x: torch.Tensor, scale: float) -> torch.Tensor:
    """A block's gate-on output, the same operations as forward_both's gate-on child."""
    x = block.pre(x)
    shortcut_out = block.shortcut(x)
    branch_out = block.branch(x)
    if scale != 1.0:
        branch_out = branch_out * scale
    return block.post(shortcut_out + branch_out)


def _passes_through_when_off(block: torch.nn.Module, previous: torch.nn.Module | None) -> bool:
    """Whether the gate-off output equals the input bit for bit: no ``pre``, an identity shortcut and a ReLU ``post``
    applied to the output of a block whose own ``post`` is a ReLU (non-negative, so the ReLU returns it unchanged)."""
    relu = torch.nn.ReLU
    return (
        type(block.pre) is torch.nn.Identity
        and type(block.shortcut) is torch.nn.Identity
        and type(block.post) is relu
        and previous is not None
        and type(previous.post) is relu
    )


@torch.no_grad()
def evaluate_family_tree(
    model: ResidualStack, images: torch.Tensor, family: MaskFamily, mask_chunk: int = 256, residual_scale: float = 1.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """The prefix-tree walk restricted to a :class:`~experiment_1.network.mask_family.MaskFamily` at λ = ``residual_scale``.

    Each prefix state carries how many of its gates differ from the family's base corner. A state with fewer than
    ``k`` such gates runs the block's branch once and spawns both children; a *saturated* state (``k`` gates away
    from the base) can change no further gate, so the fixed rest of its walk — every later block at the base
    value — runs once for the saturated states of its group, batched, without spawning: off at base ``off``
    (skipping the blocks whose off path returns its input bit for bit), on at base ``on``. A group's children that
    are not saturated stay one group while they are at most ``mask_chunk`` states, and are split into two halves
    of equal size beyond that (not into the gate-off and gate-on halves as in :func:`evaluate_masks_tree`: the
    gate-on half saturates first, so groups split that way shrink level by level to a few states a call, while
    groups merged on the unsaturated count keep near ``mask_chunk``). So the live activations stay bounded by about
    ``L · mask_chunk`` states per image.

    Returns ``(mask_ids, logits)``: the family's ``M`` mask ids ascending (int64, CPU) and ``(B, M, C)`` logits in
    that order (a sparse table; float32, or float64 for a float64 network).
    """
    tune_allocator()  # once per process, as in the naive engine
    check_mask_chunk(mask_chunk)
    device, dtype = _model_device_dtype(model)
    images = _to_model(images, model)
    batch = images.shape[0]
    num_blocks = model.num_blocks
    scale = float(residual_scale)
    ids = family.mask_ids(num_blocks)
    order, base_on = family.order, family.base == "on"
    out: torch.Tensor | None = None
    blocks = list(model.blocks)

    def write(states: torch.Tensor, prefix_ids: torch.Tensor) -> None:
        nonlocal out
        logits = model.head(states).to(_logit_dtype(dtype)).view(len(prefix_ids), batch, -1)
        if out is None:
            out = torch.empty(batch, len(ids), logits.shape[-1], device=device, dtype=logits.dtype)
        out[:, torch.searchsorted(ids, prefix_ids).to(device)] = logits.transpose(0, 1)

    def tail(states: torch.Tensor, prefix_ids: torch.Tensor, level: int) -> None:
        for index in range(level, num_blocks):
            block = blocks[index]
            if base_on:
                states = _on_child(block, states, scale)
            elif not _passes_through_when_off(block, blocks[index - 1] if index else None):
                states = _off_child(block, states)
        if base_on:
            prefix_ids = prefix_ids + ((1 << num_blocks) - (1 << level))
        write(states, prefix_ids)

    def unsaturated(
        handed: list[torch.Tensor], prefix_ids: torch.Tensor, counts: torch.Tensor, level: int
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        # handed: [states] as in descend, at the input of block ``level``; runs the tail of the saturated ones (each
        # k gates from the base) at once and returns the others, or None
        states = handed.pop()
        saturated = counts >= order
        if not bool(saturated.any()):
            return states, prefix_ids, counts
        grouped = states.view(len(prefix_ids), batch, *states.shape[1:])
        del states
        chosen = saturated.nonzero().squeeze(1)
        tail(grouped[chosen.to(device)].flatten(0, 1), prefix_ids[chosen], level)
        rest = (~saturated).nonzero().squeeze(1)
        if not len(rest):
            return None
        return grouped[rest.to(device)].flatten(0, 1), prefix_ids[rest], counts[rest]

    def descend(handed: list[torch.Tensor], prefix_ids: torch.Tensor, counts: torch.Tensor, level: int) -> None:
        # handed: [states (n·B, ...)] grouped prefix-major, none saturated (popped: each group's input is freed once its
        # children exist); prefix_ids, counts: (n,) CPU int64 — mask bits 0…level−1, and how many differ from the base
        states = handed.pop()
        if level == num_blocks:
            write(states, prefix_ids)
            return
        gate_off, gate_on = model.blocks[level].forward_both(states, scale)
        del states
        off_counts, on_counts = (counts + 1, counts) if base_on else (counts, counts + 1)
        merged = [torch.cat([gate_off, gate_on])]
        del gate_off, gate_on
        children = unsaturated(
            merged, torch.cat([prefix_ids, prefix_ids + (1 << level)]), torch.cat([off_counts, on_counts]), level + 1
        )
        if children is None:
            return
        states, prefix_ids, counts = children
        del children
        if len(prefix_ids) <= mask_chunk:
            merged = [states]
            del states
            descend(merged, prefix_ids, counts, level + 1)
            return
        half = (len(prefix_ids) + 1) // 2
        # the second half waits, a copy of its own, so the first half's input is freed once its children exist
        first, second = [states[: half * batch]], [states[half * batch :].clone()]
        del states
        descend(first, prefix_ids[:half], counts[:half], level + 1)
        descend(second, prefix_ids[half:], counts[half:], level + 1)

    zeros = torch.zeros(1, dtype=torch.long)
    root = unsaturated([model.stem(images)], zeros, zeros.clone(), 0)  # order 0: the root is saturated
    if root is not None:
        descend([root[0]], root[1], root[2], 0)
        del root
    assert out is not None
    return ids, out


def evaluate_mask_family(
    model: ResidualStack,
    images: torch.Tensor,
    family: MaskFamily,
    *,
    engine: str = "tree",
    mask_chunk: int = 256,
    residual_scale: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits of every image under every mask of ``family``: ``(mask_ids, (B, M, C) logits)`` in ascending mask id
    (the tree walk of :func:`evaluate_family_tree`, or the naive engine on the same ids). Out-of-memory becomes a
    :class:`PipelineError` that names ``--mask-chunk``/``--batch-size``."""
    if engine not in ENGINES:
        raise PipelineError(f"unknown engine '{engine}'; choose one of {', '.join(ENGINES)}")
    check_mask_chunk(mask_chunk)
    try:
        if engine == "tree":
            return evaluate_family_tree(model, images, family, mask_chunk, residual_scale)
        ids = family.mask_ids(model.num_blocks)
        return ids, evaluate_masks_naive(model, images, ids, mask_chunk, residual_scale)
    except (RuntimeError, MemoryError) as error:
        cause = out_of_memory_line(error)
        if cause is None:
            raise
    raise OutOfMemory(images.shape[0], mask_chunk, cause)


def evaluate_all_masks(
    model: ResidualStack,
    images: torch.Tensor,
    *,
    engine: str = "tree",
    mask_chunk: int = 256,
    residual_scale: float = 1.0,
) -> torch.Tensor:
    """Logits of every image under every mask at λ = ``residual_scale``: ``(B, 2^L, C)``, indexed by mask integer.

    Out-of-memory becomes a :class:`PipelineError` that names ``--mask-chunk``/``--batch-size``.
    """
    if engine not in ENGINES:
        raise PipelineError(f"unknown engine '{engine}'; choose one of {', '.join(ENGINES)}")
    check_mask_chunk(mask_chunk)
    try:
        if engine == "tree":
            return evaluate_masks_tree(model, images, mask_chunk, residual_scale)
        return evaluate_masks_naive(model, images, None, mask_chunk, residual_scale)
    except (RuntimeError, MemoryError) as error:
        cause = out_of_memory_line(error)
        if cause is None:
            raise
    raise OutOfMemory(images.shape[0], mask_chunk, cause)  # outside the except: the failed pass's tensors are freed


class OutOfMemory(PipelineError):
    """The device (or the host) ran out of memory evaluating ``batch_size`` images; ``cause`` is the allocator's first line."""

    def __init__(self, batch_size: int, mask_chunk: int, cause: str) -> None:
        super().__init__(
            f"out of memory evaluating {batch_size} images with --mask-chunk {mask_chunk} ({cause}); "
            f"reduce --mask-chunk (try {max(1, mask_chunk // 4)}) or --batch-size"
        )
        self.batch_size, self.mask_chunk, self.cause = batch_size, mask_chunk, cause


def out_of_memory_line(error: BaseException) -> str | None:
    """The first line of an out-of-memory error (CUDA's, the CPU allocator's, a :class:`MemoryError`, or an
    :class:`OutOfMemory` already raised by an engine); ``None`` for any other error."""
    if isinstance(error, OutOfMemory):
        return error.cause
    text = str(error).strip()
    if isinstance(error, (torch.cuda.OutOfMemoryError, MemoryError)) or "allocate" in text or "out of memory" in text:
        return (text.splitlines() or [type(error).__name__])[0][:120]
    return None


def count_macs(module: nn.Module, x: torch.Tensor) -> tuple[int, torch.Tensor]:
    """MACs of the convolutions and linear layers one forward of ``module`` runs on ``x`` (batch 1)."""
    total = 0

    def hook(layer: nn.Module, inputs: tuple[torch.Tensor], output: torch.Tensor) -> None:
        nonlocal total
        if isinstance(layer, nn.Conv2d):
            kernel = layer.in_channels // layer.groups * layer.kernel_size[0] * layer.kernel_size[1]
            total += output[0].numel() * kernel
        elif isinstance(layer, nn.Linear):
            total += layer.in_features * layer.out_features

    handles = [
        layer.register_forward_hook(hook) for layer in module.modules() if isinstance(layer, (nn.Conv2d, nn.Linear))
    ]
    try:
        with torch.no_grad():
            output = module(x)
    finally:
        for handle in handles:
            handle.remove()
    return total, output


def work_ratio(model: ResidualStack, resolution: int, device: torch.device) -> dict[str, float]:
    """GMAC per image of the naive engine (2^L full forwards) and of the tree engine."""
    x = torch.zeros(1, 3, resolution, resolution, device=device, dtype=next(model.parameters()).dtype)
    stem, state = count_macs(model.stem, x)
    tree = stem
    for level, block in enumerate(model.blocks):
        macs, state = _block_macs(block, state)
        tree += macs * 2**level
    head, _ = count_macs(model.head, state)
    full, _ = count_macs(model, x)
    size = 2**model.num_blocks
    tree += head * size
    return {
        "naive_gmac": full * size / 1e9,
        "tree_gmac": tree / 1e9,
        "work_ratio": full * size / tree,
        "head_share_of_tree_macs": head * size / tree,
    }


def _block_macs(block: nn.Module, state: torch.Tensor) -> tuple[int, torch.Tensor]:
    class Wrapper(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.block = block

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.block(x, None)

    return count_macs(Wrapper(), state)


def family_gmac(model: ResidualStack, resolution: int, device: torch.device, family: MaskFamily) -> float:
    """GMAC per image of the family walk (:func:`experiment_1.network.engines.evaluate_family_tree`): the stem once;
    block l runs both children on the ``Σ_{j<k} C(l, j)`` unsaturated prefix states and its base-value path on the
    ``C(l, k)`` saturated ones (base ``off``: ``pre`` and shortcut only; base ``on``: the whole block); the head on every
    member."""
    x = torch.zeros(1, 3, resolution, resolution, device=device, dtype=next(model.parameters()).dtype)
    total, state = count_macs(model.stem, x)
    order = family.order
    for level, block in enumerate(model.blocks):
        full, output = _block_macs(block, state)
        if family.base == "off":
            before, _ = count_macs(block.pre, state)
            after, _ = count_macs(block.shortcut, block.pre(state))
            saturated = before + after
        else:
            saturated = full
        total += full * sum(comb(level, j) for j in range(min(order, level + 1))) + saturated * comb(level, order)
        state = output
    head, _ = count_macs(model.head, state)
    return (total + head * family.size(model.num_blocks)) / 1e9
