"""Which start-up failures are worth retrying, which are the operator's to fix, and how long to wait."""

from __future__ import annotations

import asyncio
import random

import aiohttp
import discord

from bot.runtime.settings import ConfigError

# Discord's gateway close codes that no retry can fix (discord.com/developers/docs/topics/
# opcodes-and-status-codes#gateway-gateway-close-event-codes), with the operator's fix.
FATAL_CLOSE_CODES = {
    4004: "authentication failed (4004): check DISCORD_TOKEN",
    4010: "invalid shard (4010): check shard_ids and shard_count",
    4011: "sharding required (4011): set shard_count (and shard_ids per process)",
    4012: "invalid API version (4012): upgrade discord.py",
    4013: "invalid intents (4013): this bot asks for none, so upgrade discord.py",
    4014: "disallowed intents (4014): this bot asks for none, so upgrade discord.py",
}

# Transient: Discord or the network may be back in a moment. OSError covers connection refused or
# reset and DNS failures (aiohttp's ClientConnectorError and ClientConnectorDNSError subclass it).
_TRANSIENT = (
    OSError,
    aiohttp.ClientError,
    asyncio.TimeoutError,
    discord.GatewayNotFound,
    discord.DiscordServerError,  # any 5xx, including the 503 discord.py itself does not retry
    discord.RateLimited,
)


class GaveUp(Exception):
    """Start-up kept failing for longer than ``startup_retry_s`` allows."""


def fatal(exc: BaseException) -> ConfigError | None:
    """The one-line reason to stop for good, or None when the error is not the operator's to fix."""
    if isinstance(exc, ConfigError):
        return exc
    if isinstance(exc, discord.LoginFailure):
        return ConfigError("Discord rejected the token (401 Unauthorized): check DISCORD_TOKEN")
    if isinstance(exc, discord.PrivilegedIntentsRequired):
        return ConfigError("Discord closed the gateway: " + FATAL_CLOSE_CODES[4014])
    if isinstance(exc, discord.ConnectionClosed) and exc.code in FATAL_CLOSE_CODES:
        return ConfigError("Discord closed the gateway: " + FATAL_CLOSE_CODES[exc.code])
    return None


def transient(exc: BaseException) -> bool:
    if isinstance(exc, _TRANSIENT):
        return True
    if isinstance(exc, discord.HTTPException) and exc.status == 429:
        return True  # a 429 discord.py does not wait out itself (e.g. Cloudflare's, without Via)
    # A gateway close that is not fatal (1000, 4000, ...) escaping the client: reconnect.
    return isinstance(exc, discord.ConnectionClosed) and exc.code not in FATAL_CLOSE_CODES


def describe(exc: BaseException) -> str:
    """A short, token-free description for the one log line per attempt."""
    if isinstance(exc, discord.HTTPException):
        return f"HTTP {exc.status} {exc.response.reason or ''}".rstrip()
    if isinstance(exc, discord.ConnectionClosed):
        return f"gateway closed with {exc.code}"
    text = str(exc) or "no details"
    return f"{type(exc).__name__}: {text}"


class Backoff:
    """Capped exponential backoff with "equal jitter": half the delay fixed, half random.

    The fixed half keeps a crash-looping process from hammering Discord; the random half spreads
    many shards or replicas that failed together so they do not all come back at the same instant.
    """

    def __init__(self, cap: float, first: float = 1.0, rng: random.Random | None = None) -> None:
        self.cap = cap
        self.first = min(first, cap)
        self.attempt = 0
        self._rng = rng or random.Random()  # noqa: S311 (jitter, not cryptography)

    def next_delay(self) -> float:
        ceiling = min(self.cap, self.first * 2.0 ** min(self.attempt, 32))  # min(): no float overflow
        self.attempt += 1
        return ceiling / 2 + self._rng.uniform(0, ceiling / 2)

    def reset(self) -> None:
        self.attempt = 0
