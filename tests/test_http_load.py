"""Replicas of ``vram-bot http`` behind a real reverse proxy terminating TLS (nginx on loopback, running
compose.yaml's own server block with a self-signed certificate made here) under a burst of signed
interactions over HTTPS: every one answered within Discord's 3 s, spread over the replicas, and none
lost when one replica is stopped mid-burst (SIGTERM: it answers what it holds and exits 0; the proxy
sends new ones to the others). The replicas share a real redis-server with a password (the setting
``hub_shared_cache_url``): a new repo asked on two of them costs the fake Hub one lookup.

Run with ``-m http_load``; needs nginx, openssl and redis-server (``.ci/run`` installs them)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import yaml
from aiohttp import ClientSession
from nacl.signing import SigningKey

from tests.fake_discord import FakeDiscord, HttpAnswer, until_healthy
from tests.fake_hub import FakeHub
from tests.fresh_python import PROJECT, compile_bytecode
from tests.hub_configs import CONFIGS

pytestmark = [pytest.mark.http_load, pytest.mark.asyncio(loop_scope="module")]

REPLICAS = 3
BURST = 300
AT_ONCE = 30  # interactions in flight at a time
DISCORD_DEADLINE_S = 3.0
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
REDIS_PASSWORD = "redis-password-of-the-test"
FLEET_REPOS = ("acme/Fleet-8B", "acme/Fleet-Twice-8B")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def needs(program: str) -> str:
    found = shutil.which(program) or (NGINX if program == "nginx" and Path(NGINX).exists() else None)
    if found is None:
        pytest.skip(f"{program} is not installed (apt-get install {program}; .ci/run does)")
    return found


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return SigningKey.generate()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with fullchain.pem and privkey.pem, as compose.yaml mounts ./certs: a self-signed
    certificate for 127.0.0.1, made here (no network)."""
    folder = tmp_path_factory.mktemp("certs")
    subprocess.run(  # noqa: S603 (openssl with fixed arguments)
        [
            needs("openssl"), "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-days", "1", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout", str(folder / "privkey.pem"), "-out", str(folder / "fullchain.pem"),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return folder


@pytest.fixture(scope="module")
def tls(certificate: Path) -> ssl.SSLContext:
    """What Discord does with a real certificate: verify it (here against the one made above)."""
    return ssl.create_default_context(cafile=certificate / "fullchain.pem")


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server on loopback, with a password, no disk."""
    folder = tmp_path_factory.mktemp("redis")
    port = free_port()
    server = subprocess.Popen(  # noqa: S603 (redis-server with fixed arguments)
        [
            needs("redis-server"), "--bind", "127.0.0.1", "--port", str(port), "--save", "",
            "--appendonly", "no", "--requirepass", REDIS_PASSWORD, "--dir", str(folder),
        ],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError("redis-server did not start") from None
            time.sleep(0.05)
    yield f"redis://:{REDIS_PASSWORD}@127.0.0.1:{port}/0"
    server.terminate()
    server.wait(10)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def hub() -> AsyncIterator[FakeHub]:
    hub = FakeHub()
    await hub.start()
    for repo in FLEET_REPOS:
        hub.add(repo, CONFIGS["llama-3.1-8b"])
    yield hub
    await hub.stop()


@pytest.fixture(scope="module")
def replicas(
    fake: FakeDiscord, key: SigningKey, hub: FakeHub, redis_url: str, tmp_path_factory: pytest.TempPathFactory
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
        "VRAM_BOT_HUB_SHARED_CACHE_URL": redis_url,
        "HF_ENDPOINT": hub.url,
        "HF_HUB_OFFLINE": "0",
    }
    started = []
    for index in range(REPLICAS):
        port = free_port()
        log = (folder / f"replica-{index}.log").open("wb")
        # The last replica is started the other way: `mode = "http"` in its settings, no sub-command.
        command, settings = ["http", "--port", str(port)], {}
        if index == REPLICAS - 1:
            command, settings = [], {"VRAM_BOT_MODE": "http", "VRAM_BOT_HTTP_PORT": str(port)}
        own_cache = {"HF_HOME": str(folder / f"hf-{index}")}  # each replica's own disk cache
        process = subprocess.Popen(  # noqa: S603 (our own interpreter and module)
            [sys.executable, "-m", "bot", *command], cwd=PROJECT, env=env | settings | own_cache, stderr=log
        )
        started.append((port, process))
    yield started
    for _, process in started:
        if process.poll() is None:
            process.terminate()
            process.wait(10)
    # Neither the public key, an interaction's token nor Redis's password is in any line, at DEBUG.
    for index in range(REPLICAS):
        logged = (folder / f"replica-{index}.log").read_text(encoding="utf-8")
        assert "Listening for interactions" in logged
        assert bytes(key.verify_key).hex() not in logged
        assert "interaction-token-" not in logged
        assert REDIS_PASSWORD not in logged


def nginx_server_block(replica_ports: list[int], port: int, certificates: Path) -> str:
    """compose.yaml's nginx configuration, with loopback addresses and the certificates' folder; each
    answer says which replica gave it (X-Replica), for the test to count."""
    compose = yaml.safe_load((PROJECT / "compose.yaml").read_text(encoding="utf-8"))
    config: str = compose["configs"]["nginx_interactions"]["content"]
    servers = "\n".join(f"  server 127.0.0.1:{p};" for p in replica_ports)
    for theirs, ours in (
        ("  server vram-bot-http:8080;", servers),
        ("listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;"),
        ("/etc/nginx/certs/", f"{certificates}/"),
        (
            "location = /interactions {",
            "location = /interactions {\n    add_header X-Replica $upstream_addr always;",
        ),
    ):
        assert theirs in config, f"compose.yaml's nginx configuration no longer has {theirs!r}"
        config = config.replace(theirs, ours)
    return config


@pytest.fixture(scope="module")
def proxy(
    replicas: list[tuple[int, subprocess.Popen[bytes]]],
    certificate: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[int]:
    needs("nginx")
    folder = tmp_path_factory.mktemp("nginx")
    port = free_port()
    server_block = nginx_server_block([p for p, _ in replicas], port, certificate)
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
{server_block}
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
async def ready(
    proxy: int, replicas: list[tuple[int, subprocess.Popen[bytes]]], tls: ssl.SSLContext
) -> AsyncIterator[int]:
    async with ClientSession() as session:
        await until_healthy(session, [p for p, _ in replicas], poll_s=0.1)
        await until_healthy(session, [proxy], poll_s=0.1, tls=tls)
    yield proxy


async def test_a_burst_through_tls_is_answered_in_time_even_as_a_replica_stops(
    fake: FakeDiscord,
    key: SigningKey,
    ready: int,
    tls: ssl.SSLContext,
    replicas: list[tuple[int, subprocess.Popen[bytes]]],
) -> None:
    url = f"https://127.0.0.1:{ready}/interactions"
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
            answer = await fake.post_interaction(url, interaction, key, tls=tls)
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
    print(f"\n{BURST} answers over TLS; p50 {p50:.0f} ms, max {worst:.0f} ms; by replica {dict(served_by)}")
    print(f"replica :{stopped_port} stopped mid-burst; {len(moved)} sent on to another replica by the proxy")


async def answer_of(fake: FakeDiscord, interaction: dict[str, Any], answer: HttpAnswer) -> dict[str, Any]:
    """The answer's embed: in the response, or edited in through the webhook after "thinking"."""
    assert answer.status == 200, answer.raw
    if answer.body.get("type") == 5:
        calls = await fake.webhook_calls(interaction["token"], 1)
        assert [kind for kind, _ in calls] == ["edit"], calls
        embed: dict[str, Any] = calls[0][1]["embeds"][0]
        return embed
    embed = answer.body["data"]["embeds"][0]
    return embed


async def test_replicas_sharing_redis_look_a_new_repo_up_once(
    fake: FakeDiscord,
    key: SigningKey,
    hub: FakeHub,
    ready: int,
    replicas: list[tuple[int, subprocess.Popen[bytes]]],
) -> None:
    # Two replicas the burst leaves running, asked straight (as the proxy would pick either).
    first, second = (f"http://127.0.0.1:{port}/interactions" for port, _ in replicas[1:3])
    lookups: dict[str, int] = {}

    async def ask(url: str, repo: str) -> dict[str, Any]:
        interaction = fake.slash_interaction("vram", [{"name": "model", "type": 3, "value": repo}])
        return await answer_of(fake, interaction, await fake.post_interaction(url, interaction, key))

    one_after_the_other, at_once = FLEET_REPOS
    embeds = [await ask(first, one_after_the_other), await ask(second, one_after_the_other)]
    embeds += await asyncio.gather(ask(first, at_once), ask(second, at_once))
    for repo in FLEET_REPOS:
        lookups[repo] = hub.count(f"/api/models/{repo}")
    assert embeds[0] == embeds[1]
    assert embeds[2] == embeds[3]
    assert embeds[0]["title"].startswith("❌ acme/Fleet-8B · Adam: 128.5 GB"), embeds[0]["title"]
    assert lookups == dict.fromkeys(FLEET_REPOS, 1), lookups  # one each, for the two replicas
    print(f"\nHub lookups with the shared cache, each repo asked on 2 replicas: {lookups}")
