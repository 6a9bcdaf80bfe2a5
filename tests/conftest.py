"""Shared fixtures: one fake Discord and one running bot per test module."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import discord
import pytest
import pytest_asyncio

from bot.runtime.runner import VramBot
from bot.runtime.settings import ENV_PREFIX, TOKEN_ENV
from tests.fake_discord import FakeDiscord
from tests.running import start_bot


@pytest.fixture(scope="module")
def discord_endpoints() -> Iterator[None]:
    """Put discord.py's REST base and gateway back after a module pointed them at a fake."""
    base = discord.http.Route.BASE
    gateway = discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    yield
    discord.http.Route.BASE = base
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = gateway


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fake() -> AsyncIterator[FakeDiscord]:
    fake = FakeDiscord()
    await fake.start()
    yield fake
    await fake.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bot(fake: FakeDiscord, discord_endpoints: None) -> AsyncIterator[VramBot]:
    """The real bot, logged in to the fake and connected to its gateway."""
    bot, task = await start_bot(fake)
    yield bot
    await bot.close()
    await task


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No token, no VRAM_BOT_* override and no ./config.toml from the developer's shell.

    For tests that run the CLI or the settings loader in-process; monkeypatch puts everything back
    afterwards, so each test stands alone in any order.
    """
    for name in list(os.environ):
        if name.upper().startswith(ENV_PREFIX) or name == TOKEN_ENV:
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
