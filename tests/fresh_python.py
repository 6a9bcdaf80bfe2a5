"""Run a Python script in a fresh interpreter in the project folder: for tests of what a command
imports, which an interpreter that has run other tests cannot show."""

from __future__ import annotations

import compileall
import fcntl
import functools
import json
import subprocess
import sys
from dataclasses import dataclass
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


# One fresh interpreter for the tests of what the commands import (test_layers_and_keys.py,
# test_chart.py, test_measure_target.py), each test reading the steps it is about: a fresh start of
# the bot costs some 0.6 CPU seconds, and four of them were a tenth of the default suite's CPU.
# The steps run in this order, each checked against everything loaded by then (what a step loaded
# stays loaded, so sharing the interpreter makes a later step's check stricter, never looser); each
# step's own imports name the step that loaded a module. The test processes of one run share the
# interpreter's report (conftest's ``fresh_steps`` fixture): it starts once a run.
FRESH_STEPS = {
    "estimate": (
        "from bot.cli import main\n"
        "assert main(['estimate', '7', '--optimizer', 'sgd']) == 0\n"
        "assert main(['estimate', '7', '--view', 'compare', '--json']) == 0\n"
    ),
    # Kimi K2's two layers need some 478 GB: refused on any machine with less than ~680 GB free.
    "measure kimi-k2": "from bot.cli import main\nassert main(['measure', 'kimi-k2']) == 2\n",
    "import the bot": "import bot.cli, bot.runtime.runner, bot.runtime.cog, bot.runtime.hub_client\n",
    "warm_up": "import asyncio\nfrom bot.runtime.hub_client import warm_up\nasyncio.run(warm_up())\n",
}
_MARK = "--- fresh step: "  # the line before each step's output, on stdout and on stderr
_STEPS_SCRIPT = f"""
import json, sys, traceback
report = {{"the start": {{"failure": None, "imported": sorted(sys.modules)}}}}
for name, code in {FRESH_STEPS!r}.items():
    before = set(sys.modules)
    print({_MARK!r} + name, flush=True)
    print({_MARK!r} + name, file=sys.stderr, flush=True)
    try:
        exec(compile(code, name, "exec"), {{}})
        failure = None
    except BaseException:
        failure = traceback.format_exc()
    sys.stdout.flush()
    sys.stderr.flush()
    report[name] = {{"failure": failure, "imported": sorted(set(sys.modules) - before)}}
print({_MARK!r} + "report", flush=True)
print(json.dumps(report))
"""


@dataclass(frozen=True)
class FreshStep:
    """One step in the shared fresh interpreter: its output, and the modules loaded once it had run,
    each with the step that imported it ("the start": the interpreter's own before the first)."""

    name: str
    stdout: str
    stderr: str
    imported_by: dict[str, str]

    def loaded_of(self, *packages: str) -> list[str]:
        """The loaded modules of ``packages`` (each a package with its submodules, or a module)."""
        return sorted(
            f"{module} (by {step!r})"
            for module, step in self.imported_by.items()
            if module in packages or module.split(".")[0] in packages
        )


class FreshSteps:
    """The report of one fresh interpreter that ran FRESH_STEPS."""

    def __init__(self, report: dict[str, dict[str, str]]) -> None:
        self._report = report

    def step(self, name: str) -> FreshStep:
        """A step that ran to its end (its traceback is the test's failure otherwise)."""
        stdout, stderr = (_split(self._report["output"][stream]) for stream in ("stdout", "stderr"))
        steps = json.loads(stdout["report"])
        assert steps[name]["failure"] is None, f"{name}: {steps[name]['failure']}\n{stderr.get(name)}"
        imported_by = dict.fromkeys(steps["the start"]["imported"], "the start")
        for before in FRESH_STEPS:
            imported_by |= dict.fromkeys(steps[before]["imported"], before)
            if before == name:
                break
        return FreshStep(name, stdout.get(name, ""), stderr.get(name, ""), imported_by)


def _split(output: str) -> dict[str, str]:
    parts: dict[str, str] = {}
    name = ""
    for line in output.split("\n"):
        if line.startswith(_MARK):
            name = line.removeprefix(_MARK)
            parts[name] = ""
        elif name:
            parts[name] += line + "\n"
    return parts


def fresh_steps(shared: Path) -> FreshSteps:
    """FRESH_STEPS run in a fresh interpreter, once for all the test processes that share the folder
    ``shared``: the first to ask runs it and keeps the output there, under a lock the others wait on."""
    kept = shared / "fresh-steps.json"
    with (shared / "fresh-steps.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not kept.exists():
            finished = run_fresh(_STEPS_SCRIPT)
            assert finished.returncode == 0, finished.stderr
            output = {"stdout": finished.stdout, "stderr": finished.stderr}
            kept.write_text(json.dumps({"output": output}), encoding="utf-8")
        return FreshSteps(json.loads(kept.read_text(encoding="utf-8")))
