"""Instructions per answer, counted by valgrind's callgrind: the CPU headline without the machine's noise.

CPU time on a shared machine moves with whatever else runs, by as much as the differences measured
(``benchmarks/interactions.py`` reports it with its spread). Callgrind counts the instructions the
bot process executes instead, which do not depend on the neighbours: the same code, inputs and
environment give nearly the same count each run. The bot runs under ``valgrind --tool=callgrind``
(some 50 times slower, so the counts are small), answers bursts of each of the interactions that
``benchmarks/interactions.py`` compares (``/noop``, ``/vram``, a click on Compare) from the fake
Discord, interleaved round by round, and ``callgrind_control`` zeroes the counters before each one's
bursts and dumps them after. Start-up and a warm-up burst of each are left out. The dumps stay in
``--keep`` when given, for ``callgrind_annotate`` (where the instructions go).

    python -m benchmarks.instructions            # 300 of each, twice, then the parts (about 10 minutes)
    python -m benchmarks.instructions --count 100 --rounds 1

Needs valgrind (Debian's ``valgrind`` package, which brings ``callgrind_control``). Prints
instructions per answer and the ratios to ``/noop``, and writes them as JSON (``--out``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.interactions import (
    COMMANDS,
    OPTIONS_PEER,
    PEER,
    PROJECT,
    TARGETS,
    VRAM_OPTIONS,
    Bench,
    bot_setup,
    compile_bytecode,
)
from bot.estimate.request import parse_request
from bot.present.custom_ids import COMPARE, ESTIMATE
from bot.present.i18n import Language
from bot.present.views import render_message
from bot.runtime.send import controls_of, embed_of
from tests.fake_discord import FakeDiscord

BURST = 100  # interactions at once: enough to batch like the CPU benchmark, few enough for valgrind
# Fewer Compares at once: a burst of 100 charts blocks the bot's loop under valgrind for so long (some
# 30 s) that the gateway's heartbeat lapses and discord.py reconnects, whose work then lands in a count.
BURSTS = {"compare": 10}
SETTLE_S = 1.0  # after a burst, before dumping: the last replies are still being read
_TOTAL = re.compile(r"^summary:\s*(\d+)", re.MULTILINE)
# Where an answer's instructions go, part by part, each counted alone in a Python of its own (the
# count with so many repetitions less the count with none, over their number): the bot's own work for
# /vram (validation, estimate, rendering, controls) and for Compare (the same for the Compare view, and
# its chart apart), and the turning of the rendered JSON into discord.py's Embed and View, which every
# answer, /noop's too, pays on discord.py's public send path. The rest of an answer is discord.py's.
PART_REPEATS = {"vram_own_work": 500, "compare_own_work": 200, "compare_chart": 100, "embed_and_view": 500}


def _control(*args: str) -> None:
    subprocess.run(["callgrind_control", *args], check=True, capture_output=True)  # noqa: S603, S607


# The longest wait for an answer (and for the full collection before each count): the bot runs some
# 50 times slower under valgrind, and on a machine loaded by other work (a load average of 15) a
# collection took more than the 120 s this once waited. Not much longer: an interaction the bot never
# saw (a gateway resumed under load) holds the run that long.
PATIENCE_S = 300.0


async def run(count: int, rounds: int, folder: Path) -> dict[str, list[float]]:
    """Instructions per answer of each command, one figure per round."""
    fake = FakeDiscord()
    await fake.start()
    per_answer: dict[str, list[float]] = {f"/{command}": [] for command in COMMANDS}
    config, env = bot_setup(fake, folder)
    dumps = folder / "callgrind.out"
    bot = await asyncio.create_subprocess_exec(
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={dumps}.%p",
        "--dump-instr=no",
        sys.executable,
        "-m",
        "bot",
        "--config",
        str(config),
        env=env,
        cwd=folder,
        stderr=subprocess.DEVNULL,
    )
    try:
        await fake.wait_identified(timeout=PATIENCE_S)
        await asyncio.sleep(5)  # the guilds' wait after READY, and the Hub modules' warm-up
        bench = Bench(fake, bot.pid, patience_s=PATIENCE_S)
        await bench.prepare()
        for command in COMMANDS:  # warm every path first
            await bench.all_at_once(command, BURSTS.get(command, BURST))
        for round_number in range(rounds):
            for command in COMMANDS:
                await asyncio.sleep(SETTLE_S)
                await fake.invoke("bench_collect", timeout=PATIENCE_S)  # see ping_cog's bench_collect
                await asyncio.sleep(SETTLE_S)
                _control("--zero", str(bot.pid))
                burst = BURSTS.get(command, BURST)
                for _ in range(count // burst):
                    await bench.all_at_once(command, burst)
                await asyncio.sleep(SETTLE_S)
                name = f"{command}-{round_number}"
                _control(f"--dump={name}", str(bot.pid))
                per_answer[f"/{command}"].append(_instructions(folder, name) / count)
        bot.send_signal(2)
        await asyncio.wait_for(bot.wait(), 120)
    finally:
        if bot.returncode is None:  # the run failed: no bot under valgrind is left behind
            bot.kill()
            await bot.wait()
        await fake.stop()
    return per_answer


def _instructions(folder: Path, name: str) -> int:
    """The instruction total of the dump named ``name`` (callgrind writes one file per dump)."""
    for path in folder.glob("callgrind.out.*"):
        text = path.read_text(encoding="utf-8", errors="replace")
        trigger = re.search(r"^desc: Trigger: (.*)$", text, re.MULTILINE)
        found = _TOTAL.search(text)
        if trigger and found and trigger.group(1).split()[-1] == name:  # "dump vram-0"
            return int(found.group(1))
    raise RuntimeError(f"no callgrind dump named {name}")


def _run_part(part: str, repeats: int) -> None:
    """``repeats`` of one part, after 50 that warm it up (in both counts, so they cancel out)."""
    from bot.present.chart import compare_png

    shown = render_message(parse_request(**VRAM_OPTIONS, params=7), ESTIMATE, Language.EN)

    async def repeat() -> None:  # in a running loop, as a View needs
        for index in range(-50, repeats):
            # A model size not asked before, as in the benchmark (so no chart comes from the cache).
            request = parse_request(**VRAM_OPTIONS, params=(10_000 + index) / 1000)
            if part == "vram_own_work":
                render_message(request, ESTIMATE, Language.EN)
            elif part == "compare_own_work":
                render_message(request, COMPARE, Language.EN)
            elif part == "compare_chart":
                compare_png(request, Language.EN)
            else:
                embed_of(shown.embed)
                controls_of(shown.components)

    asyncio.run(repeat())


def count_parts(folder: Path) -> dict[str, float]:
    """Instructions per answer of each of PARTS."""
    per_part: dict[str, float] = {}
    for part, count in PART_REPEATS.items():
        totals = []
        for repeats in (0, count):
            out = folder / f"part.{part}.{repeats}"
            python = [sys.executable, "-m", "benchmarks.instructions", "--run-part", part, str(repeats)]
            subprocess.run(  # noqa: S603
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *python],  # noqa: S607
                check=True,
                capture_output=True,
                cwd=PROJECT,
            )
            found = _TOTAL.search(out.read_text(encoding="utf-8", errors="replace"))
            assert found is not None, f"no total in {out}"
            totals.append(int(found.group(1)))
        per_part[part] = (totals[1] - totals[0]) / count
    return per_part


def report(per_answer: dict[str, list[float]], count: int) -> dict[str, Any]:
    """The counts, and each one's ratio to /noop's of the same round, with its target."""
    # Each target's command over /noop, and /vram over the peer that declares its options: the bot's
    # own work (benchmarks/README.md, round 5).
    pairs = [(command, PEER, target) for command, target in TARGETS.items()]
    pairs.append(("vram", OPTIONS_PEER, TARGETS["vram"]))
    ratios: dict[str, dict[str, Any]] = {}
    for command, peer, target in pairs:
        rounds = [v / b for v, b in zip(per_answer[f"/{command}"], per_answer[f"/{peer}"], strict=True)]
        ratios[f"/{command} vs /{peer}"] = {"rounds": rounds, "target": target, "met": max(rounds) <= target}
    return {
        "command": "python -m benchmarks.instructions",
        "answers_per_round": count,
        "instructions_per_answer": per_answer,
        "ratios": ratios,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.instructions", description=__doc__)
    parser.add_argument("--count", type=int, default=300, help="answers per command and round")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the three interactions")
    parser.add_argument("--out", type=Path, default=PROJECT / "benchmarks" / "instructions.json")
    parser.add_argument("--keep", type=Path, help="keep callgrind's dumps in this folder")
    parser.add_argument(
        "--no-parts", action="store_true", help="only the interactions, not the parts counted alone"
    )
    parser.add_argument("--run-part", nargs=2, help=argparse.SUPPRESS)  # count_parts' child process
    args = parser.parse_args(argv)
    if args.run_part:
        _run_part(args.run_part[0], int(args.run_part[1]))
        return 0
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("instructions: valgrind is needed (apt-get install valgrind)", file=sys.stderr)
        return 2
    compile_bytecode()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        per_answer = asyncio.run(run(args.count, args.rounds, args.keep))
        parts = {} if args.no_parts else count_parts(args.keep)
    else:
        with tempfile.TemporaryDirectory() as folder:
            per_answer = asyncio.run(run(args.count, args.rounds, Path(folder)))
            parts = {} if args.no_parts else count_parts(Path(folder))
    result = report(per_answer, args.count) | {"parts_per_answer": parts}
    for command, counts in per_answer.items():
        print(f"{command:12} " + "  ".join(f"{c / 1e6:.3f} M" for c in counts) + " instructions per answer")
    for pair, figures in result["ratios"].items():
        met = "met" if figures["met"] else "NOT met"
        rounds = "  ".join(f"{r:.2f}×" for r in figures["rounds"])
        print(f"{pair}: {rounds} (target ≤ {figures['target']}×: {met})")
    for part, instructions in parts.items():
        print(f"  {part}, counted alone: {instructions / 1e6:.3f} M instructions per answer")
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
