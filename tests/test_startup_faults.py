"""Start-up and gateway faults, through the runner in this process against the fake Discord.

``serve`` is what ``vram-bot`` runs, minus the signal handlers (the test sets ``stop`` instead), so
these cover the retry loop, the fatal cases and the status file without a 0.7 s process start each.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path

import discord.client
import pytest
from discord.backoff import ExponentialBackoff

from bot.cli import main
from bot.runtime import health
from bot.runtime.logs import remove_logging, setup_logging
from bot.runtime.retry import GaveUp
from bot.runtime.runner import serve
from bot.runtime.settings import ConfigError, Settings
from tests.fake_discord import FakeDiscord, RouteFault

pytestmark = pytest.mark.asyncio(loop_scope="module")

QUICK = {"retry_max_delay_s": 0.1}  # retries within a tenth of a second: tests stay fast


def settings_for(fake: FakeDiscord | None = None, port: int = 0, **extra: object) -> Settings:
    base = f"http://127.0.0.1:{fake.port if fake else port}"
    return Settings(
        api_base_url=f"{base}/api/v10",
        gateway_url=f"{base.replace('http', 'ws')}/gateway",
        **QUICK,  # type: ignore[arg-type]
        **extra,  # type: ignore[arg-type]
    )


@contextlib.asynccontextmanager
async def serving(settings: Settings, token: str) -> AsyncIterator[asyncio.Task[None]]:
    stop = asyncio.Event()
    task = asyncio.create_task(serve(settings, token, stop=stop, handle_signals=False))
    try:
        yield task
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.exc_info]


def retry_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "retry" in r.getMessage() and r.name.startswith("bot.")]


async def assert_serves(fake: FakeDiscord) -> None:
    callback = await fake.invoke("vram", params=7)
    assert callback.embed["title"].startswith("❌ 7B · Adam: 112.0 GB")


async def test_a_503_on_the_command_sync_is_retried_and_the_bot_serves(
    fake: FakeDiscord, discord_endpoints: None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    fake.route_faults.append(RouteFault("PUT", "/commands", 503))
    sessions = fake.sessions
    async with serving(settings_for(fake), fake.token):
        await fake.wait_identified(after=sessions)
        await assert_serves(fake)
    assert [status for _, path, status in fake.route_faulted if path.endswith("/commands")] == [503]
    lines = retry_lines(caplog)
    assert len(lines) == 1, lines
    assert "during command sync (HTTP 503 Service Unavailable); retry 1 in" in lines[0]
    assert tracebacks(caplog) == []


async def test_discord_unreachable_at_start_up_is_retried_until_it_answers(
    discord_endpoints: None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    with socket.socket() as probe:  # a free loopback port that nothing listens on yet
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    later = FakeDiscord()
    async with serving(settings_for(port=port), later.token):
        for _ in range(100):  # connection refused, retried
            if len(retry_lines(caplog)) >= 2:
                break
            await asyncio.sleep(0.05)
        await later.start(port=port)  # Discord is back
        try:
            await later.wait_identified()
            await assert_serves(later)
        finally:
            pass
    await later.stop()
    lines = retry_lines(caplog)
    assert len(lines) >= 2
    assert all("during login (ClientConnectorError" in line for line in lines), lines
    assert tracebacks(caplog) == []


class QuickBackoff(ExponentialBackoff[bool]):
    """discord.py's reconnect backoff at a hundredth of its length: up to 20 ms, not 2 s."""

    def delay(self) -> float:
        return super().delay() / 100


