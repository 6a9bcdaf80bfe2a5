"""``/vram model:owner/name`` end to end: the real bot on the fake Discord, reading the fake Hub."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
import pytest_asyncio

from bot.estimate.hub import forget_all
from bot.hub_settings import HubSettings
from bot.runtime.cog import VramCog
from bot.runtime.hub_client import HubClient
from bot.runtime.runner import VramBot
from tests.fake_discord import FakeDiscord, custom_ids
from tests.fake_hub import FakeHub
from tests.hub_configs import CONFIGS
from tests.hub_tensors import UNDECLARED_CONFIG, mamba2_shards

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def hub() -> AsyncIterator[FakeHub]:
    hub = FakeHub()
    await hub.start()
    hub.add("acme/Qwen3-32B-FP8", CONFIGS["qwen3-32b"], stored_params=17_000_000_000, downloads=10)
    hub.add("acme/Slow-8B", CONFIGS["llama-3.1-8b"])
    hub.add("acme/Gated-8B", CONFIGS["llama-3.1-8b"], gated=True)
    hub.add("acme/Llama-Tuned-8B", CONFIGS["llama-3.1-8b"], downloads=99)
    hub.add("acme/Mamba2-130m", UNDECLARED_CONFIG)  # a family no declaration knows, in three shards
    hub.add_safetensors("acme/Mamba2-130m", mamba2_shards())
    yield hub
    await hub.stop()


@pytest.fixture
def cog(bot: VramBot, hub: FakeHub, tmp_path: Path) -> Iterator[VramCog]:
    """The bot's cog reading the fake Hub with a cache of its own, deferring quickly for the test."""
    # By name, not isinstance: another module's test may have reloaded the extension's module.
    found = cast(VramCog, bot.get_cog("VramCog"))
    assert type(found).__name__ == "VramCog"
    before = (found.hub, found.defer_after_s)
    # A deadline a loaded machine keeps to: the tests of a Hub that fails give theirs, or the fake fails.
    found.hub = HubClient(HubSettings(endpoint=hub.url, cache_dir=tmp_path, offline=False, timeout_s=10))
    found.defer_after_s = 0.05
    forget_all()
    yield found
    found.hub, found.defer_after_s = before
    forget_all()


async def test_a_repo_id_answers_with_its_architecture_then_from_the_cache(
    fake: FakeDiscord, hub: FakeHub, cog: VramCog
) -> None:
    cog.defer_after_s = 5
    callback = await fake.invoke("vram", model="acme/Qwen3-32B-FP8")
    assert callback.type == 4  # answered at once, the Hub being quick
    description = callback.embed["description"]
    # The note on the count took six phone rows: it says what N holds in a few words (Details has the
    # sentence), and the command line stays; the title names the repo, the controls carry its ID.
    assert callback.embed["title"].startswith("❌ acme/Qwen3-32B-FP8")
    assert description.startswith(
        "`/vram model:acme/Qwen3-32B-FP8 optimizer:adam`\nN = 32.8B unpacked (Hub: 17B)."
    )
    assert "m=acme/Qwen3-32B-FP8" in json.dumps(callback.data["components"])
    hub.requests.clear()
    again = await fake.invoke("vram", model="acme/Qwen3-32B-FP8", optimizer="sgd")
    assert again.type == 4
    assert hub.requests == []  # from memory


async def test_a_slow_hub_defers_and_edits_the_answer_in(
    fake: FakeDiscord, hub: FakeHub, cog: VramCog
) -> None:
    hub.delay_s = 0.015  # four to six requests: past defer_after_s, well within the timeout
    cog.defer_after_s = 0.02
    try:
        callback = await fake.invoke("vram", model="acme/Slow-8B", private=True)
        assert callback.type == 5  # DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE: "thinking"
        assert callback.ephemeral
        calls = await fake.webhook_calls(_token_of(fake, callback), 1)
    finally:
        hub.delay_s = 0
    assert [kind for kind, _ in calls] == ["edit"]
    embed = calls[0][1]["embeds"][0]
    assert "Architecture read from the repo's `config.json`" in embed["description"]
    assert embed["title"].startswith("❌ acme/Slow-8B · Adam: 128.5 GB")


async def test_fifty_asks_at_once_make_one_hub_lookup(fake: FakeDiscord, hub: FakeHub, cog: VramCog) -> None:
    hub.requests.clear()
    cog.defer_after_s = 5  # each callback is the answer itself, so the lookup is over when they are in
    callbacks = await asyncio.gather(*(fake.invoke("vram", model="acme/Llama-Tuned-8B") for _ in range(50)))
    assert all(c.type == 4 for c in callbacks)
    assert hub.count("/api/models/") == 1
    assert cog.hub.lookups == 1


