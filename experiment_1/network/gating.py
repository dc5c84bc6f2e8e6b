"""The public way to gate a residual network: say where its residual blocks are, get a :class:`ResidualStack`.

A factory — built in (:mod:`experiment_1.network.registry`) or a user's, loaded with
``--arch package.module:function`` — takes the parsed ``--weights`` (:class:`~experiment_1.network.choices.Weights`)
and returns a :class:`ResidualNetwork`: the network itself and its cut into ``stem``, one
:class:`Residual` per residual block, and ``head``. Every block must compute
``post(shortcut(pre(x)) + branch(pre(x)))``; the stack multiplies ``branch`` by the gate ``λ·m``.
:func:`gate` builds the stack from the very same modules (nothing is copied) and checks that with
every gate on it computes what the network's own forward computes::

    def build_model(weights: Weights) -> ResidualNetwork:
        net = MyResNet().eval()
        load_weights_into(net, weights)                      # random: nothing to load
        return ResidualNetwork(
            network=net,
            stem=nn.Sequential(net.conv, net.bn, nn.ReLU()),
            residuals=[Residual(branch=b.branch, shortcut=b.shortcut, post=nn.ReLU(), name=f"block{i}")
                       for i, b in enumerate(net.blocks)],
            head=nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(1), net.fc),
            preprocess=Preprocess(resize=32, crop=32, mean=..., std=...),
        )

A complete, runnable example is :mod:`experiment_1.examples.cifar_resnet20`.

The gated residual stack: ``stem → blocks[0] → … → blocks[L−1] → head``, one binary gate per residual branch.

Each gateable block computes

    y = post( shortcut(x') + λ · m · branch(x') ),   x' = pre(x)

- ``pre``: a fixed path before the unit (identity for ResNets; the non-gateable blocks between
  two gateable ones for other families);
- ``shortcut``: identity or a downsampling projection — never masked;
- ``branch``: the residual branch ``F`` that the gate ``m ∈ {0, 1}`` multiplies;
- ``post``: ReLU for ResNets, identity for MBConv-style blocks;
- ``λ``: a global residual scale.

The modules hold no run state: the per-sample masks ``(B, L)`` and λ are arguments of
:meth:`ResidualStack.forward` (and of the engines in :mod:`experiment_1.network.engines`), so one model can be
called concurrently with different masks. With every gate on and ``λ = 1`` the output equals the
network the stack was cut from bit for bit (same modules, same operations, same order) on the same
memory format and batch. Stacks are built with :mod:`experiment_1.network.gating` (the public API) and
looked up by name in :mod:`experiment_1.network.registry`.

The smooth control of Experiment 3C: swap every piecewise-linear activation of a gated stack for a smooth one.

The λ^k law is proved for residual stacks that are smooth in λ; ReLU and ReLU6 have kinks. This
module replaces, in place and keeping every weight, each ``nn.ReLU`` by Softplus_β and each
``nn.ReLU6`` by its smooth counterpart ``Softplus_β(x) − Softplus_β(x − 6)`` — in the stem, the
branches, the post-sum activation of ResNets, the fixed (ungated) blocks and the head alike.

- ``Softplus_β(x) = log(1 + e^{βx}) / β`` is analytic; its largest distance from ReLU is
  ``log 2 / β`` (at 0), and its kink is rounded over a width of about ``1/β``. It is computed as
  ``logaddexp(βx, 0) / β`` (the same function, no overflow, one fused kernel) and without
  PyTorch's ``threshold`` switch to the identity, which would put a jump of ``e^{−threshold}/β``
  into the function — a non-smooth point of its own.
- ``SmoothReLU6_β(x) = Softplus_β(x) − Softplus_β(x − 6)``: analytic, 0 for x ≪ 0, 6 for x ≫ 6,
  at most ``log 2 / β`` from ReLU6.

Other piecewise-linear modules (max-pooling, LeakyReLU, hard-tanh other than ReLU6, hard-swish,
thresholds …) are left alone where they run before the first gated block (the stem: they see no λ
and no mask; ResNet's stem max-pool) and refused anywhere after it, so a swapped stack is smooth in
every gate and in λ. What no module type shows — ``F.relu``, ``x.clamp(min=0)``, ``torch.maximum``
called inside a block's own ``forward`` — is found by probing: one forward of the swapped stack on a
random input under a :class:`torch.overrides.TorchFunctionMode` that records every piecewise-linear
function called inside the blocks or the head, with the module that called it; any is refused by name.
The swap counts what it replaced by type (recorded in the summary as ``smooth_swap``); a network
with nothing to replace is refused.

Weights: state-dict files, torchvision downloads and their hashes, for the ``--weights`` value of
:mod:`experiment_1.network.choices`. torchvision weights are read from ``checkpoints/`` (``$MOE_CHECKPOINTS``)
or torch's own hub cache; downloads land in ``checkpoints/`` and are tried only when the host answers
(:func:`host_reachable`), so an offline machine gets the one-line error without torch's "Downloading: …" line first;
every file is checked against the hash prefix in its name.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import socket
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import TorchFunctionMode

from experiment_1.errors import PipelineError
from experiment_1.network.choices import Weights
from experiment_1.paths import REPO_ROOT, checkout_hint


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


def torch_hub_cache() -> Path:
    """Where torch itself keeps downloaded weights: ``<torch.hub.get_dir()>/checkpoints`` (``$TORCH_HOME``, ~/.cache/torch)."""
    return Path(torch.hub.get_dir()) / "checkpoints"


PROBE_TIMEOUT_S = 5.0  # how long a host may take to accept a connection before it counts as unreachable


def host_reachable(url: str, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether a TCP connection to ``url``'s host (its port, else 443) opens within ``timeout`` seconds: probed before a
    download is tried, so an offline machine is told so at once, without a download's "Downloading: …" line or retries."""
    parts = urllib.parse.urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "", parts.port or 443), timeout=timeout):
            return True
    except OSError:
        return False


