"""The cold start counted in instructions: the bot to READY against the import floor, under valgrind.

Wall and CPU times of a start move with whatever else the machine runs (on a shared VM, by more than
the difference a change makes); instruction counts do not. Both processes run under valgrind's
cachegrind (no cache simulation), each in the bot's environment with its bytecode compiled:

- the import floor: ``benchmarks.interactions.FLOOR_SCRIPT`` (discord.py, its commands extension and
  pydantic-settings), ended with ``os._exit`` where it says it is done;
- the bot: ``python -m bot``'s own ``main`` against the fake Discord, ended with ``os._exit`` in its
  ``on_ready`` (the runner is imported before the command line, not after: the same modules).

Neither count includes the interpreter's exit. The ratio is the bot's count over the floor's.

    python -m benchmarks.cold_start_instructions   # about a minute and a half
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks.interactions import FLOOR_SCRIPT, bot_setup, compile_bytecode
from tests.fake_discord import FakeDiscord

VALGRIND = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
EXIT_AT_READY = (
    "import os, sys\n"
    "import bot.runtime.runner as runner\n"
    "async def on_ready(self): os._exit(0)\n"
    "runner.VramBot.on_ready = on_ready\n"
    "from bot.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


async def count(arguments: list[str], env: dict[str, str], folder: str) -> int:
    """Instructions (cachegrind's "I refs") of ``python arguments...``."""
    process = await asyncio.create_subprocess_exec(
        *VALGRIND,
        sys.executable,
        *arguments,
        env=env,
        cwd=folder,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await process.communicate()
    found = re.search(r"I\s+refs:\s+([\d,]+)", err.decode())
    if found is None:
        raise RuntimeError(f"no instruction count from valgrind:\n{err.decode()[-2000:]}")
    return int(found.group(1).replace(",", ""))


async def run(rounds: int) -> list[tuple[int, int]]:
    compile_bytecode()
    fake = FakeDiscord()
    await fake.start()
    counts: list[tuple[int, int]] = []
    try:
        with tempfile.TemporaryDirectory() as folder:
            config, env = bot_setup(fake, Path(folder))
            for _ in range(rounds):
                floor = await count(["-c", FLOOR_SCRIPT + "; import os; os._exit(0)"], env, folder)
                bot = await count(["-c", EXIT_AT_READY, "--config", str(config)], env, folder)
                counts.append((floor, bot))
                print(
                    f"floor {floor / 1e6:,.1f} M, bot to READY {bot / 1e6:,.1f} M: {bot / floor:.3f}×",
                    flush=True,
                )
    finally:
        await fake.stop()
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=1, help="floor and bot pairs (the counts hardly move)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed")
    asyncio.run(run(args.rounds))


if __name__ == "__main__":
    main()
