"""A small fake of Discord on loopback: the gateway websocket and the REST routes discord.py calls.

It speaks Discord's JSON shapes (API v10) so that the real discord.py client can log in, sync its
commands, receive INTERACTION_CREATE and answer through the interaction callback. The tests read
what the bot sent from the recorded requests.

Docs followed: https://discord.com/developers/docs/events/gateway (HELLO, IDENTIFY, READY,
heartbeats, RESUME), .../interactions/receiving-and-responding (callback with ``with_response``).
"""

from __future__ import annotations

import asyncio
import contextlib
import email
import email.message
import itertools
import json
import ssl
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import BodyPartReader, ClientSession, WSMsgType, web
from nacl.signing import SigningKey

API_PREFIX = "/api/v10"
HEARTBEAT_INTERVAL_MS = 41_250

# Gateway opcodes.
OP_DISPATCH, OP_HEARTBEAT, OP_IDENTIFY, OP_RESUME, OP_HELLO, OP_HEARTBEAT_ACK = 0, 1, 2, 6, 10, 11

_snowflakes = itertools.count(1_200_000_000_000_000_000)


def snowflake() -> str:
    return str(next(_snowflakes))


@dataclass
class Fault:
    """One canned answer to the next interaction callback instead of the normal one."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class RouteFault:
    """One canned error for the next REST request whose method and path match (fault injection)."""

    method: str
    path_suffix: str  # e.g. "/commands" for either command sync route
    status: int
    body: dict[str, Any] = field(default_factory=lambda: {"message": "Service Unavailable", "code": 0})


@dataclass
class Callback:
    """What the bot posted to ``/interactions/{id}/{token}/callback``."""

    interaction_id: str
    body: dict[str, Any]
    query: dict[str, str]
    message: dict[str, Any] = field(default_factory=dict)  # the message it created or updated
    received_at: float = 0.0  # time.perf_counter() when the fake got it
    files: dict[str, bytes] = field(default_factory=dict)  # uploaded files by name (multipart callbacks)

    @property
    def type(self) -> int:
        return int(self.body["type"])

    @property
    def data(self) -> dict[str, Any]:
        data: dict[str, Any] = self.body.get("data") or {}
        return data

    @property
    def ephemeral(self) -> bool:
        return bool(int(self.data.get("flags", 0)) & 64)

    @property
    def embed(self) -> dict[str, Any]:
        embeds: list[dict[str, Any]] = self.data.get("embeds") or []
        assert len(embeds) == 1, f"expected one embed, got {embeds!r}"
        return embeds[0]


async def until_healthy(
    session: ClientSession,
    ports: list[int],
    poll_s: float,
    seconds: float = 60,
    *,
    tls: ssl.SSLContext | None = None,
) -> None:
    """Wait until each port's ``/healthz`` answers 200: the HTTP replicas, or a proxy before them
    (over HTTPS with ``tls``, the context that trusts its certificate)."""
    deadline = time.monotonic() + seconds
    scheme = "http" if tls is None else "https"
    for port in ports:
        while True:
            try:
                async with session.get(f"{scheme}://127.0.0.1:{port}/healthz", ssl=tls or True) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"port {port} never became healthy")
            await asyncio.sleep(poll_s)


@dataclass
class HttpAnswer:
    """An interactions endpoint's answer to a POST: its status, bytes, and JSON (or multipart) body."""

    status: int
    raw: bytes
    content_type: str
    body: dict[str, Any] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    callback: Callback | None = None  # the interaction response it stands for (status 200)
    headers: dict[str, str] = field(default_factory=dict)


def _read_multipart(content_type: str, raw: bytes) -> tuple[dict[str, Any], dict[str, bytes]]:
    """A response with files, as Discord reads one: ``payload_json`` and ``files[n]`` parts."""
    body: dict[str, Any] = {}
    files: dict[str, bytes] = {}
    parsed = email.message_from_bytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    assert parsed.is_multipart(), "not a multipart body"
    for part in parsed.get_payload():
        assert isinstance(part, email.message.Message)
        name = part.get_param("name", header="content-disposition")
        content = part.get_payload(decode=True)
        assert isinstance(content, bytes)
        if name == "payload_json":
            body = orjson.loads(content)
        else:
            assert str(name).startswith("files["), name
            filename = part.get_filename()
            assert filename, "a file part without a filename"
            files[filename] = content
    return body, files


