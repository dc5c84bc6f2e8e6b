"""Gated residual networks: a generic *residual stack* with one binary gate per residual branch.

A residual stack is ``stem → blocks[0] → … → blocks[L−1] → head``. Each gateable block is

    y = post( shortcut(x') + λ · m · branch(x') ),   x' = pre(x)

- ``pre``: a fixed path before the unit (identity for ResNets; the non-gateable blocks between
  two gateable ones for other families);
- ``shortcut``: identity or a downsampling projection — never masked;
- ``branch``: the residual branch ``F`` that the gate ``m ∈ {0, 1}`` multiplies;
- ``post``: ReLU for ResNets, identity for MBConv-style blocks;
- ``λ``: a global residual scale (``model.residual_scale``, default 1).

Masks are per sample: :func:`set_per_sample_masks` stores a ``(B, L)`` tensor used by the next
forward. With every gate on and ``λ = 1`` the output equals the unmodified torchvision model
bit for bit (same modules, same operations, same order) on the same memory format and batch.

Memory format: :func:`build_gated_resnet` converts the model to channels-last by default
(:data:`MEMORY_FORMATS`), on CPU as on CUDA — measured faster on both for every registered
architecture (README, *Engines and performance*); the engines convert their input to
``model.memory_format``. ``memory_format="contiguous"`` keeps the layout of the unconverted network.

Architectures are looked up by name in :data:`ARCHITECTURES`; other families register a builder
there (see :func:`register_architecture`) and the evaluators in :mod:`experiment_1.core` work on
any of them unchanged.
"""
from __future__ import annotations

import hashlib
import importlib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch
from torch import nn

from experiment_1.errors import PipelineError

REPO_ROOT = Path(__file__).resolve().parent.parent
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
MEMORY_FORMATS = {"channels_last": torch.channels_last, "contiguous": torch.contiguous_format}


@dataclass(frozen=True)
class Preprocess:
    """The evaluation transform a model expects: resize the short side, centre-crop, normalise."""

    resize: int = 256
    crop: int = 224
    mean: tuple[float, float, float] = IMAGENET_MEAN
    std: tuple[float, float, float] = IMAGENET_STD


class GateableBlock(nn.Module):
    """``y = post(shortcut(pre(x)) + gate · branch(pre(x)))`` with ``gate = λ·m`` per sample."""

    def __init__(
        self,
        branch: nn.Module,
        shortcut: nn.Module | None = None,
        post: nn.Module | None = None,
        pre: nn.Module | None = None,
        name: str = "",
    ) -> None:
        super().__init__()
        self.pre = pre if pre is not None else nn.Identity()
        self.shortcut = shortcut if shortcut is not None else nn.Identity()
        self.branch = branch
        self.post = post if post is not None else nn.Identity()
        self.name = name

    def forward(self, x: torch.Tensor, gate: torch.Tensor | None) -> torch.Tensor:
        """Apply the block; ``gate`` is ``(B,)`` (λ·m per sample) or ``None`` for "on, λ = 1"."""
        x = self.pre(x)
        branch_out = self.branch(x)
        if gate is not None:
            branch_out = branch_out * gate.view(-1, *([1] * (branch_out.dim() - 1)))
        return self.post(self.shortcut(x) + branch_out)

    def forward_both(self, x: torch.Tensor, residual_scale: float) -> tuple[torch.Tensor, torch.Tensor]:
        """Both children of a prefix state: ``(gate off, gate on)``, the branch run once."""
        x = self.pre(x)
        shortcut_out = self.shortcut(x)
        branch_out = self.branch(x)
        if residual_scale != 1.0:
            branch_out = branch_out * residual_scale
        return self.post(shortcut_out), self.post(shortcut_out + branch_out)


