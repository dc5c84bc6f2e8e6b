"""The five core faces as a contract: every exported name resolves to the module the face names, every one is used
outside its package (the face stays narrow), and importing a face or an experiment's record is light."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FACES = ("mobius", "network", "data", "run", "report")


def face(name: str):
    return importlib.import_module(f"experiment_1.{name}")


def imported_names(package: str) -> set[str]:
    """Names imported from ``experiment_1.<package>`` by modules outside that package, the READMEs' code, and the calls
    the READMEs document as ``experiment_1.<package>.<name>(…)``."""
    sources = [
        path.read_text(encoding="utf-8")
        for path in REPO.glob("experiment_*/**/*.py")
        if not path.is_relative_to(REPO / "experiment_1" / package)
    ]
    sources += [path.read_text(encoding="utf-8") for path in REPO.glob("paper/*.py")]
    sources += [
        block
        for path in REPO.glob("**/README.md")
        if ".venv" not in path.parts
        for block in re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)
    ]
    documented = "".join(
        path.read_text(encoding="utf-8") for path in REPO.glob("**/README.md") if ".venv" not in path.parts
    )
    names = set(re.findall(rf"`experiment_1\.{package}\.(\w+)\(", documented))
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == f"experiment_1.{package}":
                names |= {alias.name for alias in node.names}
    return names


@pytest.mark.parametrize("package", FACES)
def test_every_exported_name_resolves_to_its_module(package: str) -> None:
    module = face(package)
    for name, where in module._EXPORTS.items():
        assert getattr(module, name) is getattr(importlib.import_module(f"experiment_1.{package}.{where}"), name), name
    for name in module._SUBMODULES:
        assert getattr(module, name) is importlib.import_module(f"experiment_1.{package}.{name}")
    assert sorted(dir(module)) == sorted(module.__all__)


@pytest.mark.parametrize("package", FACES)
def test_the_face_exports_only_what_is_used(package: str) -> None:
    unused = set(face(package).__all__) - imported_names(package)
    assert not unused, f"experiment_1.{package} exports names nobody outside it imports: {sorted(unused)}"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        face("report").nonexistent  # noqa: B018


@pytest.mark.parametrize(
    "module", ["experiment_3.record", "paper.experiments", "experiment_1.report", "experiment_1.network"]
)
def test_a_record_or_face_imports_neither_torch_nor_matplotlib(module: str) -> None:
    code = f"import sys, {module}; print(sorted(m for m in ('torch', 'matplotlib') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
