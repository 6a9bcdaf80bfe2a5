"""What answering over HTTP costs: ``vram-bot http`` replicas as their own processes, signed
interactions POSTed to them from this process.

- CPU per answer: the replica's CPU time (user + system, from the kernel's clock for its process)
  around bursts of ``/vram`` and of PING, its no-op peer on the same server (the same signature check,
  JSON parse and HTTP response, no estimate), interleaved, the median ratio of the rounds;
- answers per second per core: ``/vram`` answers over the replica's CPU seconds;
- 1, 2 and 4 replicas: answers per second of the whole burst (wall clock), spread round-robin over
  the replicas' ports, as ratios to one replica. On a 2-core machine beyond 2 replicas only the
  ratio's flattening shows: the cores, not the replicas, are the limit.

The requests are signed before the clock starts, so the client's signing is not counted. Every
``/vram`` asks about a model size no other one asked.

    python -m benchmarks.http_path            # the full run (a minute or two)
    python -m benchmarks.http_path --quick    # a smoke run with small counts

It prints the figures and writes them as JSON (``--out``, default benchmarks/http_results.json).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
from aiohttp import ClientSession
from nacl.signing import SigningKey

from benchmarks.interactions import cpu_seconds  # to the nanosecond: a quick burst is under a tick
from tests.fake_discord import until_healthy

PROJECT = Path(__file__).resolve().parents[1]
_sizes = itertools.count(1)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def vram_interaction() -> dict[str, Any]:
    size = 1 + next(_sizes) / 1000  # a size no other answer asked about
    return {
        "id": "1",
        "application_id": "2",
        "type": 2,
        "token": "t",
        "version": 1,
        "locale": "en-US",
        "data": {
            "id": "3",
            "name": "vram",
            "type": 1,
            "options": [{"name": "params", "type": 10, "value": size}],
        },
        "user": {"id": "4", "username": "bench", "discriminator": "0", "global_name": None, "avatar": None},
        "app_permissions": "2248473465835073",
    }


PING = {"id": "1", "application_id": "2", "type": 1, "token": "t", "version": 1}


def signed(key: SigningKey, interaction: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    body = orjson.dumps(interaction)
    stamp = str(int(time.time()))
    signature = key.sign(stamp.encode() + body).signature.hex()
    headers = {
        "Content-Type": "application/json",
        "X-Signature-Ed25519": signature,
        "X-Signature-Timestamp": stamp,
    }
    return body, headers


class Replicas:
    """``count`` replicas of ``python -m bot http``, each on a port of its own."""

    def __init__(self, key: SigningKey, count: int) -> None:
        self.key = key
        self.ports = [free_port() for _ in range(count)]
        self.folder = Path(tempfile.mkdtemp(prefix="vram-http-bench-"))
        (self.folder / "config.toml").write_text("", encoding="utf-8")
        env = {
            **os.environ,
            "DISCORD_PUBLIC_KEY": bytes(key.verify_key).hex(),
            "VRAM_BOT_CONFIG": str(self.folder / "config.toml"),
            "VRAM_BOT_LOG_LEVEL": "warning",
            "VRAM_BOT_HUB_LOOKUPS": "false",
        }
        self.processes = [
            subprocess.Popen(  # noqa: S603 (our own interpreter and module)
                [sys.executable, "-m", "bot", "http", "--port", str(port)], cwd=PROJECT, env=env
            )
            for port in self.ports
        ]

    async def ready(self, session: ClientSession) -> None:
        await until_healthy(session, self.ports, poll_s=0.05)

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            process.wait(30)


async def burst(
    session: ClientSession, ports: list[int], requests: list[tuple[bytes, dict[str, str]]], at_once: int
) -> float:
    """Send every request (round-robin over ``ports``, ``at_once`` in flight); the wall seconds."""
    gate = asyncio.Semaphore(at_once)

    async def one(index: int, body: bytes, headers: dict[str, str]) -> None:
        async with gate:
            url = f"http://127.0.0.1:{ports[index % len(ports)]}/interactions"
            async with session.post(url, data=body, headers=headers) as response:
                await response.read()
                if response.status != 200:
                    raise RuntimeError(f"HTTP {response.status}")

    started = time.perf_counter()
    await asyncio.gather(*(one(i, body, headers) for i, (body, headers) in enumerate(requests)))
    return time.perf_counter() - started


async def cpu_rounds(args: argparse.Namespace, key: SigningKey) -> dict[str, Any]:
    replicas = Replicas(key, 1)
    pid, ports = replicas.processes[0].pid, replicas.ports
    try:
        async with ClientSession() as session:
            await replicas.ready(session)
            await burst(
                session, ports, [signed(key, vram_interaction()) for _ in range(args.warmup)], args.at_once
            )
            rounds = []
            for _ in range(args.rounds):
                per_kind = {}
                for kind in ("ping", "vram"):
                    requests = [
                        signed(key, PING if kind == "ping" else vram_interaction()) for _ in range(args.burst)
                    ]
                    before = cpu_seconds(pid)
                    await burst(session, ports, requests, args.at_once)
                    per_kind[kind] = (cpu_seconds(pid) - before) / args.burst
                rounds.append(per_kind)
    finally:
        replicas.stop()
    ratios = [r["vram"] / r["ping"] for r in rounds if r["ping"] > 0]
    vram_cpu = statistics.median(r["vram"] for r in rounds)
    return {
        "cpu_ms_per_vram": round(vram_cpu * 1000, 3),
        "cpu_ms_per_ping": round(statistics.median(r["ping"] for r in rounds) * 1000, 3),
        "vram_to_ping_cpu_ratio": round(statistics.median(ratios), 2) if ratios else None,
        "vram_answers_per_cpu_second": round(1 / vram_cpu) if vram_cpu > 0 else None,
        "rounds": args.rounds,
        "burst": args.burst,
    }


async def scaling(args: argparse.Namespace, key: SigningKey) -> dict[str, Any]:
    throughput: dict[int, float] = {}
    for count in args.replicas:
        replicas = Replicas(key, count)
        try:
            async with ClientSession() as session:
                await replicas.ready(session)
                warm = [signed(key, vram_interaction()) for _ in range(args.warmup * count)]
                await burst(session, replicas.ports, warm, args.at_once)
                requests = [signed(key, vram_interaction()) for _ in range(args.scale_burst)]
                throughput[count] = args.scale_burst / await burst(
                    session, replicas.ports, requests, args.at_once
                )
        finally:
            replicas.stop()
    first = throughput[args.replicas[0]]
    return {
        "answers_per_second": {str(n): round(v) for n, v in throughput.items()},
        "ratio_to_one_replica": {str(n): round(v / first, 2) for n, v in throughput.items()},
        "cores": os.cpu_count(),
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=9, help="rounds of /vram and PING bursts")
    parser.add_argument("--burst", type=int, default=400, help="interactions per burst")
    parser.add_argument("--at-once", type=int, default=20, help="interactions in flight at a time")
    parser.add_argument("--warmup", type=int, default=100, help="interactions before measuring")
    parser.add_argument("--scale-burst", type=int, default=2000, help="interactions per scaling run")
    parser.add_argument(
        "--replicas", type=int, nargs="+", default=[1, 2, 4], help="replica counts to compare"
    )
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke run, not a measurement")
    parser.add_argument("--out", type=Path, default=PROJECT / "benchmarks" / "http_results.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.burst, args.warmup, args.scale_burst, args.replicas = 2, 20, 5, 20, [1, 2]
    return args


async def run(args: argparse.Namespace) -> dict[str, Any]:
    key = SigningKey.generate()
    return {"cpu": await cpu_rounds(args, key), "scaling": await scaling(args, key)}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    results = asyncio.run(run(args))
    print(json.dumps(results, indent=2))
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
