"""Shared fixtures: one fake Discord and one running bot per test module.

What the fixtures run (discord.py, the bot, the fake Discord) is imported inside them, not here: with
``-n 2`` the controlling process loads this file too, before it starts the workers, and runs no test
itself, so an import here (about a second of CPU) would only delay every worker's start.
"""

from __future__ import annotations

import gc
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

# No test reaches the real Hugging Face Hub. Set before anything imports huggingface_hub (it reads
# these once): a bot started by a fixture asks a closed loopback port (refused at once, so a repo ID
# there gets "the Hub did not answer"), with a cache folder of its own. The Hub's tests pass the fake
# Hub explicitly. Not HF_HUB_OFFLINE: huggingface_hub would then refuse the fake Hub too.
os.environ.pop("HF_HUB_OFFLINE", None)
os.environ["HF_ENDPOINT"] = "http://127.0.0.1:9"
os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="vram-tests-hf-")
os.environ.pop("HF_TOKEN", None)
os.environ.pop("HF_HUB_CACHE", None)

import pytest
import pytest_asyncio

if TYPE_CHECKING:
    from bot.runtime.runner import VramBot
    from tests.fake_discord import FakeDiscord
    from tests.fresh_python import FreshSteps


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[Any]:
    """Keep the bytecode of what collecting imports: the test modules with their asserts rewritten,
    which pytest reads back at the next run even where PYTHONDONTWRITEBYTECODE is set (this machine,
    the image). Without it each worker rewrites every test module at every run, about a CPU second.
    Only the collection writes; the tests themselves run as the environment says.

    And no garbage collection while collecting, which imports the bot, discord.py, huggingface_hub
    and every test module: what that makes is what the tests use and lives until the end. Frozen
    afterwards (``gc.freeze``), it is left out of every later collection, the tests' and pytest's
    own at the end: some 0.6 CPU seconds a worker. What the tests make is collected as before."""
    writes = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    gc.disable()
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = writes
        gc.freeze()
        gc.enable()


@pytest.fixture(scope="module")
def discord_endpoints() -> Iterator[None]:
    """Put discord.py's REST base and gateway back after a module pointed them at a fake."""
    import discord

    base = discord.http.Route.BASE
    gateway = discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    yield
    discord.http.Route.BASE = base
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = gateway


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fake() -> AsyncIterator[FakeDiscord]:
    from tests.fake_discord import FakeDiscord

    fake = FakeDiscord()
    await fake.start()
    yield fake
    await fake.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bot(fake: FakeDiscord, discord_endpoints: None) -> AsyncIterator[VramBot]:
    """The real bot, logged in to the fake and connected to its gateway."""
    from tests.running import start_bot

    bot, task = await start_bot(fake)
    yield bot
    await bot.close()
    await task


@pytest.fixture(scope="session")
def fresh_steps(tmp_path_factory: pytest.TempPathFactory) -> FreshSteps:
    """What the commands of tests/fresh_python.py import in a fresh interpreter, which starts once a
    run: the test processes of ``-n 2`` share it through their run's temporary folder (the parent of
    each worker's own)."""
    from tests.fresh_python import fresh_steps

    shared = tmp_path_factory.getbasetemp()
    return fresh_steps(shared.parent if "PYTEST_XDIST_WORKER" in os.environ else shared)


@pytest.fixture(scope="module")
def quiet_transformers() -> Iterator[None]:
    """For the accuracy suites that build models: skipped without torch and transformers, whose
    warnings about random weights and small configs are turned down to errors for the module."""
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    yield
    transformers.logging.set_verbosity(verbosity)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No token, no VRAM_BOT_* override and no ./config.toml from the developer's shell.

    For tests that run the CLI or the settings loader in-process; monkeypatch puts everything back
    afterwards, so each test stands alone in any order.
    """
    from bot.runtime.settings import ENV_PREFIX, TOKEN_ENV

    for name in list(os.environ):
        if name.upper().startswith(ENV_PREFIX) or name == TOKEN_ENV:
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
