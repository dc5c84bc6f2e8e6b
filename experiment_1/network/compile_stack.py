"""``torch.compile`` for a gated residual stack, with a one-line fall-back to eager where it does not work."""
from __future__ import annotations

import sys

import torch

from experiment_1.network.residual_stack import ResidualStack


def compile_stack(model: ResidualStack, resolution: int | None = None) -> bool:
    """Run the stem, every block (both engines' entry points) and the head through ``torch.compile``.

    Compilation happens on a first forward of one image at ``resolution`` (default: the model's
    input size); where it fails
    (no C++ compiler on CPU, an unsupported backend …) the model stays eager, one line on stderr
    says why, and the result is ``False``. The compiled model agrees with the eager one to float32
    round-off (fused kernels sum in another order), not bit for bit.
    """
    import torch._dynamo

    # one compiled entry per block per entry point: GateableBlock.forward_both is one code object
    # shared by L blocks, so the default limit of 8 recompilations per code object is too small
    torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, 4 * model.num_blocks + 8)
    eager_stem, eager_head = model.stem, model.head
    try:
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
        print(f"--compile: torch.compile is unavailable here ({type(error).__name__}: {first_line}); running eager", file=sys.stderr)
        return False
    model.compiled = True
    return True