class ResidualStack(nn.Module):
    """``stem → gateable blocks → head``, with per-sample masks and a global residual scale."""

    def __init__(
        self,
        stem: nn.Module,
        blocks: list[GateableBlock],
        head: nn.Module,
        preprocess: Preprocess,
        arch: str,
        weights: str,
        residual_scale: float = 1.0,
    ) -> None:
        super().__init__()
        self.stem = stem
        self.blocks = nn.ModuleList(blocks)
        self.head = head
        self.preprocess = preprocess
        self.arch = arch
        self.weights = weights
        self.residual_scale = float(residual_scale)
        self.masks: torch.Tensor | None = None
        self.memory_format = torch.contiguous_format  # of the weights; build_gated_resnet sets it
        self.compiled = False  # compile_stack sets it

    @property
    def num_blocks(self) -> int:
        """``L``, the number of gateable blocks."""
        return len(self.blocks)

    @property
    def block_names(self) -> list[str]:
        """Names of the gateable blocks in forward order (``layer1.0`` …)."""
        return [block.name for block in self.blocks]

    @property
    def gated_recursion(self) -> str:
        """The recursion the gateable blocks compute, read off their modules: the post-activation
        (``ReLU(…)``, or nothing for an identity), the shortcut and the fixed ``pre`` path where
        they are not identities, the gate ``m_l`` and the residual scale ``λ``. REPORTs state this
        string, so no REPORT can name a formula its model does not compute."""
        def uniform_name(modules: list[nn.Module]) -> str | None:
            names = {type(module).__name__ for module in modules}
            return names.pop() if len(names) == 1 else None

        pre = uniform_name([block.pre for block in self.blocks]) != "Identity"
        state = "u_l" if pre else "x_l"
        shortcut = state if uniform_name([block.shortcut for block in self.blocks]) == "Identity" else f"shortcut_l({state})"
        total = f"{shortcut} + λ·m_l·F_l({state})"
        post = uniform_name([block.post for block in self.blocks])
        if post != "Identity":
            total = f"{post or 'post_l'}({total})"
        recursion = f"x_{{l+1}} = {total}"
        if pre:
            recursion += ", u_l = pre_l(x_l) (the fixed, ungated layers before block l; identity where there are none)"
        return recursion

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = self.stem(images)
        masks = self.masks
        if masks is not None and masks.shape[0] != images.shape[0]:
            raise ValueError(f"masks are set for {masks.shape[0]} samples but the batch has {images.shape[0]}")
        for index, block in enumerate(self.blocks):
            gate = None
            if masks is not None:
                gate = masks[:, index].to(x.dtype) * self.residual_scale
            elif self.residual_scale != 1.0:
                gate = torch.full((x.shape[0],), self.residual_scale, dtype=x.dtype, device=x.device)
            x = block(x, gate)
        return self.head(x)


def set_per_sample_masks(model: ResidualStack, masks: torch.Tensor | None) -> None:
    """Set the ``(B, L)`` bool/0-1 masks used by the next forward (``None``: every gate on)."""
    if masks is not None:
        if masks.dim() != 2 or masks.shape[1] != model.num_blocks:
            raise ValueError(f"masks must have shape (B, {model.num_blocks}); got {tuple(masks.shape)}")
        masks = masks.to(device=next(model.parameters()).device)
    model.masks = masks


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


# --------------------------------------------------------------------------------------------
# Weights


def checkpoints_dir() -> Path:
    """Where downloaded weights live: ``$MOE_CHECKPOINTS`` or ``<repo>/checkpoints``."""
    return Path(os.environ.get("MOE_CHECKPOINTS", REPO_ROOT / "checkpoints"))


def _verify_torchvision_hash(path: Path) -> None:
    match = re.search(r"-([a-f0-9]{6,})\.", path.name)
    if not match:
        return
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if not digest.startswith(match.group(1)):
        raise PipelineError(
            f"{path}: sha256 {digest[:12]}… does not match the expected prefix {match.group(1)}; "
            "the file is corrupt or truncated — delete it and download it again"
        )


def load_torchvision_state_dict(weights_enum: object) -> dict[str, torch.Tensor]:
    """Load a torchvision weights entry from ``checkpoints/`` (downloading it if absent)."""
    url: str = weights_enum.url  # type: ignore[attr-defined]
    target_dir = checkpoints_dir()
    target = target_dir / url.rsplit("/", 1)[-1]
    if target.exists():
        _verify_torchvision_hash(target)
        return torch.load(target, map_location="cpu", weights_only=True)
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
        return torch.hub.load_state_dict_from_url(
            url, model_dir=str(target_dir), map_location="cpu", progress=True, check_hash=True
        )
    except Exception as error:  # network errors come in many types; all mean the same here
        raise PipelineError(
            f"could not download {url} ({type(error).__name__}: {error}); offline? "
            f"put the file at {target} (or pass --weights <path to a state dict>), or run offline with --arch efficientnet_lite0"
        ) from None


