"""Run a Python script in a fresh interpreter in the project folder: for tests of what a command
imports, which an interpreter that has run other tests cannot show."""

from __future__ import annotations

import compileall
import functools
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


@functools.cache
def compile_bytecode() -> None:
    """Write the bot's bytecode once, as installing it does (pip compiles what it installs).

    Without it, a machine with PYTHONDONTWRITEBYTECODE set (this one, and the image) compiles every
    module of the bot from source in each process a test starts: about a quarter of a CPU second each.
    Only the bytecode is written (atomically, so two workers may do it at once); what a process
    imports is the same either way.
    """
    for folder in ("bot", "cogs"):
        compileall.compile_dir(PROJECT / folder, quiet=1)


def run_fresh(script: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    compile_bytecode()
    return subprocess.run(  # noqa: S603 (our own interpreter)
        [sys.executable, "-c", script],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
