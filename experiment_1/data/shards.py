"""ImageNet images from Hugging Face–style parquet shards (or an ImageFolder tree), by sample list.

Parquet schema (the ``ILSVRC/imagenet-1k`` mirror): ``image: struct<bytes: binary, path: string>``
(or a plain ``binary`` column) and ``label: int64`` (``-1`` or null = unlabelled). An ImageFolder
tree is ``<root>/<class_dir>/*.JPEG`` with class folders named by WordNet id or torchvision class
name (labelled by the ImageNet class index, :mod:`experiment_1.data.imagenet_classes`; other names need
``folder_labels="sorted"``), or a flat folder of images (unlabelled). Hidden entries (``.name``) and
class folders without images are ignored; other files that are not images are reported on stderr.

A *sample list* names images as ``(source, row, label)``: ``source`` is a shard file (or an image
file) relative to the data directory, ``row`` its row in the shard (``-1`` for image files).
:class:`SampleDataset` reads only the rows a sample list names, one parquet row group at a time.

Sample lists: which images an experiment uses, drawn reproducibly and stored as JSON.

File format::

    {"pattern": "test-*.parquet", "mode": "uniform", "seed": 0, "num_images": N,
     "samples": [{"source": "test-00000-of-00028.parquet", "row": 17, "label": -1}, …]}

Samples are sorted by (source, row) so that reading them walks each shard once. ``source`` is a
``.parquet`` shard (``row`` ≥ 0) or an image file (``row`` = -1) relative to the data directory;
``label`` is a class index or -1 (unlabelled). Every field is checked when the list is read.
"""

from __future__ import annotations

import io
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from PIL import Image
from torch.utils.data import Dataset
from torchvision import transforms

from experiment_1.data.choices import MODES
from experiment_1.data.imagenet_classes import folder_labels
from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.network.gating import Preprocess
from experiment_1.paths import DOWNLOAD_HINT, REPO_ROOT, create_sample_list, missing_path

IMAGE_SUFFIXES = (
    ".jpeg",
    ".jpg",
    ".png",
    ".bmp",
    ".webp",
    ".ppm",
    ".pgm",
    ".tif",
    ".tiff",
    ".gif",
)  # torchvision's ImageFolder's, and GIF
# PIL modes decode_image converts to 8-bit RGB; integer greyscale ("I;16…", "I") is rescaled from 16 bits first
DECODABLE_MODES = (
    "1",
    "L",
    "LA",
    "La",
    "P",
    "PA",
    "RGB",
    "RGBA",
    "RGBa",
    "RGBX",
    "CMYK",
    "YCbCr",
    "I",
    "I;16",
    "I;16L",
    "I;16B",
    "I;16N",
)


def default_data_dir() -> Path:
    """``$MOE_DATA`` if set, else ``<repo>/imagenet-1k/data``."""
    return Path(os.environ.get("MOE_DATA", REPO_ROOT / "imagenet-1k" / "data"))


def missing_data_dir(data_dir: Path, given: bool = False) -> PipelineError:
    """The one-line error for a data folder that is not a folder (:func:`experiment_1.paths.missing_path`): for a
    folder the user named (``given``: ``--data-dir``) a look-alike folder beside it — a typo is not a missing
    download —, else how to download the shards, as for the default one (``$MOE_DATA``, ``imagenet-1k/data``)."""
    fix = f"check the path, or {DOWNLOAD_HINT}" if given else DOWNLOAD_HINT
    return PipelineError(missing_path(data_dir, True, "data directory", fix, given) or "")


@dataclass(frozen=True)
class SampleRef:
    """One image of a sample list: ``source`` relative to the data dir, ``row`` in it, ``label``."""

    source: str
    row: int
    label: int

    def describe(self) -> str:
        return f"{self.source} row {self.row}" if self.row >= 0 else self.source


# --------------------------------------------------------------------------------------------
# Schema and discovery


