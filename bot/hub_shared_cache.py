"""The Hub answers shared by a fleet of replicas through Redis (setting ``hub_shared_cache_url``; off
by default), so that a new repo costs one Hub lookup for the whole fleet rather than one per replica.

What is stored is what a lookup found (the repo's architecture at its commit, as JSON), never a token
or a header: the key is ``vram-bot:<version>:hub:<repo>@<revision>`` (a release never reads another's
entries) and an entry lives as long as a replica's memory keeps it (``HubClient.ttl_s``). While one
replica looks a new repo up, it holds a short lease (``...#lookup``) and the others wait for its
answer instead of asking the Hub too.

Redis is an optimisation, never a dependency of an answer: every call is bounded
(:data:`TIMEOUT_S`), and a failing one (Redis down, slow, refusing, an unreadable entry) falls back
to the replica's own caches and the Hub; it is logged once, and Redis is not asked again for
:data:`RETRY_AFTER_S`, so that a dead Redis costs the answers nothing. The client is the ``redis``
package's asyncio API (the optional extra ``pip install 'vram-bot[redis]'``), imported only when the
setting is on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from pydantic import TypeAdapter, ValidationError

from bot import __version__
from bot.estimate.hub import HubModel

if TYPE_CHECKING:
    from redis.asyncio import Redis

log = logging.getLogger(__name__)

T = TypeVar("T")

SCHEMES = ("redis", "rediss", "unix")  # what redis-py's from_url reads: TCP, TLS, a Unix socket
# One call's bound: a Redis on the same network answers in a millisecond; past this it is treated as
# down, and the answer goes on without it.
TIMEOUT_S = 0.25
RETRY_AFTER_S = 30.0  # after a failure, Redis is left alone this long (then tried again)
POLL_S = 0.05  # how often a replica waiting for another's lookup looks for its answer
ENTRY_MAX_BYTES = 4_000_000  # a looked-up model is a few kB (its tensors' count included)
REVISION = "main"  # the revision the bot looks up: the default branch's current commit

_MODEL: TypeAdapter[HubModel] = TypeAdapter(HubModel)


def where(url: str) -> str:
    """The URL without its user and password, for a log line."""
    parts = urlsplit(url)
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # not a number: the failure it caused is what the log line reports
        port = ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}{parts.path}"


class SharedHubCache:
    """A fleet's shared Hub answers in Redis at ``url``; each call returns None (or False) rather than
    fail or wait past :data:`TIMEOUT_S`."""

    def __init__(
        self,
        url: str,
        *,
        ttl_s: float,
        timeout_s: float = TIMEOUT_S,
        retry_after_s: float = RETRY_AFTER_S,
        poll_s: float = POLL_S,
    ) -> None:
        self.url = url
        self.ttl_s = ttl_s
        self.timeout_s = timeout_s
        self.retry_after_s = retry_after_s
        self.poll_s = poll_s
        self.prefix = f"vram-bot:{__version__}:hub:"
        self.hits = 0  # answers found in Redis (a test and the load test read it)
        self._me = uuid.uuid4().hex  # this replica's name on the leases it holds
        self._client: Redis | None = None
        self._down_until = 0.0  # time.monotonic() before which Redis is not asked

    def key(self, repo: str) -> str:
        return f"{self.prefix}{repo.lower()}@{REVISION}"

    def _redis(self) -> Redis:
        if self._client is None:
            from redis.asyncio import Redis
            from redis.asyncio.retry import Retry
            from redis.backoff import NoBackoff

            self._client = Redis.from_url(
                self.url,
                socket_timeout=self.timeout_s,
                socket_connect_timeout=self.timeout_s,
                retry=Retry(NoBackoff(), 0),  # a failure is answered without Redis, not retried
                protocol=2,
            )
        return self._client

    async def _call(self, what: str, call: Callable[[Redis], Awaitable[T]]) -> T | None:
        """``call``'s result, or None when Redis is down, slow or failing (logged once per outage)."""
        if time.monotonic() < self._down_until:
            return None
        try:
            result = await asyncio.wait_for(call(self._redis()), self.timeout_s)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # RedisError, OSError, TimeoutError: all mean "answer without it"
            if self._down_until == 0.0:
                log.warning(
                    "The shared Hub cache at %s failed (%s: %s); answering from this replica's own "
                    "cache, and trying it again in %.0f s",
                    where(self.url),
                    what,
                    type(exc).__name__,
                    self.retry_after_s,
                )
            self._down_until = time.monotonic() + self.retry_after_s
            await self._drop_client()
            return None
        if self._down_until:
            log.info("The shared Hub cache at %s answers again", where(self.url))
            self._down_until = 0.0
        return result

    async def get(self, repo: str) -> tuple[HubModel, float] | None:
        """The fleet's answer for ``repo`` and the seconds it has left, if there is one."""

        async def read(redis: Redis) -> tuple[Any, Any]:
            async with redis.pipeline(transaction=False) as pipe:
                pipe.get(self.key(repo))
                pipe.pttl(self.key(repo))
                value, left_ms = await pipe.execute()
            return value, left_ms

        found = await self._call("get", read)
        if found is None or not isinstance(found[0], bytes) or len(found[0]) > ENTRY_MAX_BYTES:
            return None
        try:
            model = _MODEL.validate_json(found[0])
        except ValidationError:  # written by hand, or cut: the Hub is asked, and the answer rewrites it
            log.info("The shared Hub cache's entry for %s is unreadable; looking it up", repo)
            return None
        left_s = found[1] / 1000 if isinstance(found[1], int) and found[1] > 0 else self.ttl_s
        self.hits += 1
        return model, min(left_s, self.ttl_s)

    async def put(self, repo: str, model: HubModel) -> None:
        """Share what this replica's lookup of ``repo`` found (under the name asked, which a renamed
        repo's answer does not bear), for ``ttl_s``; the lease on it is let go."""
        value = _MODEL.dump_json(model)
        ttl_ms = max(int(self.ttl_s * 1000), 1)
        key = self.key(repo)

        async def write(redis: Redis) -> None:
            async with redis.pipeline(transaction=False) as pipe:
                pipe.set(key, value, px=ttl_ms)
                pipe.delete(key + "#lookup")
                await pipe.execute()

        await self._call("set", write)

    async def claim(self, repo: str, hold_s: float) -> bool:
        """Whether this replica should look ``repo`` up: True unless another replica holds its lease
        (taken for ``hold_s``, a lookup's deadline). With Redis down, every replica looks up."""
        lease = self.key(repo) + "#lookup"

        async def take(redis: Redis) -> bool:
            return bool(await redis.set(lease, self._me, nx=True, px=max(int(hold_s * 1000), 1)))

        return await self._call("lease", take) is not False

    async def release(self, repo: str) -> None:
        """Let go of the lease after a failed lookup, so that the others ask the Hub themselves."""
        lease = self.key(repo) + "#lookup"
        # Only our own lease: one that expired and was taken by another replica stays its.
        held = await self._call("lease", lambda redis: redis.get(lease))
        if held == self._me.encode():
            await self._call("lease", lambda redis: redis.delete(lease))

    async def wait_for(self, repo: str, deadline: float) -> tuple[HubModel, float] | None:
        """The answer of the replica holding ``repo``'s lease, once it is there; None when the lease
        goes without one (its lookup failed, or it stopped) or at ``deadline`` (``time.monotonic()``)."""
        lease = self.key(repo) + "#lookup"
        while time.monotonic() < deadline:
            found = await self.get(repo)
            if found is not None:
                return found
            if not await self._call("lease", lambda redis: redis.exists(lease)):  # gone, or Redis down
                return await self.get(repo)  # written just before the lease went
            await asyncio.sleep(self.poll_s)
        return None

    async def _drop_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            # A broken connection's close has nothing to report.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.aclose(), self.timeout_s)

    async def close(self) -> None:
        await self._drop_client()
