"""``vram-bot sync``: register the slash command over REST, as the gateway bot does at start-up.

An HTTP deployment holds no gateway connection, so nothing syncs the command when a replica starts:
the operator runs this once per release. It builds the same bot the gateway runs and logs in over
REST only (``Client.login`` runs ``setup_hook``, which loads the cog and syncs its command tree), so
the command JSON is the gateway bot's, byte for byte, and ``dev_guild_id`` works the same.
"""

from __future__ import annotations

import logging

from bot.runtime.retry import describe, fatal
from bot.runtime.runner import VramBot, point_at_discord
from bot.runtime.settings import ConfigError, Settings

log = logging.getLogger(__name__)


async def sync_commands(settings: Settings, token: str) -> None:
    """Register ``/vram`` (globally, or in ``dev_guild_id``); ``ConfigError`` for what to fix."""
    import discord

    point_at_discord(settings)
    bot = VramBot(settings.model_copy(update={"sync_commands": True}))
    try:
        async with bot:
            await bot.login(token)
    except discord.HTTPException as exc:
        reason = fatal(exc)
        raise reason or ConfigError(f"Discord refused the command sync: {describe(exc)}") from None
    except discord.LoginFailure as exc:
        raise fatal(exc) or ConfigError("Discord rejected the token") from None