def image_column_kind(schema: pa.Schema, path: Path) -> str:
    """``"struct"`` or ``"binary"`` for the image column; a :class:`PipelineError` if the schema is wrong."""
    fix = "expected columns image: struct<bytes: binary, path: string> (or binary) and label: int64, as in ILSVRC/imagenet-1k"
    if "image" not in schema.names or "label" not in schema.names:
        raise PipelineError(f"{path}: wrong parquet schema (columns {schema.names}); {fix}")
    image_type = schema.field("image").type
    if pa.types.is_struct(image_type) and image_type.get_field_index("bytes") >= 0:
        kind = "struct"
    elif pa.types.is_binary(image_type) or pa.types.is_large_binary(image_type):
        kind = "binary"
    else:
        raise PipelineError(f"{path}: wrong parquet schema (image column is {image_type}); {fix}")
    if not pa.types.is_integer(schema.field("label").type):
        raise PipelineError(f"{path}: wrong parquet schema (label column is {schema.field('label').type}); {fix}")
    return kind


def _open_parquet(path: Path) -> pq.ParquetFile:
    if not path.exists():
        raise PipelineError(f"{path}: shard not found; {DOWNLOAD_HINT}")
    try:
        return pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as error:
        raise PipelineError(f"{path}: not a readable parquet file ({error}); delete it and download it again") from None


def find_sources(data_dir: Path, pattern: str) -> list[Path]:
    """Shards (``*.parquet``) or ImageFolder roots under ``data_dir`` matching the glob ``pattern``."""
    if not data_dir.is_dir():
        raise missing_data_dir(data_dir)
    matches = sorted(path for path in data_dir.glob(pattern) if path.suffix == ".parquet" or path.is_dir())
    if not matches:
        raise PipelineError(f"{data_dir}: no shards or image folders match '{pattern}'; {DOWNLOAD_HINT}")
    return matches


def list_items(data_dir: Path, pattern: str, labels: str = "imagenet") -> list[SampleRef]:
    """Every image (with its label) in the sources matching ``pattern``, in a fixed order; ``labels``
    numbers ImageFolder class folders (``imagenet`` or ``sorted``, :func:`experiment_1.data.imagenet_classes.folder_labels`)."""
    items: list[SampleRef] = []
    for source in find_sources(data_dir, pattern):
        if source.suffix == ".parquet":
            items.extend(_list_parquet(source, data_dir))
        else:
            items.extend(_list_folder(source, data_dir, labels))
    return items


def _list_parquet(shard: Path, data_dir: Path) -> list[SampleRef]:
    parquet = _open_parquet(shard)
    image_column_kind(parquet.schema_arrow, shard)
    labels = parquet.read(columns=["label"]).column("label").fill_null(-1).to_numpy()  # null: unlabelled, like -1
    name = shard.relative_to(data_dir).as_posix()
    return [SampleRef(name, row, int(label)) for row, label in enumerate(labels)]


def _visible(folder: Path) -> list[Path]:
    return sorted(path for path in folder.iterdir() if not path.name.startswith("."))


