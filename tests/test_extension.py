"""The cog stands alone: loaded into a plain ``commands.Bot`` with discord.py's DEFAULT command tree
(as the README says), it answers every error of ``/vram``, its autocomplete and its controls itself,
and leaves the host's own commands and their error handler alone."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import discord
import pytest
import pytest_asyncio
from discord import app_commands
from discord.ext import commands

import bot.runtime.cog
import cogs.vram
from bot.runtime.controls import DYNAMIC_ITEMS
from bot.runtime.runner import point_at_discord
from bot.runtime.settings import Settings
from tests.fake_discord import Callback, FakeDiscord

pytestmark = pytest.mark.asyncio(loop_scope="module")

NUMBER, INTEGER, STRING, BOOLEAN = 10, 4, 3, 5
AUTOCOMPLETE, AUTOCOMPLETE_RESULT = 4, 8


class HostBot(commands.Bot):
    """Somebody else's bot: its own command, its own tree error handler, and our extension."""

    def __init__(self) -> None:
        super().__init__(command_prefix="!", intents=discord.Intents.none())
        self.host_errors: list[app_commands.AppCommandError] = []

        @self.tree.command(name="ping", description="The host's own command, which fails")
        async def ping(interaction: discord.Interaction) -> None:
            raise RuntimeError("the host's bug")

        @self.tree.error
        async def on_host_error(
            interaction: discord.Interaction, error: app_commands.AppCommandError
        ) -> None:
            # discord.py calls the tree's handler after /vram's own too: a host answers its own commands.
            self.host_errors.append(error)
            if interaction.command is ping:
                await interaction.response.send_message("the host's answer", ephemeral=True)

    async def setup_hook(self) -> None:
        await self.load_extension("cogs.vram")
        await self.tree.sync()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def host(fake: FakeDiscord, discord_endpoints: None) -> AsyncIterator[HostBot]:
    point_at_discord(Settings(api_base_url=fake.api_base, gateway_url=fake.gateway_url))
    host = HostBot()
    assert type(host.tree) is app_commands.CommandTree  # discord.py's default tree
    sessions = fake.sessions
    task = asyncio.create_task(host.start(fake.token))
    await fake.wait_identified(after=sessions)
    yield host
    await host.close()
    await task


def option(name: str, value: Any, kind: int, **extra: Any) -> dict[str, Any]:
    return {"name": name, "type": kind, "value": value, **extra}


async def test_answers_in_a_plain_bot_and_both_extension_names_are_one(
    fake: FakeDiscord, host: HostBot
) -> None:
    assert sorted(c["name"] for c in fake.registered["global"]) == ["ping", "vram"]
    callback = await fake.invoke("vram", params=7, optimizer="sgd")
    assert not callback.ephemeral
    assert callback.embed["title"] == "✅ 7B · SGD: 56.0 GB fits one H100 80 GB"
    # A host whose own top-level ``cogs`` package hides ours loads bot.runtime.cog: the same extension.
    assert (cogs.vram.setup, cogs.vram.teardown) == (bot.runtime.cog.setup, bot.runtime.cog.teardown)


# (what is sent, as Discord's JSON options, and what the ephemeral answer must say)
HOSTILE_OPTIONS: list[tuple[str, list[dict[str, Any]], str]] = [
    ("params:0", [option("params", 0, NUMBER)], "`params` = 0 is not allowed"),
    ("params:-3", [option("params", -3, NUMBER)], "`params` = -3 is not allowed"),
    ("an unknown model", [option("model", "no-such-model", STRING)], "give one of the presets"),
    ("@everyone as the model", [option("model", "@everyone", STRING)], "`model` = `@everyone`"),
    ("a mention as the model", [option("model", "<@123>", STRING)], "`model` = `<@123>`"),
    # Wrong JSON types, which Discord's own client never sends: some pass discord.py's Namespace
    # (a string for a number, a fraction for a whole number), others break it ([7], no type at all).
    ("a string for a number", [option("params", "7", NUMBER)], "`params` has a value of the wrong type"),
    ("a list for a number", [option("params", [7], NUMBER)], "`params` has a value of the wrong type"),
    ("an option with no type", [{"name": "params", "value": 7}], "`params` has a value of the wrong type"),
    (
        "a fraction for a whole number",
        [option("params", 7, NUMBER), option("gpus", 2.5, INTEGER)],
        "`gpus` has a value of the wrong type",
    ),
    (
        "a string for a boolean",
        [option("private", "yes", BOOLEAN)],
        "`private` has a value of the wrong type",
    ),
    ("a crafted sub-command", [{"name": "evil", "type": 1, "options": []}], "`evil`"),
]


@pytest.mark.parametrize(
    ("options", "expected"), [c[1:] for c in HOSTILE_OPTIONS], ids=[c[0] for c in HOSTILE_OPTIONS]
)
async def test_bad_input_gets_an_ephemeral_answer_from_the_cog(
    fake: FakeDiscord, host: HostBot, options: list[dict[str, Any]], expected: str
) -> None:
    callback = await fake.send_interaction(fake.slash_interaction("vram", options), timeout=5)
    assert callback.ephemeral
    assert callback.data["allowed_mentions"] == {"parse": []}
    assert callback.data["content"].startswith("That input doesn't work:\n• ")
    assert expected in callback.data["content"]


