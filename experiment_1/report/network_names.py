"""The networks' names as the text and the figures write them: ``efficientnet_lite0`` → EfficientNet-Lite0,
``resnet18`` → ResNet-18, a user's factory by its function's words."""

from __future__ import annotations

import re

NETWORK_NAMES = {"resnet": "ResNet-", "efficientnet_lite": "EfficientNet-Lite"}

ARCH = re.compile(r"\b(resnet|efficientnet_lite)(\d+)\b")


def pretty_networks(text: str) -> str:
    """Every architecture name in ``text`` as the paper names it (efficientnet_lite1 → EfficientNet-Lite1)."""
    return ARCH.sub(lambda match: NETWORK_NAMES[match.group(1)] + match.group(2), text)


def network_name(arch: str, weights: str | None = None) -> str:
    """``efficientnet_lite0`` → EfficientNet-Lite0, ``resnet18`` → ResNet-18; "(random init)" when not trained. A factory
    (``package.module:function``) is named by its function, words apart (``resnet18_first_block_held`` → ResNet-18 first
    block held), not by its import path."""
    if ":" in arch:
        return pretty_networks(arch.rpartition(":")[2].replace("_", " ")) + (
            " (random init)" if weights == "random" else ""
        )
    name = arch
    for prefix, pretty in NETWORK_NAMES.items():
        if arch.startswith(prefix) and arch[len(prefix) :].isdigit():
            name = pretty + arch[len(prefix) :]
    return name + (" (random init)" if weights == "random" else "")
