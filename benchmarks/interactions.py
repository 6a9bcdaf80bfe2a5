"""What answering costs: CPU, latency, cold start and memory of the real bot against the fake Discord.

The bot runs as its own process (``python -m bot``, as an operator starts it) so that its CPU time
and resident memory are its own; the fake Discord runs in this process. Three kinds of interaction
answer in the same runs, interleaved:

- ``/noop`` (``benchmarks/ping_cog.py``), the peer: a ``/vram`` answer's JSON rendered once at
  load, sent per answer through the same send path as ``/vram``'s (the bot's ``send_answer``:
  discord.py's ``Embed.from_dict``, a ``ui.View`` and its public ``send_message``), no estimate;
- ``/vram params:… optimizer:adam8bit activations:20``;
- a click on Compare under such an answer, by its asker: the message edited in place, with the
  chart drawn and uploaded (``edit_message`` with a file).

The headline is the bot's CPU time per answer (user + system of the bot process, from the kernel's
clock for it), read around bursts of each, as ratios to ``/noop``'s in the same round, the median
of 15 rounds: throughput and latency move with whatever else the machine runs, CPU time much less
(its rounds still differ by ±30 % on a shared VM, hence the rounds; ``benchmarks/instructions.py``
counts instructions instead, which the neighbours do not change). Also measured:

- latency one at a time, from the moment an INTERACTION_CREATE is written to the gateway until the
  bot's callback arrives, with an idle gap before each so no answer pays for the previous one's
  leftover work (reading Discord's reply);
- where an answer's CPU goes (validate, estimate, render, controls, chart, send), in a bot process
  of its own whose stages are wrapped with thread-CPU timers (``VRAM_BENCH_STAGES=1``);
- cold start: from starting ``python -m bot`` until the fake Discord has sent READY, against the
  import floor measured just before each start (a bare Python importing discord.py and
  pydantic-settings, timed until it says it is done, so that its exit is not counted);
- memory with 1,000 servers, and after 10,000 more answers (a leak would show).

Every ``/vram`` and Compare in a run asks about a model size no other one asked, so nothing (the
chart included) can come from a cache.

    python -m benchmarks.interactions            # the full run (5 to 15 minutes on 2 cores)
    python -m benchmarks.interactions --quick    # a smoke run with small counts
    python -m benchmarks.interactions --cold-starts-only --cold-starts 15   # the cold start alone

It prints a table and writes the figures as JSON (``--out``, default benchmarks/results.json).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import discord

from bot.estimate.request import parse_request
from bot.present.custom_ids import COMPARE, ESTIMATE
from bot.present.i18n import Language
from bot.present.views import render_message
from tests.fake_discord import FakeDiscord, guild_payload, snowflake
from tests.fresh_python import compile_folders

PROJECT = Path(__file__).resolve().parents[1]
COMMANDS = ("noop", "noop_options", "vram", "compare")  # "compare": a click on Compare, by the answer's asker
PEER = "noop"
# The peer with /vram's options declared and given (benchmarks/ping_cog.py): /vram over it is the bot's
# own work, discord.py's reading of a command of that many options on both sides.
OPTIONS_PEER = "noop_options"
READY_SETTLE_S = 3.0  # discord.py waits guild_ready_timeout (2 s) after the last GUILD_CREATE
VRAM_OPTIONS = {"optimizer": "adam8bit", "activations": 20.0}  # and params, different every time
# Before each one-at-a-time interaction: an answer's work does not end with its callback (the bot
# still reads and parses Discord's reply), and without a pause that tail would be charged to the next
# command's latency. 3 ms is several times that tail, even on a busy machine.
IDLE_GAP_S = 0.003
# After a burst, before reading the bot's CPU time: the last answers' replies are still being read.
BURST_SETTLE_S = 0.2
STAGES_ENV = "VRAM_BENCH_STAGES"  # benchmarks/ping_cog.py times /vram's stages when it is "1"
# Per answer, by instructions (benchmarks/instructions.py) and CPU time, at most this times /noop's
# (issue 24).
TARGETS = {"vram": 1.3, "compare": 10.0}
COLD_START_TARGET = 1.2  # process start to READY, at most this times the import floor (issue 24)


@dataclass
class Latencies:
    command: str
    mode: str  # "one at a time" or "N at once"
    sent: int
    answered: int
    median_ms: float
    p99_ms: float
    per_second: float
    bot_cpu_ms: float | None = None  # the bot process's CPU time per interaction (bursts only)


@dataclass
class Memory:
    label: str
    rss_mb: float


def rss_mb(pid: int) -> float:
    """Resident memory of a process, from /proc (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def cpu_seconds(pid: int) -> float:
    """The CPU time a process has used, all its threads, user and system: to the nanosecond from the
    kernel's clock for that process (Linux), else from /proc in clock ticks (10 ms here)."""
    try:
        return time.clock_gettime(_process_cpu_clock(pid))
    except OSError:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _process_cpu_clock(pid: int) -> int:
    """The clock id of another process's CPU time, as glibc's clock_getcpuclockid(3) makes it (Linux's
    MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)), which Python's time module does not offer."""
    return ((~pid) << 3) | 2


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


class Bench:
    def __init__(self, fake: FakeDiscord, bot_pid: int, patience_s: float = 60.0) -> None:
        self.fake = fake
        self.bot_pid = bot_pid
        # The longest wait for an answer in a burst (and for the first answer): a bot under valgrind
        # on a loaded machine needs minutes (benchmarks/instructions.py).
        self.patience_s = patience_s
        self.sizes = itertools.count()
        self.vram_sizes: set[float] = set()  # every model size asked, to show none was asked twice
        self.vram_sent = 0
        self.answer: dict[str, Any] | None = None  # a /vram answer, whose Compare the clicks press

    def _model_size(self) -> float:
        """1.000, 1.001, 1.002 … B: a model size no /vram or Compare of the run asked before (the
        integer division gives the shortest decimal, so every command line is as long as a typed one)."""
        params = (1000 + next(self.sizes)) / 1000
        self.vram_sizes.add(params)
        self.vram_sent += 1
        return params

    def interaction(self, command: str) -> dict[str, Any]:
        if command == "compare":
            return self._compare_click()
        options: dict[str, Any] = {}
        if command == "vram":
            options = VRAM_OPTIONS | {"params": self._model_size()}
        elif command == OPTIONS_PEER:
            options = VRAM_OPTIONS | {"params": 7.0}
        return self.fake.slash_interaction(command, self.fake.command_options(command, **options))

    async def prepare(self) -> None:
        """One /vram answer from the bot: the message (with its asker) that the clicks are on."""
        answered = await self.fake.invoke("vram", timeout=self.patience_s, **VRAM_OPTIONS, params=7)
        self.answer = answered.message

    def _compare_click(self) -> dict[str, Any]:
        """The asker's click on Compare under a /vram answer for a model size not asked before: the
        answer as the bot sent it (``prepare``), its embed and controls those of that request."""
        assert self.answer is not None, "prepare() first"
        request = parse_request(**VRAM_OPTIONS, params=self._model_size())
        shown = render_message(request, ESTIMATE, Language.EN)
        message = self.answer | {"embeds": [shown.embed], "components": shown.components}
        compare = next(
            c["custom_id"]
            for row in shown.components
            for c in row["components"]
            if c["custom_id"].startswith(f"vram:{COMPARE}:")
        )
        return self.fake.component_interaction(message, compare)

    async def _send(self, interaction: dict[str, Any], within: float) -> float | None:
        """Seconds from dispatch to callback, or None when no callback came ``within`` seconds."""
        sent_at = time.perf_counter()
        try:
            callback = await self.fake.send_interaction(interaction, timeout=within)
        except TimeoutError:
            return None
        return callback.received_at - sent_at

    async def _one(self, command: str) -> tuple[float | None, float]:
        """One interaction after an idle gap (see IDLE_GAP_S): its latency, and the seconds from
        sending it until its callback or the time-out (the gap, which may oversleep, left out)."""
        interaction = self.interaction(command)
        await asyncio.sleep(IDLE_GAP_S)
        started = time.perf_counter()
        latency = await self._send(interaction, within=10)
        return latency, time.perf_counter() - started

    async def one_at_a_time(self, commands: tuple[str, ...], count: int) -> list[Latencies]:
        """``count`` of each command, one after the other and interleaved (ping, ping_embed, vram, ping,
        ...), so that whatever else the machine does slows all of them alike."""
        times: dict[str, list[float | None]] = {command: [] for command in commands}
        busy: dict[str, float] = dict.fromkeys(commands, 0.0)
        for _ in range(count):
            for command in commands:
                latency, elapsed = await self._one(command)
                times[command].append(latency)
                busy[command] += elapsed
        return [self._summary(c, "one at a time", times[c], busy[c]) for c in commands]

    async def all_at_once(self, command: str, count: int) -> Latencies:
        interactions = [self.interaction(command) for _ in range(count)]
        cpu = cpu_seconds(self.bot_pid)
        started = time.perf_counter()
        times = await asyncio.gather(*(self._send(i, within=self.patience_s) for i in interactions))
        elapsed = time.perf_counter() - started
        await asyncio.sleep(BURST_SETTLE_S)
        summary = self._summary(command, f"{count} at once", list(times), elapsed)
        summary.bot_cpu_ms = (cpu_seconds(self.bot_pid) - cpu) * 1000 / count
        return summary

    async def cpu_one_at_a_time(self, command: str, count: int) -> tuple[float, int]:
        """The bot's CPU ms per answer for ``count`` of ``command`` one at a time, and how many were
        answered."""
        cpu = cpu_seconds(self.bot_pid)
        answered = sum([(await self._one(command))[0] is not None for _ in range(count)])
        await asyncio.sleep(BURST_SETTLE_S)
        return (cpu_seconds(self.bot_pid) - cpu) * 1000 / count, answered

    async def stage_totals(self) -> dict[str, dict[str, list[int]]]:
        """The stage timers' totals since the last call (ping_cog's /bench_stages), and reset them."""
        await asyncio.sleep(IDLE_GAP_S)
        callback = await self.fake.invoke("bench_stages", timeout=10)
        totals: dict[str, dict[str, list[int]]] = json.loads(callback.data["content"])
        return totals

    def _summary(self, command: str, mode: str, times: list[float | None], elapsed: float) -> Latencies:
        answered = [t * 1000 for t in times if t is not None]
        return Latencies(
            command=f"/{command}",
            mode=mode,
            sent=len(times),
            answered=len(answered),
            median_ms=statistics.median(answered) if answered else float("nan"),
            p99_ms=percentile(answered, 0.99) if answered else float("nan"),
            per_second=len(answered) / elapsed,
        )

    async def churn(self, count: int, batch: int = 250) -> int:
        """``count`` /vram interactions in batches; returns how many were answered."""
        answered = 0
        for start in range(0, count, batch):
            size = min(batch, count - start)
            times = await asyncio.gather(*(self._send(self.interaction("vram"), 60) for _ in range(size)))
            answered += sum(t is not None for t in times)
        return answered


def bot_setup(fake: FakeDiscord, folder: Path) -> tuple[Path, dict[str, str]]:
    """The config file (in ``folder``) and environment of a bot process logged in to ``fake`` with
    the benchmark's commands loaded."""
    config = folder / "config.toml"
    config.write_text(
        f'api_base_url = "{fake.api_base}"\ngateway_url = "{fake.gateway_url}"\n'
        'log_level = "WARNING"\nextra_extensions = ["benchmarks.ping_cog"]\n',
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if k not in ("VRAM_BOT_CONFIG", STAGES_ENV)}
    env |= {"DISCORD_TOKEN": fake.token, "PYTHONPATH": str(PROJECT)}
    return config, env


async def start_bot(
    fake: FakeDiscord, folder: Path, settle: float, *, stages: bool = False
) -> tuple[asyncio.subprocess.Process, float]:
    """Start ``python -m bot``; returns the process and its cold start: seconds from starting the
    process until the fake Discord has sent READY (imports, settings, login, extensions, command
    sync, gateway connection and IDENTIFY)."""
    config, env = bot_setup(fake, folder)
    if stages:
        env[STAGES_ENV] = "1"
    sessions = fake.sessions
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "--config", str(config), env=env, cwd=folder
    )
    await fake.wait_identified(timeout=60, after=sessions)
    cold_start = time.perf_counter() - started
    # Its CPU time until then too: on a busy machine the wall time also measures the neighbours.
    cold_start_cpu[process.pid] = cpu_seconds(process.pid)
    for guild in fake.ready_guilds:  # as Discord follows READY with one GUILD_CREATE per server
        await fake.dispatch("GUILD_CREATE", guild)
    await asyncio.sleep(settle)
    return process, cold_start


