"""The HTTP front end answers as the gateway bot does: the fake Discord signs each interaction with a
key made here and POSTs it over loopback; the same interaction sent to the gateway bot (the real
discord.py client on the fake Discord) must get the same bytes. Refused requests get 401/400/413."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import orjson
import pytest
import pytest_asyncio
from aiohttp import ClientSession
from nacl.signing import SigningKey

from bot.estimate.hub import forget_all
from bot.http.answer import Answerer
from bot.http.server import InteractionServer
from bot.http.signature import Verifier
from bot.http.webhook import DiscordWebhook
from bot.hub_settings import HubSettings
from bot.runtime.cog import VramCog
from bot.runtime.hub_client import HubClient
from bot.runtime.runner import VramBot
from tests import test_extension, test_hostile_input
from tests.fake_discord import Callback, FakeDiscord, HttpAnswer, custom_ids
from tests.fake_hub import FakeHub
from tests.hub_configs import CONFIGS

pytestmark = pytest.mark.asyncio(loop_scope="module")

MAX_BODY = 64 * 1024


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return SigningKey.generate()  # the test application's key; Discord holds the real one's


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(fake: FakeDiscord, key: SigningKey) -> AsyncIterator[InteractionServer]:
    server = InteractionServer(
        Answerer(HubClient()),
        Verifier(bytes(key.verify_key), window_s=60),
        DiscordWebhook(fake.api_base),
        max_body_bytes=MAX_BODY,
    )
    await server.start("127.0.0.1", 0)
    yield server
    await server.stop()


def endpoint(server: InteractionServer) -> str:
    return f"http://127.0.0.1:{server.port}/interactions"


async def both(
    fake: FakeDiscord, server: InteractionServer, key: SigningKey, interaction: dict[str, Any]
) -> tuple[Callback, HttpAnswer]:
    """The gateway bot's callback and the HTTP front end's answer to the same interaction."""
    gateway = await fake.send_interaction(interaction, timeout=5)
    over_http = await fake.post_interaction(endpoint(server), interaction, key)
    assert over_http.status == 200, over_http.raw
    return gateway, over_http


def assert_same_bytes(gateway: Callback, over_http: HttpAnswer) -> None:
    # The gateway's callback as discord.py wrote it (the fake keeps its JSON in order) is the HTTP
    # response's body byte for byte; a chart comes as the same file.
    assert orjson.dumps(gateway.body) == (orjson.dumps(over_http.body) if over_http.files else over_http.raw)
    assert gateway.files == over_http.files


async def test_a_command_a_click_and_an_autocomplete_are_the_gateway_bots_bytes(
    fake: FakeDiscord, bot: VramBot, server: InteractionServer, key: SigningKey
) -> None:
    answer, over_http = await both(
        fake,
        server,
        key,
        fake.slash_interaction(
            "vram",
            [
                {"name": "params", "type": 10, "value": 7},
                {"name": "optimizer", "type": 3, "value": "adam8bit"},
            ],
        ),
    )
    assert_same_bytes(answer, over_http)
    assert over_http.body["data"]["embeds"][0]["title"].startswith("❌ 7B · 8-bit Adam: 84.0 GB")
    private, _ = await both(
        fake,
        server,
        key,
        fake.slash_interaction(
            "vram",
            [{"name": "params", "type": 10, "value": 7}, {"name": "private", "type": 5, "value": True}],
            locale="de",
        ),
    )
    assert_same_bytes(private, _)
    select, *buttons = custom_ids(answer.message)
    for custom_id in buttons:  # Estimate, Compare (with its chart), Details: the user's own, in place
        assert_same_bytes(
            *await both(fake, server, key, fake.component_interaction(answer.message, custom_id))
        )
    # Somebody else's click gets a private copy in their language; a pick in the select; Share.
    clicks = [
        fake.component_interaction(answer.message, buttons[1], user="bob", locale="de"),
        fake.component_interaction(answer.message, select, values=["sgd"]),
        fake.component_interaction(private.message, custom_ids(private.message)[-1]),
    ]
    for click in clicks:
        gateway, over_http = await both(fake, server, key, click)
        assert_same_bytes(gateway, over_http)
    assert over_http.body["data"]["content"] == "Shared by Alice"
    typed = fake.slash_interaction(
        "vram", [{"name": "model", "type": 3, "value": "llama 8", "focused": True}]
    )
    typed["type"] = 4
    gateway, over_http = await both(fake, server, key, typed)
    assert_same_bytes(gateway, over_http)
    assert over_http.body["data"]["choices"][0]["value"] == "llama-3.1-8b"


@pytest.mark.fuzz  # some 60 interactions, each to both front ends: with the fuzzing, off the default suite
async def test_the_gateway_bots_hostile_table_holds_over_http(
    fake: FakeDiscord, bot: VramBot, server: InteractionServer, key: SigningKey
) -> None:
    interactions = [fake.slash_interaction("vram", options) for _, options, _ in test_hostile_input.CASES]
    not_a_list = fake.slash_interaction("vram", [])
    not_a_list["data"]["options"] = "params:7"
    interactions.append(not_a_list)
    for options in [
        *(c[1] for c in test_hostile_input.AUTOCOMPLETE_CASES),
        [test_hostile_input.params("abc"), test_hostile_input.MODEL_TYPED],
        [test_hostile_input.params([7]), test_hostile_input.MODEL_TYPED],
    ]:
        interactions.append(test_hostile_input.autocomplete(fake, options))
    private = await fake.invoke("vram", params=7, private=True)
    share = custom_ids(private.message)[-1]
    for tampered in test_extension.TAMPERED:
        message = test_extension.with_custom_id(private.message, share, tampered)
        interactions.append(fake.component_interaction(message, tampered))
    for interaction in interactions:
        gateway, over_http = await both(fake, server, key, interaction)
        assert over_http.raw == orjson.dumps(gateway.body), interaction["data"]
    after = await fake.post_interaction(
        endpoint(server), fake.slash_interaction("vram", [{"name": "params", "type": 10, "value": 7}]), key
    )
    assert "= **112.0 GB**" in after.body["data"]["embeds"][0]["description"]


async def test_ping_and_requests_that_are_refused(
    fake: FakeDiscord, server: InteractionServer, key: SigningKey
) -> None:
    url = endpoint(server)
    pong = await fake.post_interaction(url, {"type": 1, "id": "1", "application_id": "2"}, key)
    assert (pong.status, pong.body) == (200, {"type": 1})
    vram = fake.slash_interaction("vram", [{"name": "params", "type": 10, "value": 7}])
    stale = str(int(time.time()) - 120)  # signed correctly, but outside the 60 s window: a replay
    refused = {
        "another key": await fake.post_interaction(url, vram, SigningKey.generate()),
        "a replay": await fake.post_interaction(url, vram, key, timestamp=stale),
        "from the future": await fake.post_interaction(url, vram, key, timestamp=str(int(time.time()) + 120)),
        "a changed body": await fake.post_interaction(
            url, vram, key, signature=key.sign(b"0{}").signature.hex()
        ),
        "no signature": await fake.post_interaction(url, vram, key, signature=""),
        "not hex": await fake.post_interaction(url, vram, key, signature="zz" * 64),
        "a timestamp that is no number": await fake.post_interaction(url, vram, key, timestamp="noon"),
    }
    for what, answer in refused.items():
        assert answer.status == 401, what
    assert (await fake.post_interaction(url, vram, key, body=b'{"type": 1,')).status == 400
    assert (await fake.post_interaction(url, vram, key, body=b"[1, 2]")).status == 400
    assert (await fake.post_interaction(url, vram, key, body=b'{"type": 99}')).status == 400
    assert (await fake.post_interaction(url, vram, key, body=b" " * (MAX_BODY + 1))).status == 413
    async with ClientSession() as session:  # a body without Content-Length, chunked, too large

        async def chunks() -> AsyncIterator[bytes]:
            for _ in range(MAX_BODY // 1024 + 2):
                yield b" " * 1024

        async with session.post(url, data=chunks()) as response:
            assert response.status == 413
        async with session.get(f"http://127.0.0.1:{server.port}/healthz") as response:
            assert (response.status, await response.json()) == (200, {"status": "ok"})
    assert (await fake.post_interaction(url, vram, key)).status == 200  # and it serves on


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def hub() -> AsyncIterator[FakeHub]:
    hub = FakeHub()
    await hub.start()
    hub.add("acme/Slow-8B", CONFIGS["llama-3.1-8b"])
    hub.add("acme/Gated-8B", CONFIGS["llama-3.1-8b"], gated=True)
    yield hub
    await hub.stop()


async def test_a_slow_hub_defers_then_edits_the_original_as_the_gateway_bot_does(
    fake: FakeDiscord, bot: VramBot, server: InteractionServer, key: SigningKey, hub: FakeHub, tmp_path: Path
) -> None:
    cog = cast(VramCog, bot.get_cog("VramCog"))
    before = (cog.hub, cog.defer_after_s, server.answerer.hub, server.answerer.defer_after_s)
    for front_end, folder in ((cog, "gateway"), (server.answerer, "http")):
        front_end.hub = HubClient(
            HubSettings(endpoint=hub.url, cache_dir=tmp_path / folder, offline=False, timeout_s=10)
        )
    cog.defer_after_s = server.answerer.defer_after_s = 0.02
    hub.delay_s = 0.015  # a few requests: past defer_after_s, well within the timeout
    forget_all()
    calls: dict[str, list[Any]] = {}
    try:
        for repo, expected in (("acme/Slow-8B", 1), ("acme/Gated-8B", 2)):
            options = [
                {"name": "model", "type": 3, "value": repo},
                {"name": "private", "type": 5, "value": True},
            ]
            gateway = await fake.send_interaction(fake.slash_interaction("vram", options))
            gateway_calls = await fake.webhook_calls(fake.tokens[gateway.interaction_id], expected)
            forget_all()
            interaction = fake.slash_interaction("vram", options)
            over_http = await fake.post_interaction(endpoint(server), interaction, key)
            calls[repo] = await fake.webhook_calls(interaction["token"], expected)
            assert (
                over_http.raw == orjson.dumps(gateway.body) == b'{"type":5,"data":{"flags":64}}'
            )  # "thinking"
            # The answer (or the problem) through the webhook, as discord.py writes it, in its order.
            assert orjson.dumps(calls[repo]) == orjson.dumps(gateway_calls), repo
    finally:
        hub.delay_s = 0
        cog.hub, cog.defer_after_s, server.answerer.hub, server.answerer.defer_after_s = before
        forget_all()
    assert [kind for kind, _ in calls["acme/Slow-8B"]] == ["edit"], calls["acme/Slow-8B"]
    assert calls["acme/Slow-8B"][0][1]["embeds"][0]["title"].startswith("❌ acme/Slow-8B · Adam: 128.5 GB")
    # A problem after "thinking" replaces it ephemerally: the public reply goes, the problem follows.
    assert [kind for kind, _ in calls["acme/Gated-8B"]] == ["delete", "followup"]


async def test_sync_registers_the_command_json_the_gateway_bot_syncs(
    fake: FakeDiscord, bot: VramBot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from bot.cli import main

    at_start = [body for scope, body in fake.sync_bodies if scope == "global"]
    assert at_start  # the gateway bot synced when it started
    monkeypatch.setenv("DISCORD_TOKEN", fake.token)
    monkeypatch.setenv("VRAM_BOT_API_BASE_URL", fake.api_base)
    monkeypatch.setenv("VRAM_BOT_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("", encoding="utf-8")
    synced = len(fake.sync_bodies)
    # `vram-bot sync` runs its own event loop: in a thread, while this loop serves the fake.
    assert await asyncio.to_thread(main, ["sync"]) == 0
    assert fake.sync_bodies[synced:] == [("global", at_start[0])]  # the same bytes
    monkeypatch.setenv("DISCORD_TOKEN", "not-the-token")
    assert await asyncio.to_thread(main, ["sync"]) == 2  # a rejected token: the operator's to fix


async def test_a_stop_answers_the_interactions_in_flight_first(
    fake: FakeDiscord, key: SigningKey, hub: FakeHub, tmp_path: Path
) -> None:
    settings = HubSettings(endpoint=hub.url, cache_dir=tmp_path, offline=False, timeout_s=10)
    answerer = Answerer(HubClient(settings))
    answerer.defer_after_s = 0.02
    server = InteractionServer(
        answerer, Verifier(bytes(key.verify_key), 60), DiscordWebhook(fake.api_base), max_body_bytes=MAX_BODY
    )
    await server.start("127.0.0.1", 0)
    forget_all()
    hub.delay_s = 0.02
    try:
        interaction = fake.slash_interaction("vram", [{"name": "model", "type": 3, "value": "acme/Slow-8B"}])
        thinking = await fake.post_interaction(endpoint(server), interaction, key)
        assert thinking.body == {"type": 5}
        assert server.in_flight == 1  # the Hub is still being read
        await server.stop()  # waits for it
    finally:
        hub.delay_s = 0
        forget_all()
    calls = [(kind, body) for kind, token, body in fake.webhooks if token == interaction["token"]]
    assert [kind for kind, _ in calls] == ["edit"], calls
    assert calls[0][1]["embeds"][0]["title"].startswith("❌ acme/Slow-8B · Adam: 128.5 GB")
    assert server.in_flight == 0


async def test_without_a_public_key_http_stops_with_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.cli import main

    (tmp_path / "config.toml").write_text('public_key = "not a key"\n', encoding="utf-8")
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    monkeypatch.delenv("DISCORD_PUBLIC_KEY", raising=False)
    assert main(["--config", str(tmp_path / "empty.toml"), "http"]) == 2
    assert main(["--config", str(tmp_path / "config.toml"), "http"]) == 2
    monkeypatch.setenv("DISCORD_PUBLIC_KEY", "ab" * 31)
    assert main(["--config", str(tmp_path / "empty.toml"), "http"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("vram-bot: no public key: set DISCORD_PUBLIC_KEY")
    assert "public_key = … is not valid: use the 64 hex digits" in lines[1]  # the value is not shown
    assert (
        lines[2]
        == "vram-bot: DISCORD_PUBLIC_KEY is not valid: use the 64 hex digits of the application's public key"
    )
