"""Run a Python script in a fresh interpreter in the project folder: for tests of what a command
imports, which an interpreter that has run other tests cannot show."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


def run_fresh(script: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 (our own interpreter)
        [sys.executable, "-c", script],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
