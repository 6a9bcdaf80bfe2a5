"""Replicas of ``vram-bot http`` behind a real reverse proxy (nginx, on loopback) under a burst of
signed interactions: every one answered within Discord's 3 s, spread over the replicas, and none lost
when one replica is stopped mid-burst (SIGTERM: it answers what it holds and exits 0; the proxy sends
new ones to the others). Run with ``-m http_load``; needs nginx (``.ci/run`` installs it)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import ClientSession
from nacl.signing import SigningKey

from tests.fake_discord import FakeDiscord, until_healthy
from tests.fresh_python import PROJECT, compile_bytecode

pytestmark = [pytest.mark.http_load, pytest.mark.asyncio(loop_scope="module")]

REPLICAS = 3
BURST = 300
AT_ONCE = 30  # interactions in flight at a time
DISCORD_DEADLINE_S = 3.0
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return SigningKey.generate()


@pytest.fixture(scope="module")
def replicas(
    fake: FakeDiscord, key: SigningKey, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[tuple[int, subprocess.Popen[bytes]]]]:
    compile_bytecode()
    folder = tmp_path_factory.mktemp("replicas")
    (folder / "config.toml").write_text("", encoding="utf-8")
    env = {
        **os.environ,
        "DISCORD_PUBLIC_KEY": bytes(key.verify_key).hex(),
        "VRAM_BOT_API_BASE_URL": fake.api_base,
        "VRAM_BOT_CONFIG": str(folder / "config.toml"),
        "VRAM_BOT_LOG_LEVEL": "debug",  # every line, to look for secrets in
    }
    started = []
    for index in range(REPLICAS):
        port = free_port()
        log = (folder / f"replica-{index}.log").open("wb")
        # The last replica is started the other way: `mode = "http"` in its settings, no sub-command.
        command, settings = ["http", "--port", str(port)], {}
        if index == REPLICAS - 1:
            command, settings = [], {"VRAM_BOT_MODE": "http", "VRAM_BOT_HTTP_PORT": str(port)}
        process = subprocess.Popen(  # noqa: S603 (our own interpreter and module)
            [sys.executable, "-m", "bot", *command], cwd=PROJECT, env=env | settings, stderr=log
        )
        started.append((port, process))
    yield started
    for _, process in started:
        if process.poll() is None:
            process.terminate()
            process.wait(10)
    # Neither the public key nor an interaction's token is in any line, at DEBUG.
    for index in range(REPLICAS):
        logged = (folder / f"replica-{index}.log").read_text(encoding="utf-8")
        assert "Listening for interactions" in logged
        assert bytes(key.verify_key).hex() not in logged
        assert "interaction-token-" not in logged
    for _, process in started:
        if process.poll() is None:
            process.terminate()
            process.wait(10)


@pytest.fixture(scope="module")
def proxy(
    replicas: list[tuple[int, subprocess.Popen[bytes]]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[int]:
    if not Path(NGINX).exists():
        pytest.skip("nginx is not installed (apt-get install nginx; .ci/run does)")
    folder = tmp_path_factory.mktemp("nginx")
    port = free_port()
    servers = "\n".join(f"    server 127.0.0.1:{p};" for p, _ in replicas)
    (folder / "nginx.conf").write_text(
        f"""
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {folder}/body;
  proxy_temp_path {folder}/proxy;
  fastcgi_temp_path {folder}/fastcgi;
  uwsgi_temp_path {folder}/uwsgi;
  scgi_temp_path {folder}/scgi;
  upstream replicas {{
{servers}
  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://replicas;
      # A replica that refuses or drops the connection (it is stopping) is skipped, POSTs too: an
      # answer is a function of the interaction alone and only one HTTP response reaches Discord.
      proxy_next_upstream error timeout non_idempotent;
      add_header X-Replica $upstream_addr always;
    }}
  }}
}}
""",
        encoding="utf-8",
    )
    nginx = subprocess.Popen(  # noqa: S603 (nginx with a config written here)
        [NGINX, "-p", str(folder), "-c", str(folder / "nginx.conf"), "-g", "daemon off;"]
    )
    yield port
    nginx.terminate()
    nginx.wait(10)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def ready(proxy: int, replicas: list[tuple[int, subprocess.Popen[bytes]]]) -> AsyncIterator[int]:
    async with ClientSession() as session:
        await until_healthy(session, [p for p, _ in replicas] + [proxy], poll_s=0.1)
    yield proxy


async def test_a_burst_through_the_proxy_is_answered_in_time_even_as_a_replica_stops(
    fake: FakeDiscord, key: SigningKey, ready: int, replicas: list[tuple[int, subprocess.Popen[bytes]]]
) -> None:
    url = f"http://127.0.0.1:{ready}/interactions"
    latencies: list[float] = []
    served_by: Counter[str] = Counter()
    failures: list[str] = []
    gate = asyncio.Semaphore(AT_ONCE)
    a_third_in = asyncio.Event()
    moved: list[list[str]] = []

    async def one(number: int) -> None:
        interaction = fake.slash_interaction(
            "vram", [{"name": "params", "type": 10, "value": 1 + number % 50}]
        )
        async with gate:
            started = time.perf_counter()
            answer = await fake.post_interaction(url, interaction, key)
            latencies.append(time.perf_counter() - started)
        if len(latencies) >= BURST // 3:
            a_third_in.set()
        if answer.status != 200 or answer.body.get("type") != 4:
            failures.append(f"{answer.status} {answer.raw[:100]!r}")
        # nginx lists each replica it tried: one that refused (stopped) first, the one that answered last.
        tried = answer.headers.get("X-Replica", "?").split(", ")
        served_by[tried[-1]] += 1
        if len(tried) > 1:
            moved.append(tried)

    burst = [asyncio.create_task(one(n)) for n in range(BURST)]
    await a_third_in.wait()
    stopped_port, stopped = replicas[0]
    stopped.send_signal(signal.SIGTERM)  # mid-burst
    await asyncio.gather(*burst)
    assert await asyncio.to_thread(stopped.wait, 20) == 0  # answered what it held, then exit 0
    assert failures == []
    assert len(latencies) == BURST
    assert max(latencies) < DISCORD_DEADLINE_S, sorted(latencies)[-5:]
    assert len(served_by) == REPLICAS, served_by  # spread over every replica
    assert all(count > BURST // (4 * REPLICAS) for count in served_by.values()), served_by
    p50, worst = sorted(latencies)[BURST // 2] * 1000, max(latencies) * 1000
    print(f"\n{BURST} answers; p50 {p50:.0f} ms, max {worst:.0f} ms; by replica {dict(served_by)}")
    print(f"replica :{stopped_port} stopped mid-burst; {len(moved)} sent on to another replica by the proxy")
