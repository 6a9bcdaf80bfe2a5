"""Share: an answer only its asker sees, posted to the channel by name, through the loopback fake Discord."""

from __future__ import annotations

from typing import Any

import pytest

from bot.runtime.runner import VramBot
from tests.fake_discord import Callback, FakeDiscord, custom_ids

pytestmark = pytest.mark.asyncio(loop_scope="module")

SEND_MESSAGES = 1 << 11


def share_id(message: dict[str, Any]) -> str:
    return next(c for c in custom_ids(message) if c.startswith("vram:shr:"))


async def click(fake: FakeDiscord, message: dict[str, Any], custom_id: str, **options: Any) -> Callback:
    return await fake.send_interaction(fake.component_interaction(message, custom_id, **options))


async def test_a_private_answer_is_shared_publicly_by_name_with_working_controls(
    fake: FakeDiscord, bot: VramBot
) -> None:
    private = await fake.invoke("vram", params=7, optimizer="adam8bit", private=True)
    assert private.ephemeral
    assert share_id(private.message) == "vram:shr:est:p=7;o=adam8bit"
    shared = await click(fake, private.message, share_id(private.message))
    assert shared.type == 4  # a new message, not an edit of the private one
    assert not shared.ephemeral
    assert shared.data["content"] == "Shared by Alice"  # the name, never a mention
    assert shared.data["allowed_mentions"] == {"parse": []}
    assert shared.embed == private.embed
    # The public message has the controls but no Share of its own, and they answer.
    ids = custom_ids(shared.message)
    assert ids == [
        "vram:opt:p=7;o=adam8bit",
        "vram:est:p=7;o=adam8bit",
        "vram:cmp:p=7;o=adam8bit",
        "vram:det:p=7;o=adam8bit",
    ]
    details = await click(fake, shared.message, ids[3], user="bob")
    assert details.ephemeral  # someone else's click: a copy of their own, which they can share in turn
    assert details.embed["title"] == "How the estimate is made for fine-tuning a 7B model"
    assert share_id(details.message) == "vram:shr:det:p=7;o=adam8bit"
    mine = await click(fake, shared.message, ids[2])
    assert mine.type == 7  # the sharer's own public message changes in place, as an asker's does
    assert "vram:shr:" not in " ".join(custom_ids(mine.message))


async def test_someone_elses_copy_of_compare_is_shared_with_its_chart(
    fake: FakeDiscord, bot: VramBot
) -> None:
    answer = await fake.invoke("vram", params=7, activations=20)
    assert not any(c.startswith("vram:shr:") for c in custom_ids(answer.message))  # public already
    compare = next(c for c in custom_ids(answer.message) if c.startswith("vram:cmp:"))
    copy = await click(fake, answer.message, compare, user="bob", locale="de")
    assert copy.ephemeral
    shared = await click(fake, copy.message, share_id(copy.message), user="bob", locale="de")
    assert not shared.ephemeral
    assert shared.data["content"] == "Geteilt von Bob"
    assert shared.embed["image"]["url"] == "attachment://compare.png"
    assert list(shared.files) == ["compare.png"]


async def test_a_name_is_shown_as_written_and_pings_nobody(fake: FakeDiscord, bot: VramBot) -> None:
    private = await fake.invoke("vram", params=7, private=True)
    interaction = fake.component_interaction(private.message, share_id(private.message), user="mallory")
    # A copy: the fake keeps one user object per name, which other tests share.
    interaction["member"]["user"] = {**interaction["member"]["user"], "global_name": "@everyone **bold**"}
    shared = await fake.send_interaction(interaction)
    assert shared.data["content"] == "Shared by @\u200beveryone \\*\\*bold\\*\\*"
    assert shared.data["allowed_mentions"] == {"parse": []}


@pytest.mark.parametrize("where", ["no permission to post", "a user install in a server without the app"])
async def test_where_discord_allows_no_public_message_share_says_so(
    fake: FakeDiscord, bot: VramBot, where: str
) -> None:
    private = await fake.invoke("vram", params=7, private=True)
    interaction = fake.component_interaction(private.message, share_id(private.message))
    if where == "no permission to post":
        interaction["app_permissions"] = str(int(interaction["app_permissions"]) & ~SEND_MESSAGES)
    else:
        interaction["authorizing_integration_owners"] = {"1": interaction["member"]["user"]["id"]}
    callback = await fake.send_interaction(interaction)
    assert callback.ephemeral
    assert "can't post in this channel" in callback.data["content"]
    assert "embeds" not in callback.data or not callback.data["embeds"]


async def test_a_tampered_share_goes_to_the_one_error_handler(fake: FakeDiscord, bot: VramBot) -> None:
    private = await fake.invoke("vram", params=7, private=True)
    message = dict(private.message)
    button = message["components"][1]["components"][-1]
    message["components"] = [{"type": 1, "components": [{**button, "custom_id": "vram:shr:xyz:p=7"}]}]
    callback = await click(fake, message, "vram:shr:xyz:p=7")
    assert callback.ephemeral
    assert "nothing changed" in callback.data["content"]