cold_start_cpu: dict[int, float] = {}  # the bot's CPU seconds at READY, by process id

# What any discord.py bot with pydantic settings imports before doing anything of its own.
THIRD_PARTY_IMPORTS = "import discord, discord.ext.commands, pydantic_settings"
# The floor says when it is done (and its CPU until then), and only then exits: a bot at READY has not
# exited either, so the interpreter's exit (some tens of ms of tearing modules down) is not the floor's.
FLOOR_SCRIPT = f"{THIRD_PARTY_IMPORTS}; import sys, time; print(time.process_time(), flush=True)"


def compile_bytecode() -> None:
    """The bot's bytecode and the benchmark's cog, which the bot loads, as an installed bot has them."""
    compile_folders("bot", "cogs", "benchmarks")


async def import_floor(fake: FakeDiscord, folder: Path) -> tuple[float, float]:
    """Seconds (wall, CPU) for a bare Python, in the bot's environment, to import discord.py and
    pydantic-settings: the part of the cold start that is not the bot's own. Timed until it says it
    is done, before its exit (see FLOOR_SCRIPT)."""
    _, env = bot_setup(fake, folder)
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", FLOOR_SCRIPT, env=env, cwd=folder, stdout=asyncio.subprocess.PIPE
    )
    assert process.stdout is not None
    line = await process.stdout.readline()
    wall = time.perf_counter() - started
    await process.wait()
    return wall, float(line)


