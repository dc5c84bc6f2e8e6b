"""Every command the READMEs print runs as printed on a clone: extracted from each command block and checked.

- ``python -m STEP …`` (also under ``torchrun`` or after ``VAR=value``): the step's own parser parses the exact
  flags (no unknown flag, every value of the right type) — nothing is evaluated; every input it names
  (sample list, data folder, summary …) exists in the repository or is written by a command the READMEs print
  (the top README's own inputs: by a command before it in the top README); a ``--arch package.module:function``
  factory imports.
- ``make TARGET``: the Makefile has the target (``make -n``); ``bash FILE``: the file exists.
- The top README's own-network walkthrough runs for real (2 images, into a temporary folder), and its
  library snippet runs as printed.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import run_make
from experiment_1.files import read_json
from experiment_1.network.registry import load_factory

REPO = Path(__file__).resolve().parents[2]
READMES = [
    "README.md",
    *(f"experiment_{n}/README.md" for n in range(1, 6)),
    "experiment_1/PERFORMANCE.md",
    "experiment_1/GPU.md",
    "imagenet-1k/README.md",
    "paper/README.md",
]
INPUT_FLAGS = (
    "--sample-index",
    "--data-dir",
    "--summary",
    "--compare-summary",
    "--signatures",
    "--per-image",
    "--analysis",
    "--native",
    "--smooth",
)
SET_UP = (
    "source",
    "pip",
    "sudo",
    "git",
    "cd",
    "export",
    "conda",
    "time",
)  # commands of the set-up, not of this project


@dataclass
class Command:
    readme: str
    line: str
    words: list[str] = field(default_factory=list)


def command_blocks(text: str) -> list[list[str]]:
    """The lines of every shell block: 4-space-indented blocks and fenced blocks without a language or marked bash/sh
    (```text drawings and ```python code are not commands)."""
    blocks, current, fenced = [], [], None
    for line in text.splitlines():
        if fenced is not None:
            if line.startswith("```"):
                if fenced in ("", "bash", "sh", "shell"):
                    blocks.append(current)
                current, fenced = [], None
            else:
                current.append(line)
        elif line.startswith("```"):
            fenced, current = line[3:].strip(), []
        elif line.startswith("    ") and (current or not re.match(r"\s*([-*] |\|)", line)):
            current.append(line[4:])
        else:
            if current:
                blocks.append(current)
            current = []
    if current and fenced is None:
        blocks.append(current)
    return blocks


def strip_comment(line: str) -> str:
    """``line`` without a trailing ``# …`` comment outside quotes."""
    quote = None
    for index, char in enumerate(line):
        if char in "'\"" and quote in (None, char):
            quote = None if quote else char
        elif char == "#" and quote is None and (index == 0 or line[index - 1].isspace()):
            return line[:index].rstrip()
    return line.rstrip()


def block_commands(readme: str, lines: list[str]) -> list[Command]:
    """The block's commands: continuations joined, comments dropped, the block's shell variables (and the first
    value of a ``for`` loop) substituted."""
    joined, pending = [], ""
    for raw in lines:
        line = strip_comment(raw)
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        joined.append((pending + line).strip())
        pending = ""
    variables: dict[str, str] = {}
    commands = []
    for line in filter(None, joined):
        loop = re.match(r"for (\w+) in (\S+).*; do$", line)
        assignment = re.match(r'^(\w+)=(?:"([^"]*)"|\$\(.*\)|(\S*))$', line)
        if loop:
            variables[loop.group(1)] = loop.group(2)
        elif assignment:
            variables[assignment.group(1)] = assignment.group(2) or assignment.group(3) or ""
        elif line in ("done", "fi") or line.startswith(("if ", "then")):
            continue
        else:
            expanded = re.sub(r"\$\{?(\w+)\}?", lambda match: variables.get(match.group(1), match.group(0)), line)
            try:
                commands.append(Command(readme, expanded, shlex.split(expanded)))
            except ValueError as error:
                raise ValueError(f"{readme}: `{expanded}`: {error}") from None
    return commands


def all_commands() -> list[Command]:
    return [
        command
        for readme in READMES
        for block in command_blocks((REPO / readme).read_text())
        for command in block_commands(readme, block)
    ]


def program(words: list[str]) -> list[str]:
    """The words from the program on: leading ``VAR=value`` assignments dropped."""
    while words and re.match(r"^\w+=", words[0]):
        words = words[1:]
    return words


def step_of(words: list[str]) -> tuple[str, list[str]] | None:
    """``(module, flags)`` of a ``python -m`` / ``torchrun … -m`` command, else ``None``."""
    words = program(words)
    if not words or words[0] not in ("python", "python3", "torchrun") or "-m" not in words:
        return None
    position = words.index("-m")
    return words[position + 1], words[position + 2 :]


