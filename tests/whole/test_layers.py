"""The floor plan as a test: every module's project imports against the table of allowed directions.

Layers, bottom to top: ``experiment_1.errors`` / ``paths`` / ``files`` and ``faces`` (the ground floor; ``faces``, the
lazy face helper, imports nothing of the project and every layer may use it); the core packages
``experiment_1.mobius`` (torch only), ``report`` (no torch), ``network``, ``data`` and ``run``; the commands at
``experiment_1``'s root; Experiments 2–5 side by side (each imports ``experiment_1`` and itself, never another
experiment); ``paper/`` on top. ``tests/`` may import anything. See ``experiment_1/README.md`` for the drawing.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("experiment_1", "experiment_2", "experiment_3", "experiment_4", "experiment_5", "paper")
GROUND = {"experiment_1.errors", "experiment_1.paths", "experiment_1.files", "experiment_1.faces"}

# layer of a module → the layers it may import (besides itself)
ALLOWED: dict[str, set[str]] = {
    "experiment_1.errors": set(),
    "experiment_1.paths": set(),
    "experiment_1.files": {"experiment_1.errors", "experiment_1.paths"},
    "experiment_1.faces": set(),
    "experiment_1.mobius": {"experiment_1.faces"},
    "experiment_1.report": GROUND,
    "experiment_1.network": GROUND,
    "experiment_1.data": GROUND | {"experiment_1.network"},
    "experiment_1.run": GROUND
    | {"experiment_1.mobius", "experiment_1.report", "experiment_1.network", "experiment_1.data"},
    "experiment_1": {"experiment_1"},
    **{f"experiment_{n}": {"experiment_1", f"experiment_{n}"} for n in range(2, 6)},
    "paper": set(PACKAGES),
}
NO_TORCH = ("experiment_1.report",)
FACES = ("experiment_1.mobius", "experiment_1.network", "experiment_1.data", "experiment_1.run", "experiment_1.report")


def behind_face(module: str, imported: str) -> str | None:
    """The face ``imported`` reaches past, when ``module`` stands outside the core (``None`` when the import is allowed)."""
    outside = not in_layer(module, "experiment_1") or in_layer(module, "experiment_1.examples")
    for face in FACES:
        if outside and imported.startswith(face + "."):
            return face
    return None


def layer_of(module: str) -> str:
    """The most specific layer in :data:`ALLOWED` that ``module`` belongs to."""
    parts = module.split(".")
    for length in range(len(parts), 0, -1):
        prefix = ".".join(parts[:length])
        if prefix in ALLOWED:
            return prefix
    raise KeyError(module)


def in_layer(module: str, layer: str) -> bool:
    return module == layer or module.startswith(layer + ".")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every absolute import in ``path`` (``from experiment_1 import b`` counts as ``experiment_1.b``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module in PACKAGES:
                found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
    return found


def violations(root: Path) -> list[str]:
    """Every import under ``root``'s project packages that goes against :data:`ALLOWED` or :data:`NO_TORCH`."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if any(part.startswith("results") for part in path.relative_to(root).parts):
                continue
            module = module_name(path, root)
            layer = layer_of(module)
            for line, imported in imports_of(path):
                where = f"{path.relative_to(root)}:{line}"
                if layer in NO_TORCH and imported.split(".")[0] == "torch":
                    found.append(f"{where}: {layer} must not import torch")
                face = behind_face(module, imported)
                if face is not None:
                    found.append(f"{where}: {module} imports {imported} past its face (import it from {face})")
                    continue
                if imported.split(".")[0] not in PACKAGES or in_layer(imported, layer):
                    continue
                target = layer_of(imported)
                if not any(in_layer(target, allowed) or in_layer(imported, allowed) for allowed in ALLOWED[layer]):
                    found.append(f"{where}: {module} ({layer}) imports {imported} ({target})")
    return found


def test_the_floor_plan_holds() -> None:
    assert violations(REPO) == []


def plant(root: Path, module: str, source: str) -> None:
    path = root.joinpath(*module.split(".")).with_suffix(".py")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        (
            "experiment_4.signatures",
            "from experiment_3.topk import RANKINGS\n",
            "experiment_4.signatures (experiment_4) imports experiment_3.topk",
        ),
        (
            "experiment_1.network.gating",
            "from experiment_1.run.setup import build_setup\n",
            "(experiment_1.network) imports experiment_1.run.setup",
        ),
        (
            "experiment_1.mobius.transform",
            "from experiment_1.errors import PipelineError\n",
            "(experiment_1.mobius) imports experiment_1.errors",
        ),
        (
            "experiment_1.faces",
            "from experiment_1.paths import REPO_ROOT\n",
            "(experiment_1.faces) imports experiment_1.paths",
        ),
        ("experiment_1.report.stats", "import torch\n", "experiment_1.report must not import torch"),
        ("experiment_1.run.setup", "from paper import make_tables\n", "(experiment_1.run) imports paper"),
        ("experiment_2.spectrum.evaluation", "from experiment_5 import summary\n", "imports experiment_5.summary"),
        (
            "experiment_3.topk",
            "from experiment_1.mobius.sparsity import rank_subsets\n",
            "imports experiment_1.mobius.sparsity past its face",
        ),
        (
            "paper.make_tables",
            "from experiment_1.report.markdown import format_stat\n",
            "past its face (import it from experiment_1.report)",
        ),
        ("experiment_1.examples.mine", "from experiment_1.network.gating import Residual\n", "past its face"),
    ],
)
def test_a_planted_import_against_the_plan_is_caught(tmp_path: Path, module: str, source: str, expected: str) -> None:
    plant(tmp_path, module, source)
    found = violations(tmp_path)
    assert len(found) == 1 and expected in found[0], found


def test_allowed_imports_pass(tmp_path: Path) -> None:
    plant(
        tmp_path, "experiment_3.topk", "from experiment_1.mobius import RANKINGS\nfrom experiment_3 import evaluation\n"
    )
    plant(
        tmp_path,
        "experiment_1.run.setup",
        "from experiment_1.network.engines import ENGINES\nfrom experiment_1.files import read_json\n",
    )
    plant(tmp_path, "paper.make_tables", "from experiment_4.formats import x\n")
    plant(tmp_path, "experiment_1.mobius.__init__", "from experiment_1.faces import lazy_face\n")
    assert violations(tmp_path) == []