async def test_a_gated_repo_says_how_to_get_access_and_the_bot_goes_on(
    fake: FakeDiscord, hub: FakeHub, cog: VramCog
) -> None:
    cog.defer_after_s = 5
    callback = await fake.invoke("vram", model="acme/Gated-8B")
    assert callback.ephemeral
    assert "HF_TOKEN" in callback.data["content"]
    after = await fake.invoke("vram", params=7)
    assert after.embed["title"].startswith("❌ 7B · Adam: 112.0 GB")


async def test_an_error_after_deferring_replaces_the_thinking_reply_ephemerally(
    fake: FakeDiscord, hub: FakeHub, cog: VramCog
) -> None:
    hub.delay_s = 0.1
    cog.hub = HubClient(HubSettings(endpoint=hub.url, cache_dir=cog.hub.settings.cache_dir, timeout_s=0.05))
    try:
        callback = await fake.invoke("vram", model="acme/Missing-Slowly")
        assert callback.type == 5
        assert not callback.ephemeral  # the answer would have been public
        calls = await fake.webhook_calls(_token_of(fake, callback), 2)
    finally:
        hub.delay_s = 0
    assert [kind for kind, _ in calls] == ["delete", "followup"]
    assert calls[1][1]["flags"] & 64  # ephemeral
    assert "did not answer" in calls[1][1]["content"]


@pytest.mark.parametrize(
    ("model", "words"),
    [
        ("../../etc/passwd", "nor a Hugging Face repo ID"),
        ("https://huggingface.co/Qwen/Qwen3-32B", "nor a Hugging Face repo ID"),
        ("acme/has space", "nor a Hugging Face repo ID"),
        ("Qwen/a--b", "nor a Hugging Face repo ID"),  # the Hub forbids "--"
        ("acme/Nothing-Here", "There is no Hugging Face repo"),
    ],
)
async def test_bad_repo_ids_get_a_clear_ephemeral_answer(
    fake: FakeDiscord, hub: FakeHub, cog: VramCog, model: str, words: str
) -> None:
    hub.requests.clear()
    cog.defer_after_s = 5  # the answer at once, however slow the machine is
    callback = await fake.invoke("vram", model=model)
    assert callback.ephemeral
    assert words in callback.data["content"]
    if "nor a" in words:
        assert hub.requests == []  # never sent to the Hub


async def test_autocomplete_offers_presets_then_the_hubs_repos(fake: FakeDiscord, cog: VramCog) -> None:
    options = fake.command_options("vram", model="acme/")
    for option in options:
        option["focused"] = True
    interaction = fake.slash_interaction("vram", options)
    interaction["type"] = 4  # APPLICATION_COMMAND_AUTOCOMPLETE
    callback = await fake.send_interaction(interaction)
    values = [choice["value"] for choice in callback.data["choices"]]
    assert values[:3] == ["acme/Llama-Tuned-8B", "acme/Qwen3-32B-FP8", "acme/Slow-8B"]
    options = fake.command_options("vram", model="Qwen/")
    options[0]["focused"] = True
    interaction = fake.slash_interaction("vram", options)
    interaction["type"] = 4
    values = [c["value"] for c in (await fake.send_interaction(interaction)).data["choices"]]
    assert values[0].startswith("qwen")  # presets first


async def _suggested(fake: FakeDiscord, typed: str) -> list[str]:
    options = fake.command_options("vram", model=typed)
    options[0]["focused"] = True
    interaction = fake.slash_interaction("vram", options)
    interaction["type"] = 4  # APPLICATION_COMMAND_AUTOCOMPLETE
    return [choice["value"] for choice in (await fake.send_interaction(interaction)).data["choices"]]


