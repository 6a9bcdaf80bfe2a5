"""What answering costs: latency, throughput and memory of the real bot against the loopback fake Discord.

The bot runs as its own process (``python -m bot``, as an operator starts it) so that its resident
memory is its own; the fake Discord runs in this process and timestamps each interaction from the
moment its INTERACTION_CREATE is written to the gateway until the bot's callback arrives over REST.
A no-op ``/ping`` (``benchmarks/ping_cog.py``) answers a plain message in the same run, so the
ratio between the two is what ``/vram``'s own work (validation, estimate, rendering, components)
adds on top of discord.py and the transport.

    python -m benchmarks.interactions            # the full run (a few minutes on 2 cores)
    python -m benchmarks.interactions --quick    # a smoke run with small counts

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

from tests.fake_discord import FakeDiscord, guild_payload, snowflake

PROJECT = Path(__file__).resolve().parents[1]
COMMANDS = ("ping", "ping_embed", "vram")
READY_SETTLE_S = 3.0  # discord.py waits guild_ready_timeout (2 s) after the last GUILD_CREATE
VRAM_OPTIONS = {"optimizer": "adam8bit", "activations": 20.0}  # and params, different every time


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
    """User plus system CPU time a process has used, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


class Bench:
    def __init__(self, fake: FakeDiscord, bot_pid: int) -> None:
        self.fake = fake
        self.bot_pid = bot_pid
        self.sizes = itertools.count()

    def interaction(self, command: str) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if command == "vram":
            # A new model size each time (0.1 to 1000B), so no answer is ever the same as another.
            options = VRAM_OPTIONS | {"params": 0.1 + next(self.sizes) % 9_999 / 10}
        return self.fake.slash_interaction(command, self.fake.command_options(command, **options))

    async def _send(self, interaction: dict[str, Any], within: float) -> float | None:
        """Seconds from dispatch to callback, or None when no callback came ``within`` seconds."""
        sent_at = time.perf_counter()
        try:
            callback = await self.fake.send_interaction(interaction, timeout=within)
        except TimeoutError:
            return None
        return callback.received_at - sent_at

    async def one_at_a_time(self, commands: tuple[str, ...], count: int) -> list[Latencies]:
        """``count`` of each command, one after the other and interleaved (ping, ping_embed, vram, ping,
        ...), so that whatever else the machine does slows all of them alike."""
        times: dict[str, list[float | None]] = {command: [] for command in commands}
        busy: dict[str, float] = dict.fromkeys(commands, 0.0)
        for _ in range(count):
            for command in commands:
                started = time.perf_counter()
                times[command].append(await self._send(self.interaction(command), within=10))
                busy[command] += time.perf_counter() - started
        return [self._summary(c, "one at a time", times[c], busy[c]) for c in commands]

    async def all_at_once(self, command: str, count: int) -> Latencies:
        interactions = [self.interaction(command) for _ in range(count)]
        cpu = cpu_seconds(self.bot_pid)
        started = time.perf_counter()
        times = await asyncio.gather(*(self._send(i, within=60) for i in interactions))
        elapsed = time.perf_counter() - started
        await asyncio.sleep(0.2)  # let the bot finish reading the last answers' responses
        summary = self._summary(command, f"{count} at once", list(times), elapsed)
        summary.bot_cpu_ms = (cpu_seconds(self.bot_pid) - cpu) * 1000 / count
        return summary

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


async def start_bot(fake: FakeDiscord, folder: Path, settle: float) -> asyncio.subprocess.Process:
    config = folder / "config.toml"
    config.write_text(
        f'api_base_url = "{fake.api_base}"\ngateway_url = "{fake.gateway_url}"\n'
        'log_level = "WARNING"\nextra_extensions = ["benchmarks.ping_cog"]\n',
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if k != "VRAM_BOT_CONFIG"}
    env |= {"DISCORD_TOKEN": fake.token, "PYTHONPATH": str(PROJECT)}
    sessions = fake.sessions
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "--config", str(config), env=env, cwd=folder
    )
    await fake.wait_identified(timeout=60, after=sessions)
    for guild in fake.ready_guilds:  # as Discord follows READY with one GUILD_CREATE per server
        await fake.dispatch("GUILD_CREATE", guild)
    await asyncio.sleep(settle)
    return process