async def stop_bot(process: asyncio.subprocess.Process) -> None:
    process.terminate()
    await asyncio.wait_for(process.wait(), 30)


async def measure_stages(bench: Bench, args: argparse.Namespace) -> dict[str, Any]:
    """Where the CPU of an answer goes, one command at a time, in a bot whose stages are timed.

    Per command: the bot's CPU per answer from its CPU clock (everything: discord.py reading the gateway
    frame, building the Interaction, dispatching the command, our work, sending, reading the reply)
    and the timed stages within it; what the stages do not cover is discord.py's and the loop's.
    """
    per_command: dict[str, Any] = {}
    for command in COMMANDS:  # warm every path first
        await bench.all_at_once(command, args.warmup)
    await bench.stage_totals()
    for command in COMMANDS:
        cpu_ms, answered = await bench.cpu_one_at_a_time(command, args.stage_count)
        charged = await bench.stage_totals()
        totals = charged.get(command, {})
        # Collections that started outside a command's task (in discord.py's gateway reader, say)
        # are charged to "?": in a block of one command they are that command's too.
        if "gc" in charged.get("?", {}):
            ns, calls = charged["?"]["gc"]
            totals["gc"] = [totals.get("gc", [0, 0])[0] + ns, totals.get("gc", [0, 0])[1] + calls]
        # Per answer, not per call: the collector runs once every so many answers.
        per_command[f"/{command}"] = {
            "answered": answered,
            "bot_cpu_us": cpu_ms * 1000,
            "stages_us": {stage: ns / max(answered, 1) / 1000 for stage, (ns, _) in totals.items()},
            "gc_collections": totals.get("gc", [0, 0])[1],
        }
    return per_command


