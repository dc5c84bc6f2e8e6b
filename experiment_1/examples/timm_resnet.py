"""A timm ResNet (``pip install timm``; not a dependency of this project) gated through :mod:`experiment_1.network.gating`.

timm's ResNet blocks add a few optional modules to torchvision's — drop-block, anti-aliasing,
squeeze-and-excitation, drop-path — each an identity (or absent) unless configured, and a no-op in
``eval()`` mode; the branch lists whichever are present in the block's own forward order, and the
post-sum activation is the block's last one (``act2``, or ``act3`` for bottlenecks)::

    python -m experiment_2.step_1_evaluate --arch experiment_1.examples.timm_resnet:build_resnet18 --weights pretrained \\
        --sample-index experiment_1/sample_index_sample_test.json --data-dir imagenet-1k/sample-1750 \\
        --limit 8 --output-dir experiment_2/results_mine_timm

``--weights pretrained`` asks timm for its default pretrained weights (downloaded by timm on first
use; where the Hugging Face hub is not reachable — probed first, or ``HF_HUB_OFFLINE=1`` — timm reads only its
cache, with no download retries, and one whole line says so when the weights are not there), a named value for a pretrained tag (``--weights a1_in1k``:
``resnet18.a1_in1k``), a path is a ``state_dict`` of the same timm model. ``random`` is timm's
initialisation **except** ``zero_init_last``: timm zeroes each block's last batch-norm by default, so
every random-init branch would output exactly zero and the set function would have no interaction at
all (the gating check refuses such a network); here that batch-norm keeps its ordinary init (weight 1).
"""

from __future__ import annotations

import contextlib
import os
from typing import Iterator

from torch import nn

from experiment_1.errors import PipelineError
from experiment_1.network import Preprocess, Residual, ResidualNetwork, Weights, host_reachable, load_weights_into

MESSAGE_LIMIT = 160  # characters of the upstream message kept in the one-line error (cut at a word)


def hub_reachable() -> bool:
    """Whether the Hugging Face hub (``$HF_ENDPOINT``) accepts a connection within a few seconds (``host_reachable``)."""
    return host_reachable(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")


@contextlib.contextmanager
def hub_offline() -> Iterator[None]:
    """huggingface_hub in offline mode for the block (its cache only: no requests, no retries), restored after."""
    import huggingface_hub.constants as constants

    saved_env, saved = os.environ.get("HF_HUB_OFFLINE"), constants.HF_HUB_OFFLINE
    os.environ["HF_HUB_OFFLINE"], constants.HF_HUB_OFFLINE = "1", True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = saved
        if saved_env is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = saved_env


def first_sentence(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """The first line's first sentence of an upstream message, at most ``limit`` characters, cut at a word (…)."""
    line = (text.strip().splitlines() or [""])[0]
    sentence = line.split(". ", 1)[0].rstrip(".")
    if len(sentence) <= limit:
        return sentence
    return sentence[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " …"


BASIC_BRANCH = ("conv1", "bn1", "drop_block", "act1", "aa", "conv2", "bn2", "se", "drop_path")
BOTTLENECK_BRANCH = (
    "conv1",
    "bn1",
    "act1",
    "conv2",
    "bn2",
    "drop_block",
    "act2",
    "aa",
    "conv3",
    "bn3",
    "se",
    "drop_path",
)


def timm_resnet_cut(network: nn.Module) -> ResidualNetwork:
    """Stem ``conv1 bn1 act1 maxpool``, one :class:`Residual` per block of ``layer1 … layer4``, head ``global_pool fc``."""
    residuals = []
    for stage in ("layer1", "layer2", "layer3", "layer4"):
        for index, block in enumerate(getattr(network, stage)):
            bottleneck = hasattr(block, "conv3")
            names = BOTTLENECK_BRANCH if bottleneck else BASIC_BRANCH
            branch = nn.Sequential(*[getattr(block, name) for name in names if getattr(block, name, None) is not None])
            post = block.act3 if bottleneck else block.act2
            residuals.append(Residual(branch, shortcut=block.downsample, post=post, name=f"{stage}.{index}"))
    config = getattr(network, "pretrained_cfg", {}) or {}
    crop = int(config.get("input_size", (3, 224, 224))[-1])
    preprocess = Preprocess(
        resize=round(crop / config.get("crop_pct", 0.875)),
        crop=crop,
        mean=tuple(config.get("mean", Preprocess.mean)),
        std=tuple(config.get("std", Preprocess.std)),
    )
    return ResidualNetwork(
        network=network,
        stem=nn.Sequential(network.conv1, network.bn1, network.act1, network.maxpool),
        residuals=residuals,
        head=nn.Sequential(network.global_pool, network.fc),
        preprocess=preprocess,
    )


def timm_resnet(name: str, weights: Weights) -> ResidualNetwork:
    """timm's ``name`` (``resnet18``, ``resnet50`` …) with ``weights``: pretrained or a tag (timm's), random or a state-dict path."""
    import timm

    tagged = (
        f"{name}.{weights.text}" if weights.kind == "named" else name
    )  # a named value is a timm pretrained tag, e.g. a1_in1k
    pretrained = weights.kind in ("pretrained", "named")
    offline = pretrained and not hub_reachable()  # then timm's cache only: no minute of hub retries
    try:
        with hub_offline() if offline else contextlib.nullcontext():
            network = timm.create_model(
                tagged, pretrained=pretrained, zero_init_last=False
            )  # no identically-zero random branches
    except Exception as error:  # offline, hub errors and unknown tags come in many types; all mean "no weights here"
        if not pretrained:
            raise
        fix = "pass --weights <path to a state dict of the same timm model>, or --weights random"
        if offline:
            raise PipelineError(
                f"timm could not load the pretrained weights of {tagged}: the Hugging Face hub is not reachable "
                f"and timm's cache does not hold them; {fix}"
            ) from None
        cause = first_sentence(str(error)) or type(error).__name__
        raise PipelineError(
            f"timm could not load the pretrained weights of {tagged} ({type(error).__name__}: {cause}); offline? {fix}"
        ) from None
    if weights.kind == "path":
        load_weights_into(network, weights)
    return timm_resnet_cut(network.eval())


def build_resnet18(weights: Weights) -> ResidualNetwork:
    """The factory for ``--arch experiment_1.examples.timm_resnet:build_resnet18``."""
    return timm_resnet("resnet18", weights)