async def stop_bot(process: asyncio.subprocess.Process) -> None:
    process.terminate()
    await asyncio.wait_for(process.wait(), 30)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    fake = FakeDiscord()
    await fake.start()
    latencies: list[Latencies] = []
    memory: list[Memory] = []
    lost = 0
    try:
        with tempfile.TemporaryDirectory() as folder:
            # 1. Memory with 1000 servers in GUILD_CREATE (a smoke run skips this second start).
            with_guilds = 0.0
            if args.guilds:
                fake.ready_guilds = [guild_payload(snowflake()) for _ in range(args.guilds)]
                process = await start_bot(fake, Path(folder), args.settle)
                with_guilds = rss_mb(process.pid)
                await stop_bot(process)

            # 2. Everything else on a bot with no servers.
            fake.ready_guilds = []
            process = await start_bot(fake, Path(folder), args.settle)
            bench = Bench(fake, process.pid)
            memory.append(Memory("after READY, 0 guilds", rss_mb(process.pid)))
            memory.append(Memory(f"after READY, {args.guilds} guilds", with_guilds))
            for command in COMMANDS:  # warm every path (imports, caches) before measuring
                await bench.all_at_once(command, args.warmup)
            for _ in range(args.rounds):
                latencies += await bench.one_at_a_time(COMMANDS, args.count)
            for _ in range(args.rounds):  # alternate, so drift affects every command alike
                for command in COMMANDS:
                    latencies.append(await bench.all_at_once(command, args.burst))
            before = rss_mb(process.pid)
            answered = await bench.churn(args.leak)
            lost = args.leak - answered
            after = rss_mb(process.pid)
            memory.append(Memory("before the leak run", before))
            memory.append(Memory(f"after {args.leak:,} more /vram", after))
            await stop_bot(process)
    finally:
        await fake.stop()
    return report(args, latencies, memory, lost)


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
        vram = next(r for r in rows if r.mode == mode and r.command == "/vram")
        for baseline in ("/ping", "/ping_embed"):
            base = next(r for r in rows if r.mode == mode and r.command == baseline)
            ratio = {
                "median_latency": vram.median_ms / base.median_ms,
                "throughput": vram.per_second / base.per_second,
            }
            if vram.bot_cpu_ms and base.bot_cpu_ms:
                ratio["bot_cpu"] = vram.bot_cpu_ms / base.bot_cpu_ms
            ratios.setdefault(f"/vram vs {baseline}", {})[mode] = ratio
    rss = {m.label: m.rss_mb for m in memory}
    zero, many = memory[0].rss_mb, memory[1].rss_mb
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
            "at_once": args.burst,
            "leak_run": args.leak,
            "guilds": args.guilds,
        },
        "latency": [asdict(r) for r in rows],
        "ratios": ratios,
        "memory_mb": rss,
        "memory_per_guild_kb": (many - zero) * 1024 / args.guilds if args.guilds else None,
        "leak_run_growth_mb": memory[3].rss_mb - memory[2].rss_mb,
        "leak_run_lost": lost,
    }


def print_table(result: dict[str, Any]) -> None:
    header = f"{'command':12} {'mode':16} {'answered':>11} {'median ms':>10} {'p99 ms':>8} {'per s':>7}"
    print(header + f" {'bot CPU ms':>10}")
    for row in result["latency"]:
        answered = f"{row['answered']}/{row['sent']}"
        cpu = f"{row['bot_cpu_ms']:.2f}" if row["bot_cpu_ms"] else "-"
        print(
            f"{row['command']:12} {row['mode']:16} {answered:>11} {row['median_ms']:>10.2f} "
            f"{row['p99_ms']:>8.2f} {row['per_second']:>7.0f} {cpu:>10}"
        )
    for pair, modes in result["ratios"].items():
        for mode, ratio in modes.items():
            cpu = f", {ratio['bot_cpu']:.2f}× the bot's CPU" if "bot_cpu" in ratio else ""
            print(
                f"{pair}, {mode}: {ratio['median_latency']:.2f}× the median latency, "
                f"{ratio['throughput']:.2f}× the throughput{cpu}"
            )
    for label, mb in result["memory_mb"].items():
        print(f"RSS {label}: {mb:.1f} MB")
    if result["memory_per_guild_kb"] is not None:
        print(f"memory per guild: {result['memory_per_guild_kb']:.1f} KB")
    print(f"leak run: {result['leak_run_growth_mb']:+.1f} MB, {result['leak_run_lost']} lost")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.interactions", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--count", type=int, default=1000, help="interactions one at a time, per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the one-at-a-time run")
    parser.add_argument("--burst", type=int, default=1000, help="interactions sent at once")
    parser.add_argument("--leak", type=int, default=10_000, help="interactions of the leak run")
    parser.add_argument("--guilds", type=int, default=1000, help="servers in GUILD_CREATE")
    parser.add_argument("--warmup", type=int, default=200, help="interactions before measuring")
    parser.add_argument("--settle", type=float, default=READY_SETTLE_S, help="seconds to wait after READY")
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke run, not a measurement")
    parser.add_argument("--out", type=Path, default=PROJECT / "benchmarks" / "results.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.count, args.rounds, args.burst, args.leak, args.guilds, args.warmup = 10, 1, 20, 20, 0, 5
        args.settle = 0.1
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    result = asyncio.run(run(args))
    print_table(result)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