def load_torchvision_state_dict(weights_enum: object) -> dict[str, torch.Tensor]:
    """Load a torchvision weights entry from ``checkpoints/`` or, failing that, torch's own hub cache (where
    torchvision and other projects put it); download it into ``checkpoints/`` only when neither holds it and its host
    answers (:func:`host_reachable`)."""
    url: str = weights_enum.url  # type: ignore[attr-defined]
    target_dir = checkpoints_dir()
    target = target_dir / url.rsplit("/", 1)[-1]
    for cached in (target, torch_hub_cache() / target.name):
        if cached.exists():
            _verify_torchvision_hash(cached)
            return torch.load(cached, map_location="cpu", weights_only=True)
    if not host_reachable(url):
        raise PipelineError(
            f"{target.name}: not in {target_dir} nor in torch's cache ({torch_hub_cache()}), and "
            f"{urllib.parse.urlsplit(url).hostname} is not reachable to download it from {url}; offline? put the file at "
            f"{target} (or pass --weights <path to a state dict>), or run offline with --arch efficientnet_lite0"
        )
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


def load_state_dict_file(path: Path) -> dict[str, torch.Tensor]:
    """The tensors of a saved state dict (or of a checkpoint's ``state_dict`` entry); one-line errors."""
    if not path.exists():
        hint = checkout_hint(path)
        if hint:
            raise PipelineError(f"{path}: weights file {hint}")
        raise PipelineError(
            f"{path}: weights file not found; pass an existing state-dict path, a named weights entry (see --help) or 'random'"
        )
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        raise PipelineError(
            f"{path}: not a readable PyTorch state dict ({type(error).__name__}); re-download or re-save it with torch.save(model.state_dict(), path)"
        ) from None
    if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
        state = state["state_dict"]
    if not isinstance(state, dict) or not all(
        isinstance(name, str) and isinstance(value, torch.Tensor) for name, value in state.items()
    ):
        raise PipelineError(
            f"{path}: holds a {type(state).__name__}, not a state dict of tensors; save one with torch.save(model.state_dict(), path)"
        )
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
        parts.append(
            f"{len(resized)} keys of another shape: "
            + _listed([f"{name} {tuple(state[name].shape)} vs {tuple(expected[name].shape)}" for name in resized])
        )
    return "; ".join(parts)