async def test_options_that_are_not_a_list_get_an_answer(fake: FakeDiscord, host: HostBot) -> None:
    interaction = fake.slash_interaction("vram", [])
    interaction["data"]["options"] = "params:7"
    callback = await fake.send_interaction(interaction, timeout=5)
    assert callback.ephemeral
    assert "`options` has a value of the wrong type" in callback.data["content"]


def with_custom_id(message: dict[str, Any], good: str, bad: str) -> dict[str, Any]:
    """The message with one control's custom_id replaced, as a tampering client would send it."""
    rows = [
        {
            **row,
            "components": [
                {**c, "custom_id": bad} if c["custom_id"] == good else c for c in row["components"]
            ],
        }
        for row in message["components"]
    ]
    return {**message, "components": rows}


TAMPERED = [
    "vram:shr:p=7",  # Share without a view
    "vram:shr:cmp",  # Share without a state
    "vram:shr:cmp:" + "p=7;" * 22,  # 100 characters, too long for a state after Share's view
    "vram:shr:" + "x" * 91,  # 100 characters, no view
    "vram:xyz:p=7",  # a view we do not have
    "vram:cmp:p=-3",  # out of range
    "vram:est",  # no state
    "vram",
]


@pytest.mark.parametrize("custom_id", TAMPERED)
async def test_a_control_it_cannot_read_gets_an_ephemeral_answer(
    fake: FakeDiscord, host: HostBot, custom_id: str
) -> None:
    private = await fake.invoke("vram", params=7, private=True)  # its last control is Share
    good = private.message["components"][-1]["components"][-1]["custom_id"]
    message = with_custom_id(private.message, good, custom_id)
    callback = await fake.send_interaction(fake.component_interaction(message, custom_id), timeout=5)
    assert callback.type == 4
    assert callback.ephemeral
    assert "nothing changed" in callback.data["content"]


def autocomplete(fake: FakeDiscord, options: list[dict[str, Any]]) -> dict[str, Any]:
    interaction = fake.slash_interaction("vram", options)
    interaction["type"] = AUTOCOMPLETE
    return interaction


@pytest.mark.parametrize(
    "sibling",
    [
        option("params", "", NUMBER),  # a number being typed: Discord sends it as a string
        option("gpus", 2.5, INTEGER),  # mistyped
        option("params", [7], NUMBER),  # of a type discord.py's Namespace cannot read
    ],
    ids=["params being typed", "gpus:2.5", "params as a list"],
)
async def test_model_suggestions_do_not_depend_on_the_other_options(
    fake: FakeDiscord, host: HostBot, sibling: dict[str, Any]
) -> None:
    focused = option("model", "llama", STRING, focused=True)
    callback = await fake.send_interaction(autocomplete(fake, [sibling, focused]), timeout=5)
    assert callback.type == AUTOCOMPLETE_RESULT
    alone = await fake.send_interaction(autocomplete(fake, [focused]), timeout=5)
    assert alone.data["choices"]  # there are suggestions for "llama"...
    assert callback.data["choices"] == alone.data["choices"]  # ...and the same with the sibling


async def test_an_autocomplete_without_suggestions_gets_an_empty_answer(
    fake: FakeDiscord, host: HostBot
) -> None:
    for options in ([option("params", "7", NUMBER, focused=True)], [option("model", "llama", STRING)]):
        callback = await fake.send_interaction(autocomplete(fake, options), timeout=5)
        assert callback.type == AUTOCOMPLETE_RESULT
        assert callback.data["choices"] == []


async def test_the_hosts_command_errors_still_reach_the_hosts_handler(
    fake: FakeDiscord, host: HostBot
) -> None:
    host.host_errors.clear()
    callback: Callback = await fake.send_interaction(fake.slash_interaction("ping", []), timeout=5)
    assert callback.data["content"] == "the host's answer"
    assert len(host.host_errors) == 1
    assert isinstance(host.host_errors[0], app_commands.CommandInvokeError)
    assert str(host.host_errors[0].original) == "the host's bug"


async def test_each_custom_id_of_ours_is_read_by_exactly_one_control() -> None:
    # discord.py runs every dynamic item whose template matches: two would answer one click twice.
    templates = [item.__discord_ui_compiled_template__ for item in DYNAMIC_ITEMS]
    readable = ["vram:est:p=7", "vram:opt:~", "vram:shr:cmp:p=7", "vram::", "vram:shr:est:a\nb", "vram:x:y:z"]
    for custom_id in TAMPERED + readable + ["vram:shr", "vram:opt", "vram:shr:"]:
        assert sum(t.fullmatch(custom_id) is not None for t in templates) == 1, custom_id
    assert not any(t.fullmatch("vramx:est:p=7") for t in templates)  # not ours


async def test_a_guilds_copy_of_vram_is_answered_too(fake: FakeDiscord, host: HostBot) -> None:
    guild = discord.Object(int(fake.guild_id))
    host.tree.copy_global_to(guild=guild)  # as a bot does to sync to a test server at once
    try:
        interaction = fake.slash_interaction("vram", [option("params", [7], NUMBER)])
        interaction["data"]["guild_id"] = fake.guild_id
        callback = await fake.send_interaction(interaction, timeout=5)
    finally:
        host.tree.clear_commands(guild=guild)
    assert callback.ephemeral
    assert "`params` has a value of the wrong type" in callback.data["content"]
