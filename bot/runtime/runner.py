"""Run the bot: build it from settings, load the cog, sync the commands, stop cleanly on a signal."""

from __future__ import annotations

import asyncio
import logging
import signal

import discord
import yarl
from discord.ext import commands

from bot.runtime.replies import NO_PINGS
from bot.runtime.settings import ConfigError, Settings
from bot.runtime.tree import VramCommandTree

log = logging.getLogger(__name__)

EXTENSIONS = ("cogs.vram",)


class VramBot(commands.Bot):
    """A ``commands.Bot`` that needs no intents and loads the ``/vram`` cog at start-up."""

    def __init__(self, settings: Settings, **options: object) -> None:
        # The bot never joins voice, so discord.py's start-up warnings about voice libraries are noise.
        discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False
        super().__init__(
            # Slash commands only: without the message-content intent, prefixes are never read.
            command_prefix=commands.when_mentioned,
            help_command=None,
            intents=discord.Intents.none(),
            allowed_mentions=NO_PINGS,
            tree_cls=VramCommandTree,
            # Keep only what answering interactions needs: no message cache (discord.py keeps 1,000
            # by default, including the bot's own answers), no member cache, no guild chunking.
            max_messages=None,
            member_cache_flags=discord.MemberCacheFlags.none(),
            chunk_guilds_at_startup=False,
            **options,  # type: ignore[arg-type]
        )
        self.settings = settings

    async def setup_hook(self) -> None:
        for extension in EXTENSIONS:
            await self.load_extension(extension)
        for extension in self.settings.extra_extensions:
            try:
                await self.load_extension(extension)
            except (commands.ExtensionError, ImportError) as exc:  # a missing parent package: ImportError
                # The operator's setting, so one line for them rather than a traceback.
                cause = exc.__cause__ or exc
                raise ConfigError(f"cannot load extra_extensions entry {extension!r}: {cause}") from None
        if self.settings.sync_commands:
            await self.sync_commands()

    async def sync_commands(self) -> None:
        if self.settings.dev_guild_id is not None:
            # A guild sync shows up at once, handy while developing; global ones can take a while.
            guild = discord.Object(id=self.settings.dev_guild_id)
            self.tree.copy_global_to(guild=guild)
            synced = await self.tree.sync(guild=guild)
            log.info("Synced %d command(s) to guild %s", len(synced), guild.id)
        else:
            synced = await self.tree.sync()
            log.info("Synced %d global command(s)", len(synced))

    async def on_ready(self) -> None:
        log.info("Ready as %s (id %s)", self.user, getattr(self.user, "id", "?"))


class ShardedVramBot(VramBot, commands.AutoShardedBot):
    """The same bot on several gateway shards (discord.py's ``AutoShardedBot``).

    Discord routes a guild's events to shard ``(guild_id >> 22) % shard_count``, so processes that
    each run some of the shards split the guilds between them. Interactions need no shared state:
    the components carry theirs in the ``custom_id``.
    """

    async def on_shard_ready(self, shard_id: int) -> None:
        log.info("Shard %d of %s is ready", shard_id, self.shard_count)


def build_bot(settings: Settings) -> VramBot:
    if settings.sharded:
        return ShardedVramBot(settings, shard_count=settings.shard_count, shard_ids=settings.shard_ids)
    return VramBot(settings)


def point_at_discord(settings: Settings) -> None:
    """Use another REST base or gateway (a test fake or a proxy) when the settings name one."""
    if settings.api_base_url:
        discord.http.Route.BASE = settings.api_base_url.rstrip("/")
    if settings.gateway_url:
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(settings.gateway_url)


async def serve(settings: Settings, token: str) -> None:
    """Log in and serve until the connection ends or SIGTERM / SIGINT asks us to stop."""
    point_at_discord(settings)
    bot = build_bot(settings)
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()

    def ask_to_stop(signame: str) -> None:
        log.info("Got %s, closing the connection", signame)
        stopping.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, ask_to_stop, sig.name)

    async with bot:
        runner = asyncio.create_task(bot.start(token))
        stopper = asyncio.create_task(stopping.wait())
        done, _ = await asyncio.wait({runner, stopper}, return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
        if runner not in done:
            await bot.close()
        try:
            await runner
        except discord.LoginFailure:
            raise ConfigError("Discord rejected the token (401 Unauthorized): check DISCORD_TOKEN") from None
        except discord.PrivilegedIntentsRequired:
            raise ConfigError("Discord asked for privileged intents, which this bot never requests") from None
        except discord.ConnectionClosed as exc:
            if exc.code == 4004:
                raise ConfigError("Discord closed the gateway: authentication failed (4004)") from None
            raise
    log.info("Stopped")
