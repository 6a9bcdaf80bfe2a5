"""The bot's Hub lookups: a memory cache over the disk cache, one Hub request per repo at a time, and
model search for autocomplete, none of it blocking the event loop.

``huggingface_hub`` is blocking, so each call runs in a thread of its own (:class:`HubThreads`).
Concurrent asks for one repo share one lookup (single flight: the first ask starts a task, the others
await the same task), so fifty people asking at once cost one Hub request. A looked-up architecture
is kept in memory for ``ttl_s`` and registered with the request's validator
(:func:`bot.estimate.hub.register`).

A lookup has one deadline, ``settings.timeout_s`` from its start, for everything: waiting for a free
thread, and every Hub request, which the thread itself abandons at the deadline however slowly the
Hub trickles its bytes (:mod:`bot.hub_deadline`). At most :data:`LOOKUP_THREADS` distinct repos are
looked up at once, searches having threads of their own, so a few slow repos leave the others
threads to run in.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from bot.estimate.hub import HubFailure, HubModel, is_repo_id, register
from bot.hub_settings import HubSettings
from bot.runtime.warm_up import warm_up_module

if TYPE_CHECKING:
    from pydantic import SecretStr

    from bot.hub_shared_cache import SharedHubCache

log = logging.getLogger(__name__)

T = TypeVar("T")


# huggingface_hub and its HTTP stack take about a tenth of a second to import: not at start-up, but
# in the thread of the first lookup (or ahead of it, see :func:`warm_up`). Each of these runs in a
# worker thread.
def _fetch_architecture(repo: str, settings: HubSettings, deadline: float) -> HubModel:
    from bot.hub_lookup import fetch_architecture

    return fetch_architecture(repo, settings, deadline)


def _cached_architecture(repo: str, settings: HubSettings) -> HubModel | None:
    from bot.hub_lookup import cached_architecture

    return cached_architecture(repo, settings)


def _single_flight(
    running: dict[str, asyncio.Task[T]], key: str, start: Callable[[], Coroutine[Any, Any, T]]
) -> asyncio.Task[T]:
    """The task running for ``key``, or a new one from ``start``: concurrent asks share one, and it
    leaves ``running`` when it ends."""
    task = running.get(key)
    if task is None:
        task = asyncio.create_task(start())
        running[key] = task
        # Whoever awaits first retrieves an error; if every asker gave up, this does, so asyncio
        # never logs "exception was never retrieved".
        task.add_done_callback(lambda done: None if done.cancelled() else done.exception())
        task.add_done_callback(lambda _: running.pop(key, None))
    return task


async def warm_up() -> None:
    """Import the Hub modules ahead of the first lookup (bot.runtime.warm_up)."""
    await warm_up_module(_HUB_MODULE)


_HUB_MODULE = "bot.hub_lookup"


# Distinct repos looked up at once, and searches: eight repos trickling one byte a second until their
# deadline leave half the lookup threads to the others. Each thread is a daemon: a stopping bot never
# waits for the Hub.
LOOKUP_THREADS = 16
SEARCH_THREADS = 4
# How long after its deadline a lookup's thread may take to report (a trickle's last chunk, a cut
# read): within it, the thread's own failure is the one reported.
DEADLINE_GRACE_S = 0.1
SUGGESTIONS_TTL_S = 600.0  # search results change slowly; ten minutes keeps autocomplete snappy
SEARCH_LIMIT = 20
# A repo's own answer that will not change soon (no such repo, gated, no usable config.json) is kept
# for a few minutes, so a user repeating it, or many asking at once, do not spend the Hub's rate limit.
# Outages (429, down, slow) are not kept: the next ask tries again.
FAILURE_TTL_S = 300.0
_LASTING = frozenset(
    {
        "not_found",
        "gated",
        "no_config",
        "too_large",
        "malformed",
        "absurd",
        "unknown_architecture",
        "not_a_decoder",
        "undeclared_family",
    }
)
# How long a looked-up repo is kept in memory (and in the fleet's shared cache, if there is one) before
# the Hub is asked for its current commit again.
MEMORY_TTL_S = 3600.0
# Every cache holds at most this many entries, the oldest going first: typed text is unbounded.
CACHE_MAX = 2048


class _Bounded(OrderedDict[str, tuple[T, float]]):
    """key -> (value, expiry), holding at most CACHE_MAX entries (the oldest written goes first)."""

    def put(self, key: str, value: T, expiry: float) -> None:
        self.pop(key, None)
        self[key] = (value, expiry)
        while len(self) > CACHE_MAX:
            self.popitem(last=False)

    def fresh(self, key: str, now: float) -> T | None:
        entry = self.get(key)
        return entry[0] if entry is not None and entry[1] >= now else None


class HubThreads:
    """Runs blocking Hub calls, each in a daemon thread of its own, at most ``size`` at once.

    Not the event loop's default executor (``asyncio.to_thread``): its threads are shared with
    everything else, and ``asyncio.run`` waits for them at exit, so a Hub that trickles could take
    them all, and keep a stopped bot from exiting until its last byte.
    """

    def __init__(self, size: int, name: str) -> None:
        self.size = size
        self.name = name
        self.busy = 0  # threads running (a test reads it)
        self._free: asyncio.Semaphore | None = None  # made in the loop that uses it

    async def start(self, deadline: float, call: Callable[[], T]) -> asyncio.Future[T]:
        """The future of ``call`` running in a new thread, once one is free; :class:`TimeoutError`
        when none is before ``deadline`` (``time.monotonic()``)."""
        if self._free is None:
            self._free = asyncio.Semaphore(self.size)
        free = self._free
        await asyncio.wait_for(free.acquire(), max(deadline - time.monotonic(), 0))
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()

        def finish(outcome: Callable[[], None]) -> None:
            free.release()
            self.busy -= 1
            if not future.done():  # cancelled when every asker went away
                outcome()

        def run() -> None:
            try:
                result = call()
                outcome = functools.partial(future.set_result, result)
            except BaseException as exc:  # handed to the awaiting task, which sorts it
                outcome = functools.partial(future.set_exception, exc)
            # A closed loop (RuntimeError): the bot has stopped, and nobody is waiting any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(finish, outcome)

        self.busy += 1
        try:
            threading.Thread(target=run, name=self.name, daemon=True).start()
        except BaseException:
            self.busy -= 1
            free.release()
            raise
        return future


async def _within(deadline: float, work: asyncio.Future[T]) -> T:
    """``work``'s result, waiting at most until a little after ``deadline``; the thread goes on
    alone after that (``shield``: an abandoned wait must not cancel what another may await)."""
    left = max(deadline - time.monotonic(), 0)
    return await asyncio.wait_for(asyncio.shield(work), left + DEADLINE_GRACE_S)


@dataclass(frozen=True)
class Resolved:
    """A looked-up repo: its architecture, and whether it came from the cache because the Hub said 429."""

    architecture: HubModel
    rate_limited: bool = False


def shared_cache(url: SecretStr | None, ttl_s: float = MEMORY_TTL_S) -> SharedHubCache | None:
    """The fleet's shared cache at ``url`` (setting ``hub_shared_cache_url``), or None when unset."""
    if url is None:
        return None
    from bot.hub_shared_cache import SharedHubCache

    return SharedHubCache(url.get_secret_value(), ttl_s=ttl_s)


