"""Run the bot: build it from settings, load the cog, sync the commands, stop cleanly on a signal.

Start-up rides out Discord outages: a transient failure (5xx, 429, connection refused or reset, DNS)
during login, command sync or the gateway is retried with capped, jittered backoff, one log line per
attempt; only what the operator must fix (a rejected token, a fatal close code, a bad setting) stops
the bot, as a ``ConfigError``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import platform
import signal
from collections.abc import Iterator

import discord
import yarl
from discord.ext import commands

from bot import __version__
from bot.runtime.gateway import (
    quiet_unreadable_commands,
    tolerate_undecodable_frames,
    tolerate_unreadable_events,
)
from bot.runtime.health import GatewayState, keep_status_fresh, write_status
from bot.runtime.replies import NO_PINGS
from bot.runtime.retry import Backoff, GaveUp, describe, fatal, transient
from bot.runtime.settings import ConfigError, Settings

log = logging.getLogger(__name__)

EXTENSIONS = ("cogs.vram",)


_frozen = False


def freeze_start_up() -> None:
    """What start-up built (discord.py, pydantic's schemas, the catalogues, the presets) lives as
    long as the process: moved out of the collector's generations, the collections that answers'
    short-lived garbage triggers no longer walk it every time (CPU per answer; see benchmarks/).
    Once per process: a bot rebuilt after a failed start would otherwise freeze the first one's
    garbage for good."""
    global _frozen
    if not _frozen:
        gc.freeze()
        _frozen = True


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
            # Keep only what answering interactions needs: no message cache (discord.py keeps 1,000
            # by default, including the bot's own answers), no member cache, no guild chunking.
            max_messages=None,
            member_cache_flags=discord.MemberCacheFlags.none(),
            chunk_guilds_at_startup=False,
            # Without the guilds intent Discord sends no GUILD_CREATE after READY, so discord.py's
            # default 2 s wait for them only delays on_ready; and a bot stopped within those 2 s
            # left a "Task exception was never retrieved" traceback from that wait.
            guild_ready_timeout=0.0,
            **options,  # type: ignore[arg-type]
        )
        self.settings = settings
        # What start-up is doing, for the one log line when it fails; and whether READY ever came,
        # which ends start-up (later failures get a fresh retry budget).
        self.phase = "login"
        self.became_ready = False
        tolerate_undecodable_frames()
        # discord.py's table of event parsers, which every shard's connection reads events through.
        tolerate_unreadable_events(self._connection.parsers)

    async def setup_hook(self) -> None:
        quiet_unreadable_commands(asyncio.get_running_loop())
        self.phase = "loading extensions"
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
            self.phase = "command sync"
            await self.sync_commands()
        self.phase = "gateway connection"
        freeze_start_up()

    async def sync_commands(self) -> None:
        if self.settings.dev_guild_id is not None:
            # A guild sync shows up at once, handy while developing; global ones can take a while.
            guild = discord.Object(id=self.settings.dev_guild_id)
            self.tree.copy_global_to(guild=guild)
            try:
                synced = await self.tree.sync(guild=guild)
            except (discord.Forbidden, discord.NotFound) as exc:
                # Not transient: the bot is not in that server, or lacks the applications.commands scope.
                raise ConfigError(
                    f"cannot register the commands in dev_guild_id {guild.id} ({describe(exc)}): invite "
                    "the bot there with the applications.commands scope, or remove dev_guild_id"
                ) from None
            log.info("Synced %d command(s) to guild %s", len(synced), guild.id)
        else:
            synced = await self.tree.sync()
            log.info("Synced %d global command(s)", len(synced))

    async def on_ready(self) -> None:
        self.became_ready = True
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


def watch_gateway(bot: VramBot, state: GatewayState, changed: asyncio.Event) -> None:
    """Keep ``state`` in step with discord.py's documented connection events."""
    state.up.clear()

    def mark(shard: int | None, up: bool) -> None:
        state.mark(shard, up)
        changed.set()

    if isinstance(bot, commands.AutoShardedBot):

        async def shard_up(shard_id: int) -> None:
            mark(shard_id, True)

        async def shard_down(shard_id: int) -> None:
            mark(shard_id, False)

        bot.add_listener(shard_up, "on_shard_connect")
        bot.add_listener(shard_up, "on_shard_resumed")
        bot.add_listener(shard_down, "on_shard_disconnect")
    else:

        async def up() -> None:
            mark(None, True)

        async def down() -> None:
            mark(None, False)

        bot.add_listener(up, "on_connect")  # dispatched on READY: the session is up
        bot.add_listener(up, "on_resumed")
        bot.add_listener(down, "on_disconnect")


# SIGTERM: docker stop, systemd, Kubernetes. SIGINT: Ctrl-C. SIGHUP: the terminal or SSH session
# closing, or a supervisor's "reload"; unhandled, it killed the bot with no log line. The bot has no
# settings to reload in place (a new process reads them), so it stops cleanly, exit 0, as on SIGTERM.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


@contextlib.contextmanager
def stop_on_signals(stop: asyncio.Event) -> Iterator[None]:
    """Each of ``STOP_SIGNALS`` sets ``stop``, with one log line; the handlers go again on exit."""
    loop = asyncio.get_running_loop()

    def ask_to_stop(signame: str) -> None:
        log.info("Got %s, closing the connection", signame)
        stop.set()

    signals = STOP_SIGNALS
    for sig in signals:
        loop.add_signal_handler(sig, ask_to_stop, sig.name)
    try:
        yield
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)