async def run(args: argparse.Namespace) -> dict[str, Any]:
    fake = FakeDiscord()
    await fake.start()
    latencies: list[Latencies] = []
    rounds: list[dict[str, float]] = []  # the bot's CPU ms per answer, by command, one burst round each
    memory: list[Memory] = []
    cold_starts: list[float] = []
    floors: list[tuple[float, float]] = []  # the import floor (wall, CPU) just before each cold start
    cold_start_cpu.clear()
    compile_bytecode()
    lost = 0
    if args.cold_starts_only:
        try:
            with tempfile.TemporaryDirectory() as folder:
                for _ in range(args.cold_starts):
                    floors.append(await import_floor(fake, Path(folder)))
                    process, seconds = await start_bot(fake, Path(folder), 0.0)
                    cold_starts.append(seconds)
                    await stop_bot(process)
        finally:
            await fake.stop()
        return {"cold_start_s": cold_start_headline(cold_starts, floors)}
    try:
        with tempfile.TemporaryDirectory() as folder:
            # 1. Memory with 1000 servers in GUILD_CREATE (a smoke run skips this start). Its READY
            # is larger than usual, so its start is not one of the cold starts.
            with_guilds = 0.0
            if args.guilds:
                fake.ready_guilds = [guild_payload(snowflake()) for _ in range(args.guilds)]
                process, _ = await start_bot(fake, Path(folder), args.settle)
                with_guilds = rss_mb(process.pid)
                cold_start_cpu.pop(process.pid, None)
                await stop_bot(process)
            fake.ready_guilds = []

            # 2. Cold starts alone, then the timed stages (their bot's start is one more cold start).
            # Each after a floor of its own, so that both see the machine as it is at the time.
            for _ in range(args.cold_starts):
                floors.append(await import_floor(fake, Path(folder)))
                process, seconds = await start_bot(fake, Path(folder), 0.0)
                cold_starts.append(seconds)
                await stop_bot(process)
            if not args.quick:  # the timers cost CPU: a bot of their own, apart from the headline
                floors.append(await import_floor(fake, Path(folder)))
                process, seconds = await start_bot(fake, Path(folder), args.settle, stages=True)
                cold_starts.append(seconds)
                bench = Bench(fake, process.pid)
                await bench.prepare()
                stages = await measure_stages(bench, args)
                await stop_bot(process)

            # 3. Everything else on a bot with no servers (and no timers, except in a smoke run,
            # which saves the second start by timing the stages on the same bot).
            floors.append(await import_floor(fake, Path(folder)))
            process, seconds = await start_bot(fake, Path(folder), args.settle, stages=args.quick)
            cold_starts.append(seconds)
            bench = Bench(fake, process.pid)
            await bench.prepare()
            if args.quick:
                stages = await measure_stages(bench, args)
            memory.append(Memory("after READY, 0 guilds", rss_mb(process.pid)))
            if args.guilds:
                memory.append(Memory(f"after READY, {args.guilds} guilds", with_guilds))
            for command in COMMANDS:  # warm every path (imports, caches) before measuring
                await bench.all_at_once(command, args.warmup)
            for _ in range(args.rounds):
                latencies += await bench.one_at_a_time(COMMANDS, args.count)
            for index in range(args.cpu_rounds):
                # Alternate, so drift affects every command alike, and rotate each round's order, so
                # no command is always the one run first or last.
                burst: dict[str, float] = {}
                for command in COMMANDS[index % len(COMMANDS) :] + COMMANDS[: index % len(COMMANDS)]:
                    row = await bench.all_at_once(command, args.burst)
                    latencies.append(row)
                    burst[row.command] = row.bot_cpu_ms or 0.0
                rounds.append(burst)
            before = rss_mb(process.pid)
            answered = await bench.churn(args.leak)
            lost = args.leak - answered
            after = rss_mb(process.pid)
            memory.append(Memory("before the leak run", before))
            memory.append(Memory(f"after {args.leak:,} more /vram", after))
            await stop_bot(process)
            vram_sent, vram_distinct = bench.vram_sent, len(bench.vram_sizes)
    finally:
        await fake.stop()
    result = report(args, latencies, memory, lost)
    return result | {
        "cpu_per_answer": cpu_headline(args, rounds),
        "stages": stages,
        "cold_start_s": cold_start_headline(cold_starts, floors),
        "vram_requests": {"sent": vram_sent, "distinct_model_sizes": vram_distinct},
    }


