"""The set-up of a run every experiment shares: flags, model + data, the run's content (its resume key) and provenance.

A step's flags are declared by :class:`experiment_1.run.run_config.RunConfig` (or its subclass); it builds an
:class:`EvaluationSetup` from them with :func:`build_setup` (device, model, sample list and data, after the checks that can refuse the
run in seconds), and hands it to the batch loop (:mod:`experiment_1.run.loop`). :func:`run_content`
is what the run's numbers depend on: the partial store's resume key and every summary's ``config``;
:func:`provenance` adds the run's identity, versions, git commit and device for a summary.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.data import DataLoader

from experiment_1.data.shards import SampleDataset, SampleRef, default_data_dir, load_sample_list, missing_data_dir
from experiment_1.errors import PipelineError
from experiment_1.files import SCHEMA_VERSION, git_commit, package_versions
from experiment_1.network.allocator import tune_allocator
from experiment_1.network.gating import ResidualStack, describe_swap, smooth_activations
from experiment_1.network.registry import build_gated_stack, is_user_factory, network_sha256
from experiment_1.run import distributed, run_config
from experiment_1.run.partial_store import device_identity, run_key, sample_list_sha256
from experiment_1.run.preflight import CALIBRATION_BATCH, CALIBRATION_SOURCE, calibration_samples, check_beta, preflight
from experiment_1.run.run_config import RunConfig

# --dtype and --mobius-dtype (their names: experiment_1.run.run_config) → torch dtypes; tf32 is float32 with TF32 on
DTYPES = {name: getattr(torch, "float32" if name == "tf32" else name) for name in run_config.DTYPE_NAMES}
MOBIUS_DTYPES = {name: getattr(torch, name) for name in run_config.MOBIUS_DTYPE_NAMES}


def resolve_device(name: str) -> torch.device:
    """``auto`` → CUDA when available, else CPU; otherwise ``cpu`` or ``cuda[:index]`` (checked).

    Other torch devices (``mps``, ``xpu``, ``meta`` …) are refused with one line: the engines and the
    exactness checks are written and tested for CPU and CUDA only.
    """
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise PipelineError(f"unknown --device '{name}'; use auto, cpu or cuda[:index]") from None
    if device.type not in ("cpu", "cuda"):
        raise PipelineError(
            f"--device {name}: only cpu and cuda[:index] are supported (the all-mask engines are tested on those); use --device cpu or auto"
        )
    if device.type == "cuda" and not torch.cuda.is_available():
        raise PipelineError(f"--device {name}: CUDA is not available on this machine; use --device cpu or auto")
    if device.type == "cuda" and device.index is not None and device.index >= torch.cuda.device_count():
        raise PipelineError(
            f"--device {name}: this machine has {torch.cuda.device_count()} GPU(s) (cuda:0 …); pick one of those"
        )
    return device


@dataclass
class EvaluationSetup:
    """What a step needs to evaluate: the model, the images, and the configuration that made them.

    ``config`` (:class:`experiment_1.run.run_config.RunConfig`, frozen, or the step's subclass of it) holds the
    flags — the shared ones and the step's own options — and the run's content (its resume key): the only channel
    of the flags.
    """

    model: ResidualStack
    dataset: SampleDataset
    device: torch.device
    config: RunConfig

    @property
    def samples(self) -> list[SampleRef]:
        return self.dataset.samples

    def loader(self, batch_indices: list[list[int]]) -> DataLoader:
        """A loader yielding the given batches (lists of sample positions) in order."""
        return DataLoader(
            self.dataset,
            batch_sampler=batch_indices,
            num_workers=self.config.num_workers,
            pin_memory=self.device.type == "cuda",
        )


def memory_format_for(device: torch.device, dtype: torch.dtype) -> str:
    """Channels-last, except float64 on CUDA: cuDNN has no channels-last float64 convolutions, so every
    convolution would convert layouts (results move within round-off only)."""
    return "contiguous" if device.type == "cuda" and dtype == torch.float64 else "channels_last"


def build_setup(flags: RunConfig) -> EvaluationSetup:
    """Tune the allocator, seed, build the model and the data set from the checked flags (a step that changes shared
    flags passes ``dataclasses.replace`` of them), then every check and preparation before the first batch
    (:func:`experiment_1.run.preflight.preflight`)."""
    tune_allocator()  # before the first large tensor: glibc keeps activation buffers (experiment_1.network.allocator)
    seed_everything(flags.seed)
    samples = load_sample_list(
        flags.sample_index, flags.limit
    )  # the inputs before the model: a bad one fails in seconds
    if not samples:
        raise PipelineError(f"{flags.sample_index}: the sample list is empty")
    data_dir = Path(flags.data_dir) if flags.data_dir else default_data_dir()
    if not data_dir.is_dir():
        raise missing_data_dir(data_dir, given=flags.data_dir is not None)
    device = distributed.start(resolve_device(flags.device))
    model, identity = build_model(flags, device)
    dataset = SampleDataset(data_dir, samples, model.preprocess)
    calibration = (
        SampleDataset(
            data_dir,
            calibration_samples(
                load_sample_list(flags.sample_index), len(samples), flags.calibrate_batchnorm, flags.sample_index
            ),
            model.preprocess,
        )
        if flags.calibrate_batchnorm is not None
        else None
    )
    preflight(model, dataset, flags, device, calibration)
    return EvaluationSetup(
        model, dataset, device, flags.with_content(run_content(flags, model, len(samples), device, identity))
    )


def build_model(flags: RunConfig, device: torch.device) -> tuple[ResidualStack, str | None]:
    """The gated stack of ``flags`` on ``device`` (its dtype and memory format; the activations swapped with
    ``--smooth-activations``), and the network's identity for a user's factory (as built, before any rewrite)."""
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = flags.dtype == "tf32"
    memory_format = memory_format_for(device, DTYPES[flags.dtype])
    model = distributed.alike(
        lambda: build_gated_stack(
            flags.arch,
            flags.weights,
            device=device,
            seed=flags.seed,
            dtype=DTYPES[flags.dtype],
            memory_format=memory_format,
        )
    )
    if flags.resolution is not None:  # another input size (the short side resized in the architecture's own proportion)
        crop, resize = model.preprocess.crop, model.preprocess.resize
        model.preprocess = dataclasses.replace(
            model.preprocess,
            crop=flags.resolution,
            resize=max(flags.resolution, round(flags.resolution * resize / crop)),
        )
    identity = network_sha256(flags.arch, model) if is_user_factory(flags.arch) else None
    if flags.smooth_activations is not None:
        check_beta(flags.smooth_activations, DTYPES[flags.dtype])
        smooth_activations(model, flags.smooth_activations)
    return model, identity


def seed_everything(seed: int) -> None:
    """Seed Python, numpy and torch (CPU and CUDA); make cuDNN deterministic."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def run_content(
    flags: RunConfig, model: ResidualStack, num_images: int, device: torch.device, network_identity: str | None = None
) -> dict[str, Any]:
    """What a run's numbers depend on (the resume key's configuration and the summary's ``config``), in the summaries' order;
    ``network_identity`` (:func:`experiment_1.network.registry.network_sha256`) for a user's factory."""
    content = {
        "arch": flags.arch,
        "weights": model.weights,
        "num_blocks": model.num_blocks,
        "block_names": model.block_names,
        "engine": flags.engine,
        "dtype": flags.dtype,
        "mobius_dtype": flags.mobius_dtype,
        "batch_size": flags.batch_size,
        "mask_chunk": flags.mask_chunk,
        "seed": flags.seed,
        "sample_index": str(flags.sample_index),
        "num_images": num_images,
        "limit": flags.limit,
        "skip_corrupt": bool(flags.skip_corrupt),
        "device_type": device.type,
        "input_size": model.preprocess.crop,
        **device_identity(device),  # GPU model and CUDA/cuDNN versions; nothing on CPU
    }
    if (
        flags.resolution is not None
    ):  # another input size: part of the resume key; absent when not given, so default runs keep their keys
        content["resize"] = model.preprocess.resize
    if network_identity is not None:  # a user's network itself (source and tensors); built-in names keep their keys
        content["network_sha256"] = network_identity
    if (
        flags.fold_batchnorm
    ):  # other numbers (round-off): part of the resume key; absent when off, so default runs keep their keys
        content["fold_batchnorm"] = True
    if flags.smooth_activations is not None:  # another network: part of the resume key; absent when off
        content["smooth_activations"] = {"activation": "softplus", "beta": float(flags.smooth_activations)}
    if flags.calibrate_batchnorm is not None:  # another network: part of the resume key; absent when off
        content["batchnorm_calibration"] = {
            "images": flags.calibrate_batchnorm,
            "batch": CALIBRATION_BATCH,
            "source": CALIBRATION_SOURCE,
            "positions": [num_images, num_images + flags.calibrate_batchnorm],  # [first, last + 1) in the sample list
        }
    return content


