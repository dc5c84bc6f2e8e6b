"""The guide to the core (experiment_1/README.md) stays a guide and its reading path stays true.

- The guide is at most 15 000 bytes; the reference detail lives in experiment_1/PERFORMANCE.md (a GPU run's in
  experiment_1/GPU.md), and every link to a section of either page (from any Markdown page of the repository) names a
  heading it has.
- The table "Following one run" names files that exist; every Experiment 2 module the two steps import,
  transitively through Experiment 2's own modules, is a row; every experiment_1 file it names is reached from the
  two steps through imports (``from experiment_1.<package> import name`` followed through the package face's
  ``_EXPORTS``, and a step's work, the ``"module:function"`` its Command names). Computed with ``ast`` over the
  sources: nothing is imported. The table is read from the guide,
  so renaming a file is one row there.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "experiment_1" / "README.md"
REFERENCE = REPO / "experiment_1" / "PERFORMANCE.md"
GPU_PAGE = REPO / "experiment_1" / "GPU.md"
STEPS = ("experiment_2.step_1_evaluate", "experiment_2.step_2_plot")
PROJECT = ("experiment_1", "experiment_2")


def module_file(module: str) -> Path | None:
    path = REPO.joinpath(*module.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def face_exports(package: str) -> dict[str, str]:
    """A package face's ``_EXPORTS`` (name -> module of that package), read with ast; {} for a plain module."""
    path = module_file(package)
    if path is None or path.name != "__init__.py":
        return {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        target = (
            node.targets[0]
            if isinstance(node, ast.Assign)
            else node.target
            if isinstance(node, ast.AnnAssign)
            else None
        )
        if isinstance(target, ast.Name) and target.id == "_EXPORTS":
            return ast.literal_eval(node.value)
    return {}


def imported_modules(module: str) -> set[str]:
    """The project modules ``module`` imports (anywhere in its source), a face's names resolved to their modules."""
    found = set()
    for node in ast.walk(ast.parse(module_file(module).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            exports = face_exports(node.module)
            for alias in node.names:
                if alias.name in exports:
                    found.add(f"{node.module}.{exports[alias.name]}")
                elif module_file(f"{node.module}.{alias.name}"):
                    found.add(f"{node.module}.{alias.name}")  # a submodule imported whole
                else:
                    found.add(node.module)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Command":  # the work it imports
            found |= {
                argument.value.partition(":")[0]
                for argument in node.args
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str) and ":" in argument.value
            }
    return {name for name in found if name.split(".")[0] in PROJECT and module_file(name)}


def reached(start: tuple[str, ...], within: tuple[str, ...] = PROJECT) -> set[str]:
    """Files (relative paths) of the modules reached from ``start``, following imports only into ``within``."""
    seen, todo = set(), list(start)
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += [name for name in imported_modules(module) if name.split(".")[0] in within]
    return {module_file(module).relative_to(REPO).as_posix() for module in seen}


def reading_path(text: str) -> list[str]:
    """The files of the table under "Following one run", in row order."""
    section = text.split("### Following one run", 1)[1].split("\n#", 1)[0]
    return re.findall(r"^\| \d+ \| `([^`]+)` \|", section, re.M)


def anchor(heading: str) -> str:
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", heading.strip().lower()))


def test_the_guide_stays_a_guide() -> None:
    size = len(GUIDE.read_bytes())
    assert size <= 15_000, (
        f"experiment_1/README.md is {size} bytes; move reference detail to experiment_1/PERFORMANCE.md"
    )


def test_every_link_to_the_reference_and_the_gpu_page_names_one_of_its_headings() -> None:
    """Links to a section of PERFORMANCE.md or GPU.md from any page, and GPU.md's own table of contents."""
    anchors = {
        page.name: {
            anchor(line.lstrip("#")) for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("#")
        }
        for page in (REFERENCE, GPU_PAGE)
    }
    pages = [
        path
        for path in REPO.glob("**/*.md")
        if ".venv" not in path.parts and not any(part.startswith("results") for part in path.parts)
    ]
    links = [
        (path, target, name)
        for path in pages
        for target, name in re.findall(r"(PERFORMANCE\.md|GPU\.md)#([\w-]+)", path.read_text(encoding="utf-8"))
    ]
    links += [(GPU_PAGE, GPU_PAGE.name, name) for name in re.findall(r"\]\(#([\w-]+)\)", GPU_PAGE.read_text())]
    assert {target for _, target, _ in links} == set(anchors) and len(links) > 10
    broken = [
        f"{path.relative_to(REPO)}: {target}#{name}" for path, target, name in links if name not in anchors[target]
    ]
    assert not broken, broken


def test_the_reading_path_is_the_run_s_imports() -> None:
    table = reading_path(GUIDE.read_text(encoding="utf-8"))
    assert table[:1] == ["experiment_2/step_1_evaluate.py"] and len(table) == len(set(table)), table
    missing = [path for path in table if not (REPO / path).is_file()]
    assert not missing, f"the reading path names files that do not exist: {missing}"
    experiment_2 = {path for path in reached(STEPS, within=("experiment_2",)) if not path.endswith("__init__.py")}
    left_out = sorted(experiment_2 - set(table))
    assert not left_out, f"the two steps import Experiment 2 modules the reading path leaves out: {left_out}"
    core = reached(STEPS)
    unreached = [path for path in table if path.startswith("experiment_1/") and path not in core]
    assert not unreached, f"the reading path names experiment_1 files the two steps never import: {unreached}"


def test_the_import_walk_follows_the_faces() -> None:
    """The walk itself: a face's name leads to its module, and the steps reach the core through the faces only."""
    assert face_exports("experiment_1.run")["Command"] == "run_config"
    assert {"experiment_1.run.run_config", "experiment_2.spectrum.evaluation"} <= imported_modules(
        "experiment_2.step_1_evaluate"
    )  # the Command, and the work it names
    assert {
        "experiment_1/run/loop.py",
        "experiment_1/network/engines.py",
        "experiment_1/report/markdown.py",
    } <= reached(STEPS)
    assert "experiment_1/mobius/sparsity.py" not in reached(STEPS)  # Experiment 3's, not on this run's path
