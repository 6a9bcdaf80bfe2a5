"""The controls under an answer are stateless: they keep working after the bot restarts."""

from __future__ import annotations

import pytest

from tests.fake_discord import FakeDiscord, custom_ids
from tests.running import start_bot

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_a_button_from_before_a_restart_still_answers(
    fake: FakeDiscord, discord_endpoints: None
) -> None:
    first, task = await start_bot(fake)
    answer = await fake.invoke("vram", model="llama-3.1-8b", optimizer="adam8bit")
    await first.close()
    await task

    second, task = await start_bot(fake)
    try:
        details = next(c for c in custom_ids(answer.message) if c.startswith("vram:det:"))
        callback = await fake.send_interaction(fake.component_interaction(answer.message, details))
        assert callback.type == 7
        assert callback.embed["title"] == "How the estimate is made for fine-tuning Llama 3.1 8B"
        assert any("M = 8.03026 × 12 = **96.4 GB**" in f["value"] for f in callback.embed["fields"])
    finally:
        await second.close()
        await task