def first_connection_cause(bot: VramBot, error: Exception) -> BaseException:
    """The real failure behind discord.py's AttributeError when the first gateway connection fails.

    discord.py 2.7's reconnect path reads ``self.ws.sequence`` while ``self.ws`` is still None (no
    connection has ever been made), so a transient 503 or refused connection surfaces as an
    AttributeError raised while handling it; the original is its ``__context__``.
    """
    if (
        isinstance(error, AttributeError)
        and getattr(bot, "ws", None) is None
        and error.__context__ is not None
    ):
        return error.__context__
    return error


async def run_once(bot: VramBot, token: str, stop: asyncio.Event) -> BaseException | None:
    """Log in and serve until ``stop``, or until a transient failure, which is returned."""
    async with bot:
        runner = asyncio.create_task(bot.start(token))
        stopper = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait({runner, stopper}, return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
        if runner not in done:
            await bot.close()
        try:
            await runner
        except Exception as error:
            if stop.is_set():
                return None  # whatever closing cut short does not matter any more
            exc = first_connection_cause(bot, error)
            reason = fatal(exc)
            if reason is not None:
                raise reason from None
            if not transient(exc):
                raise
            return exc
    return None


async def serve(
    settings: Settings, token: str, *, stop: asyncio.Event | None = None, handle_signals: bool = True
) -> None:
    """Serve until ``stop`` is set (or SIGTERM, SIGINT, SIGHUP), riding out transient failures.

    Raises ``ConfigError`` for what the operator must fix and ``GaveUp`` once start-up has failed for
    longer than ``startup_retry_s``. Each attempt builds a new bot: discord.py's ``login`` cannot be
    retried on the same client (it would open a second HTTP session), and a fresh client has no
    half-initialised state.
    """
    log.info(
        "vram-bot %s starting (discord.py %s, Python %s)",
        __version__,
        discord.__version__,
        platform.python_version(),
    )
    point_at_discord(settings)
    stop = asyncio.Event() if stop is None else stop
    loop = asyncio.get_running_loop()
    # The connections that must be up: our shards, or the one unsharded connection (None).
    shards: frozenset[int | None] = frozenset(settings.shard_ids or range(settings.shard_count or 0))
    expected = shards or frozenset({None})
    state, changed = GatewayState(expected=expected), asyncio.Event()
    status, status_path = None, settings.status_file
    if status_path is not None:
        keeper = keep_status_fresh(status_path, state, settings.status_interval_s, changed)
        status = asyncio.create_task(keeper)
    backoff = Backoff(cap=settings.retry_max_delay_s)
    started = loop.time()
    try:
        with stop_on_signals(stop) if handle_signals else contextlib.nullcontext():
            while not stop.is_set():
                bot = build_bot(settings)
                watch_gateway(bot, state, changed)
                failure = await run_once(bot, token, stop)
                state.up.clear()
                changed.set()
                if stop.is_set():
                    break
                if bot.became_ready:
                    # It served: this is a later outage, with a fresh start-up budget.
                    backoff.reset()
                    started = loop.time()
                delay = backoff.next_delay()
                what = describe(failure) if failure is not None else "the connection ended"
                budget = settings.startup_retry_s
                if budget is not None and loop.time() - started + delay > budget:
                    raise GaveUp(
                        f"Discord still unreachable after {settings.startup_retry_s:g} s "
                        f"(startup_retry_s) during {bot.phase}: {what}"
                    )
                log.warning(
                    "Discord unreachable during %s (%s); retry %d in %.1f s",
                    bot.phase,
                    what,
                    backoff.attempt,
                    delay,
                )
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay):  # a stop cuts the wait short
                        await stop.wait()
    finally:
        if status is not None and status_path is not None:
            status.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await status
            state.up.clear()
            with contextlib.suppress(OSError):
                write_status(status_path, state)  # "not connected" at once, not after max age
    log.info("Stopped")