async def test_a_presets_variant_answers_offline_and_autocomplete_offers_it_once(
    fake: FakeDiscord, hub: FakeHub, cog: VramCog
) -> None:
    hub.add("Qwen/Qwen2.5-7B", CONFIGS["qwen2.5-7b"], downloads=5)
    hub.add("Qwen/Qwen2.5-7B-Instruct", CONFIGS["qwen2.5-7b"], downloads=6)
    hub.requests.clear()
    answer = await fake.invoke("vram", model="Qwen/Qwen2.5-7B-Instruct")
    assert hub.requests == []  # the preset's architecture, offline
    assert "\nCounted as the preset Qwen2.5 7B: same architecture.\n" in answer.embed["description"]
    # The preset's own repo is the preset's choice; its variant is offered (once) as itself.
    values = await _suggested(fake, "Qwen/Qwen2.5-7B")
    assert values[0] == "qwen2.5-7b"
    assert "Qwen/Qwen2.5-7B" not in values
    assert "Qwen/Qwen2.5-7B-Instruct" in values
    values = await _suggested(fake, "Qwen/Qwen2.5-7B-Instruct")
    assert values[0] == "Qwen/Qwen2.5-7B-Instruct"
    assert values.count("Qwen/Qwen2.5-7B-Instruct") == 1


def _token_of(fake: FakeDiscord, callback: Any) -> str:
    """The interaction token of the interaction a callback answered (kept in the message it made)."""
    return str(fake.tokens[callback.interaction_id])


async def test_a_control_of_a_hub_answer_works_after_a_restart(
    fake: FakeDiscord, hub: FakeHub, cog: VramCog
) -> None:
    cog.defer_after_s = 5
    answer = await fake.invoke("vram", model="acme/Qwen3-32B-FP8")
    custom_id = "vram:cmp:m=acme/Qwen3-32B-FP8"
    # A restarted bot: nothing registered and nothing in memory (the disk cache is the same folder).
    forget_all()
    cog.hub = HubClient(HubSettings(endpoint=hub.url, cache_dir=cog.hub.settings.cache_dir, offline=False))
    clicked = await fake.send_interaction(fake.component_interaction(answer.message, custom_id, user="bob"))
    assert clicked.ephemeral  # bob's own copy of the comparison
    assert "acme/Qwen3-32B-FP8" in clicked.embed["description"]


async def test_a_family_no_declaration_knows_answers_with_its_tensors_count(
    fake: FakeDiscord, hub: FakeHub, cog: VramCog
) -> None:
    cog.defer_after_s = 5
    callback = await fake.invoke("vram", model="acme/Mamba2-130m", activations=3)
    assert callback.type == 4
    assert not callback.ephemeral
    # 2.06 GB + 3 GB; the answer's notes make it long, so its title leaves Adam to the command line.
    assert callback.embed["title"] == "✅ acme/Mamba2-130m: 5.1 GB fits one H100 80 GB"
    assert "N = its tensors' 129M (`acme_ssm`: no declaration)." in callback.embed["description"]
    custom_id = next(c for c in custom_ids(callback.message) if c.startswith("vram:det:"))
    details = await fake.send_interaction(fake.component_interaction(callback.message, custom_id, user="bob"))
    assert "128,983,488 parameters, counted from its tensors" in json.dumps(details.embed, ensure_ascii=False)


async def test_a_rate_limited_hub_answers_from_the_cache_and_says_so(
    fake: FakeDiscord, hub: FakeHub, cog: VramCog
) -> None:
    cog.defer_after_s = 5
    await fake.invoke("vram", model="acme/Slow-8B")  # fills the disk cache
    forget_all()
    cog.hub = HubClient(HubSettings(endpoint=hub.url, cache_dir=cog.hub.settings.cache_dir, offline=False))
    hub.rate_limited = True
    try:
        callback = await fake.invoke("vram", model="acme/Slow-8B")
        calls = await fake.webhook_calls(_token_of(fake, callback), 1)
    finally:
        hub.rate_limited = False
    assert callback.embed["title"].startswith("❌ acme/Slow-8B · Adam: 128.5 GB")
    assert [kind for kind, _ in calls] == ["followup"]
    assert calls[0][1]["flags"] & 64
    assert "rate-limiting" in calls[0][1]["content"]


async def test_a_long_repo_id_travels_in_the_command_line(
    fake: FakeDiscord, hub: FakeHub, cog: VramCog
) -> None:
    repo = "a-very-long-organisation-name/" + "x" * 60  # 90 characters: too long for a custom_id
    hub.add(repo, CONFIGS["llama-3.1-8b"])
    cog.defer_after_s = 5
    answer = await fake.invoke("vram", model=repo, gpus=8)
    # Long enough to leave the optimizer at its default unsaid, and the command line stays: the
    # controls read the repo from it.
    assert answer.embed["description"].startswith(f"`/vram model:{repo} gpus:8`")
    assert "vram:cmp:~" in json.dumps(answer.data["components"])
    clicked = await fake.send_interaction(
        fake.component_interaction(answer.message, "vram:cmp:~", user="bob")
    )
    assert repo in clicked.embed["description"]
