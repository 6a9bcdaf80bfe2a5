"""The prebuilt send path puts the same bytes on the wire as discord.py's own Embed / View path."""

from __future__ import annotations

import itertools
from typing import Any

import discord
import pytest
from discord import app_commands
from discord.http import Route
from discord.webhook.async_ import interaction_message_response_params

from bot.estimate.core import estimate
from bot.estimate.request import parse_request
from bot.present.controls import render_controls
from bot.present.i18n import Language
from bot.present.views import RENDERERS
from bot.runtime.errors import answer_error
from bot.runtime.replies import NO_PINGS
from bot.runtime.runner import VramBot
from bot.runtime.send import (
    CALLBACK_PATH,
    PrebuiltControls,
    PrebuiltEmbed,
    callback_body,
    callback_route,
    respond,
    wire_embed,
)
from tests.fake_discord import FakeDiscord

REQUESTS: list[dict[str, Any]] = [
    {"params": 7.0},
    {"params": 0.5, "optimizer": "adam8bit", "activations": 20.0, "gpus": 8},
    {"model": "llama-3.1-8b", "batch_size": 4, "seq_len": 4096, "gpu": "h100"},
    {"params": 99999.999, "optimizer": "sgd", "precision": "bf16", "bytes_per_param": 3.5},
    {"model": "deepseek-v3", "gpus": 64, "checkpointing": True, "flash_attention": False},
]


def _payload(embed: discord.Embed, view: discord.ui.View, *, update: bool, ephemeral: bool) -> str:
    """The JSON body discord.py would POST for this answer (what send_message / edit_message build)."""
    flags = discord.MessageFlags(ephemeral=True) if ephemeral else discord.utils.MISSING
    params = interaction_message_response_params(
        type=7 if update else 4,
        embed=embed,
        view=view,
        flags=flags,
        previous_allowed_mentions=NO_PINGS,
        allowed_mentions=NO_PINGS,
    )
    return discord.utils._to_json(params.payload)


@pytest.mark.parametrize("options", REQUESTS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
async def test_the_prebuilt_path_sends_the_same_bytes(options: dict[str, Any]) -> None:
    request = parse_request(**options)
    for language in Language:
        for view_name, render in RENDERERS.items():
            embed = render(estimate(request), language)
            components = render_controls(request, view_name, language)
            for update, ephemeral in ((False, False), (False, True), (True, False)):
                old = _payload(
                    discord.Embed.from_dict(embed),
                    PrebuiltControls(components),
                    update=update,
                    ephemeral=ephemeral,
                )
                new = _payload(
                    PrebuiltEmbed(wire_embed(embed)),
                    PrebuiltControls(components),
                    update=update,
                    ephemeral=ephemeral,
                )
                assert new == old


@pytest.mark.parametrize("options", REQUESTS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_the_callback_body_is_the_one_discord_py_builds(options: dict[str, Any]) -> None:
    """``respond`` posts ``callback_body``: the same JSON discord.py's send_message / edit_message
    would post for the answer, for every view, language, kind of answer and host-bot mentions."""
    request = parse_request(**options)
    hosts = (None, NO_PINGS, discord.AllowedMentions(everyone=False, users=True, roles=False))
    for language in Language:
        for view_name, render in RENDERERS.items():
            embed = render(estimate(request), language)
            components = render_controls(request, view_name, language, shareable=view_name == "det")
            for update, ephemeral, content, previous in itertools.product(
                (False, True), (False, True), (None, "Shared by Alice"), hosts
            ):
                if update and (ephemeral or content is not None):
                    continue  # an update keeps the message's flags and content (send_view sends none)
                params = interaction_message_response_params(
                    type=7 if update else 4,
                    content=discord.utils.MISSING if content is None else content,
                    embed=discord.Embed.from_dict(embed),
                    view=PrebuiltControls(components),
                    attachments=[] if update else discord.utils.MISSING,
                    flags=discord.MessageFlags(ephemeral=True) if ephemeral else discord.utils.MISSING,
                    previous_allowed_mentions=previous,
                    allowed_mentions=NO_PINGS,
                )
                merged = previous.merge(NO_PINGS) if previous is not None else NO_PINGS
                body = callback_body(
                    embed,
                    components,
                    update=update,
                    ephemeral=ephemeral,
                    content=content,
                    allowed_mentions=dict(merged.to_dict()),
                )
                assert body == params.payload
                assert discord.utils._to_json(body) == discord.utils._to_json(params.payload)


def test_wire_embed_follows_discord_py_for_every_kind_of_key() -> None:
    embed = {
        "title": "t",
        "description": "d",
        "url": "https://example.com",
        "color": 0x123456,
        "fields": [{"name": "n", "value": "v", "inline": True}],
        "footer": {"text": "f"},
        "image": {"url": "attachment://chart.png"},
        "thumbnail": {"url": "attachment://t.png"},
        "author": {"name": "a"},
        "timestamp": "2026-12-02T12:00:00+00:00",
    }
    for drop in (None, "timestamp", "color", "title", "fields"):
        case = {k: v for k, v in embed.items() if k != drop} | ({"color": 0} if drop == "color" else {})
        assert list(wire_embed(case).items()) == list(discord.Embed.from_dict(case).to_dict().items())


async def test_the_prebuilt_embed_reads_like_the_answer() -> None:
    wire = wire_embed({"title": "T", "description": "D", "fields": []})
    prebuilt = PrebuiltEmbed(wire)
    assert (prebuilt.title, prebuilt.description, prebuilt.to_dict()) == ("T", "D", wire)
    assert PrebuiltControls([]).is_finished()


@pytest.mark.asyncio(loop_scope="module")
async def test_after_respond_an_error_is_answered_by_a_follow_up(fake: FakeDiscord, bot: VramBot) -> None:
    """``respond`` leaves the interaction answered, as discord.py's send_message does: the error
    handler's apology then goes out as a follow-up, not as a second (refused) interaction answer."""
    seen: dict[str, object] = {}

    @app_commands.command(name="respond_probe", description="respond, then fail")
    async def probe(interaction: discord.Interaction) -> None:
        await respond(interaction, {"title": "answer"}, [], update=False, allowed_mentions=NO_PINGS)
        seen["done"], seen["type"] = interaction.response.is_done(), interaction.response.type
        raise RuntimeError("after the answer")

    # A command of the host's own with the error handler /vram uses (the tree's default is silent).
    probe.error(answer_error)
    bot.tree.add_command(probe)
    try:
        callback = await fake.invoke("respond_probe")
        token = str(fake.tokens[callback.interaction_id])
        calls = await fake.webhook_calls(token, 1)
    finally:
        bot.tree.remove_command("respond_probe")
    assert callback.embed["title"] == "answer"
    assert "with_response" not in callback.query
    assert seen == {"done": True, "type": discord.InteractionResponseType.channel_message}
    assert [kind for kind, _ in calls] == ["followup"]
    assert calls[0][1]["flags"] == 64  # the apology is ephemeral


@pytest.mark.parametrize(
    "token",
    [
        "aW50ZXJhY3Rpb246MTIwMDAwMDAwMDAwMDAwMDAwMDpBQkNkZWYtXzEyMy5-",  # unreserved characters only
        "needs/quoting+here=",  # quoted by discord.py's own Route
        "",
    ],
)
def test_the_callback_route_is_the_one_discord_py_builds(token: str) -> None:
    ours = callback_route(1200000000000000042, token)
    theirs = Route("POST", CALLBACK_PATH, webhook_id=1200000000000000042, webhook_token=token)
    assert type(ours) is Route
    assert vars(ours) == vars(theirs)
    assert ours.key == theirs.key