def cold_start_headline(cold_starts: list[float], floors: list[tuple[float, float]]) -> dict[str, Any]:
    """The cold starts, and their ratio to the import floor: the median of each start's ratio to
    the floor measured just before it."""
    ratio = statistics.median(start / wall for start, (wall, _) in zip(cold_starts, floors, strict=True))
    # By CPU too: on a busy machine the wall times also measure the neighbours.
    cpus = list(cold_start_cpu.values())
    cpu_ratio = statistics.median(cpu / floor for cpu, (_, floor) in zip(cpus, floors, strict=True))
    return {
        "median": statistics.median(cold_starts),
        "max": max(cold_starts),
        "runs": cold_starts,
        "bot_cpu_median": statistics.median(cpus),
        "vs_import_floor_by_cpu": cpu_ratio,
        "third_party_imports": {
            "wall_median": statistics.median(wall for wall, _ in floors),
            "cpu_median": statistics.median(cpu for _, cpu in floors),
            "runs": [wall for wall, _ in floors],
        },
        "vs_import_floor": ratio,
        "target": COLD_START_TARGET,
        "met": ratio <= COLD_START_TARGET,
    }


def ratios_to_the_peer(rounds: list[dict[str, float]]) -> dict[str, dict[str, Any]]:
    """Each command's figure per answer as a ratio to /noop's, the median of the rounds' own ratios
    (each round's commands ran back to back, so a slower patch of the machine scales both sides of a
    ratio alike), with its target."""
    peer = f"/{PEER}"
    ratios: dict[str, dict[str, Any]] = {}
    for command, target in TARGETS.items():
        ratio = statistics.median(r[f"/{command}"] / r[peer] if r[peer] else float("nan") for r in rounds)
        ratios[f"/{command} vs {peer}"] = {"ratio": ratio, "target": target, "met": ratio <= target}
    return ratios