def run_id(setup: EvaluationSetup) -> str:
    """The run's identity: sha256 of its content key (:func:`experiment_1.run.partial_store.run_key`)."""
    key = run_key(setup.config, setup.dataset.data_dir, setup.samples)
    return hashlib.sha256(json.dumps(key, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def provenance(setup: EvaluationSetup) -> dict[str, Any]:
    """Configuration plus the run's identity (``run_id``, ``schema_version``, the whole sample list's
    sha256 — before ``--limit`` — so a null run on its first N images can be matched), versions,
    git commit and device name, for a summary JSON."""
    device_name = torch.cuda.get_device_name(setup.device) if setup.device.type == "cuda" else "cpu"
    return {
        **setup.config,
        "run_id": run_id(setup),
        "schema_version": SCHEMA_VERSION,
        "sample_list_sha256": sample_list_sha256(load_sample_list(setup.config.sample_index)),
        "data_dir": str(setup.dataset.data_dir),
        "compiled": setup.model.compiled,  # not in the resume key: compiled and eager batches agree to round-off
        "post_activation": sorted({type(block.post).__name__ for block in setup.model.blocks}),
        "gated_recursion": setup.model.gated_recursion
        + (
            f"; {describe_swap(setup.config.smooth_activations)}" if setup.config.smooth_activations is not None else ""
        ),
        **(
            {"smooth_swap": {"replaced": setup.model.smooth_swap}}
            if getattr(setup.model, "smooth_swap", None) is not None
            else {}
        ),  # what the swap replaced, by type
        "versions": package_versions(),
        "git_commit": git_commit(),
        "device_name": device_name,
        "allocator": tune_allocator(),  # not in the resume key: the numbers do not depend on it
    }
