"""ImageNet-1k class indices by name: WordNet ids and torchvision's category names → torchvision's index.

An ImageFolder tree names its class folders by WordNet id (``val/n01440764/*.JPEG``) or, in some
copies, by torchvision's category name (``tench``, ``great_white_shark``). :func:`folder_labels`
numbers such folders by the model's class index, not by their position among the folders present,
so four ImageNet classes keep their own labels. Folders that are not ImageNet classes need
``--folder-labels sorted`` (0 … K−1 in sorted order, for a model trained on those K classes).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from experiment_1.data.choices import FOLDER_LABELS
from experiment_1.errors import PipelineError

WNID_FILE = Path(__file__).with_name("imagenet_wnids.txt")


@lru_cache(maxsize=1)
def imagenet_wnids() -> tuple[str, ...]:
    """The 1000 WordNet ids, position = torchvision class index."""
    return tuple(
        line.strip() for line in WNID_FILE.read_text().splitlines() if line.strip() and not line.startswith("#")
    )


@lru_cache(maxsize=1)
def imagenet_names() -> tuple[str, ...]:
    """torchvision's 1000 category names, position = class index."""
    from torchvision.models import ResNet18_Weights

    return tuple(ResNet18_Weights.IMAGENET1K_V1.meta["categories"])


@lru_cache(maxsize=1)
def _index_by_name() -> dict[str, int]:
    index = {wnid: position for position, wnid in enumerate(imagenet_wnids())}
    for position, name in enumerate(imagenet_names()):
        index.setdefault(name, position)
        index.setdefault(name.replace(" ", "_"), position)
    return index


def folder_labels(root: Path, names: list[str], mode: str) -> dict[str, int]:
    """The label of every class folder name: ImageNet index (``mode`` ``imagenet``) or sorted position (``sorted``)."""
    if mode == "sorted":
        return {name: position for position, name in enumerate(sorted(names))}
    if mode != "imagenet":
        raise PipelineError(f"unknown --folder-labels '{mode}'; choose one of {', '.join(FOLDER_LABELS)}")
    index = _index_by_name()
    unknown = sorted(name for name in names if name not in index)
    if unknown:
        raise PipelineError(
            f"{root / unknown[0]}: not an ImageNet class (WordNet id such as n01440764, or a torchvision class name; {len(unknown)} of "
            f"{len(names)} folders are not); pass --folder-labels sorted to number the folders 0 … K−1 in sorted order"
        )
    labels = {name: index[name] for name in names}
    repeated = sorted({label for label in labels.values() if list(labels.values()).count(label) > 1})
    if repeated:
        twins = sorted(name for name, label in labels.items() if label == repeated[0])
        raise PipelineError(
            f"{root}: folders {', '.join(twins)} name the same ImageNet class {repeated[0]}; merge them"
        )
    return labels