def _load_state_dict_file(path: Path) -> dict[str, torch.Tensor]:
    if not path.exists():
        raise PipelineError(f"{path}: weights file not found; pass an existing state-dict path, a named weights entry (see --help) or 'random'")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        raise PipelineError(f"{path}: not a readable PyTorch state dict ({type(error).__name__}); re-download or re-save it with torch.save(model.state_dict(), path)") from None
    if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
        state = state["state_dict"]
    if not isinstance(state, dict) or not all(isinstance(name, str) and isinstance(value, torch.Tensor) for name, value in state.items()):
        raise PipelineError(f"{path}: holds a {type(state).__name__}, not a state dict of tensors; save one with torch.save(model.state_dict(), path)")
    return state


def _listed(names: list[str], shown: int = 3) -> str:
    more = f", … {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def state_dict_mismatch(model: nn.Module, state: dict[str, torch.Tensor]) -> str:
    """What keeps ``state`` from loading into ``model`` strictly, in one short line ('' if it fits)."""
    expected = model.state_dict()
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    resized = sorted(name for name in set(expected) & set(state) if expected[name].shape != state[name].shape)
    parts = []
    if missing:
        parts.append(f"{len(missing)} missing keys: {_listed(missing)}")
    if unexpected:
        parts.append(f"{len(unexpected)} unexpected keys: {_listed(unexpected)}")
    if resized:
        parts.append(f"{len(resized)} keys of another shape: " + _listed([f"{name} {tuple(state[name].shape)} vs {tuple(expected[name].shape)}" for name in resized]))
    return "; ".join(parts)


def load_weights_into(model: nn.Module, weights: str, lookup_named: Callable[[str], object]) -> None:
    """Load ``weights`` — a state-dict path, or a name that ``lookup_named`` maps to a torchvision
    weights entry (or rejects) — into ``model`` strictly; one-line errors for every failure."""
    path = Path(weights)
    if weights.endswith((".pth", ".pt", ".bin")) or path.exists():
        state = _load_state_dict_file(path)
    else:
        state = load_torchvision_state_dict(lookup_named(weights))
    mismatch = state_dict_mismatch(model, state)
    if mismatch:
        raise PipelineError(f"{weights}: state dict does not fit this architecture ({mismatch}); pass weights saved from the same --arch")
    model.load_state_dict(state)


# --------------------------------------------------------------------------------------------
# torchvision ResNets


def _torchvision_resnet(arch: str) -> tuple[Callable[..., nn.Module], Callable[[str], object]]:
    import torchvision.models as tvm

    constructor = getattr(tvm, arch)
    weights_class = tvm.get_model_weights(arch)

    def lookup(name: str) -> object:
        try:
            return weights_class[name] if name != "DEFAULT" else weights_class.DEFAULT
        except KeyError:
            names = ", ".join(entry.name for entry in weights_class)
            raise PipelineError(
                f"unknown weights '{name}' for {arch}; use one of {names}, DEFAULT, 'random' or a state-dict path"
            ) from None

    return constructor, lookup


def gate_torchvision_resnet(network: nn.Module, arch: str, weights: str, residual_scale: float = 1.0) -> ResidualStack:
    """Wrap a torchvision ResNet (BasicBlock or Bottleneck) as a :class:`ResidualStack`.

    The modules are shared, not copied: parameters stay those of ``network``.
    """
    from torchvision.models.resnet import BasicBlock, Bottleneck

    stem = nn.Sequential(network.conv1, network.bn1, network.relu, network.maxpool)
    blocks: list[GateableBlock] = []
    for stage in ("layer1", "layer2", "layer3", "layer4"):
        for index, block in enumerate(getattr(network, stage)):
            if isinstance(block, BasicBlock):
                branch = nn.Sequential(block.conv1, block.bn1, nn.ReLU(), block.conv2, block.bn2)
            elif isinstance(block, Bottleneck):
                branch = nn.Sequential(
                    block.conv1, block.bn1, nn.ReLU(), block.conv2, block.bn2, nn.ReLU(), block.conv3, block.bn3
                )
            else:
                raise PipelineError(f"{arch}: unsupported block type {type(block).__name__}")
            blocks.append(GateableBlock(branch, shortcut=block.downsample, post=nn.ReLU(), name=f"{stage}.{index}"))
    head = nn.Sequential(network.avgpool, nn.Flatten(1), network.fc)
    return ResidualStack(stem, blocks, head, Preprocess(), arch, weights, residual_scale)


