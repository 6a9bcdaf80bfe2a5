"""Run a Python script in a fresh interpreter in the project folder: for tests of what a command
imports, which an interpreter that has run other tests cannot show."""

from __future__ import annotations

import compileall
import functools
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


def compile_folders(*folders: str) -> None:
    """Write the bytecode of the project's ``folders``, as installing the bot does (pip compiles what
    it installs). Without it, a machine with PYTHONDONTWRITEBYTECODE set (this one, and the image)
    compiles every module from source in each process started: about a quarter of a CPU second for
    the bot. Only the bytecode is written (atomically, so two workers may do it at once); what a
    process imports is the same either way."""
    for folder in folders:
        compileall.compile_dir(PROJECT / folder, quiet=1)


@functools.cache
def compile_bytecode() -> None:
    """The bot's bytecode, once per test process, before a test starts the bot or a fresh Python."""
    compile_folders("bot", "cogs")


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