async def _read_body(request: web.Request) -> tuple[dict[str, Any], dict[str, bytes]]:
    """A JSON body, or a multipart one as Discord takes a message with files: the JSON in the part
    ``payload_json`` and each file in a part ``files[n]`` named by its filename."""
    if not request.content_type.startswith("multipart/"):
        body: dict[str, Any] = await request.json(loads=orjson.loads)
        return body, {}
    body, files = {}, {}
    reader = await request.multipart()
    async for part in reader:
        assert isinstance(part, BodyPartReader), "nested multipart is not something Discord takes"
        if part.name == "payload_json":
            body = orjson.loads(await part.read())
        else:
            assert (part.name or "").startswith("files["), f"unexpected part {part.name!r}"
            assert part.filename, "a file part without a filename"
            files[part.filename] = bytes(await part.read())
    return body, files


def _attachments(data: dict[str, Any], files: dict[str, bytes]) -> list[dict[str, Any]]:
    """The message's attachments as Discord returns them, one per uploaded file."""
    described = {a.get("filename"): a for a in data.get("attachments", [])}
    return [
        {
            "id": snowflake(),
            "filename": name,
            "size": len(content),
            "url": f"https://cdn.example.invalid/attachments/{name}",
            "proxy_url": f"https://media.example.invalid/attachments/{name}",
            "content_type": "image/png" if name.endswith(".png") else "application/octet-stream",
            **(
                {"description": described[name]["description"]}
                if "description" in described.get(name, {})
                else {}
            ),
        }
        for name, content in files.items()
    ]


