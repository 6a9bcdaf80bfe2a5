"""The cog is a plain discord.py extension: it loads into any ``commands.Bot`` and serves there."""

from __future__ import annotations

import asyncio

import discord
import pytest
from discord.ext import commands

from bot.runtime.runner import point_at_discord
from bot.runtime.settings import Settings
from bot.runtime.tree import VramCommandTree
from tests.fake_discord import FakeDiscord

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.mark.parametrize("extension", ["cogs.vram", "bot.runtime.cog"])
async def test_loads_into_a_plain_bot_and_answers(
    fake: FakeDiscord, discord_endpoints: None, extension: str
) -> None:
    point_at_discord(Settings(api_base_url=fake.api_base, gateway_url=fake.gateway_url))

    class PlainBot(commands.Bot):
        async def setup_hook(self) -> None:
            await self.load_extension(extension)
            await self.tree.sync()

    # The README tells a host bot to use our command tree, which answers /vram's errors.
    bot = PlainBot(command_prefix="!", intents=discord.Intents.none(), tree_cls=VramCommandTree)
    sessions = fake.sessions
    task = asyncio.create_task(bot.start(fake.token))
    try:
        await fake.wait_identified(after=sessions)
        assert [c["name"] for c in fake.registered["global"]] == ["vram"]
        callback = await fake.invoke("vram", params=7, optimizer="sgd")
        assert not callback.ephemeral
        assert callback.embed["title"] == "✅ 7B · SGD: 56.0 GB fits one H100 80 GB"
        bad = await fake.invoke("vram", params=-3)
        assert bad.ephemeral
        assert "`params` = -3 is not allowed" in bad.data["content"]
    finally:
        await bot.close()
        await task