def load_state_dict_into(model: nn.Module, state: dict[str, torch.Tensor], source: str) -> None:
    """Load ``state`` into ``model`` strictly; a one-line error naming ``source`` when it does not fit."""
    mismatch = state_dict_mismatch(model, state)
    if mismatch:
        raise PipelineError(
            f"{source}: state dict does not fit this architecture ({mismatch}); pass weights saved from the same --arch"
        )
    model.load_state_dict(state)


def load_weights_into(
    model: nn.Module, weights: Weights, named_state_dict: Callable[[str], dict[str, torch.Tensor]] | None = None
) -> None:
    """Load a ``path`` or ``named`` value into ``model`` strictly (``random``: nothing to load).

    ``named_state_dict`` maps an entry name (a ``named`` value, or ``pretrained``) to its state
    dict, or raises a :class:`PipelineError` naming the entries it knows.
    """
    if weights.kind == "random":
        return
    if weights.kind == "path":
        state = load_state_dict_file(weights.path)
    elif named_state_dict is None:
        raise PipelineError(
            f"--weights {weights}: this architecture has no named or pretrained weights; pass 'random' or a state-dict path"
        )
    else:
        state = named_state_dict(weights.text)
    load_state_dict_into(model, state, str(weights))


IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
MEMORY_FORMATS = {"channels_last": torch.channels_last, "contiguous": torch.contiguous_format}


@dataclass(frozen=True)
class Preprocess:
    """The evaluation transform a model expects: resize the short side, centre-crop, normalise."""

    resize: int = 256
    crop: int = 224
    mean: tuple[float, ...] = IMAGENET_MEAN
    std: tuple[float, ...] = IMAGENET_STD


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
        """Both children of a prefix state: ``(gate off, gate on)``, the branch run once.

        The gate-on child is computed first, so an in-place ``post`` (``ReLU(inplace=True)``, as in
        timm) cannot alter the shortcut before it enters the sum."""
        x = self.pre(x)
        shortcut_out = self.shortcut(x)
        branch_out = self.branch(x)
        if residual_scale != 1.0:
            branch_out = branch_out * residual_scale
        gate_on = self.post(shortcut_out + branch_out)
        return self.post(shortcut_out), gate_on


class ResidualStack(nn.Module):
    """``stem → gateable blocks → head``; masks and λ are arguments of :meth:`forward`, never state."""

    def __init__(
        self,
        stem: nn.Module,
        blocks: list[GateableBlock],
        head: nn.Module,
        preprocess: Preprocess,
        arch: str,
        weights: str,
    ) -> None:
        super().__init__()
        self.stem = stem
        self.blocks = nn.ModuleList(blocks)
        self.head = head
        self.preprocess = preprocess
        self.arch = arch
        self.weights = weights
        self.memory_format = torch.contiguous_format  # of the weights; architectures.build_gated_stack sets it
        self.compiled = False  # compile_stack sets it
        self.num_classes: int | None = None  # C, the logits' size; gating.gate sets it from the network's own forward
        self.full_mask_reference: tuple[int, torch.Tensor] | None = (
            None  # (size, float32 CPU logits of gating.parity_image(size)), set by gating.gate
        )

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
        shortcut = (
            state if uniform_name([block.shortcut for block in self.blocks]) == "Identity" else f"shortcut_l({state})"
        )
        total = f"{shortcut} + λ·m_l·F_l({state})"
        post = uniform_name([block.post for block in self.blocks])
        if post != "Identity":
            total = f"{post or 'post_l'}({total})"
        recursion = f"x_{{l+1}} = {total}"
        if pre:
            recursion += ", u_l = pre_l(x_l) (the fixed, ungated layers before block l; identity where there are none)"
        return recursion

    def forward(
        self, images: torch.Tensor, masks: torch.Tensor | None = None, residual_scale: float = 1.0
    ) -> torch.Tensor:
        """Logits under per-sample ``masks`` — ``(B, L)`` bool or 0/1, ``None``: every gate on — and λ = ``residual_scale``."""
        if masks is not None:
            if masks.dim() != 2 or masks.shape != (images.shape[0], self.num_blocks):
                raise ValueError(
                    f"masks must have shape ({images.shape[0]}, {self.num_blocks}) for this batch; got {tuple(masks.shape)}"
                )
            masks = masks.to(device=images.device)
        x = self.stem(images)
        for index, block in enumerate(self.blocks):
            gate = None
            if masks is not None:
                gate = masks[:, index].to(x.dtype) * residual_scale
            elif residual_scale != 1.0:
                gate = torch.full((x.shape[0],), residual_scale, dtype=x.dtype, device=x.device)
            x = block(x, gate)
        return self.head(x)