def build_torchvision_resnet(arch: str, weights: str, seed: int) -> ResidualStack:
    """Build a torchvision ResNet with the given weights and gate it."""
    constructor, lookup = _torchvision_resnet(arch)
    torch.manual_seed(seed)
    network = constructor(weights=None)
    if weights != "random":
        load_weights_into(network, weights, lookup)
    return gate_torchvision_resnet(network.eval(), arch, weights)


# --------------------------------------------------------------------------------------------
# Registry


@dataclass
class ArchitectureRegistry:
    """Name → builder ``(arch, weights, seed) -> ResidualStack`` (a ``"module:function"`` string is
    imported lazily) and the name of each architecture's pretrained weights, the default of ``--weights``."""

    builders: dict[str, Callable[[str, str, int], ResidualStack] | str] = field(default_factory=dict)
    pretrained: dict[str, str] = field(default_factory=dict)

    def register(self, name: str, builder: Callable[[str, str, int], ResidualStack] | str, pretrained: str) -> None:
        self.builders[name] = builder
        self.pretrained[name] = pretrained

    def names(self) -> list[str]:
        return sorted(self.builders)

    def _check(self, name: str) -> None:
        if name not in self.builders:
            raise PipelineError(f"unknown arch '{name}'; choose one of {', '.join(self.names())}")

    def get(self, name: str) -> Callable[[str, str, int], ResidualStack]:
        self._check(name)
        builder = self.builders[name]
        if isinstance(builder, str):
            module_name, function_name = builder.split(":")
            builder = getattr(importlib.import_module(module_name), function_name)
        return builder

    def pretrained_weights(self, name: str) -> str:
        """The weights an architecture is evaluated with when ``--weights`` is not given."""
        self._check(name)
        return self.pretrained[name]


ARCHITECTURES = ArchitectureRegistry()
for _resnet in ("resnet18", "resnet34", "resnet50"):
    ARCHITECTURES.register(_resnet, build_torchvision_resnet, "IMAGENET1K_V1")
for _lite in ("efficientnet_lite0", "efficientnet_lite1", "efficientnet_lite2"):
    ARCHITECTURES.register(_lite, "experiment_1.gated_efficientnet:build_gated_efficientnet_lite", "pretrained")


def register_architecture(name: str, builder: Callable[[str, str, int], ResidualStack] | str, pretrained: str = "random") -> None:
    """Make ``build_gated_resnet(arch=name)`` available; ``pretrained`` names its default weights."""
    ARCHITECTURES.register(name, builder, pretrained)


def build_gated_resnet(
    arch: str = "resnet18",
    weights: str = "IMAGENET1K_V1",
    residual_scale: float = 1.0,
    device: torch.device | str | None = None,
    seed: int = 0,
    dtype: torch.dtype = torch.float32,
    memory_format: str = "channels_last",
) -> ResidualStack:
    """Build a gated residual stack in ``eval()`` mode.

    ``weights``: a torchvision weights name (``IMAGENET1K_V1``, ``DEFAULT``; cached in
    ``checkpoints/`` and hash-checked), a path to a state-dict file, or ``"random"`` (the
    architecture's default initialisation under ``torch.manual_seed(seed)``).
    ``memory_format``: a key of :data:`MEMORY_FORMATS` (channels-last: faster on CPU and CUDA).
    """
    if memory_format not in MEMORY_FORMATS:
        raise PipelineError(f"unknown memory format '{memory_format}'; choose one of {', '.join(MEMORY_FORMATS)}")
    model = ARCHITECTURES.get(arch)(arch, weights, seed)
    model.residual_scale = float(residual_scale)
    model.memory_format = MEMORY_FORMATS[memory_format]
    return model.to(device=device or "cpu", dtype=dtype, memory_format=model.memory_format).eval()
