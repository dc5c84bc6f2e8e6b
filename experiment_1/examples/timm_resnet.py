"""A timm ResNet (``pip install timm``; not a dependency of this project) gated through :mod:`experiment_1.network.gating`.

timm's ResNet blocks add a few optional modules to torchvision's — drop-block, anti-aliasing,
squeeze-and-excitation, drop-path — each an identity (or absent) unless configured, and a no-op in
``eval()`` mode; the branch lists whichever are present in the block's own forward order, and the
post-sum activation is the block's last one (``act2``, or ``act3`` for bottlenecks)::

    python -m experiment_2.step_1_evaluate --arch experiment_1.examples.timm_resnet:build_resnet18 --weights pretrained …

``--weights pretrained`` asks timm for its default pretrained weights (downloaded by timm on first
use; offline, one line says so), a named value for a pretrained tag (``--weights a1_in1k``:
``resnet18.a1_in1k``), a path is a ``state_dict`` of the same timm model. ``random`` is timm's
initialisation **except** ``zero_init_last``: timm zeroes each block's last batch-norm by default, so
every random-init branch would output exactly zero and the set function would have no interaction at
all (the gating check refuses such a network); here that batch-norm keeps its ordinary init (weight 1).
"""
from __future__ import annotations

from torch import nn

from experiment_1.errors import PipelineError
from experiment_1.network import Residual, ResidualNetwork
from experiment_1.network import Preprocess
from experiment_1.network import Weights, load_weights_into

BASIC_BRANCH = ("conv1", "bn1", "drop_block", "act1", "aa", "conv2", "bn2", "se", "drop_path")
BOTTLENECK_BRANCH = ("conv1", "bn1", "act1", "conv2", "bn2", "drop_block", "act2", "aa", "conv3", "bn3", "se", "drop_path")


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

    tagged = f"{name}.{weights.text}" if weights.kind == "named" else name  # a named value is a timm pretrained tag, e.g. a1_in1k
    pretrained = weights.kind in ("pretrained", "named")
    try:
        network = timm.create_model(tagged, pretrained=pretrained, zero_init_last=False)  # no identically-zero random branches
    except Exception as error:  # offline, hub errors and unknown tags come in many types; all mean "no weights here"
        if not pretrained:
            raise
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0][:160]
        raise PipelineError(f"timm could not load the pretrained weights of {tagged} ({type(error).__name__}: {first_line}); "
                            "offline? pass --weights <path to a state dict of the same timm model>, or --weights random") from None
    if weights.kind == "path":
        load_weights_into(network, weights)
    return timm_resnet_cut(network.eval())


def build_resnet18(weights: Weights) -> ResidualNetwork:
    """The factory for ``--arch experiment_1.examples.timm_resnet:build_resnet18``."""
    return timm_resnet("resnet18", weights)