PIECEWISE_LINEAR = (
    nn.ReLU,
    nn.ReLU6,
    nn.Hardtanh,
    nn.LeakyReLU,
    nn.PReLU,
    nn.RReLU,
    nn.Hardswish,
    nn.Hardsigmoid,
    nn.Hardshrink,
    nn.Softshrink,
    nn.Threshold,
    nn.MaxPool1d,
    nn.MaxPool2d,
    nn.MaxPool3d,
    nn.AdaptiveMaxPool1d,
    nn.AdaptiveMaxPool2d,
    nn.AdaptiveMaxPool3d,
)
CLIPPING_NAMES = (
    "relu",
    "relu_",
    "clamp",
    "clamp_",
    "clip",
    "clip_",
    "clamp_min",
    "clamp_min_",
    "clamp_max",
    "clamp_max_",
    "maximum",
    "minimum",
    "abs",
    "abs_",
)
"""The kinked functions torch and torch.Tensor both name (torch also has fmax and fmin)."""
PIECEWISE_LINEAR_FUNCTIONS = {  # the functions (and tensor methods) whose graph has kinks, by the name a refusal prints
    **{
        function: f"F.{function.__name__.lstrip('_')}"
        for function in (
            F.relu,
            F.relu_,
            F.relu6,
            F.hardtanh,
            F.hardtanh_,
            F.leaky_relu,
            F.leaky_relu_,
            F.prelu,
            F.rrelu,
            F.threshold,
            F.hardswish,
            F.hardsigmoid,
            F.hardshrink,
            F.softshrink,
            F.max_pool1d,
            F.max_pool2d,
            F.max_pool3d,
            F.adaptive_max_pool1d,
            F.adaptive_max_pool2d,
            F.adaptive_max_pool3d,
        )
    },
    **{
        function: f"torch.{name}"
        for name in (*CLIPPING_NAMES, "fmax", "fmin")
        for function in (getattr(torch, name, None),)
        if function is not None
    },
    **{getattr(torch.Tensor, name): f"Tensor.{name}" for name in CLIPPING_NAMES},
}


def softplus(x: torch.Tensor, beta: float) -> torch.Tensor:
    """``log(1 + e^{βx}) / β`` for every x, without overflow and without a threshold switch."""
    return torch.logaddexp(beta * x, x.new_zeros(())) / beta


class Softplus(nn.Module):
    """Softplus_β, the smooth stand-in for ReLU (no threshold: analytic everywhere)."""

    def __init__(self, beta: float) -> None:
        super().__init__()
        self.beta = float(beta)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softplus(x, self.beta)

    def extra_repr(self) -> str:
        return f"beta={self.beta:g}"


