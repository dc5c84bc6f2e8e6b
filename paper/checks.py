"""What the paper's readers check before they combine results files (tables, macros, figures).

- :func:`check_verdicts` (the one checker, :mod:`experiment_1.report.rules`) with the rules its experiment's record
  declares: every stored verdict is what its rule's ``decide`` gives on the file's own numbers (an unknown id, another
  rule's words or a missing number refused too). An edited verdict is refused with one line naming file and verdict,
  never printed as stored.
- :func:`check_one_network`: the sources of one paper are one network (arch, weights, the user
  network's hash) and, per sample-list file, one list content; otherwise the line says which differ.
- :func:`figure_has_its_run`: a figure is included only while its folder still holds the results
  file it was drawn from (a deleted run's old PDF is not shown as a result).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from experiment_1.errors import PipelineError
from experiment_1.files import check_counts, check_identity, check_schema, read_json
from experiment_1.report import check_verdicts
from paper.committed_runs import check_inside
from paper.experiments import rules_of

RESULT_FILES = (
    "summary*.json",
    "overlap.json",
    "analysis.json",
    "depth.json",
    "swap_cost.json",
)  # what a figure's folder holds when its run exists
NETWORK_KEYS = ("arch", "weights", "network_sha256")


def check_one_network(root: Path, sources: list[str], whole_list: Sequence[str] = ()) -> None:
    """Refuse sources (results files relative to ``root``; absent ones skipped) of more than one network, or of two
    contents of one sample list; and a source of ``whole_list`` whose run evaluated fewer images than its sample
    list holds (a ``--limit`` run: the list's hash is the same, the images are not, and the paper states the list's count)."""
    configs = {}
    for source in sources:
        path = Path(root) / source
        if path.exists() or path.is_symlink():
            check_inside(path, Path(root))
            document = checked_json(path)
            configs[source] = document.get("config", {}) if isinstance(document, dict) else {}
    for key in NETWORK_KEYS:
        values = {source: config.get(key) for source, config in configs.items()}
        if len(set(map(str, values.values()))) > 1:
            first, *others = values.items()
            other = next(item for item in others if str(item[1]) != str(first[1]))
            raise PipelineError(
                f"the paper's results are not of one network: {first[0]} has {key} {first[1]!r}, {other[0]} has "
                f"{other[1]!r}; rerun the odd one with the paper's network"
            )
    lists: dict[str, tuple[str, Any]] = {}
    for source, config in configs.items():
        index, content = config.get("sample_index"), config.get("sample_list_sha256")
        if index in lists and content is not None and lists[index][1] is not None and lists[index][1] != content:
            raise PipelineError(
                f"{source} and {lists[index][0]} name the sample list {index} but were run on different contents of it; rerun one on the current list"
            )
        lists.setdefault(index, (source, content))
    for source in whole_list:
        if source in configs:
            check_whole_list(root, source, checked_json(Path(root) / source))


def check_whole_list(root: Path, source: str, summary: dict[str, Any]) -> None:
    """Refuse a run that evaluated fewer images than its sample list (under ``root``) holds: what the paper states
    is the images the run evaluated (after ``--limit``), and that must be the list's count."""
    config = summary.get("config", {})
    index = config.get("sample_index")
    listed = Path(root) / index if isinstance(index, str) and not Path(index).is_absolute() else None
    expected = read_json(listed).get("num_images") if listed is not None and listed.is_file() else None
    found = summary.get("num_images")
    if isinstance(expected, int) and found != expected:
        limit = f" (--limit {config['limit']})" if config.get("limit") is not None else ""
        raise PipelineError(
            f"{source}: its run evaluated {found} images{limit}, but its sample list {index} holds {expected}, the count the paper states; "
            "rerun it on the whole list (without --limit)"
        )


def figure_has_its_run(figure: Path) -> bool:
    """True when the figure's folder still holds a results file of its run."""
    return any(any(figure.parent.glob(pattern)) for pattern in RESULT_FILES)


# the step that writes each experiment's results file (what a refused one is rebuilt with)
PRODUCERS = {
    1: "experiment_1.step_3_evaluate",
    2: "experiment_2.step_1_evaluate",
    "2N": "experiment_2.step_14_null_compare",
    "3A/3B": "experiment_2.step_3_lambda_sweep",
    3: "experiment_3.step_1_evaluate",
    "3C": "experiment_2.step_5_limit_report",
    4: "experiment_4.step_2_overlap",
    5: "experiment_5.step_2_analyze",
}


def checked_json(path: Path) -> Any:
    """A results file read as every plot step reads one: a run's file (one with a ``config``) checked for its schema
    version and its run identity (``config.run_id``), its image counts checked, its verdicts checked
    (:func:`check_verdicts`); one line naming the file and the command that rebuilds it otherwise."""
    document = read_json(path)
    if isinstance(document, dict) and isinstance(document.get("config"), dict):
        producer = PRODUCERS.get(document.get("experiment"), "the step that wrote it")
        check_schema(document, path, producer)
        check_identity(document, path, producer)
    check_counts(document, path, "rerun the step that wrote it")
    check_verdicts(document, path, rules_of(document))
    return document
