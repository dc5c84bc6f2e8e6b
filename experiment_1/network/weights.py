"""Weights: state-dict files, torchvision downloads and their hashes, for the ``--weights`` value of
:mod:`experiment_1.network.choices`. torchvision weights are read from ``checkpoints/`` (``$MOE_CHECKPOINTS``)
or torch's own hub cache; downloads land in ``checkpoints/`` and are tried only when the host answers
(:func:`host_reachable`), so an offline machine gets the one-line error without torch's "Downloading: …" line first;
every file is checked against the hash prefix in its name.
"""

from __future__ import annotations

import os
import re
import socket
import urllib.parse
from pathlib import Path
from typing import Callable

import torch
from torch import nn

from experiment_1.errors import PipelineError
from experiment_1.files import file_sha256
from experiment_1.network.choices import Weights
from experiment_1.paths import REPO_ROOT, checkout_hint


def checkpoints_dir() -> Path:
    """Where downloaded weights live: ``$MOE_CHECKPOINTS`` or ``<repo>/checkpoints``."""
    return Path(os.environ.get("MOE_CHECKPOINTS", REPO_ROOT / "checkpoints"))


def _verify_torchvision_hash(path: Path) -> None:
    match = re.search(r"-([a-f0-9]{6,})\.", path.name)
    if not match:
        return
    digest = file_sha256(path)
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