class SmoothReLU6(nn.Module):
    """``Softplus_β(x) − Softplus_β(x − 6)``, the smooth stand-in for ReLU6."""

    def __init__(self, beta: float) -> None:
        super().__init__()
        self.beta = float(beta)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softplus(x, self.beta) - softplus(x - 6.0, self.beta)

    def extra_repr(self) -> str:
        return f"beta={self.beta:g}"


def describe_swap(beta: float) -> str:
    """The swap in words, as the summaries' ``gated_recursion`` and the REPORTs state it."""
    return (
        f"every ReLU replaced by Softplus_β(x) = log(1 + e^(βx))/β and every ReLU6 by Softplus_β(x) − Softplus_β(x − 6), "
        f"β = {beta:g} (at most log 2/β = {math.log(2) / beta:.3g} from the original; all weights kept)"
    )


def _smooth_counterpart(module: nn.Module, beta: float) -> nn.Module:
    # ReLU6 is a Hardtanh subclass: test it before the refusal of other piecewise-linear modules
    if type(module) is nn.ReLU6:
        return SmoothReLU6(beta)
    if type(module) is nn.ReLU:
        return Softplus(beta)
    return module


class _PiecewiseLinearCalls(TorchFunctionMode):
    """Records each piecewise-linear function called while a module of ``names`` runs, under the innermost one."""

    def __init__(self, names: dict[nn.Module, str]) -> None:
        super().__init__()
        self.running: list[str] = []
        self.found: dict[str, set[str]] = {}
        self.hooks = [
            hook
            for module, name in names.items()
            for hook in (
                module.register_forward_pre_hook(lambda module, args, name=name: self._enter(name)),
                module.register_forward_hook(lambda module, args, output: self._leave()),
            )
        ]

    def _enter(self, name: str) -> None:
        self.running.append(name)

    def _leave(self) -> None:  # a hook returning a value would replace the module's output
        self.running.pop()

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204 (torch's protocol)
        name = PIECEWISE_LINEAR_FUNCTIONS.get(func)
        if name is not None and self.running:
            self.found.setdefault(self.running[-1], set()).add(name)
        return func(*args, **(kwargs or {}))

    def remove(self) -> None:
        for hook in self.hooks:
            hook.remove()


def probe_input(model: ResidualStack, seed: int = 0) -> torch.Tensor:
    """One random input the stack takes: ``(1, C, crop, crop)`` for a convolutional stem, ``(1, features)`` for a linear one."""
    parameter = next(model.parameters())
    first = next((module for module in model.stem.modules() if isinstance(module, (nn.Conv2d, nn.Linear))), None)
    shape = (
        (1, first.in_features)
        if isinstance(first, nn.Linear)
        else (1, first.in_channels if first is not None else 3, model.preprocess.crop, model.preprocess.crop)
    )
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(
        device=parameter.device, dtype=parameter.dtype
    )


def piecewise_linear_calls(model: ResidualStack) -> dict[str, set[str]]:
    """The piecewise-linear functions the blocks and the head call in one forward (module path → function names)."""
    names = {
        module: f"{part}.{name}".rstrip(".")
        for part in ("blocks", "head")
        for name, module in getattr(model, part).named_modules()
    }
    recorder = _PiecewiseLinearCalls(names)
    try:
        with torch.no_grad(), recorder:
            model(probe_input(model))
    finally:
        recorder.remove()
    return recorder.found


def smooth_activations(model: ResidualStack, beta: float) -> dict[str, int]:
    """Replace every ReLU / ReLU6 of ``model`` by its smooth counterpart, in place; returns how many of each type.

    A module referenced from several parents (the gated stack shares the original network's
    modules) gets one replacement, set on every parent. A :class:`PipelineError` names any other
    piecewise-linear module after the stem, and any piecewise-linear function a block or the head
    calls (found by :func:`piecewise_linear_calls`); a network without a ReLU or ReLU6 is refused.
    The counts are also kept as ``model.smooth_swap`` (the summary records them).
    """
    if not beta > 0 or not math.isfinite(beta):
        raise PipelineError(f"--smooth-activations {beta:g}: β must be a positive finite number (e.g. 10)")
    replacements: dict[int, nn.Module] = {}
    for parent in model.modules():
        for name, child in list(
            parent._modules.items()
        ):  # not named_children(): it skips a module listed twice (MBConv uses one ReLU6 twice)
            if type(child) in (nn.ReLU, nn.ReLU6):
                replacement = replacements.setdefault(id(child), _smooth_counterpart(child, beta))
                setattr(parent, name, replacement)
    after_stem = [module for part in (model.blocks, model.head) for module in part.modules()]
    left = sorted({type(module).__name__ for module in after_stem if isinstance(module, PIECEWISE_LINEAR)})
    if left:
        raise PipelineError(
            f"{model.arch}: --smooth-activations has no smooth counterpart for {', '.join(left)} after the stem; "
            "the stack would stay piecewise linear in the gates — run it without --smooth-activations"
        )
    counts = {
        kind: sum(1 for module in replacements.values() if type(module) is smooth)
        for kind, smooth in (("ReLU", Softplus), ("ReLU6", SmoothReLU6))
    }
    if not replacements:
        raise PipelineError(
            f"{model.arch}: --smooth-activations found no nn.ReLU or nn.ReLU6 module to replace (nothing to swap); "
            "the network is smooth already or computes its kinks another way — run it without --smooth-activations"
        )
    calls = piecewise_linear_calls(model)
    if calls:
        where = "; ".join(
            f"{', '.join(sorted(functions))} in {name or 'the stack'}" for name, functions in sorted(calls.items())
        )
        raise PipelineError(
            f"{model.arch}: --smooth-activations cannot replace piecewise-linear functions called inside the network ({where}); "
            "use nn.ReLU / nn.ReLU6 modules there, or run it without --smooth-activations"
        )
    model.smooth_swap = counts
    return counts


# The gated full mask may differ from the network's forward by float32 round-off only (a different
# but equivalent operation order in a user's block); a wrong cut moves the logits by far more.
PARITY_RTOL = 1e-4
# The evaluation model as run (device, dtype, compiled, batch-norm folded) against the float32 CPU stack: round-off of
# its arithmetic (TF32's 10-bit and bfloat16's 8-bit mantissas over some 50 layers), far below a wrong kernel or layout.
EVALUATION_PARITY_RTOL = {
    "float32": 1e-4,
    "float64": 1e-4,
    "tf32": 1e-2,
    "float16": 1e-2,
    "bfloat16": 5e-2,
}  # measured on CPU: bf16 ≤ 5e-3, fp16 ≤ 7e-4 (ResNet-18/50, Lite0)


@dataclass
class Residual:
    """One residual block, ``y = post(shortcut(pre(x)) + branch(pre(x)))``; ``None`` parts are identities.

    ``branch`` is what the gate multiplies; ``pre`` holds fixed (ungated) layers that run before the
    block, e.g. non-residual blocks between two residual ones.
    """

    branch: nn.Module
    shortcut: nn.Module | None = None
    post: nn.Module | None = None
    pre: nn.Module | None = None
    name: str = ""


UNSET = "unset"
"""``ResidualNetwork.preprocess`` when the factory named none: refused by :func:`gate`, since a silent
default would evaluate, say, a 32-px network at 224 px with ImageNet normalisation."""


@dataclass
class ResidualNetwork:
    """What an architecture factory returns: a network and its cut ``stem → residuals → head``.

    ``preprocess`` is the evaluation transform the network expects; it must be given —
    ``preprocess=None`` explicitly takes the ImageNet default (short side 256, crop 224, ImageNet mean/std).
    """

    network: nn.Module
    stem: nn.Module
    residuals: list[Residual]
    head: nn.Module
    preprocess: Preprocess | None | str = UNSET


def cut_preprocess(cut: ResidualNetwork, arch: str) -> Preprocess:
    """The cut's transform (``None`` → the ImageNet default); one line when the factory named none."""
    if isinstance(cut.preprocess, Preprocess):
        return cut.preprocess
    if cut.preprocess is None:
        return Preprocess()
    raise PipelineError(
        f"--arch {arch}: the factory's ResidualNetwork names no preprocess; pass preprocess=Preprocess(resize, crop, mean, std) "
        "for the network's input, or preprocess=None for the ImageNet default (resize 256, crop 224)"
    )


Factory = Callable[[Weights], ResidualNetwork]


def gate(cut: ResidualNetwork, arch: str, weights: str) -> ResidualStack:
    """The gated stack of ``cut`` in ``eval()`` mode (modules shared with ``cut.network``), checked
    against the network's own forward; one-line :class:`PipelineError` when it has no residual
    blocks or its full mask computes something else."""
    if not isinstance(cut, ResidualNetwork):
        raise PipelineError(
            f"--arch {arch}: the factory returned a {type(cut).__name__}, not an experiment_1.network.gating.ResidualNetwork"
        )
    if not cut.residuals:
        raise PipelineError(
            f"--arch {arch}: the factory returned no residual blocks; list one experiment_1.network.gating.Residual per block in ResidualNetwork.residuals"
        )
    blocks = [
        GateableBlock(
            part.branch, shortcut=part.shortcut, post=part.post, pre=part.pre, name=part.name or f"block{index}"
        )
        for index, part in enumerate(cut.residuals)
    ]
    stack = ResidualStack(cut.stem, blocks, cut.head, cut_preprocess(cut, arch), arch, weights).eval()
    check_eval_mode(cut.network.eval(), arch)
    check_full_mask_parity(cut.network, stack)
    return stack


def check_eval_mode(network: nn.Module, arch: str) -> None:
    """Every module must be in inference mode after ``eval()`` (a ``train()`` override that ignores it would run dropout and batch statistics)."""
    training = [name or type(network).__name__ for name, module in network.named_modules() if module.training]
    if training:
        raise PipelineError(
            f"--arch {arch}: {len(training)} module(s) stay in training mode after eval() (first: {training[0]}); "
            "a train() override must honour mode=False — the all-mask evaluation needs the inference-mode network"
        )


@torch.no_grad()
def check_full_mask_parity(network: nn.Module, stack: ResidualStack) -> None:
    """The stack with every gate on must give the network's own logits on one random image at the
    model's input size (to float32 round-off); skipped when the network's own logits are not finite
    (the batch loop reports non-finite logits itself)."""
    parameter = next(stack.parameters(), None)
    device, dtype = (
        (parameter.device, parameter.dtype) if parameter is not None else (torch.device("cpu"), torch.float32)
    )
    size = stack.preprocess.crop
    image = parity_image(size).to(device=device, dtype=dtype)
    expected = network(image)
    if not isinstance(expected, torch.Tensor):
        raise PipelineError(
            f"--arch {stack.arch}: the network's forward returns a {type(expected).__name__}, not a logits tensor; pass a network whose forward returns logits"
        )
    if expected.is_complex() or not expected.is_floating_point() or expected.dim() != 2:
        raise PipelineError(
            f"--arch {stack.arch}: the network's forward returns a {expected.dim()}-d {expected.dtype} tensor; the pipeline needs real (batch, classes) logits"
        )
    stack.num_classes = int(expected.shape[1])  # C as the network computes it (a head without nn.Linear included)
    if not torch.isfinite(expected).all():
        return
    branch_peaks: list[float] = []
    hooks = [
        block.branch.register_forward_hook(
            lambda module, inputs, output: branch_peaks.append(output.abs().max().item())
        )
        for block in stack.blocks
    ]
    try:
        actual = stack(image)
    except RuntimeError as error:
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0][:160]
        raise PipelineError(
            f"--arch {stack.arch}: the gated stack fails on a {size}-px image ({first_line}); check that stem → "
            f"residuals → head lists every layer in forward order"
        ) from None
    finally:
        for hook in hooks:
            hook.remove()
    if actual.shape != expected.shape:
        raise PipelineError(
            f"--arch {stack.arch}: the gated stack gives logits of shape {tuple(actual.shape)}, the network {tuple(expected.shape)}; check the head"
        )
    stack.full_mask_reference = (size, actual.detach().float().cpu())
    error = ((actual - expected).abs().max() / expected.abs().max().clamp_min(torch.finfo(expected.dtype).tiny)).item()
    if not error <= PARITY_RTOL and not torch.equal(network(image), expected):
        raise PipelineError(
            f"--arch {stack.arch}: two calls of the network's own forward on one image give different logits; "
            "a stochastic layer (F.dropout with training=True, added noise …) makes it no set function — make its forward deterministic"
        )
    if not error <= PARITY_RTOL:
        raise PipelineError(
            f"--arch {stack.arch}: with every gate on the gated stack differs from the network's own forward (relative error {error:.2g}); "
            "check that stem → residuals → head covers every layer in forward order and that each block is post(shortcut(pre(x)) + branch(pre(x)))"
        )
    check_branches_not_zero(stack, branch_peaks)


