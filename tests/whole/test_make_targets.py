"""The Makefile's test targets: `make test-quick` exists and runs a listed subset whose every file (and test) exists;
both run with TEST_THREADS (one unless told) as OMP_NUM_THREADS, and a make that runs the tests hands the makes they run
none of its variables; `make install TORCH_INDEX=…` installs torch from that index
first, and without it from the ordinary index alone; the READMEs state the suite's measured time and the subset."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conftest import run_make

REPO = Path(__file__).resolve().parents[2]
VENV = "/nonexistent-venv"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def dry_run(*arguments: str) -> list[str]:
    """The recipe lines `make -n` prints, with the install step taken as done (``-o``: the venv is not rebuilt)."""
    return run_make("-n", "-o", f"{VENV}/bin/.installed", f"VENV={VENV}", *arguments, check=True).stdout.splitlines()


def test_test_quick_runs_the_listed_subset_and_every_entry_exists() -> None:
    (line,) = [line for line in dry_run("test-quick") if "pytest" in line]
    entries = line.split("pytest -q", 1)[1].split()
    assert len(entries) >= 10
    for entry in entries:
        file, _, test = entry.partition("::")
        assert (REPO / file).is_file(), f"QUICK_TESTS lists {file}, which does not exist"
        if test:
            assert re.search(rf"^def {re.escape(test)}\(", (REPO / file).read_text(), re.M), f"{entry}: no such test"
    assert line.startswith("OMP_NUM_THREADS=1 ")


def test_test_threads_sets_omp_num_threads() -> None:
    for target in ("test", "test-quick"):
        (line,) = [line for line in dry_run(target, "TEST_THREADS=4") if "pytest" in line]
        assert line.startswith("OMP_NUM_THREADS=4 ") and "pytest -q" in line
        (line,) = [line for line in dry_run(target) if "pytest" in line]
        assert line.startswith("OMP_NUM_THREADS=1 ")
        (line,) = [line for line in dry_run(target, "TEST_THREADS=") if "pytest" in line]
        assert line.startswith(f"{VENV}/bin/python -m pytest -q")


def test_a_make_that_runs_the_tests_passes_none_of_its_variables_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """`make test TEST_THREADS=4` puts TEST_THREADS=4 into MAKEFLAGS; the makes these tests run must not inherit it."""
    monkeypatch.setenv("MAKEFLAGS", " -- TEST_THREADS=4")
    monkeypatch.setenv("MAKELEVEL", "1")
    for target in ("test", "test-quick"):
        (line,) = [line for line in dry_run(target) if "pytest" in line]
        assert line.startswith("OMP_NUM_THREADS=1 "), line


def test_install_uses_the_ordinary_index_unless_told() -> None:
    plain = run_make("-n", "VENV=/nonexistent-venv", "install", check=True).stdout
    assert "--index-url" not in plain and "pip install -e ." in plain
    cpu = run_make(
        "-n", "VENV=/nonexistent-venv", "install", "TORCH_INDEX=https://download.pytorch.org/whl/cpu", check=True
    ).stdout.splitlines()
    index = [n for n, line in enumerate(cpu) if "--index-url https://download.pytorch.org/whl/cpu" in line]
    editable = [n for n, line in enumerate(cpu) if "pip install -e ." in line]
    assert index and editable and index[0] < editable[0] and "torch torchvision" in cpu[index[0]]


def test_ci_installs_the_shapiq_extra() -> None:
    plain = run_make("-n", "VENV=/nonexistent-venv", "install", "EXTRAS=shapiq", check=True).stdout
    assert "pip install -e .'[shapiq]'" in plain
    assert 'make test VENV="$venv" EXTRAS=shapiq' in (REPO / ".ci" / "run").read_text()
    assert 'shapiq = ["shapiq==' in (REPO / "pyproject.toml").read_text()


def test_the_readme_states_the_times_and_the_quick_subset() -> None:
    readme = (REPO / "README.md").read_text()
    assert "`make test-quick`" in readme and "a smoke subset, about a minute" in readme
    assert "about 2 250 tests" in readme and "TEST_THREADS=" in readme and "load" in readme
    for document in (readme, (REPO / "Makefile").read_text(), (REPO / "experiment_1/README.md").read_text()):
        assert "600 tests" not in document and "20–25 min" not in document and "about 2 min" not in document
    assert "6.0 GB" in readme and "TORCH_INDEX=https://download.pytorch.org/whl/cpu" in readme
    assert "about 10 min" not in readme and "about 10 minutes" not in (REPO / "experiment_1/README.md").read_text()


def test_the_readme_names_timm_in_its_own_network_section() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Your own residual network", 1)[1].split("\n## ", 1)[0]
    assert "pip install timm" in section and "experiment_1.examples.timm_resnet:build_resnet18" in section