def flag_values(flags: list[str], name: str) -> list[str]:
    values = []
    for index, word in enumerate(flags):
        if word == name:
            values += [value for value in flags[index + 1 : index + 2] if not value.startswith("--")]
        elif word.startswith(name + "="):
            values.append(word.split("=", 1)[1])
    return values


def outputs_of(module: str, flags: list[str]) -> list[str]:
    """The paths (files or folders) a step writes."""
    written = flag_values(flags, "--output-dir") + flag_values(flags, "--output")
    if module == "paper.single_pass":
        experiments = flags[flags.index("--experiments") + 1 :] if "--experiments" in flags else []
        numbers = [
            word
            for word in experiments[
                : next((i for i, w in enumerate(experiments) if w.startswith("--")), len(experiments))
            ]
        ]
        written += [
            f"experiment_{number}/{name}" for name in flag_values(flags, "--results-name") for number in numbers
        ]
    if module == "experiment_5.step_2_analyze" or (
        module == "experiment_4.step_2_overlap" and not flag_values(flags, "--output-dir")
    ):
        written += [
            str(Path(path).parent) for path in flag_values(flags, "--per-image") + flag_values(flags, "--signatures")
        ]
    return written


class Parsed(Exception):
    """Raised instead of running the step once its parser accepted the command line."""