class FakeDiscord:
    """Start with ``await fake.start()``; point discord.py at ``api_base`` and ``gateway_url``."""

    def __init__(self, token: str = "fake-token") -> None:
        self.token = token
        self.application_id = snowflake()
        self.bot_user = {
            "id": self.application_id,
            "username": "vram-bot",
            "discriminator": "0",
            "global_name": None,
            "avatar": None,
            "bot": True,
        }
        self.guild_id = snowflake()
        self.channel_id = snowflake()
        self.dm_channel_id = snowflake()
        self.messages: dict[str, dict[str, Any]] = {}  # what the bot posted, by message id
        self._users: dict[str, dict[str, Any]] = {}
        self._sent: dict[str, dict[str, Any]] = {}  # interactions sent, by id
        self.registered: dict[str, list[dict[str, Any]]] = {}  # "global" or a guild id
        self.sync_bodies: list[tuple[str, bytes]] = []  # (scope, the PUT's body) of each command sync
        self.identifies: list[dict[str, Any]] = []
        self.requests: list[tuple[str, str]] = []
        self.unknown_routes: list[tuple[str, str]] = []
        self.callback_faults: list[Fault] = []
        self.callbacks: list[Callback] = []  # every callback answered, in order
        # What came through an interaction's webhook after its callback: ("followup" | "edit" |
        # "delete", interaction token, JSON body), in order.
        self.webhooks: list[tuple[str, str, dict[str, Any]]] = []
        self.tokens: dict[str, str] = {}  # interaction id -> its token, to find its webhook calls
        self.faulted: list[tuple[str, int]] = []  # (interaction id, status) of each fault answered
        self.sessions = 0  # READY and RESUMED sent so far
        self.resumes: list[dict[str, Any]] = []
        self._callbacks: dict[str, asyncio.Future[Callback]] = {}
        self._sockets: list[web.WebSocketResponse] = []
        self._shard_sockets: dict[int, web.WebSocketResponse] = {}  # shard id -> its connection
        self._shard_counts: dict[int, int] = {}
        self._transports: dict[web.WebSocketResponse, Any] = {}
        self.shard_count = 1  # what GET /gateway/bot recommends
        self.reject_identify = False  # close every IDENTIFY with 4004, as for a revoked token
        self.ready_guilds: list[dict[str, Any]] = []  # sent (unavailable) in READY
        self._sequence = 0
        self._identified = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._client: ClientSession | None = None  # for POSTs to an interactions endpoint
        self.port = 0

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self, port: int = 0) -> None:
        """Listen on loopback; ``port`` 0 picks a free one (a fixed one: "Discord comes back")."""
        self.route_faults: list[RouteFault] = []
        self.route_faulted: list[tuple[str, str, int]] = []  # (method, path, status) answered
        app = web.Application(middlewares=[self._record, self._inject_route_fault])
        app.router.add_get("/gateway", self._gateway)
        api = API_PREFIX
        app.router.add_get(f"{api}/users/@me", self._me)
        app.router.add_get(f"{api}/oauth2/applications/@me", self._application)
        app.router.add_get(f"{api}/gateway/bot", self._gateway_bot)
        app.router.add_put(f"{api}/applications/{{app}}/commands", self._sync)
        app.router.add_put(f"{api}/applications/{{app}}/guilds/{{guild}}/commands", self._sync)
        app.router.add_post(f"{api}/interactions/{{id}}/{{token}}/callback", self._callback)
        app.router.add_post(f"{api}/webhooks/{{app}}/{{token}}", self._followup)
        # A deferred ("thinking") reply is filled in, or removed, through its webhook.
        app.router.add_patch(f"{api}/webhooks/{{app}}/{{token}}/messages/@original", self._edit_original)
        app.router.add_delete(f"{api}/webhooks/{{app}}/{{token}}/messages/@original", self._delete_original)
        app.router.add_route("*", "/{tail:.*}", self._unknown)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        server = site._server
        assert server is not None
        sockets = getattr(server, "sockets", None)
        assert sockets
        self.port = sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._client is not None:
            await self._client.close()
        for ws in list(self._sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}{API_PREFIX}"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    async def wait_identified(self, timeout: float = 10, *, after: int = 0) -> None:
        """Wait until more than ``after`` sessions have started (READY or RESUMED sent)."""

        async def started() -> None:
            while self.sessions <= after:
                self._identified.clear()
                await self._identified.wait()

        await asyncio.wait_for(started(), timeout)

    # -- what tests send -------------------------------------------------------------------------

    def user(self, name: str = "alice") -> dict[str, Any]:
        """A Discord user object; the same name gives the same user."""
        if name not in self._users:
            self._users[name] = {
                "id": snowflake(),
                "username": name,
                "discriminator": "0",
                "global_name": name.title(),
                "avatar": None,
            }
        return self._users[name]

    def _interaction(
        self,
        kind: int,
        data: dict[str, Any],
        *,
        user: str,
        locale: str,
        in_dm: bool,
        guild_id: str | None = None,
    ) -> dict[str, Any]:
        """An interaction as Discord sends it, from a guild text channel or from a DM with the bot."""
        author = self.user(user)
        interaction: dict[str, Any] = {
            "id": snowflake(),
            "application_id": self.application_id,
            "type": kind,
            "token": f"interaction-token-{snowflake()}",
            "version": 1,
            "data": data,
            "app_permissions": "2248473465835073",
            "locale": locale,
            "entitlements": [],
            "attachment_size_limit": 10_485_760,
        }
        self.tokens[interaction["id"]] = interaction["token"]
        if in_dm:
            dm_channel = {
                "id": self.dm_channel_id,
                "type": 1,
                "recipients": [author],
                "last_message_id": None,
            }
            interaction |= {
                "channel_id": self.dm_channel_id,
                "channel": dm_channel,
                "user": author,
                "authorizing_integration_owners": {"1": author["id"]},
                "context": 1,
            }
            return interaction
        guild_id = guild_id or self.guild_id
        return interaction | {
            "guild_id": guild_id,
            "guild": {"id": guild_id, "locale": "en-US", "features": []},
            "guild_locale": "en-US",
            "channel_id": self.channel_id,
            "channel": {
                "id": self.channel_id,
                "type": 0,
                "guild_id": guild_id,
                "name": "ml-team",
                "position": 0,
                "permission_overwrites": [],
                "nsfw": False,
                "parent_id": None,
            },
            "member": {
                "user": author,
                "roles": [],
                "joined_at": "2026-01-01T00:00:00+00:00",
                "deaf": False,
                "mute": False,
                "flags": 0,
                "permissions": "2248473465835073",
            },
            "authorizing_integration_owners": {"0": guild_id},
            "context": 0,
        }

    def slash_interaction(
        self,
        name: str,
        options: list[dict[str, Any]],
        *,
        locale: str = "en-US",
        user: str = "alice",
        in_dm: bool = False,
        guild_id: str | None = None,
    ) -> dict[str, Any]:
        """An APPLICATION_COMMAND interaction for ``/name`` with ``options``."""
        command_id = next(
            (c["id"] for c in self.registered.get("global", []) if c["name"] == name), snowflake()
        )
        data = {"id": command_id, "name": name, "type": 1, "options": options}
        return self._interaction(2, data, user=user, locale=locale, in_dm=in_dm, guild_id=guild_id)

    def component_interaction(
        self,
        message: dict[str, Any],
        custom_id: str,
        *,
        values: list[str] | None = None,
        locale: str = "en-US",
        user: str = "alice",
    ) -> dict[str, Any]:
        """A MESSAGE_COMPONENT interaction: ``user`` used ``custom_id`` (or picked ``values``)."""
        component = find_component(message, custom_id)
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": component["type"]}
        if values is not None:
            data["values"] = values
        interaction = self._interaction(3, data, user=user, locale=locale, in_dm=False)
        interaction["message"] = message
        return interaction

    async def send_interaction(self, interaction: dict[str, Any], timeout: float = 10) -> Callback:
        """Dispatch INTERACTION_CREATE and wait for the bot's callback."""
        future: asyncio.Future[Callback] = asyncio.get_running_loop().create_future()
        self._callbacks[interaction["id"]] = future
        self._sent[interaction["id"]] = interaction
        await self.dispatch("INTERACTION_CREATE", interaction)
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            self._callbacks.pop(interaction["id"], None)
            self._sent.pop(interaction["id"], None)  # answered or given up: nothing more to route

    async def invoke(self, name: str, timeout: float = 10, **options: Any) -> Callback:
        """Send ``/name`` with ``options`` as a user would, typed as the registered command says."""
        return await self.send_interaction(
            self.slash_interaction(name, self.command_options(name, **options)), timeout
        )

    def command_options(self, command: str, **options: Any) -> list[dict[str, Any]]:
        """Options as Discord sends them: the type from the registered command, else guessed."""
        registered = next((c for c in self.registered.get("global", []) if c["name"] == command), {})
        types = {o["name"]: o["type"] for o in registered.get("options", [])}
        return [
            {"name": name, "type": types.get(name, guess_option_type(value)), "value": value}
            for name, value in options.items()
        ]

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send a gateway event on the connection Discord would use: the guild's shard, else the newest."""
        ws = self._socket_for(data.get("guild_id"))
        self._sequence += 1
        frame = {"op": OP_DISPATCH, "t": event, "s": self._sequence, "d": data}
        await ws.send_str(json.dumps(frame, allow_nan=False))  # Discord's JSON has no NaN

    def _socket_for(self, guild_id: str | None) -> web.WebSocketResponse:
        assert self._sockets, "no gateway connection"
        if guild_id is not None and self._shard_sockets:
            count = max(self._shard_counts.values(), default=1)
            shard = (int(guild_id) >> 22) % count  # Discord's sharding formula
            assert shard in self._shard_sockets, f"no connection for shard {shard}"
            return self._shard_sockets[shard]
        return self._sockets[-1]

    async def close_gateway(self, code: int) -> None:
        """Close the newest gateway connection with a close code, as Discord does."""
        await self._sockets[-1].close(code=code, message=b"closed by the fake")

    def drop_gateway(self) -> None:
        """Cut the newest gateway connection's TCP connection without a close frame."""
        self._transports[self._sockets[-1]].abort()

    async def send_raw(self, text: str) -> None:
        """Send ``text`` as a gateway frame as is, e.g. JSON that only some decoders accept."""
        await self._sockets[-1].send_str(text)

    def next_sequence(self) -> int:
        """The sequence number the next dispatched event gets (for hand-made frames)."""
        self._sequence += 1
        return self._sequence

    # -- REST ------------------------------------------------------------------------------------

    @web.middleware
    async def _inject_route_fault(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """Answer the first matching ``route_faults`` entry instead of the route (then forget it)."""
        for fault in self.route_faults:
            if request.method == fault.method and request.path.endswith(fault.path_suffix):
                self.route_faults.remove(fault)
                self.route_faulted.append((request.method, request.path, fault.status))
                return json_response(fault.body, status=fault.status)
        response: web.StreamResponse = await handler(request)
        return response

    @web.middleware
    async def _record(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.requests.append((request.method, request.path))
        # Interaction callbacks and follow-ups are authorised by their token in the path, not the header.
        needs_auth = request.path.startswith(API_PREFIX) and not any(
            part in request.path for part in ("/interactions/", "/webhooks/")
        )
        if needs_auth and request.headers.get("Authorization") != f"Bot {self.token}":
            return json_response({"message": "401: Unauthorized", "code": 0}, status=401)
        response: web.StreamResponse = await handler(request)
        return response

    async def _me(self, request: web.Request) -> web.Response:
        return json_response(self.bot_user)

    async def _application(self, request: web.Request) -> web.Response:
        return json_response(
            {
                "id": self.application_id,
                "name": "vram-bot",
                "description": "",
                "icon": None,
                "bot_public": True,
                "bot_require_code_grant": False,
                "owner": {**self.bot_user, "id": snowflake(), "username": "owner", "bot": False},
                "verify_key": "0" * 64,
                "flags": 0,
                "team": None,
                "summary": "",
            }
        )

    async def _gateway_bot(self, request: web.Request) -> web.Response:
        return json_response(
            {
                "url": self.gateway_url,
                "shards": self.shard_count,
                "session_start_limit": {
                    "total": 1000,
                    "remaining": 999,
                    "reset_after": 0,
                    "max_concurrency": 1,
                },
            }
        )

    async def _sync(self, request: web.Request) -> web.Response:
        scope = request.match_info.get("guild", "global")
        self.sync_bodies.append((scope, await request.read()))  # as sent, to compare two syncs
        commands = await request.json()
        registered = []
        for command in commands:
            entry = {
                **command,
                "id": snowflake(),
                "application_id": self.application_id,
                "version": snowflake(),
                "default_member_permissions": command.get("default_member_permissions"),
                "type": command.get("type", 1),
            }
            if scope != "global":
                entry["guild_id"] = scope
            registered.append(entry)
        self.registered[scope] = registered
        return json_response(registered)

    async def _callback(self, request: web.Request) -> web.Response:
        received_at = time.perf_counter()
        body, files = await _read_body(request)
        if self.callback_faults:
            fault = self.callback_faults.pop(0)
            self.faulted.append((request.match_info["id"], fault.status))
            return json_response(fault.body, status=fault.status, headers=fault.headers)
        interaction_id = request.match_info["id"]
        interaction = self._sent.get(interaction_id, {})
        callback = Callback(
            interaction_id=interaction_id,
            body=body,
            query=dict(request.query),
            received_at=received_at,
            files=files,
        )
        message = callback.message = self._answered(interaction, callback)
        self.callbacks.append(callback)
        future = self._callbacks.get(interaction_id)
        if future is not None and not future.done():
            future.set_result(callback)
        if "with_response" not in request.query:  # Discord answers 204 unless asked for the message
            return web.Response(status=204)
        return json_response(
            {
                "interaction": {
                    "id": interaction_id,
                    "type": interaction.get("type", 2),
                    "response_message_id": message["id"],
                    "response_message_loading": False,
                    "response_message_ephemeral": callback.ephemeral,
                },
                "resource": {"type": callback.type, "message": message},
            }
        )

    def _answered(self, interaction: dict[str, Any], callback: Callback) -> dict[str, Any]:
        """The message an interaction's response created or, for UPDATE_MESSAGE, updated."""
        if callback.type == 7 and "message" in interaction:  # UPDATE_MESSAGE: edit the clicked message
            message = self.messages.setdefault(interaction["message"]["id"], dict(interaction["message"]))
            message |= {key: callback.data[key] for key in ("embeds", "components") if key in callback.data}
            if callback.files or "attachments" in callback.data:  # the files sent replace those kept
                message["attachments"] = _attachments(callback.data, callback.files)
            message["edited_timestamp"] = "2026-12-02T12:00:01+00:00"
            return message
        return self._message(callback.data, interaction, callback.files)

    # -- interactions over HTTP (the Interactions Endpoint URL) ----------------------------------

    async def post_interaction(
        self,
        url: str,
        interaction: dict[str, Any],
        key: SigningKey,
        *,
        body: bytes | None = None,
        timestamp: str | None = None,
        signature: str | None = None,
        headers: dict[str, str] | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> HttpAnswer:
        """POST ``interaction`` to an endpoint as Discord does: JSON signed with ``key`` (Ed25519 over
        the timestamp and the body). ``body``, ``timestamp`` and ``signature`` replace what is sent,
        as a forger or a replay would; ``tls`` trusts an https:// endpoint's certificate. A 200 answer
        is kept as the callback it stands for."""
        if self._client is None:
            self._client = ClientSession()
        # The stdlib's encoder, as the gateway's frames: it writes whole numbers beyond 64 bits too.
        sent = json.dumps(interaction, ensure_ascii=False).encode() if body is None else body
        stamp = str(int(time.time())) if timestamp is None else timestamp
        signed = key.sign(stamp.encode() + sent).signature.hex() if signature is None else signature
        heads = {
            "Content-Type": "application/json",
            "X-Signature-Ed25519": signed,
            "X-Signature-Timestamp": stamp,
            "User-Agent": "Discord-Interactions/1.0 (+https://discord.com)",
            **(headers or {}),
        }
        async with self._client.post(url, data=sent, headers=heads, ssl=tls or True) as response:
            raw = await response.read()
            answer = HttpAnswer(response.status, raw, response.content_type, headers=dict(response.headers))
            if response.status == 200 and response.content_type.startswith("multipart/"):
                answer.body, answer.files = _read_multipart(response.headers["Content-Type"], raw)
            elif response.content_type == "application/json":
                answer.body = orjson.loads(raw)
        if response.status == 200 and isinstance(answer.body.get("type"), int) and answer.body["type"] >= 4:
            callback = Callback(str(interaction.get("id")), answer.body, {}, files=answer.files)
            if callback.type in (4, 7):
                callback.message = self._answered(interaction, callback)
            answer.callback = callback
        return answer

    async def _followup(self, request: web.Request) -> web.Response:
        body, files = await _read_body(request)
        self.webhooks.append(("followup", request.match_info["token"], body))
        return json_response(self._message(body, files=files))

    async def _edit_original(self, request: web.Request) -> web.Response:
        body, files = await _read_body(request)
        self.webhooks.append(("edit", request.match_info["token"], body))
        return json_response(self._message(body, files=files))

    async def _delete_original(self, request: web.Request) -> web.Response:
        self.webhooks.append(("delete", request.match_info["token"], {}))
        return web.Response(status=204)

    async def webhook_calls(
        self, token: str, count: int, timeout: float = 10
    ) -> list[tuple[str, dict[str, Any]]]:
        """The first ``count`` webhook calls for the interaction with ``token``, once they arrived."""
        deadline = time.perf_counter() + timeout
        while True:
            calls = [(kind, body) for kind, sent_for, body in self.webhooks if sent_for == token]
            if len(calls) >= count or time.perf_counter() > deadline:
                return calls[:count]
            await asyncio.sleep(0.005)

    async def _unknown(self, request: web.Request) -> web.Response:
        self.unknown_routes.append((request.method, request.path))
        return json_response({"message": "404: Not Found", "code": 0}, status=404)

    def _message(
        self,
        data: dict[str, Any],
        interaction: dict[str, Any] | None = None,
        files: dict[str, bytes] | None = None,
    ) -> dict[str, Any]:
        """A message the bot posted, kept in ``messages`` with the interaction that caused it."""
        message: dict[str, Any] = {
            "id": snowflake(),
            "channel_id": self.channel_id,
            "author": self.bot_user,
            "content": data.get("content", ""),
            "timestamp": "2026-12-02T12:00:00+00:00",
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": _attachments(data, files or {}),
            "embeds": data.get("embeds", []),
            "components": data.get("components", []),
            "pinned": False,
            "type": 20,
            "flags": int(data.get("flags", 0)),
            "application_id": self.application_id,
        }
        if interaction:
            author = interaction.get("member", {}).get("user") or interaction.get("user")
            message["interaction_metadata"] = {
                "id": interaction["id"],
                "type": interaction["type"],
                "user": author,
                "authorizing_integration_owners": interaction.get("authorizing_integration_owners", {}),
            }
            message["channel_id"] = interaction.get("channel_id", self.channel_id)
        self.messages[message["id"]] = message
        return message

    # -- gateway ---------------------------------------------------------------------------------

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.append(ws)
        self._transports[ws] = request.transport
        await ws.send_json(
            {"op": OP_HELLO, "d": {"heartbeat_interval": HEARTBEAT_INTERVAL_MS}, "s": None, "t": None}
        )
        try:
            async for message in ws:
                if message.type is not WSMsgType.TEXT:
                    continue
                await self._on_gateway_frame(ws, json.loads(message.data))
        finally:
            with contextlib.suppress(ValueError):
                self._sockets.remove(ws)
            self._transports.pop(ws, None)
            for shard, socket in list(self._shard_sockets.items()):
                if socket is ws:
                    del self._shard_sockets[shard]
        return ws

    async def _on_gateway_frame(self, ws: web.WebSocketResponse, frame: dict[str, Any]) -> None:
        op = frame.get("op")
        if op == OP_HEARTBEAT:
            await ws.send_json({"op": OP_HEARTBEAT_ACK, "d": None, "s": None, "t": None})
        elif op == OP_IDENTIFY:
            identify = frame["d"]
            self.identifies.append(identify)
            if identify.get("token") != self.token or self.reject_identify:
                await ws.close(code=4004, message=b"Authentication failed.")
                return
            self._sequence += 1
            ready = {
                "v": 10,
                "user": self.bot_user,
                "guilds": [{"id": g["id"], "unavailable": True} for g in self.ready_guilds],
                "session_id": f"session-{snowflake()}",
                "resume_gateway_url": self.gateway_url,
                "application": {"id": self.application_id, "flags": 0},
            }
            if "shard" in identify:
                shard, count = identify["shard"]
                ready["shard"] = identify["shard"]
                self._shard_sockets[shard] = ws
                self._shard_counts[shard] = count
            await ws.send_json({"op": OP_DISPATCH, "t": "READY", "s": self._sequence, "d": ready})
            self.sessions += 1
            self._identified.set()
        elif op == OP_RESUME:
            self.resumes.append(frame["d"])
            self._sequence += 1
            await ws.send_json({"op": OP_DISPATCH, "t": "RESUMED", "s": self._sequence, "d": {}})
            self.sessions += 1
            self._identified.set()


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    """JSON with the bare ``application/json`` content type Discord sends (discord.py checks it)."""
    return web.Response(
        body=orjson.dumps(data), status=status, headers=headers, content_type="application/json"
    )


def guild_payload(guild_id: str, channels: int = 5, roles: int = 3) -> dict[str, Any]:
    """A GUILD_CREATE payload for a small server: a few text channels and roles, no members sent."""
    role_ids = [guild_id] + [snowflake() for _ in range(roles - 1)]
    return {
        "id": guild_id,
        "name": f"server {guild_id[-6:]}",
        "icon": None,
        "splash": None,
        "discovery_splash": None,
        "owner_id": snowflake(),
        "afk_channel_id": None,
        "afk_timeout": 300,
        "verification_level": 1,
        "default_message_notifications": 1,
        "explicit_content_filter": 0,
        "roles": [
            {
                "id": role_id,
                "name": "@everyone" if role_id == guild_id else f"role {index}",
                "color": 0,
                "hoist": False,
                "position": index,
                "permissions": "1071698660929",
                "managed": False,
                "mentionable": False,
                "flags": 0,
            }
            for index, role_id in enumerate(role_ids)
        ],
        "emojis": [],
        "stickers": [],
        "features": [],
        "mfa_level": 0,
        "application_id": None,
        "system_channel_id": None,
        "system_channel_flags": 0,
        "rules_channel_id": None,
        "vanity_url_code": None,
        "description": None,
        "banner": None,
        "premium_tier": 0,
        "preferred_locale": "en-US",
        "public_updates_channel_id": None,
        "nsfw_level": 0,
        "premium_progress_bar_enabled": False,
        "joined_at": "2026-01-01T00:00:00+00:00",
        "large": False,
        "unavailable": False,
        "member_count": 50,
        "voice_states": [],
        "members": [],
        "channels": [
            {
                "id": snowflake(),
                "type": 0,
                "guild_id": guild_id,
                "name": f"channel-{index}",
                "position": index,
                "permission_overwrites": [],
                "nsfw": False,
                "parent_id": None,
                "topic": None,
                "last_message_id": None,
                "rate_limit_per_user": 0,
            }
            for index in range(channels)
        ],
        "threads": [],
        "presences": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "soundboard_sounds": [],
    }


def find_component(message: dict[str, Any], custom_id: str) -> dict[str, Any]:
    """The button or select with ``custom_id`` in a message's action rows."""
    for row in message.get("components", []):
        for component in row.get("components", []):
            if component.get("custom_id") == custom_id:
                found: dict[str, Any] = component
                return found
    raise KeyError(custom_id)


def custom_ids(message: dict[str, Any]) -> list[str]:
    return [c["custom_id"] for row in message.get("components", []) for c in row.get("components", [])]


def guess_option_type(value: Any) -> int:
    """Discord's option type for a value: 5 boolean, 4 integer, 10 number, 3 string."""
    if isinstance(value, bool):
        return 5
    if isinstance(value, int):
        return 4
    if isinstance(value, float):
        return 10
    return 3
