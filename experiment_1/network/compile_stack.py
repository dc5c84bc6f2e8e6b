"""``torch.compile`` for a gated residual stack, with a one-line fall-back to eager where it does not work."""

from __future__ import annotations

import sys

import torch

from experiment_1.network.stack import ResidualStack

RECOMPILE_LIMIT_NAMES = (
    "recompile_limit",
    "cache_size_limit",
)  # the newer name first; torch < 2.6 has only the older one


def raise_recompile_limit(minimum: int) -> None:
    """Raise dynamo's per-code-object recompilation limit to at least ``minimum``, under whichever name this torch has.

    One compiled entry per block per entry point: ``GateableBlock.forward_both`` is one code object
    shared by L blocks, so the default limit of 8 recompilations per code object is too small. An
    ``AttributeError`` when this torch has neither name (the caller then stays eager).
    """
    import torch._dynamo

    config = torch._dynamo.config
    name = next((name for name in RECOMPILE_LIMIT_NAMES if hasattr(config, name)), None)
    if name is None:
        raise AttributeError(f"torch._dynamo.config has none of {', '.join(RECOMPILE_LIMIT_NAMES)}")
    setattr(config, name, max(getattr(config, name), minimum))


def compile_stack(model: ResidualStack, resolution: int | None = None) -> bool:
    """Run the stem, every block (both engines' entry points) and the head through ``torch.compile``.

    Compilation happens on a first forward of one image at ``resolution`` (default: the model's
    input size); where it fails
    (no C++ compiler on CPU, an unsupported backend …) the model stays eager, one line on stderr
    says why, and the result is ``False``. The compiled model agrees with the eager one to float32
    round-off (fused kernels sum in another order), not bit for bit.
    """
    eager_stem, eager_head = model.stem, model.head
    try:
        raise_recompile_limit(4 * model.num_blocks + 8)
        model.stem, model.head = torch.compile(model.stem), torch.compile(model.head)
        for block in model.blocks:
            block.forward = torch.compile(block.forward)
            block.forward_both = torch.compile(block.forward_both)
        parameter = next(model.parameters())
        size = resolution or model.preprocess.crop
        example = torch.zeros(1, 3, size, size, device=parameter.device, dtype=parameter.dtype)
        with torch.no_grad():
            model(example.contiguous(memory_format=model.memory_format))
    except Exception as error:  # compiler and backend failures come in many types; all mean "stay eager"
        model.stem, model.head = eager_stem, eager_head
        for block in model.blocks:
            block.__dict__.pop("forward", None)
            block.__dict__.pop("forward_both", None)
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0][:160]
        print(
            f"--compile: torch.compile is unavailable here ({type(error).__name__}: {first_line}); running eager",
            file=sys.stderr,
        )
        return False
    model.compiled = True
    return True
