"""The HTTP server: ``POST /interactions`` (Discord's Interactions Endpoint URL) and ``GET /healthz``.

Every request is checked before it is read as JSON: a body over ``http_max_body_bytes`` gets 413, a
missing, bad or stale signature 401 (:mod:`bot.http.signature`), a body that is not a JSON object
400; nothing a client sends stops the server. The first reply of an interaction is the HTTP
response; the handler stays until what follows it (a deferred answer, a follow-up) is sent, so a stop
(SIGTERM, SIGINT) waits for those too: the listening socket closes first, the load balancer sends new
interactions to the other replicas, the ones in flight are answered, and the process exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from typing import Any

import orjson
from aiohttp import MultipartWriter, hdrs, web

from bot.http.answer import Answerer, Exchange, UnknownInteraction
from bot.http.replies import Reply
from bot.http.signature import SIGNATURE_HEADER, TIMESTAMP_HEADER, Verifier
from bot.http.webhook import DiscordWebhook
from bot.hub_settings import hub_settings_from_env
from bot.runtime.hub_client import HubClient, shared_cache, warm_up
from bot.runtime.runner import freeze_start_up
from bot.runtime.settings import Settings

log = logging.getLogger(__name__)

INTERACTIONS_PATH = "/interactions"
HEALTH_PATH = "/healthz"
_CHUNK = 64 * 1024
# How long a stop waits for connections accepted just before it to send their request.
CONNECTION_GRACE_S = 1.0


def _error(status: int, message: str) -> web.Response:
    return web.Response(
        status=status, body=orjson.dumps({"message": message}), content_type="application/json"
    )


def _http_response(reply: Reply) -> web.Response:
    """JSON, or with files multipart as Discord takes an interaction response with files."""
    if not reply.files:
        return web.Response(body=orjson.dumps(reply.body), content_type="application/json")
    writer = MultipartWriter("form-data")
    part = writer.append(orjson.dumps(reply.body).decode(), {hdrs.CONTENT_TYPE: "application/json"})
    part.set_content_disposition("form-data", name="payload_json")
    for index, (name, content) in enumerate(reply.files.items()):
        part = writer.append(content, {hdrs.CONTENT_TYPE: "application/octet-stream"})
        part.set_content_disposition("form-data", name=f"files[{index}]", filename=name)
    return web.Response(body=writer)


class InteractionServer:
    """The aiohttp application answering interactions; ``start`` listens, ``stop`` drains."""

    def __init__(
        self,
        answerer: Answerer,
        verifier: Verifier,
        webhook: DiscordWebhook,
        *,
        max_body_bytes: int,
        shutdown_s: float = 15.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.answerer = answerer
        self.verifier = verifier
        self.webhook = webhook
        self.max_body_bytes = max_body_bytes
        self.shutdown_s = shutdown_s
        self.clock = clock
        self.stopping = False
        self.in_flight = 0
        self.answered = 0  # interactions answered (the load test and the benchmark read it)
        self.port = 0
        self._runner: web.AppRunner | None = None

    def application(self) -> web.Application:
        app = web.Application(client_max_size=self.max_body_bytes)
        app.router.add_post(INTERACTIONS_PATH, self._interactions)
        app.router.add_get(HEALTH_PATH, self._health)
        return app

    async def start(self, host: str, port: int) -> None:
        self._runner = web.AppRunner(self.application(), access_log=None, shutdown_timeout=self.shutdown_s)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        server: Any = site._server
        self.port = server.sockets[0].getsockname()[1]
        log.info("Listening for interactions on http://%s:%d%s", host, self.port, INTERACTIONS_PATH)

    async def stop(self) -> None:
        """Stop listening, answer what is in flight (up to ``shutdown_s``), then close.

        aiohttp's own cleanup closes a connection whose request it has not started reading, which a
        proxy sees as a dropped request; so the listening socket closes first, and the connections
        already accepted get their answers (or, for idle keep-alive ones, ``CONNECTION_GRACE_S``)
        before the cleanup closes what is left.
        """
        self.stopping = True
        if self._runner is not None:
            for site in list(self._runner.sites):
                await site.stop()
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self.shutdown_s
            grace_end = loop.time() + CONNECTION_GRACE_S
            server = self._runner.server
            while loop.time() < deadline:
                connected = server is not None and bool(server.connections)
                if self.in_flight == 0 and (not connected or loop.time() > grace_end):
                    break
                await asyncio.sleep(0.02)
            await self._runner.cleanup()
        await self.webhook.close()
        await self.answerer.hub.close()

    async def _health(self, request: web.Request) -> web.Response:
        if self.stopping:
            return _error(503, "stopping")
        return web.Response(body=orjson.dumps({"status": "ok"}), content_type="application/json")

    async def _read_body(self, request: web.Request) -> bytes | None:
        """The body, or None when it is larger than ``max_body_bytes`` (read no further then)."""
        length = request.content_length
        if length is not None and length > self.max_body_bytes:
            return None
        chunks, size = [], 0
        async for chunk in request.content.iter_chunked(_CHUNK):
            size += len(chunk)
            if size > self.max_body_bytes:
                return None
            chunks.append(chunk)
        return b"".join(chunks)

    async def _interactions(self, request: web.Request) -> web.StreamResponse:
        self.in_flight += 1
        try:
            return await self._check_and_answer(request)
        finally:
            self.in_flight -= 1

    async def _check_and_answer(self, request: web.Request) -> web.StreamResponse:
        body = await self._read_body(request)
        if body is None:
            return _error(413, "request body too large")
        refused = self.verifier.problem(
            request.headers.get(SIGNATURE_HEADER), request.headers.get(TIMESTAMP_HEADER), body, self.clock()
        )
        if refused is not None:
            log.info("Refused a request to %s: %s", INTERACTIONS_PATH, refused)
            return _error(401, "invalid request signature")
        try:
            interaction = orjson.loads(body)
        except orjson.JSONDecodeError:
            return _error(400, "the body is not JSON")
        if not isinstance(interaction, dict):
            return _error(400, "the body is not a JSON object")
        return await self._answer(request, interaction)

    async def _answer(self, request: web.Request, interaction: dict[str, Any]) -> web.StreamResponse:
        exchange = Exchange(interaction, self.webhook)
        answering = asyncio.ensure_future(self.answerer.answer(exchange))
        either: set[asyncio.Future[Any]] = {answering, exchange.first}
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if not exchange.responded:
            try:
                answering.result()
            except UnknownInteraction as exc:
                return _error(400, str(exc))
            except Exception:
                log.error("Answering interaction %s failed", str(interaction.get("id"))[:30], exc_info=True)
            return _error(500, "no answer")
        response = _http_response(exchange.first.result())
        try:
            await response.prepare(request)
            await response.write_eof()
        finally:  # a client gone before the response: what follows fails at Discord, and is logged
            exchange.delivered.set()
        self.answered += 1
        with contextlib.suppress(Exception):  # logged by the answerer; the response is out already
            await answering
        return response


def hub_client_for(settings: Settings) -> HubClient:
    """The Hub client as the settings say, as :func:`bot.runtime.cog._hub_client` builds the cog's."""
    hub = hub_settings_from_env(os.environ, settings.hub_timeout_s, settings.hub_cache_max_repos)
    shared = shared_cache(settings.hub_shared_cache_url)
    return HubClient(hub, enabled=settings.hub_lookups, shared=shared)


