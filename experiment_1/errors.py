"""User-facing errors: one line naming the file (or flag) at fault and the fix.

:func:`run_cli` runs a step: a :class:`PipelineError` becomes ``error: …`` (exit 2); Ctrl-C
(SIGINT) and SIGTERM become one line saying how much was finished and that rerunning the same
command resumes (exit 130 / 143, the shells' convention). Under ``torchrun`` every line starts on
a line of its own (each failing rank prints its own).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any, Callable

from tqdm import tqdm


class PipelineError(Exception):
    """An error caused by the user's input; printed as one line, without a traceback."""


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived; ``done`` of ``total`` images were finished (kept) when known.

    A :class:`KeyboardInterrupt`, so no ``except Exception`` swallows it and callers that stop on Ctrl-C stop on it.
    """

    def __init__(self, signal_number: int, done: int | None = None, total: int | None = None) -> None:
        super().__init__(signal_number, done, total)
        self.signal_number, self.done, self.total = signal_number, done, total

    def message(self) -> str:
        progress = f" after {self.done} of {self.total} images" if self.total is not None else ""
        return f"interrupted{progress}; rerun the same command to resume"


def _close_progress_bars() -> None:
    """Finish every open tqdm bar's line, so that an error starts on a line of its own."""
    for bar in list(getattr(tqdm, "_instances", ())):  # tqdm keeps its live bars here
        bar.close()


def _raise_interrupted(signal_number: int, frame: Any) -> None:
    raise Interrupted(signal_number)


def _line_start() -> str:
    """A newline under torchrun, where another rank's progress bar may own the current line; else ``""``."""
    return "\n" if os.environ.get("RANK") is not None and os.environ.get("WORLD_SIZE") not in (None, "1") else ""


def run_cli(main: Callable[[list[str] | None], None], argv: list[str] | None = None) -> None:
    """Run a step's ``main``: a :class:`PipelineError` → ``error: …`` and exit 2; SIGINT/SIGTERM →
    ``interrupted after N of M images; rerun the same command to resume`` and exit 130/143."""
    in_main_thread = threading.current_thread() is threading.main_thread()  # only there can Python handle signals
    previous = signal.signal(signal.SIGTERM, _raise_interrupted) if in_main_thread else None
    try:
        main(argv)
    except PipelineError as error:
        _close_progress_bars()
        message = " ".join(
            line.strip() for line in str(error).splitlines()
        )  # causes quoted from libraries may span lines
        print(f"{_line_start()}error: {message}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt as stop:  # Interrupted included
        _close_progress_bars()
        interrupted = stop if isinstance(stop, Interrupted) else Interrupted(signal.SIGINT)
        print(f"{_line_start()}{interrupted.message()}", file=sys.stderr)
        raise SystemExit(128 + interrupted.signal_number) from None
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)
