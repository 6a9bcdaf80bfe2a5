"""What Discord receives for an answer is the renderer's JSON: its embed, its controls and its chart,
sent through discord.py's public interaction methods (``bot.runtime.send``)."""

from __future__ import annotations

from typing import Any

import discord
import pytest
from discord import app_commands

from bot.estimate.request import EstimateRequest, parse_request
from bot.present.custom_ids import COMPARE, DETAILS, ESTIMATE
from bot.present.i18n import Language
from bot.present.views import render_message
from bot.runtime.controls import send_view
from bot.runtime.errors import answer_error
from bot.runtime.replies import NO_PINGS
from bot.runtime.runner import VramBot
from bot.runtime.send import send_answer
from tests.fake_discord import Callback, FakeDiscord, find_component

REQUESTS: list[dict[str, Any]] = [
    {"params": 7.0},
    {"params": 0.5, "optimizer": "adam8bit", "activations": 20.0, "gpus": 8},
    {"model": "deepseek-v3", "gpus": 64, "checkpointing": True, "flash_attention": False},
]

# What discord.py writes beyond the renderer's JSON: its own defaults, spelled out (an embed's type
# and flags, a control's "not disabled", and a select's "required", which Discord reads in modals only).
WRITTEN_DEFAULTS: dict[str, object] = {"type": "rich", "flags": 0, "disabled": False, "required": True}


def without_written_defaults(sent: Any, rendered: Any) -> Any:
    """``sent`` less the keys that the renderer left out and discord.py wrote as their defaults."""
    if isinstance(sent, dict) and isinstance(rendered, dict):
        return {
            key: without_written_defaults(value, rendered[key]) if key in rendered else value
            for key, value in sent.items()
            if key in rendered or not _is_written_default(key, value)
        }
    if isinstance(sent, list) and isinstance(rendered, list) and len(sent) == len(rendered):
        return [without_written_defaults(s, r) for s, r in zip(sent, rendered, strict=True)]
    return sent


def _is_written_default(key: str, value: object) -> bool:
    default = WRITTEN_DEFAULTS.get(key, ...)
    return type(value) is type(default) and value == default


def test_the_comparison_sees_what_discord_py_changes() -> None:
    """The check below can fail: a dropped, changed or added key shows, a spelled-out default not."""
    button: dict[str, Any] = {"type": 2, "custom_id": "c", "style": 2}
    rendered: dict[str, Any] = {"title": "T", "components": [button]}
    same: dict[str, Any] = {
        "title": "T",
        "type": "rich",
        "flags": 0,
        "components": [button | {"disabled": False}],
    }
    assert without_written_defaults(same, rendered) == rendered
    for changed in ({"title": "t"}, {"title": "T", "components": []}, {"title": "T", "url": "x"}):
        assert without_written_defaults(same | changed, rendered) != rendered
    assert without_written_defaults(same | {"flags": 64}, rendered) != rendered


def assert_received(callback: Callback, request: EstimateRequest, view: str, language: Language) -> None:
    rendered = render_message(request, view, language, shareable=callback.ephemeral)
    data = callback.data
    assert without_written_defaults(callback.embed, rendered.embed) == rendered.embed
    assert without_written_defaults(data["components"], rendered.components) == rendered.components
    assert data["allowed_mentions"] == {"parse": []}
    if rendered.attachment is None:
        assert not callback.files
    else:
        assert list(callback.files) == [rendered.attachment]
        assert callback.files[rendered.attachment].startswith(b"\x89PNG\r\n\x1a\n")
        assert [a["filename"] for a in data["attachments"]] == [rendered.attachment]


@pytest.mark.asyncio(loop_scope="module")
async def test_every_view_reaches_discord_as_the_renderer_wrote_it(fake: FakeDiscord, bot: VramBot) -> None:
    """New messages (public and ephemeral, each view, both languages) and then a click that edits one
    in place: each callback carries the renderer's embed and controls, and Compare's chart."""
    case: dict[str, Any] = {}

    @app_commands.command(name="send_probe", description="send_view with the test's request")
    async def probe(interaction: discord.Interaction) -> None:
        await send_view(interaction, case["request"], case["view"], ephemeral=case["ephemeral"], edit=False)

    bot.tree.add_command(probe)
    try:
        for index, options in enumerate(REQUESTS):
            request = parse_request(**options)
            for language, locale in ((Language.EN, "en-US"), (Language.DE, "de")):
                for view in (ESTIMATE, COMPARE, DETAILS):
                    case.update(request=request, view=view, ephemeral=index == 1)
                    callback = await fake.send_interaction(
                        fake.slash_interaction("send_probe", [], locale=locale)
                    )
                    assert callback.type == 4
                    assert callback.ephemeral is case["ephemeral"]
                    assert_received(callback, request, view, language)
    finally:
        bot.tree.remove_command("send_probe")

    # The asker's click on Compare edits the answer in place: the edit carries the same JSON.
    answer = await fake.invoke("vram", params=7, activations=20)
    compare = next(c for c in _custom_ids(answer.message) if c.startswith("vram:cmp:"))
    click = await fake.send_interaction(fake.component_interaction(answer.message, compare))
    assert click.type == 7  # UPDATE_MESSAGE
    assert_received(click, parse_request(params=7, activations=20), COMPARE, Language.EN)
    # Stopped before it is sent, no view is kept per message: the clicks reach the dynamic items.
    assert not bot.persistent_views


def _custom_ids(message: dict[str, Any]) -> list[str]:
    ids = [c["custom_id"] for row in message["components"] for c in row["components"]]
    assert all(find_component(message, i) for i in ids)
    return ids


@pytest.mark.asyncio(loop_scope="module")
async def test_after_an_answer_an_error_is_answered_by_a_follow_up(fake: FakeDiscord, bot: VramBot) -> None:
    """``send_answer`` leaves the interaction answered: the error handler's apology then goes out as
    a follow-up, not as a second (refused) interaction answer."""
    seen: dict[str, object] = {}

    @app_commands.command(name="answer_probe", description="answer, then fail")
    async def probe(interaction: discord.Interaction) -> None:
        await send_answer(interaction, {"title": "answer"}, [], edit=False, allowed_mentions=NO_PINGS)
        seen["done"], seen["type"] = interaction.response.is_done(), interaction.response.type
        raise RuntimeError("after the answer")

    # A command of the host's own with the error handler /vram uses (the tree's default is silent).
    probe.error(answer_error)
    bot.tree.add_command(probe)
    try:
        callback = await fake.invoke("answer_probe")
        token = str(fake.tokens[callback.interaction_id])
        calls = await fake.webhook_calls(token, 1)
    finally:
        bot.tree.remove_command("answer_probe")
    assert callback.embed["title"] == "answer"
    assert seen == {"done": True, "type": discord.InteractionResponseType.channel_message}
    assert [kind for kind, _ in calls] == ["followup"]
    assert calls[0][1]["flags"] == 64  # the apology is ephemeral
