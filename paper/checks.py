"""What the paper's readers check before they combine results files (tables, macros, figures).

- :func:`check_verdicts` (the one checker, :mod:`experiment_1.report.verdict_check`): every stored verdict's
  decision is a word of the closed vocabulary, none is drawn from or printed beside a non-finite number, and
  every verdict of a known rule shape agrees with its rule re-derived from its own numbers (a block missing
  them is refused). An edited verdict is refused with one line naming file and verdict, never printed as stored.
- :func:`check_one_network`: the sources of one paper are one network (arch, weights, the user
  network's hash) and, per sample-list file, one list content; otherwise the line says which differ.
- :func:`figure_has_its_run`: a figure is included only while its folder still holds the results
  file it was drawn from (a deleted run's old PDF is not shown as a result).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.report import check_verdicts

RESULT_FILES = ("summary*.json", "overlap.json", "analysis.json", "depth.json", "swap_cost.json")  # what a figure's folder holds when its run exists
NETWORK_KEYS = ("arch", "weights", "network_sha256")


def check_one_network(root: Path, sources: list[str]) -> None:
    """Refuse sources (results files relative to ``root``; absent ones skipped) of more than one network, or of two contents of one sample list."""
    configs = {}
    for source in sources:
        path = Path(root) / source
        if path.exists():
            document = read_json(path)
            configs[source] = document.get("config", {}) if isinstance(document, dict) else {}
    for key in NETWORK_KEYS:
        values = {source: config.get(key) for source, config in configs.items()}
        if len(set(map(str, values.values()))) > 1:
            first, *others = values.items()
            other = next(item for item in others if str(item[1]) != str(first[1]))
            raise PipelineError(f"the paper's results are not of one network: {first[0]} has {key} {first[1]!r}, {other[0]} has {other[1]!r}; rerun the odd one with the paper's network")
    lists: dict[str, tuple[str, Any]] = {}
    for source, config in configs.items():
        index, content = config.get("sample_index"), config.get("sample_list_sha256")
        if index in lists and content is not None and lists[index][1] is not None and lists[index][1] != content:
            raise PipelineError(f"{source} and {lists[index][0]} name the sample list {index} but were run on different contents of it; rerun one on the current list")
        lists.setdefault(index, (source, content))


def figure_has_its_run(figure: Path) -> bool:
    """True when the figure's folder still holds a results file of its run."""
    return any(any(figure.parent.glob(pattern)) for pattern in RESULT_FILES)


def checked_json(path: Path) -> Any:
    """A results file read and its verdicts checked (:func:`check_verdicts`)."""
    document = read_json(path)
    check_verdicts(document, path)
    return document
