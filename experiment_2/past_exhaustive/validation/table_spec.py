"""One exhaustive validation network of step 11, as its ``--table`` flag names it (:class:`TableSpec`): read when the
flags are parsed, so this module imports neither torch nor the passes."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from experiment_1.paths import create_sample_list, missing_path

SAMPLE_LIST_PREFIX = "sample_index_"  # dropped from a table's own sample list's name in its label


@dataclass(frozen=True)
class TableSpec:
    """One exhaustive validation network: ``arch:weights:resolution:images[:sample_list]`` (resolution ``native``: the
    arch's own). Its images are the first ``images`` of ``sample_list`` when one is given (images other than the
    run's, e.g. ones no estimator was chosen on), else of the run's ``--sample-index``."""

    arch: str
    weights: str
    resolution: int | None
    images: int
    sample_list: Path | None = None

    @classmethod
    def parse(cls, text: str) -> TableSpec:
        parts = text.split(":", 4)
        if len(parts) not in (4, 5) or not parts[3].isdigit() or not (parts[2] == "native" or parts[2].isdigit()):
            raise argparse.ArgumentTypeError(
                f"'{text}' is not ARCH:WEIGHTS:RESOLUTION:IMAGES[:SAMPLE_LIST] (e.g. resnet34:random:32:4, "
                "efficientnet_lite1:pretrained:native:4, resnet34:random:32:4:experiment_2/sample_index_validation_8_11.json)"
            )
        resolution = None if parts[2] == "native" else int(parts[2])
        if int(parts[3]) < 1 or resolution == 0:
            raise argparse.ArgumentTypeError(f"'{text}': the image count and the resolution must be at least 1")
        sample_list = None
        if len(parts) == 5:
            sample_list = Path(parts[4])
            missing = missing_path(sample_list, False, "sample list", create_sample_list(sample_list), given=True)
            if missing:
                raise argparse.ArgumentTypeError(missing)
        return cls(parts[0], parts[1], resolution, int(parts[3]), sample_list)

    @property
    def label(self) -> str:
        size = "" if self.resolution is None else f"_{self.resolution}px"
        images = "" if self.sample_list is None else f"_{self.sample_list.stem.removeprefix(SAMPLE_LIST_PREFIX)}"
        return f"{self.arch}_{self.weights}{size}{images}"

    def describe(self) -> str:
        size = "its own resolution" if self.resolution is None else f"{self.resolution} px"
        images = "" if self.sample_list is None else f" of {self.sample_list}"
        return f"{self.arch} ({self.weights} weights) at {size}, {self.images} image(s){images}"
