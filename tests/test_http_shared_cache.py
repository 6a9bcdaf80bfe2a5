"""The replicas' shared Hub cache (setting ``hub_shared_cache_url``): two replicas' Hub clients, each
with its own memory and disk cache, share a Redis (the tiny one of tests/fake_redis.py, which speaks
the real protocol to the real ``redis`` client) and a new repo costs one lookup on the fake Hub; a
dead or hung Redis neither breaks nor delays an answer. The same with a real redis-server and real
replicas: tests/test_http_load.py (``-m http_load``)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import cast

import pytest
import pytest_asyncio
from discord.ext import commands

from bot import __version__
from bot.estimate.hub import forget_all
from bot.http.server import hub_client_for
from bot.hub_settings import HubSettings
from bot.hub_shared_cache import SharedHubCache
from bot.runtime.cog import _hub_client
from bot.runtime.hub_client import HubClient
from bot.runtime.settings import ConfigError, Settings, load_settings
from tests.fake_hub import FakeHub
from tests.fake_redis import FakeRedis
from tests.hub_configs import CONFIGS

REPO = "acme/Llama-8B"
TOKEN = "hf_secret_reader"
TTL_S = 600.0


@pytest_asyncio.fixture(loop_scope="module")
async def hub() -> AsyncIterator[FakeHub]:
    hub = FakeHub()
    await hub.start()
    hub.add(REPO, CONFIGS["llama-3.1-8b"], stored_params=8_030_261_248)
    yield hub
    await hub.stop()
    forget_all()


@pytest_asyncio.fixture(loop_scope="module")
async def redis() -> AsyncIterator[FakeRedis]:
    redis = FakeRedis()
    await redis.start()
    yield redis
    await redis.stop()


def replica(hub: FakeHub, url: str, cache: Path, **shared: float) -> HubClient:
    """One replica's Hub client: its own caches, the fleet's Redis at ``url``."""
    # A lookup's deadline far beyond what it takes (a cold huggingface_hub import on a loaded machine).
    settings = HubSettings(endpoint=hub.url, cache_dir=cache, token=TOKEN, timeout_s=10.0, offline=False)
    return HubClient(settings, ttl_s=TTL_S, shared=SharedHubCache(url, ttl_s=TTL_S, **shared))


@pytest.mark.asyncio(loop_scope="module")
async def test_a_new_repo_costs_one_hub_lookup_for_the_fleet(
    hub: FakeHub, redis: FakeRedis, tmp_path: Path
) -> None:
    # Three replicas asked at once: the first to take the repo's lease asks the Hub, the others wait
    # for its answer in Redis.
    hub.delay_s = 0.01  # the others ask while the first one's lookup is under way
    try:
        clients = [replica(hub, redis.url, tmp_path / name, poll_s=0.01) for name in ("a", "b", "c")]
        answers = await asyncio.gather(*(client.resolve(REPO) for client in clients))
    finally:
        hub.delay_s = 0
    assert len({answer.architecture for answer in answers}) == 1
    assert hub.count("/api/models/") == 1
    assert sorted(client.lookups for client in clients) == [0, 0, 1]
    # A fourth, later: from Redis at once, no request.
    late = replica(hub, redis.url, tmp_path / "d")
    assert (await late.resolve(REPO)).architecture == answers[0].architecture
    assert (hub.count("/api/models/"), late.lookups, late.shared and late.shared.hits) == (1, 0, 1)
    # Keyed by the release, the repo and the revision; the lease went with the answer; kept as long
    # as a replica's memory keeps it; what is stored holds no token.
    assert list(redis.data) == [f"vram-bot:{__version__}:hub:acme/llama-8b@main".encode()]
    value, expiry = next(iter(redis.data.values()))
    assert expiry is not None
    assert TTL_S - 5 < expiry - time.monotonic() <= TTL_S
    assert b"hf_" not in value
    assert all(TOKEN.encode() not in part for command in redis.commands for part in command)
    for client in [*clients, late]:
        await client.close()


@pytest.mark.asyncio(loop_scope="module")
async def test_a_dead_or_hung_redis_neither_breaks_nor_delays_an_answer(
    hub: FakeHub, redis: FakeRedis, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    for fault in (FakeRedis.drop, FakeRedis.stall):  # it closes each connection; it never answers
        fault(redis)
        # With a password in the URL (the fake takes any AUTH): the log line names the host, not it.
        url = redis.url.replace("redis://", "redis://:hunter2@")
        client = replica(hub, url, tmp_path, timeout_s=0.1)
        assert client.shared is not None
        with caplog.at_level(logging.INFO, logger="bot.hub_shared_cache"):
            # The first call gives up at its bound (a hung Redis would hold it for ever) ...
            assert await asyncio.wait_for(client.shared.get(REPO), 5) is None
            # ... and for a while after it Redis is not asked at all: no connection, no command.
            reached = (redis.connections, len(redis.commands))
            assert await client.shared.claim(REPO, 1.0)  # Redis down: this replica looks it up
            # The answer comes from the Hub, as without a shared cache.
            assert (await client.resolve(REPO)).architecture.hub_id == REPO
            assert (redis.connections, len(redis.commands)) == reached
        failed = [r for r in caplog.records if "shared Hub cache" in r.getMessage()]
        assert len(failed) == 1, [r.getMessage() for r in failed]  # once, not once per ask
        assert f"redis://127.0.0.1:{redis.port}/0" in failed[0].getMessage()
        assert "hunter2" not in caplog.text
        caplog.clear()
        await client.close()
        redis.dropping = redis.stalled = False


def test_the_setting_is_a_redis_url_kept_secret(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('hub_shared_cache_url = "redis://:hunter2@redis:6379/0"\n', encoding="utf-8")
    settings = load_settings(config, {})
    assert settings.hub_shared_cache_url is not None
    assert "hunter2" not in repr(settings)
    # Both front ends build their Hub client with it (the gateway's processes share it too).

    loaded = settings

    class Host:
        settings = loaded

    for client in (hub_client_for(settings), _hub_client(cast(commands.Bot, Host()))):
        assert client.shared is not None
        assert client.shared.url == "redis://:hunter2@redis:6379/0"
        assert client.shared.ttl_s == client.ttl_s
    assert hub_client_for(Settings()).shared is None  # off by default
    config.write_text('hub_shared_cache_url = "http://:hunter2@redis:6379"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_settings(config, {})
    assert "hub_shared_cache_url" in str(refused.value)
    assert "hunter2" not in str(refused.value)
    assert "redis://" in str(refused.value)