class HubClient:
    """Looks repos up for the bot; one per cog. ``enabled=False`` (setting ``hub_lookups``) refuses
    every repo ID with "unavailable" and suggests presets only."""

    def __init__(
        self,
        settings: HubSettings | None = None,
        *,
        enabled: bool = True,
        ttl_s: float = MEMORY_TTL_S,
        clock: Callable[[], float] = time.monotonic,
        shared: SharedHubCache | None = None,
    ) -> None:
        self.settings = settings or HubSettings()
        # The fleet's cache (setting hub_shared_cache_url), asked after this one's memory and before
        # the Hub; None: this replica's caches alone.
        self.shared = shared
        self.enabled = enabled
        self.ttl_s = ttl_s
        self._clock = clock
        self._cache: _Bounded[HubModel] = _Bounded()  # repo (lower case) -> (arch, expiry)
        self._failures: _Bounded[HubFailure] = _Bounded()
        self._inflight: dict[str, asyncio.Task[HubModel]] = {}
        self._suggestions: _Bounded[tuple[str, ...]] = _Bounded()
        self._searches: dict[str, asyncio.Task[tuple[str, ...]]] = {}
        self.lookups = 0  # lookups that went to the Hub (a test and the benchmark read it)
        self.threads = HubThreads(LOOKUP_THREADS, "hub-lookup")
        self.search_threads = HubThreads(SEARCH_THREADS, "hub-search")

    @property
    def deadline_s(self) -> float:
        """How long one lookup may take in all, from its start."""
        return self.settings.timeout_s

    def cached(self, repo: str) -> HubModel | None:
        """The fresh in-memory answer for ``repo``, without waiting for anything."""
        return self._cache.fresh(repo.lower(), self._clock())

    async def resolve(self, repo: str) -> Resolved:
        """The repo's architecture, registered for validation; :class:`HubFailure` when there is none."""
        if not self.enabled:
            raise HubFailure("disabled", repo)
        if not is_repo_id(repo):  # the validator refuses these first; never send one to the Hub
            raise HubFailure("not_found", repo)
        found = self.cached(repo)
        if found is not None:
            register(found)  # the registry may have been emptied since
            return Resolved(found)
        key = repo.lower()
        failed = self._failures.fresh(key, self._clock())
        if failed is not None:
            raise HubFailure(failed.kind, repo, failed.fields)
        task = _single_flight(self._inflight, key, lambda: self._lookup(repo))
        try:
            # shield: an asker that goes away (its interaction expired) must not cancel the others'.
            return Resolved(await asyncio.shield(task))
        except HubFailure as failure:
            if failure.kind != "rate_limited":
                raise
            stale = await self._stale(repo)
            if stale is None:
                raise
            log.warning("The Hub is rate-limiting; answered %s from the cache", repo)
            return Resolved(stale, rate_limited=True)

    async def _lookup(self, repo: str) -> HubModel:
        if self.shared is not None:
            found = await self._from_the_fleet(self.shared, repo)
            if found is not None:
                return found
        try:
            architecture = await self._from_the_hub(repo)
        except BaseException:
            if self.shared is not None:
                await self.shared.release(repo)  # the others ask the Hub themselves
            raise
        if self.shared is not None:
            await self.shared.put(repo, architecture)
        return architecture

    async def _from_the_fleet(self, shared: SharedHubCache, repo: str) -> HubModel | None:
        """What another replica found for ``repo`` (or is finding: it holds the lookup's lease, and
        this one waits for its answer up to a lookup's deadline); None: this replica asks the Hub."""
        found = await shared.get(repo)
        if found is None and not await shared.claim(repo, self.deadline_s):
            found = await shared.wait_for(repo, time.monotonic() + self.deadline_s)
        if found is None:
            return None
        architecture, left_s = found
        self._keep(architecture, left_s)
        return architecture

    async def _from_the_hub(self, repo: str) -> HubModel:
        self.lookups += 1
        # Real time, not self._clock (which tests move for the caches' expiry): the thread reads it.
        deadline = time.monotonic() + self.deadline_s
        try:
            work = await self.threads.start(
                deadline, functools.partial(_fetch_architecture, repo, self.settings, deadline)
            )
        except (TimeoutError, RuntimeError) as exc:  # all busy until the deadline; no thread to be had
            log.warning("No Hub lookup thread for %s: %s", repo, str(exc) or "all busy until the deadline")
            raise HubFailure("unavailable", repo) from None
        try:
            architecture = await _within(deadline, work)
        except TimeoutError:
            # The thread abandons its requests at the deadline; if it has an answer after all, it is kept.
            work.add_done_callback(self._keep_late_answer)
            raise HubFailure("unavailable", repo) from None
        except HubFailure as failure:
            if failure.kind in _LASTING:
                self._failures.put(repo.lower(), failure, self._clock() + FAILURE_TTL_S)
            raise
        self._keep(architecture)
        return architecture

    def _keep(self, architecture: HubModel, ttl_s: float | None = None) -> None:
        register(architecture)
        repo = architecture.hub_id or architecture.name  # every Hub architecture has its hub_id
        self._cache.put(repo.lower(), architecture, self._clock() + (self.ttl_s if ttl_s is None else ttl_s))
        self._failures.pop(repo.lower(), None)

    def _keep_late_answer(self, work: asyncio.Future[HubModel]) -> None:
        if not work.cancelled() and work.exception() is None:
            self._keep(work.result())

    async def _stale(self, repo: str) -> HubModel | None:
        """An expired memory entry, else the config.json on disk: what a 429 is answered with."""
        entry = self._cache.get(repo.lower())
        if entry is not None:
            register(entry[0])
            return entry[0]
        found = await asyncio.to_thread(_cached_architecture, repo, self.settings)
        if found is not None:
            register(found)
        return found

    async def close(self) -> None:
        """Close the shared cache's connections, if any (a stopping server)."""
        if self.shared is not None:
            await self.shared.close()

    # --- autocomplete ------------------------------------------------------------------------------

    def cached_suggestions(self, query: str) -> tuple[str, ...] | None:
        return self._suggestions.fresh(query.lower(), self._clock())

    async def suggest(self, query: str, timeout_s: float) -> tuple[str, ...]:
        """Repo IDs matching ``query``, most downloaded first; empty when the Hub is off, failing or
        slower than ``timeout_s`` (the search keeps running and fills the cache for the next keystroke)."""
        if not self.enabled or self.settings.is_offline:
            return ()
        found = self.cached_suggestions(query)
        if found is not None:
            return found
        key = query.lower()
        task = _single_flight(self._searches, key, lambda: self._search(query))
        try:
            return await asyncio.wait_for(asyncio.shield(task), timeout_s)
        except (TimeoutError, HubFailure):
            return ()

    async def _search(self, query: str) -> tuple[str, ...]:
        deadline = time.monotonic() + self.settings.timeout_s
        try:
            work = await self.search_threads.start(
                deadline, functools.partial(self._search_blocking, query, deadline)
            )
            found = await _within(deadline, work)
        except (TimeoutError, RuntimeError):  # as for a lookup
            raise HubFailure("unavailable", query) from None
        self._suggestions.put(query.lower(), found, self._clock() + SUGGESTIONS_TTL_S)
        return found

    def _search_blocking(self, query: str, deadline: float) -> tuple[str, ...]:
        from huggingface_hub import HfApi

        from bot.hub_deadline import until

        api = HfApi(endpoint=self.settings.endpoint, token=self.settings.token)
        try:
            with until(deadline):
                models = api.list_models(search=query, sort="downloads", limit=SEARCH_LIMIT)
                return tuple(model.id for model in models if is_repo_id(model.id))
        except Exception as exc:  # any failure of the search only costs the suggestions
            log.info("Hub model search for %r failed: %s", query, exc)
            raise HubFailure("unavailable", query) from None