def parse_only(
    module: str, flags: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    original = argparse.ArgumentParser.parse_args

    def parse_and_stop(self: argparse.ArgumentParser, args=None, namespace=None):
        original(self, args, namespace)
        raise Parsed

    with monkeypatch.context() as patch:
        patch.setattr(
            argparse.ArgumentParser, "parse_args", parse_and_stop
        )  # before the paths are checked: an input an earlier command writes
        try:
            importlib.import_module(module).main(flags)
        except Parsed:
            return
        except SystemExit:
            pytest.fail(
                f"python -m {module} refuses the printed flags: {capsys.readouterr().err.strip().splitlines()[-1:]}"
            )
    pytest.fail(f"python -m {module}: the step ran without parsing its flags")


COMMANDS = all_commands()


def test_the_readmes_print_commands() -> None:
    readmes = {command.readme for command in COMMANDS}
    assert {"README.md", "experiment_1/README.md", "experiment_2/README.md", "experiment_4/README.md"} <= readmes
    assert sum(step_of(command.words) is not None for command in COMMANDS) >= 30
    # the extraction itself: continuations, comments and a loop's variables
    [command] = block_commands(
        "x",
        [
            "A=\"--seed 0\"",
            "for arch in resnet18 lite; do",
            "  python -m m --x 'a b' $A \\",
            "      --y ${arch}_z   # note",
            "done",
        ],
    )
    assert command.words == ["python", "-m", "m", "--x", "a b", "--seed", "0", "--y", "resnet18_z"]


@pytest.mark.parametrize("readme", READMES)
def test_every_printed_command_parses_and_finds_its_inputs(
    readme: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    produced_anywhere = [path for command in COMMANDS if (step := step_of(command.words)) for path in outputs_of(*step)]
    produced_before: list[str] = []
    make_targets = set()
    for command in (command for command in COMMANDS if command.readme == readme):
        if re.search(r"<[^>]+>", command.line):
            continue  # a placeholder the reader fills in (<node0-host>, <the same flags as above>)
        words = program(command.words)
        step = step_of(words)
        if step is not None:
            module, flags = step
            parse_only(module, flags, monkeypatch, capsys)
            produced = produced_before if readme == "README.md" else produced_anywhere
            for name in INPUT_FLAGS:
                for value in flag_values(flags, name):
                    path = Path(value)
                    assert (REPO / path).exists() or any(
                        path == Path(out) or Path(out) in path.parents for out in produced
                    ), (
                        f"{readme}: `{command.line}`: {name} {value} is neither in the repository nor written by a printed command"
                    )
            for arch in flag_values(flags, "--arch"):
                if ":" in arch:
                    assert callable(load_factory(arch))
            produced_before += outputs_of(module, flags)
        elif words[0] == "make":
            make_targets.update(word for word in words[1:] if not re.match(r"^\w+=", word))
        elif words[0] == "bash":
            assert (REPO / words[1]).is_file(), f"{readme}: `{command.line}`: {words[1]} does not exist"
        else:
            assert words[0] in SET_UP, f"{readme}: `{command.line}`: not a command this test knows how to check"
    if make_targets:
        if shutil.which("make") is None:
            pytest.skip("make is not installed")
        for target in sorted(make_targets):
            dry_run = run_make("-n", target)
            assert dry_run.returncode == 0, f"{readme}: make {target}: {dry_run.stderr.strip()}"


def test_the_own_network_walkthrough_runs(tmp_path: Path) -> None:
    """The top README's "Your own residual network" commands, for real: 2 images, into a temporary folder."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Your own residual network") :]
    commands = [
        step_of(command.words)
        for block in command_blocks(section)[:1]
        for command in block_commands("README.md", block)
    ]
    assert [module for module, _ in commands] == ["experiment_2.step_1_evaluate", "experiment_2.step_2_plot"]
    (evaluate, evaluate_flags), (plot, plot_flags) = commands
    printed_output = flag_values(evaluate_flags, "--output-dir")[0]

    def retarget(flags: list[str]) -> list[str]:
        return [word.replace(printed_output, str(tmp_path / "run")) for word in flags]

    importlib.import_module(evaluate).main(
        retarget(evaluate_flags) + ["--limit", "2", "--num-workers", "0", "--device", "cpu"]
    )
    importlib.import_module(plot).main(retarget(plot_flags))
    assert read_json(tmp_path / "run" / "summary.json")["num_valid"] == 2
    assert (tmp_path / "run" / "REPORT.md").exists()


def test_the_library_snippet_runs_as_printed() -> None:
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Use it as a library") :]
    snippet = section[
        section.index("```python\n") + len("```python\n") : section.index("\n```", section.index("```python"))
    ]
    namespace: dict[str, object] = {}
    exec(compile(snippet, "README.md (Use it as a library)", "exec"), namespace)
    spectrum = namespace["spectrum"]
    assert spectrum.shape == (2, 8) and float(spectrum.sum(1).sub(1).abs().max()) < 1e-9
    assert float(spectrum[:, 1:].sum()) > 1e-3  # interactions above round-off: a non-trivial set function


EXAMPLES = ["experiment_1/examples/cifar_resnet20.py", "experiment_1/examples/timm_resnet.py"]


@pytest.mark.parametrize("example", EXAMPLES)
def test_the_examples_docstring_commands_run_on_a_clone(
    example: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The commands an example's docstring prints parse, and every input they name is in a clone (or written by a
    command before it there) — no sample list that only the original study's commands create."""
    docstring = ast.get_docstring(ast.parse((REPO / example).read_text()))
    commands = [command for block in command_blocks(docstring) for command in block_commands(example, block)]
    assert commands, f"{example}: its docstring prints no command"
    produced: list[str] = []
    for command in commands:
        step = step_of(command.words)
        assert step is not None, f"{example}: `{command.line}` is not a python -m step"
        module, flags = step
        parse_only(module, flags, monkeypatch, capsys)
        for name in INPUT_FLAGS:
            for value in flag_values(flags, name):
                path = Path(value)
                assert (REPO / path).exists() or any(
                    path == Path(out) or Path(out) in path.parents for out in produced
                ), f"{example}: `{command.line}`: {name} {value} is not in a clone"
        produced += outputs_of(module, flags)


def test_the_own_network_block_from_another_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same block run from a user's own folder with the user's own factory file: as printed, its relative paths stop
    it in one line naming the checkout's file; with the checkout's paths (as the README says) it runs."""
    from experiment_1.errors import run_cli

    text = (REPO / "README.md").read_text()
    section = text[text.index("## Your own residual network") :]
    (evaluate, flags), _ = [
        step_of(command.words)
        for block in command_blocks(section)[:1]
        for command in block_commands("README.md", block)
    ]
    user = tmp_path / "user"
    user.mkdir()
    shutil.copy(REPO / "experiment_1" / "examples" / "cifar_resnet20.py", user / "mynet.py")
    monkeypatch.chdir(user)
    monkeypatch.syspath_prepend(str(user))
    printed_output = flag_values(flags, "--output-dir")[0]
    mine = [
        "mynet:build_model"
        if word.startswith("experiment_1.examples.cifar_resnet20")
        else word.replace(printed_output, "results_mynet")
        for word in flags
    ]
    capsys.readouterr()
    with pytest.raises(SystemExit):
        run_cli(
            importlib.import_module(evaluate).main, mine + ["--limit", "2", "--num-workers", "0", "--device", "cpu"]
        )
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and str(REPO) in lines[0], lines
    into_checkout = [
        str(REPO / word) if word in flag_values(flags, "--sample-index") + flag_values(flags, "--data-dir") else word
        for word in mine
    ]
    importlib.import_module(evaluate).main(into_checkout + ["--limit", "2", "--num-workers", "0", "--device", "cpu"])
    assert read_json(user / "results_mynet" / "summary.json")["num_valid"] == 2