async def test_a_503_on_the_gateway_is_one_line_and_the_bot_connects_after(
    fake: FakeDiscord,
    discord_endpoints: None,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # discord.py's connect loop logs the failure (one line through our filter, after its own
    # backoff, shortened here) and then trips over its own missing websocket; our loop retries.
    monkeypatch.setattr(discord.client, "ExponentialBackoff", QuickBackoff)
    caplog.set_level(logging.INFO)
    fake.route_faults.append(RouteFault("GET", "/gateway", 503))
    sessions = fake.sessions
    stream = io.StringIO()
    handler = setup_logging("INFO", "text", stream)  # the bot's own handler, with its retry filter
    try:
        async with serving(settings_for(fake, sync_commands=False), fake.token):
            await fake.wait_identified(after=sessions)
            await assert_serves(fake)
    finally:
        remove_logging(handler)
    assert [status for _, path, status in fake.route_faulted if path == "/gateway"] == [503]
    logged = stream.getvalue()
    reconnects = [line for line in logged.splitlines() if "Attempting a reconnect" in line]
    assert len(reconnects) == 1
    assert "WARNING  discord.client: Attempting a reconnect in" in reconnects[0]
    assert "(WSServerHandshakeError: 503, message='Invalid response status'" in reconnects[0]
    lines = retry_lines(caplog)
    assert len(lines) == 1
    assert "during gateway connection (WSServerHandshakeError: 503" in lines[0]
    assert "Traceback" not in logged


async def test_a_429_at_login_is_retried(
    fake: FakeDiscord, discord_endpoints: None, caplog: pytest.LogCaptureFixture
) -> None:
    # Without Discord's Via header discord.py takes a 429 for a Cloudflare ban and raises at once.
    caplog.set_level(logging.INFO)
    fake.route_faults.append(
        RouteFault("GET", "/users/@me", 429, {"message": "rate limited", "retry_after": 0})
    )
    sessions = fake.sessions
    async with serving(settings_for(fake, sync_commands=False), fake.token):
        await fake.wait_identified(after=sessions)
    lines = retry_lines(caplog)
    assert len(lines) == 1
    assert "during login (HTTP 429 Too Many Requests); retry 1 in" in lines[0]


async def test_startup_retry_s_bounds_the_retries(discord_endpoints: None) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(GaveUp, match=r"still unreachable after 0.3 s \(startup_retry_s\) during login"):
        await asyncio.wait_for(
            serve(settings_for(port=port, startup_retry_s=0.3), "t", handle_signals=False), 10
        )


async def test_an_undecodable_gateway_frame_is_logged_once_and_the_bot_resumes(
    fake: FakeDiscord, discord_endpoints: None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    sessions = fake.sessions
    async with serving(settings_for(fake, sync_commands=False), fake.token):
        await fake.wait_identified(after=sessions)
        resumes = len(fake.resumes)
        # An autocomplete whose value is an escaped lone surrogate: orjson refuses the whole frame
        # that Python's json accepts.
        sequence = fake.next_sequence()
        await fake.send_raw(
            f'{{"op":0,"t":"INTERACTION_CREATE","s":{sequence},"d":{{"type":4,"data":{{"name":"vram",'
            '"options":[{"name":"model","type":3,"value":"\\udcff llama","focused":true}]}}}'
        )
        await fake.wait_identified(after=sessions + 1)
        assert len(fake.resumes) == resumes + 1  # resumed the same session ...
        assert fake.resumes[-1]["seq"] == sequence  # ... after the bad frame, so it is not replayed
        await assert_serves(fake)
    dropped = [r for r in caplog.records if "cannot be decoded" in r.getMessage()]
    assert len(dropped) == 1
    assert dropped[0].levelno == logging.WARNING
    assert tracebacks(caplog) == []


async def test_a_token_discord_rejects_is_a_config_error(fake: FakeDiscord, discord_endpoints: None) -> None:
    with pytest.raises(ConfigError, match=r"^Discord rejected the token \(401 Unauthorized\)"):
        await serve(settings_for(fake), "not-the-right-token-1234567890", handle_signals=False)


async def test_a_gateway_that_refuses_authentication_is_a_config_error(
    fake: FakeDiscord, discord_endpoints: None
) -> None:
    fake.reject_identify = True  # REST accepts the token, the gateway closes with 4004
    try:
        with pytest.raises(ConfigError, match=r"authentication failed \(4004\)"):
            await serve(settings_for(fake, sync_commands=False), fake.token, handle_signals=False)
    finally:
        fake.reject_identify = False


async def test_an_extension_that_cannot_load_is_a_config_error(
    fake: FakeDiscord, discord_endpoints: None
) -> None:
    settings = settings_for(fake, extra_extensions=["no_such_package.cog"])
    with pytest.raises(ConfigError, match=r"cannot load extra_extensions entry 'no_such_package.cog'"):
        await serve(settings, fake.token, handle_signals=False)


@pytest.mark.usefixtures("clean_env")
async def test_health_is_healthy_while_connected_and_unhealthy_after(
    fake: FakeDiscord,
    discord_endpoints: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    status_file = tmp_path / "run" / "status.json"
    monkeypatch.setenv("VRAM_BOT_STATUS_FILE", str(status_file))
    monkeypatch.setenv("VRAM_BOT_STATUS_INTERVAL_S", "0.5")
    assert main(["health"]) == 1  # no bot yet: no file
    assert "no status file" in capsys.readouterr().err
    settings = settings_for(fake, sync_commands=False, status_file=status_file, status_interval_s=0.5)
    sessions = fake.sessions
    async with serving(settings, fake.token):
        await fake.wait_identified(after=sessions)
        for _ in range(100):
            if health.check(status_file, 1.5)[0]:
                break
            await asyncio.sleep(0.02)
        assert main(["health"]) == 0
        assert capsys.readouterr().out.startswith("healthy: gateway connected")
        assert json.loads(status_file.read_text())["shards"] == {"None": True}
    assert main(["health"]) == 1  # stopped: the last write says so at once
    assert "gateway not connected" in capsys.readouterr().err
    health.write_status(status_file, health.GatewayState(frozenset({None}), {None}), now=time.time() - 60)
    assert main(["health"]) == 1  # connected, but nobody has written for a minute: stuck
    assert "s old (limit 2 s)" in capsys.readouterr().err
