"""Discord's own hiccups: failing callbacks, rate limits, expired interactions and gateway drops."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from bot.runtime.runner import VramBot
from tests.fake_discord import FakeDiscord, Fault

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def assert_still_serving(fake: FakeDiscord) -> None:
    callback = await fake.invoke("vram", params=7)
    assert callback.embed["title"] == "❌ 7B · Adam: 112.0 GB — 2 × H100 80 GB with ZeRO-3"


async def test_a_500_from_the_callback_is_retried_and_the_user_gets_the_embed(
    fake: FakeDiscord, bot: VramBot
) -> None:
    fake.callback_faults.append(Fault(500, {"message": "500: Internal Server Error", "code": 0}))
    callback = await fake.invoke("vram", params=7, optimizer="sgd")
    assert fake.faulted[-1] == (callback.interaction_id, 500)  # the first try failed ...
    assert (
        "M = N × B = 7 × 8 = 56.0 GB" in callback.embed["description"]
    )  # ... and the retry carried the answer


async def test_a_429_is_waited_out_and_then_answered(fake: FakeDiscord, bot: VramBot) -> None:
    retry_after = 0.2  # long enough to tell a wait from none, even on a loaded machine
    fake.callback_faults.append(
        Fault(
            429,
            {"message": "You are being rate limited.", "retry_after": retry_after, "global": False},
            headers={
                "Retry-After": "1",
                "X-RateLimit-Limit": "1",
                "X-RateLimit-Remaining": "0",
                "X-RateLimit-Reset": f"{time.time() + retry_after:.3f}",
                "X-RateLimit-Reset-After": str(retry_after),
                "X-RateLimit-Bucket": "fake-interaction-bucket",
                "X-RateLimit-Scope": "shared",
                "Via": "1.1 google",  # Discord's own 429s carry it; Cloudflare bans do not
            },
        )
    )
    started = time.monotonic()
    callback = await fake.invoke("vram", params=7)
    assert time.monotonic() - started >= retry_after
    assert fake.faulted[-1] == (callback.interaction_id, 429)
    assert "M = N × B = 7 × 16 = 112.0 GB" in callback.embed["description"]


async def test_an_expired_interaction_is_one_warning_and_the_next_command_is_served(
    fake: FakeDiscord, bot: VramBot, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    fake.callback_faults.append(Fault(404, {"message": "Unknown interaction", "code": 10062}))
    interaction = fake.slash_interaction("vram", fake.command_options("vram", params=7))
    await fake.dispatch("INTERACTION_CREATE", interaction)
    for _ in range(100):
        if fake.faulted and fake.faulted[-1][0] == interaction["id"]:
            break
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.2)  # let the bot finish handling (and logging) it
    await assert_still_serving(fake)
    mine = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(mine) == 1, [r.getMessage() for r in mine]
    assert "10062" in mine[0].getMessage()
    assert mine[0].exc_info is None  # no traceback


@pytest.mark.parametrize("how", ["close 4000", "tcp drop"])
async def test_after_a_gateway_drop_the_bot_reconnects_and_serves(
    fake: FakeDiscord, bot: VramBot, how: str
) -> None:
    sessions, resumes = fake.sessions, len(fake.resumes)
    if how == "close 4000":
        await fake.close_gateway(4000)  # "unknown error": Discord says reconnect and resume
    else:
        fake.drop_gateway()
    await fake.wait_identified(timeout=30, after=sessions)
    assert len(fake.resumes) == resumes + 1  # it resumed its session rather than starting over
    await assert_still_serving(fake)