def _is_image(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in IMAGE_SUFFIXES


def _list_folder(root: Path, data_dir: Path, labels: str) -> list[SampleRef]:
    entries = _visible(root)
    class_dirs = [path for path in entries if path.is_dir() and any(_is_image(file) for file in _visible(path))]
    items: list[SampleRef] = []
    left_out = [path for path in entries if path.is_file() and (class_dirs or not _is_image(path))]
    if class_dirs:
        label_of = folder_labels(root, [class_dir.name for class_dir in class_dirs], labels)
        for class_dir in class_dirs:
            for file in _visible(class_dir):
                if _is_image(file):
                    items.append(SampleRef(file.relative_to(data_dir).as_posix(), -1, label_of[class_dir.name]))
                else:
                    left_out.append(file)
    else:
        items = [SampleRef(file.relative_to(data_dir).as_posix(), -1, -1) for file in entries if _is_image(file)]
    if not items:
        raise PipelineError(
            f"{root}: no images ({', '.join(IMAGE_SUFFIXES)}) found in this folder or its class folders"
        )
    if left_out:
        print(
            f"note: {root}: left out {len(left_out)} file(s) that are not images or lie outside the class folders "
            f"({', '.join(path.name for path in left_out[:3])}"
            f"{' …' if len(left_out) > 3 else ''}); readable: {', '.join(IMAGE_SUFFIXES)}",
            file=sys.stderr,
        )
    return items


# --------------------------------------------------------------------------------------------
# Decoding


def eval_transform(preprocess: Preprocess) -> transforms.Compose:
    """Resize the short side, centre-crop, to tensor, normalise — the standard evaluation transform."""
    return transforms.Compose(
        [
            transforms.Resize(preprocess.resize, interpolation=transforms.InterpolationMode.BILINEAR),
            transforms.CenterCrop(preprocess.crop),
            transforms.ToTensor(),
            transforms.Normalize(preprocess.mean, preprocess.std),
        ]
    )


def decode_image(data: bytes) -> Image.Image:
    """Decode image bytes to 8-bit RGB: greyscale, CMYK, YCbCr, palette and alpha modes are converted,
    16-bit greyscale is rescaled (PIL's own conversion would clip it to nearly white); other modes
    (float, LAB, HSV …) and integer images beyond 16 bits raise a ``ValueError`` naming the mode."""
    image = Image.open(io.BytesIO(data))
    image.load()
    if image.mode not in DECODABLE_MODES:
        raise ValueError(f"image mode {image.mode} is not supported; convert the image to 8-bit RGB")
    if image.mode.startswith("I"):  # 16-bit greyscale (PNG, TIFF): 0 … 65535 → 0 … 255
        values = np.asarray(image, dtype=np.float64)
        if values.min(initial=0) < 0 or values.max(initial=0) > 65535:
            raise ValueError(
                f"image mode {image.mode} with values outside 0 … 65535 is not supported; convert the image to 8-bit RGB"
            )
        image = Image.fromarray(np.round(values * (255.0 / 65535.0)).astype(np.uint8))
    return image.convert("RGB")


class _RowGroupReader:
    """Reads single rows of a parquet shard, caching the most recent row group."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file = _open_parquet(path)
        self.kind = image_column_kind(self.file.schema_arrow, path)
        metadata = self.file.metadata
        sizes = [metadata.row_group(index).num_rows for index in range(metadata.num_row_groups)]
        self.starts = np.concatenate([[0], np.cumsum(sizes)])
        self.cached_group = -1
        self.cached_images: pa.Array | None = None

    def image_bytes(self, row: int) -> bytes:
        if not 0 <= row < self.starts[-1]:  # checked up front; the shard changed since
            raise PipelineError(
                f"{self.path}: row {row} out of range (shard has {self.starts[-1]} rows); the shard changed during the run — rerun"
            )
        group = int(np.searchsorted(self.starts, row, side="right") - 1)
        if group != self.cached_group:
            self.cached_images = self.file.read_row_group(group, columns=["image"]).column("image").combine_chunks()
            self.cached_group = group
        assert self.cached_images is not None
        value = self.cached_images[row - int(self.starts[group])]
        if self.kind == "struct":
            value = value["bytes"]
        data = value.as_py()
        return b"" if data is None else data  # no bytes: an image that does not decode


def check_sources(data_dir: Path, samples: list[SampleRef]) -> None:
    """Stop with one line unless every source exists and every parquet row is inside its shard.

    These are errors of the shards or the sample list, never of one image, so ``--skip-corrupt``
    does not apply to them.
    """
    rows_by_source: dict[str, list[int]] = {}
    for sample in samples:
        rows_by_source.setdefault(sample.source, []).append(sample.row)
    if not Path(data_dir).is_dir():
        raise missing_data_dir(data_dir)
    missing = sorted(source for source in rows_by_source if not (data_dir / source).exists())
    if missing:
        raise PipelineError(
            f"{data_dir / missing[0]}: listed in the sample list but missing ({len(missing)} missing); {DOWNLOAD_HINT}"
        )
    first_seen: dict[tuple[Path, int], SampleRef] = {}
    for sample in samples:  # two spellings of one file (a/./b, a//b, a symlink) are one image
        previous = first_seen.setdefault(((data_dir / sample.source).resolve(), sample.row), sample)
        if previous is not sample:
            raise PipelineError(
                f"{data_dir / sample.source}: {sample.describe()} is the same image as {previous.describe()} (one file, "
                f"two spellings); list each image once — regenerate the list with experiment_1.step_2_sample"
            )
    for source, rows in rows_by_source.items():
        path = data_dir / source
        if path.suffix != ".parquet":
            continue
        parquet = _open_parquet(path)
        image_column_kind(parquet.schema_arrow, path)
        count = parquet.metadata.num_rows
        outside = [row for row in rows if not 0 <= row < count]
        if outside:
            raise PipelineError(
                f"{path}: row {outside[0]} out of range (shard has {count} rows); the sample list does not match these "
                f"shards — regenerate it with experiment_1.step_2_sample"
            )


class SampleDataset(Dataset):
    """The images of a sample list, transformed. Items: ``{"image", "label", "index", "error", "fatal"}``.

    Sources and rows are checked when the data set is made (:func:`check_sources`). An image whose
    bytes do not decode yields a zero image and an ``error`` naming the shard and row (skippable
    with ``--skip-corrupt``); bytes that cannot be read at all (a damaged shard) give ``fatal``.
    :func:`check_batch_errors` decides.
    """

    def __init__(self, data_dir: Path, samples: list[SampleRef], preprocess: Preprocess) -> None:
        self.data_dir = Path(data_dir)
        self.samples = samples
        self.preprocess = preprocess
        self.transform = eval_transform(preprocess)
        self.readers: dict[str, _RowGroupReader] = {}
        check_sources(self.data_dir, samples)

    def __len__(self) -> int:
        return len(self.samples)

    def _bytes(self, sample: SampleRef) -> bytes:
        if sample.row < 0:
            return (self.data_dir / sample.source).read_bytes()
        reader = self.readers.get(sample.source)
        if reader is None:
            reader = self.readers[sample.source] = _RowGroupReader(self.data_dir / sample.source)
        return reader.image_bytes(sample.row)

    def __getitem__(self, index: int) -> dict[str, object]:
        sample = self.samples[index]
        image, error, fatal = torch.zeros(3, self.preprocess.crop, self.preprocess.crop), "", ""
        try:
            data = self._bytes(sample)
        except PipelineError as failure:
            fatal = str(failure)
        except Exception as failure:  # pyarrow and the file system raise many types for a damaged shard
            fatal = (
                f"{self.data_dir / sample.source}: cannot read {sample.describe()} ({type(failure).__name__}: {failure}); "
                "the file is damaged — delete it and download it again"
            )
        else:
            try:
                image = self.transform(decode_image(data))
            except Exception as failure:  # PIL raises many types for a corrupt image
                error = f"{self.data_dir / sample.source} row {sample.row}: cannot decode image ({type(failure).__name__}: {failure})"
        return {"image": image, "label": sample.label, "index": index, "error": error, "fatal": fatal}


def check_batch_errors(errors: list[str], skip_corrupt: bool, fatal: Sequence[str] = ()) -> list[bool]:
    """Per-item validity: stop on the first ``fatal`` error, and on the first undecodable image unless ``skip_corrupt``."""
    for message in fatal:
        if message:
            raise PipelineError(message)
    for error in errors:
        if error and not skip_corrupt:
            raise PipelineError(
                f"{error}; fix or remove that row, or pass --skip-corrupt to skip and count such images"
            )
    return [not error for error in errors]


def draw_sample(
    items: list[SampleRef],
    mode: str,
    num_images: int,
    per_class: int,
    seed: int,
    min_per_class: int = 1,
    num_classes: int | None = None,
) -> list[SampleRef]:
    """Draw a sample without replacement: ``uniform`` (``num_images`` of all items) or
    ``per-class`` (``per_class`` of each label, all of a class if it has fewer; only labels with at
    least ``min_per_class`` images; of those, ``num_classes`` drawn at random when given — a small
    list whose classes each hold several images). Deterministic in ``seed``."""
    rng = np.random.default_rng(seed)
    if mode == "uniform":
        count = min(num_images, len(items))
        chosen = rng.choice(len(items), size=count, replace=False)
    elif mode == "per-class":
        labels = np.array([item.label for item in items])
        if (labels < 0).all():
            raise PipelineError(
                "--mode per-class needs labelled images, but every matched image has label -1; use the validation shards (--pattern 'validation-*.parquet')"
            )
        eligible = [label for label in np.unique(labels[labels >= 0]) if (labels == label).sum() >= min_per_class]
        if num_classes is not None and eligible:
            eligible = sorted(rng.choice(eligible, size=min(num_classes, len(eligible)), replace=False))
        chosen_parts = []
        for label in eligible:
            members = np.flatnonzero(labels == label)
            chosen_parts.append(rng.choice(members, size=min(per_class, len(members)), replace=False))
        if not chosen_parts:
            raise PipelineError(f"--min-per-class {min_per_class}: no class has that many images; lower it")
        chosen = np.concatenate(chosen_parts)
    else:
        raise PipelineError(f"unknown --mode '{mode}'; choose one of {', '.join(MODES)}")
    return sorted((items[index] for index in chosen), key=lambda item: (item.source, item.row))


def sample_list_json(
    samples: list[SampleRef],
    pattern: str,
    mode: str,
    seed: int,
    per_class: int | None,
    min_per_class: int | None = None,
    classes_drawn: int | None = None,
) -> dict[str, Any]:
    """The JSON document of a sample list (``min_per_class``, ``classes_drawn`` and the number of classes kept only when given)."""
    kept = (
        {}
        if min_per_class is None and classes_drawn is None
        else {"min_per_class": min_per_class, "num_classes": len({s.label for s in samples if s.label >= 0})}
    )
    if classes_drawn is not None:
        kept["classes_drawn"] = classes_drawn
    return {
        "pattern": pattern,
        "mode": mode,
        "seed": seed,
        "per_class": per_class,
        **kept,
        "num_images": len(samples),
        "samples": [{"source": s.source, "row": s.row, "label": s.label} for s in samples],
    }


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_entry(entry: Any) -> SampleRef:
    """One sample-list entry, every field checked; a ``ValueError`` naming the field and its allowed values."""
    if not isinstance(entry, dict) or not {"source", "row", "label"} <= set(entry):
        raise ValueError(f"{json.dumps(entry)[:80]} is not an object with source, row and label")
    source, row, label = entry["source"], entry["row"], entry["label"]
    suffix = PurePosixPath(source).suffix.lower() if isinstance(source, str) else ""
    if not suffix or PurePosixPath(source).is_absolute() or ".." in PurePosixPath(source).parts:
        raise ValueError(f"source {json.dumps(source)} must be a relative path inside the data directory")
    if suffix != ".parquet" and suffix not in IMAGE_SUFFIXES:
        raise ValueError(
            f"source {json.dumps(source)} is neither a .parquet shard nor an image ({', '.join(IMAGE_SUFFIXES)})"
        )
    if suffix == ".parquet" and not (_is_integer(row) and row >= 0):
        raise ValueError(f"row {json.dumps(row)} of shard {source} must be an integer ≥ 0")
    if suffix != ".parquet" and row != -1:
        raise ValueError(f"row {json.dumps(row)} of image file {source} must be -1")
    if not (_is_integer(label) and label >= -1):
        raise ValueError(f"label {json.dumps(label)} must be an integer ≥ 0, or -1 for unlabelled")
    return SampleRef(source, row, label)


def missing_sample_list(path: Path, data_dir: Path | None = None, given: bool = False) -> PipelineError:
    """The one-line error for a sample list that is not a file (:func:`experiment_1.paths.missing_path`): for a
    list the user named (``given``: ``--sample-index``) a look-alike file, else how to create it from ``data_dir``'s
    shards (the command runs as written)."""
    return PipelineError(missing_path(path, False, "sample list", create_sample_list(path, data_dir), given) or "")


def load_sample_list(path: Path, limit: int | None = None) -> list[SampleRef]:
    """Read a sample list (the first ``limit`` entries if given); every entry is checked, one-line error for the first bad one."""
    path = Path(path)
    fix = "regenerate it with experiment_1.step_2_sample"
    if not path.exists():
        raise missing_sample_list(path)
    document = read_json(path, fix=fix)
    if not isinstance(document, dict) or not isinstance(document.get("samples"), list):
        raise PipelineError(f"{path}: not a sample list (no \"samples\" list); {fix}")
    samples: list[SampleRef] = []
    first_seen: dict[tuple[str, int], int] = {}
    for number, entry in enumerate(document["samples"]):
        try:
            sample = parse_entry(entry)
        except ValueError as error:
            raise PipelineError(f"{path}: sample {number}: {error}; {fix}") from None
        previous = first_seen.setdefault((sample.source, sample.row), number)
        if previous != number:
            raise PipelineError(f"{path}: sample {number} repeats sample {previous} ({sample.describe()}); {fix}")
        samples.append(sample)
    return samples if limit is None else samples[:limit]