def check_branches_not_zero(stack: ResidualStack, branch_peaks: list[float]) -> None:
    """One line when a residual branch outputs exactly zero on the parity image (its largest ``|F_l(x)|``):
    gating it changes nothing, so every Möbius coefficient that contains it is 0 — with every branch zero
    there is no interaction energy at all. timm zero-initialises each block's last batch-norm
    (``zero_init_last``), which does exactly this to a random-init network."""
    zero = [block.name for block, peak in zip(stack.blocks, branch_peaks) if peak == 0.0]
    if zero:
        raise PipelineError(
            f"--arch {stack.arch}: residual branch(es) {', '.join(zero[:3])}{' …' if len(zero) > 3 else ''} "
            f"({len(zero)} of {stack.num_blocks}) output exactly zero "
            "(a zero-initialised last batch-norm, as timm's zero_init_last gives random-init weights?); initialise them or load trained weights"
        )


def parity_image(size: int) -> torch.Tensor:
    """The one random ``(1, 3, size, size)`` float32 image the parity checks use (seed 0, on the CPU)."""
    return torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(0))


def _relative_max_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    return ((actual - expected).abs().max() / expected.abs().max().clamp_min(torch.finfo(expected.dtype).tiny)).item()


@torch.no_grad()
def check_evaluation_parity(stack: ResidualStack, dtype_name: str) -> float:
    """The model as it will be evaluated — on its device, in its dtype, compiled or not — with every gate on
    (the gated forward the naive engine runs) must give the float32 CPU stack's logits on the parity image
    within :data:`EVALUATION_PARITY_RTOL` of ``--dtype dtype_name`` (relative to the largest logit). Returns the
    relative error; nothing to check without a reference (or non-finite reference logits)."""
    if stack.full_mask_reference is None:
        return 0.0
    size, reference = stack.full_mask_reference
    if not torch.isfinite(reference).all():
        return 0.0
    parameter = next(stack.parameters())
    image = (
        parity_image(size)
        .to(device=parameter.device, dtype=parameter.dtype)
        .contiguous(memory_format=stack.memory_format)
    )
    masks = torch.ones(1, stack.num_blocks, dtype=torch.bool, device=parameter.device)
    actual = stack(image, masks=masks).float().cpu()
    error = _relative_max_error(actual, reference)
    tolerance = EVALUATION_PARITY_RTOL[dtype_name]
    if not error <= tolerance:
        how = f"on {parameter.device} with --dtype {dtype_name}" + (" compiled" if stack.compiled else "")
        raise PipelineError(
            f"--arch {stack.arch}: {how}, the model with every gate on differs from the float32 CPU network by {error:.2g} "
            f"(more than the {tolerance:g} round-off of that dtype); rerun with --device cpu or --dtype float32 (and "
            f"without --compile) to find the part at fault"
        )
    return error