def cpu_headline(args: argparse.Namespace, rounds: list[dict[str, float]]) -> dict[str, Any]:
    """The bot's CPU per answer in the bursts, and the ratios to /noop's."""
    return {
        "mode": f"{args.burst} at once",
        "ms": {command: statistics.median(r[command] for r in rounds) for command in rounds[0]},
        "rounds": rounds,
        "ratios": ratios_to_the_peer(rounds),
    }


def _merge(rows: list[Latencies]) -> Latencies:
    """Rounds of the same measurement, as their medians."""
    return Latencies(
        command=rows[0].command,
        mode=rows[0].mode,
        sent=sum(r.sent for r in rows),
        answered=sum(r.answered for r in rows),
        median_ms=statistics.median(r.median_ms for r in rows),
        p99_ms=statistics.median(r.p99_ms for r in rows),
        per_second=statistics.median(r.per_second for r in rows),
        bot_cpu_ms=statistics.median(cpu) if (cpu := [r.bot_cpu_ms for r in rows if r.bot_cpu_ms]) else None,
    )


def report(
    args: argparse.Namespace, latencies: list[Latencies], memory: list[Memory], lost: int
) -> dict[str, Any]:
    grouped: dict[tuple[str, str], list[Latencies]] = {}
    for row in latencies:
        grouped.setdefault((row.command, row.mode), []).append(row)
    rows = [_merge(group) for group in grouped.values()]
    ratios: dict[str, dict[str, dict[str, float]]] = {}
    for mode in dict.fromkeys(r.mode for r in rows):
        base = next(r for r in rows if r.mode == mode and r.command == f"/{PEER}")
        for command in TARGETS:
            row = next(r for r in rows if r.mode == mode and r.command == f"/{command}")
            ratio = {
                "median_latency": row.median_ms / base.median_ms,
                "throughput": row.per_second / base.per_second,
            }
            ratios.setdefault(f"/{command} vs /{PEER}", {})[mode] = ratio
    rss = {m.label: m.rss_mb for m in memory}
    zero, many = rss["after READY, 0 guilds"], rss.get(f"after READY, {args.guilds} guilds", 0.0)
    return {
        "command": "python -m benchmarks.interactions" + (" --quick" if args.quick else ""),
        "when": time.strftime("%Y-%m-%d"),
        "machine": {
            "python": platform.python_version(),
            "discord.py": discord.__version__,
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "counts": {
            "one_at_a_time": args.count,
            "rounds": args.rounds,
            "idle_gap_ms": IDLE_GAP_S * 1000,
            "at_once": args.burst,
            "cpu_rounds": args.cpu_rounds,
            "stage_count": args.stage_count,
            "cold_starts": args.cold_starts,
            "leak_run": args.leak,
            "guilds": args.guilds,
        },
        "latency": [asdict(r) for r in rows],
        "ratios": ratios,
        "memory_mb": rss,
        "memory_per_guild_kb": (many - zero) * 1024 / args.guilds if args.guilds else None,
        "leak_run_growth_mb": memory[-1].rss_mb - memory[-2].rss_mb,
        "leak_run_lost": lost,
    }


def print_cold_start(cold: dict[str, Any]) -> None:
    floor = cold["third_party_imports"]
    print(
        f"cold start to READY: {cold['vs_import_floor']:.2f}× the import floor {_against(cold)}; "
        f"median {cold['median']:.3f} s, max {cold['max']:.3f} s over {len(cold['runs'])} starts, "
        f"the bot's own CPU until READY: median {cold['bot_cpu_median']:.2f} s "
        f"({cold['vs_import_floor_by_cpu']:.2f}× the floor's)"
    )
    print(
        f"  importing discord.py and pydantic-settings alone (to done, not exit): "
        f"median {floor['wall_median']:.3f} s, CPU {floor['cpu_median']:.2f} s"
    )


def print_table(result: dict[str, Any]) -> None:
    cpu = result["cpu_per_answer"]
    print(
        f"bot CPU per answer, {cpu['mode']}: "
        + ", ".join(f"{command} {ms:.3f} ms" for command, ms in cpu["ms"].items())
    )
    for pair, figures in cpu["ratios"].items():
        print(f"{pair}: {figures['ratio']:.2f}× the CPU per answer {_against(figures)}")
    print_cold_start(result["cold_start_s"])
    print("one at a time, bot CPU per answer (µs) and the timed stages within it:")
    for command, figures in result["stages"].items():
        stages = ", ".join(f"{stage} {us:.0f}" for stage, us in figures["stages_us"].items())
        print(f"  {command:12} {figures['bot_cpu_us']:6.0f}  {stages}")
    header = f"{'command':12} {'mode':16} {'answered':>11} {'median ms':>10} {'p99 ms':>8} {'per s':>7}"
    print(header + f" {'bot CPU ms':>10}")
    for row in result["latency"]:
        answered = f"{row['answered']}/{row['sent']}"
        row_cpu = f"{row['bot_cpu_ms']:.3f}" if row["bot_cpu_ms"] else "-"
        print(
            f"{row['command']:12} {row['mode']:16} {answered:>11} {row['median_ms']:>10.2f} "
            f"{row['p99_ms']:>8.2f} {row['per_second']:>7.0f} {row_cpu:>10}"
        )
    for pair, modes in result["ratios"].items():
        for mode, ratio in modes.items():
            print(
                f"{pair}, {mode}: {ratio['median_latency']:.2f}× the median latency, "
                f"{ratio['throughput']:.2f}× the throughput"
            )
    for label, mb in result["memory_mb"].items():
        print(f"RSS {label}: {mb:.1f} MB")
    if result["memory_per_guild_kb"] is not None:
        print(f"memory per guild: {result['memory_per_guild_kb']:.1f} KB")
    print(f"leak run: {result['leak_run_growth_mb']:+.1f} MB, {result['leak_run_lost']} lost")
    sizes = result["vram_requests"]
    print(f"/vram: {sizes['sent']} sent, {sizes['distinct_model_sizes']} distinct model sizes")


def _against(figures: dict[str, Any]) -> str:
    return f"(target ≤ {figures['target']}×: {'met' if figures['met'] else 'NOT met'})"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.interactions", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--count", type=int, default=500, help="interactions one at a time, per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the one-at-a-time run")
    parser.add_argument("--burst", type=int, default=500, help="interactions sent at once")
    parser.add_argument("--cpu-rounds", type=int, default=15, help="rounds of bursts (the CPU headline)")
    parser.add_argument(
        "--stage-count", type=int, default=1000, help="interactions per command, timed stages"
    )
    parser.add_argument("--cold-starts", type=int, default=5, help="starts only to time the cold start")
    parser.add_argument("--leak", type=int, default=10_000, help="interactions of the leak run")
    parser.add_argument("--guilds", type=int, default=1000, help="servers in GUILD_CREATE")
    parser.add_argument("--warmup", type=int, default=200, help="interactions before measuring")
    parser.add_argument("--settle", type=float, default=READY_SETTLE_S, help="seconds to wait after READY")
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke run, not a measurement")
    parser.add_argument(
        "--cold-starts-only",
        action="store_true",
        help="only the cold starts (--cold-starts of them, each after its floor); prints, writes nothing",
    )
    parser.add_argument("--out", type=Path, default=PROJECT / "benchmarks" / "results.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.count, args.rounds, args.burst, args.cpu_rounds = 10, 1, 20, 1
        args.stage_count, args.cold_starts, args.leak, args.guilds, args.warmup = 10, 0, 20, 0, 5
        args.settle = 0.1
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    result = asyncio.run(run(args))
    if args.cold_starts_only:
        print_cold_start(result["cold_start_s"])
        return 0
    print_table(result)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
