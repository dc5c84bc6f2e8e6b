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
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import warnings
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import torch

from experiment_1.errors import PipelineError
from experiment_1.network.efficientnet_lite import LITE_VARIANTS, efficientnet_lite
from experiment_1.network.gating import MEMORY_FORMATS, PRETRAINED, Factory, ResidualStack, Weights, gate, parse_weights
from experiment_1.network.torchvision_resnets import torchvision_resnet


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


for _resnet in ("resnet18", "resnet34", "resnet50", "resnet101", "resnet152"):
    register_architecture(_resnet, partial(torchvision_resnet, _resnet), "IMAGENET1K_V1")
# past the exhaustive pass (L = 33 and 50 gated blocks): evaluated on mask families (experiment_2.step_8_low_orders)
DEEP_ARCHITECTURES = ("resnet101", "resnet152")
for _lite in LITE_VARIANTS:
    register_architecture(_lite, partial(efficientnet_lite, _lite))


def build_gated_stack(
    arch: str = "resnet18",
    weights: str | Weights = PRETRAINED,
    device: torch.device | str | None = None,
    seed: int = 0,
    dtype: torch.dtype = torch.float32,
    memory_format: str = "channels_last",
) -> ResidualStack:
    """Build the gated stack of ``arch`` in ``eval()`` mode.

    ``weights``: a parsed :class:`~experiment_1.network.gating.Weights` or its text (``pretrained``,
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
