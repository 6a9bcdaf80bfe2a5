"""One deadline for all the blocking Hub requests of a lookup, however the Hub sends its bytes.

httpx2's timeouts bound each read of a socket, never a whole request: a Hub that sends one byte a
second never trips them, and a lookup's thread would wait for the last byte however long it takes.
So the thread running a lookup names its deadline (:func:`until`, a context variable: each thread
has its own), and two event hooks on ``huggingface_hub``'s shared client read it:

- before each request (redirects included): past the deadline it fails at once, and otherwise every
  timeout of the request is cut to what is left;
- on each response: a status ``huggingface_hub`` would retry after sleeping (429, 5xx: up to 8 s a
  time, or what the Hub's ``Retry-After`` says, a sleep no deadline can cut short) ends the lookup
  there, and the body is read against the deadline, chunk by chunk, so a trickle ends at the
  deadline (give or take one chunk's wait, itself cut to what was left).

Either way the request raises :class:`Abandoned`, which ``huggingface_hub`` retries nowhere (it
retries timeouts and network errors), so the thread is free at once. A request outside
:func:`until` (another library's, ``vram-bot measure``'s transformers) is untouched.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import httpx2
from huggingface_hub import get_session, set_client_factory

_DEADLINE: ContextVar[float | None] = ContextVar("hub_deadline", default=None)
_TIMEOUTS = ("connect", "read", "write", "pool")
# The statuses huggingface_hub retries after a sleep (utils/_http.py, _DEFAULT_RETRY_ON_STATUS_CODES).
RETRIED_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
_LATE = "the Hub lookup ran out of time"


class Abandoned(httpx2.TransportError):
    """A Hub request its lookup gave up on: past the deadline (``status`` None), or answered with a
    status that huggingface_hub would retry after sleeping (``status``). Not a timeout or a network
    error, which huggingface_hub would retry."""

    def __init__(self, message: str, *, request: httpx2.Request, status: int | None = None) -> None:
        super().__init__(message, request=request)
        self.status = status


@contextmanager
def until(deadline: float) -> Iterator[None]:
    """Hub requests made in this block, in this thread, end by ``deadline`` (``time.monotonic()``)."""
    _install()
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _before_request(request: httpx2.Request) -> None:
    deadline = _DEADLINE.get()
    if deadline is None:
        return
    left = deadline - time.monotonic()
    if left <= 0:
        raise Abandoned(_LATE, request=request)
    asked = request.extensions.get("timeout") or {}
    request.extensions["timeout"] = {
        name: left if asked.get(name) is None else min(asked[name], left) for name in _TIMEOUTS
    }


def _on_response(response: httpx2.Response) -> None:
    deadline = _DEADLINE.get()
    if deadline is None:
        return
    if response.status_code in RETRIED_STATUSES:
        status = response.status_code
        raise Abandoned(f"the Hub answered {status}", request=response.request, status=status)
    if isinstance(response.stream, httpx2.SyncByteStream):
        response.stream = _BodyByDeadline(response.stream, deadline, response.request)


class _BodyByDeadline(httpx2.SyncByteStream):
    """A response body that ends in :class:`Abandoned` once the deadline has passed."""

    def __init__(self, body: httpx2.SyncByteStream, deadline: float, request: httpx2.Request) -> None:
        self._body = body
        self._deadline = deadline
        self._request = request

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self._body:
                if time.monotonic() > self._deadline:
                    raise Abandoned(_LATE, request=self._request)
                yield chunk
        except httpx2.TimeoutException:  # a read's timeout, cut to the deadline: no retry, no sleep
            raise Abandoned(_LATE, request=self._request) from None

    def close(self) -> None:
        self._body.close()


def _factory_with_deadline(template: httpx2.Client) -> Callable[[], httpx2.Client]:
    """A client factory that builds clients like ``template`` (huggingface_hub's own shared client:
    its request hook blocks requests in offline mode and adds request IDs), with the two hooks added.
    Read from the public ``get_session()`` rather than huggingface_hub's private default factory."""
    hooks = template.event_hooks
    request_hooks = [*hooks["request"], _before_request]
    response_hooks = [*hooks["response"], _on_response]
    follow_redirects = template.follow_redirects
    timeout = template.timeout

    def client() -> httpx2.Client:
        return httpx2.Client(
            event_hooks={"request": list(request_hooks), "response": list(response_hooks)},
            follow_redirects=follow_redirects,
            timeout=timeout,
        )

    return client


_installed = False
_install_lock = threading.Lock()


def _install() -> None:
    """Give huggingface_hub's shared client the hooks (once; it builds the client from the factory
    again whenever it drops it, after a connection error)."""
    global _installed
    if _installed:
        return
    with _install_lock:
        if not _installed:
            set_client_factory(_factory_with_deadline(get_session()))
            _installed = True
