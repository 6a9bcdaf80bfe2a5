"""Start the real bot in this process, logged in to a fake Discord (shared by fixtures and tests)."""

from __future__ import annotations

import asyncio

from bot.runtime.runner import VramBot, point_at_discord
from bot.runtime.settings import Settings
from tests.fake_discord import FakeDiscord


async def start_bot(fake: FakeDiscord) -> tuple[VramBot, asyncio.Task[None]]:
    """The bot and its running ``start`` task, once its new gateway session is up."""
    settings = Settings(api_base_url=fake.api_base, gateway_url=fake.gateway_url)
    point_at_discord(settings)
    bot = VramBot(settings)
    sessions = fake.sessions
    task = asyncio.create_task(bot.start(fake.token))
    await fake.wait_identified(after=sessions)
    return bot, task