def build_server(settings: Settings, public_key: bytes) -> InteractionServer:
    return InteractionServer(
        Answerer(hub_client_for(settings)),
        Verifier(public_key, settings.signature_window_s),
        DiscordWebhook(settings.api_base_url),
        max_body_bytes=settings.http_max_body_bytes,
        shutdown_s=settings.http_shutdown_s,
    )


async def serve_http(
    settings: Settings,
    public_key: bytes,
    *,
    host: str | None = None,
    port: int | None = None,
    stop: asyncio.Event | None = None,
    handle_signals: bool = True,
) -> None:
    """Answer interactions over HTTP until ``stop`` (or SIGTERM, SIGINT, SIGHUP), then drain."""
    from bot.runtime.runner import stop_on_signals

    server = build_server(settings, public_key)
    stop = asyncio.Event() if stop is None else stop
    await server.start(host or settings.http_host, settings.http_port if port is None else port)
    warming = asyncio.create_task(warm_up()) if server.answerer.hub.enabled else None
    freeze_start_up()
    try:
        with stop_on_signals(stop) if handle_signals else contextlib.nullcontext():
            await stop.wait()
    finally:
        log.info("Stopping: answering the %d interaction(s) in flight", server.in_flight)
        await server.stop()
        if warming is not None:
            warming.cancel()
    log.info("Stopped")
