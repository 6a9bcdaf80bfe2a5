"""Gateway events discord.py cannot read: each is logged once and dropped, and the bot serves the next.

The payloads come over the fake Discord's real gateway connection to the real bot; the fuzzing of
every field is in ``test_fuzz_gateway.py`` (``pytest -m fuzz``).
"""

from __future__ import annotations

import copy
import gc
import logging
from typing import Any

import pytest

from bot.runtime.runner import VramBot
from tests.fake_discord import FakeDiscord

pytestmark = pytest.mark.asyncio(loop_scope="module")


def slash_command(fake: FakeDiscord) -> dict[str, Any]:
    # A copy: the fake shares its user objects between the interactions it makes.
    return copy.deepcopy(fake.slash_interaction("vram", fake.command_options("vram", params=7)))


@pytest.mark.parametrize(
    ("change", "logged"),
    [
        # discord.py's parser raised KeyError: 'token', which ended the connect loop and the bot.
        (lambda i: i.pop("token"), "(no token)"),
        # The command tree's task failed later: five ERROR lines of "Task exception was never retrieved".
        (lambda i: i.pop("data"), "(no data)"),
        (lambda i: i.update(id="not a snowflake"), "(id is a string, not an ID)"),
    ],
    ids=["missing token", "missing data", "mistyped id"],
)
async def test_an_unreadable_interaction_is_logged_once_and_the_next_is_answered(
    bot: VramBot, fake: FakeDiscord, caplog: pytest.LogCaptureFixture, change: Any, logged: str
) -> None:
    broken = slash_command(fake)
    token = broken["token"]
    change(broken)
    caplog.set_level(logging.DEBUG, logger="bot")
    await fake.dispatch("INTERACTION_CREATE", broken)
    answer = await fake.invoke("vram", params=7, timeout=3)  # the same connection, so after it
    gc.collect()  # an unretrieved task exception is logged when the task is collected
    assert answer.embed["title"].startswith("❌ 7B · Adam")
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [f"Dropped a gateway event discord.py cannot read: INTERACTION_CREATE {logged}"]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert token not in caplog.text


async def test_a_parser_failure_names_the_exception_without_the_token(
    bot: VramBot, fake: FakeDiscord, caplog: pytest.LogCaptureFixture
) -> None:
    # A member whose user lacks its username passes the shape check; discord.py's parser raises.
    broken = slash_command(fake)
    del broken["member"]["user"]["username"]
    await fake.dispatch("INTERACTION_CREATE", broken)
    await fake.invoke("vram", params=7, timeout=3)
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warning.startswith("Dropped a gateway event discord.py cannot read: INTERACTION_CREATE (KeyError")
    assert "user.py:" in warning  # where in discord.py it failed
    assert broken["token"] not in caplog.text


async def test_an_option_without_a_type_is_answered_and_discord_py_s_failure_is_one_warning(
    bot: VramBot, fake: FakeDiscord, caplog: pytest.LogCaptureFixture
) -> None:
    # The cog answers it (bot.runtime.cog); discord.py's own command task then fails on the option,
    # which asyncio logged as an ERROR ("Task exception was never retrieved") with a traceback.
    broken = slash_command(fake)
    del broken["data"]["options"][0]["type"]
    caplog.set_level(logging.INFO)
    answered = await fake.send_interaction(broken)
    await fake.invoke("vram", params=7, timeout=3)
    gc.collect()  # an unretrieved task exception is logged when the task is collected
    assert answered.data["flags"] & 64  # ephemeral: what was wrong, to the asker only
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    (warning,) = [r.getMessage() for r in caplog.records if r.name == "bot.runtime.gateway"]
    assert warning.startswith("discord.py could not read an interaction's options: KeyError")
