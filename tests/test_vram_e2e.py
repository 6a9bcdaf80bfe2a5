"""``/vram`` end to end: the real bot, logged in to the loopback fake Discord, answering interactions."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from bot.present.custom_ids import ESTIMATE
from bot.present.views import RENDERERS
from bot.runtime.runner import VramBot
from tests.fake_discord import Callback, FakeDiscord, custom_ids

pytestmark = pytest.mark.asyncio(loop_scope="module")


def control(message: dict[str, Any], prefix: str) -> str:
    return next(c for c in custom_ids(message) if c.startswith(prefix))


async def click(fake: FakeDiscord, message: dict[str, Any], custom_id: str) -> Callback:
    return await fake.send_interaction(fake.component_interaction(message, custom_id))


def fields(callback: Callback) -> dict[str, str]:
    return {f["name"]: f["value"] for f in callback.embed["fields"]}


def registered_vram(fake: FakeDiscord) -> dict[str, Any]:
    return next(c for c in fake.registered["global"] if c["name"] == "vram")


async def test_start_up_syncs_the_command_with_typed_options(fake: FakeDiscord, bot: VramBot) -> None:
    command = registered_vram(fake)
    assert command["description"] == "Estimate the GPU memory to fully fine-tune an LLM"
    assert command["type"] == 1
    options = {o["name"]: o for o in command["options"]}
    assert list(options)[:5] == ["params", "model", "optimizer", "precision", "activations"]

    params = options["params"]
    assert (params["type"], params.get("required", False)) == (10, False)  # NUMBER; or pick a model
    assert (params["min_value"], params["max_value"]) == (0, 100_000)
    assert "billions" in params["description"]

    optimizer = options["optimizer"]
    assert (optimizer["type"], optimizer["required"]) == (3, False)  # STRING
    assert [c["value"] for c in optimizer["choices"]] == [
        "adam",
        "adam8bit",
        "sgd",
        "paged_adam8bit",
        "adafactor",
        "lion",
        "muon",
    ]
    for choice in optimizer["choices"]:
        assert choice["name"].startswith(choice["value"] + " ")
    assert "8-bit Adam, ~12 B/param" in optimizer["choices"][1]["name"]

    activations = options["activations"]
    assert (activations["type"], activations["required"], activations["min_value"]) == (10, False, 0)
    assert "GB" in activations["description"]
    assert (options["bytes_per_param"]["type"], options["bytes_per_param"]["required"]) == (10, False)
    assert options["bytes_per_param"]["max_value"] == 64


async def test_identify_asks_for_no_intents(fake: FakeDiscord, bot: VramBot) -> None:
    assert fake.identifies
    assert fake.identifies[0]["intents"] == 0


async def test_vram_adam8bit_answers_with_a_public_embed(fake: FakeDiscord, bot: VramBot) -> None:
    callback = await fake.invoke("vram", params=7, optimizer="adam8bit")
    assert callback.type == 4  # CHANNEL_MESSAGE_WITH_SOURCE
    assert not callback.ephemeral
    assert callback.data["allowed_mentions"] == {"parse": []}
    embed = callback.embed
    assert embed["title"] == "❌ 7B · 8-bit Adam: 84.0 GB — 2 × H100 80 GB with ZeRO-3"
    lines = embed["description"].splitlines()
    assert lines[0] == "`/vram params:7 optimizer:adam8bit`"
    assert lines[1:3] == ["M = N × B = 7 × 12 = 84.0 GB", "V = M + A = 84.0 + 0 = **84.0 GB**"]
    assert lines[3].startswith("🟦\u00a0weights 14.0\u00a0GB 🟩\u00a0gradients 14.0\u00a0GB")
    assert lines[4].startswith("💡 LoRA 14.8 GB")
    assert lines[5] == "🟦🟦🟩🟨🟨🟨🟨🟨 1.1\u00a0×\u00a080\u00a0GB"
    assert "first-order estimate" in embed["footer"]["text"].lower()


async def test_worked_example_with_activations(fake: FakeDiscord, bot: VramBot) -> None:
    callback = await fake.invoke("vram", params=7, activations=20)
    description = callback.embed["description"]
    assert "M = N × B = 7 × 16 = 112.0 GB" in description
    assert "V = M + A = 112.0 + 20.0 = **132.0 GB**" in description


async def test_options_the_issue_does_not_list_still_answer_correctly(
    fake: FakeDiscord, bot: VramBot
) -> None:
    callback = await fake.invoke("vram", params=1.5, optimizer="sgd", activations=3.25, bytes_per_param=9)
    description = callback.embed["description"]
    assert not callback.ephemeral
    assert "M = N × B = 1.5 × 9 = 13.5 GB" in description  # the custom bytes win over SGD's 8
    assert "= **16.8 GB**" in description  # 13.5 + 3.25 = 16.75
    assert callback.embed["title"] == "✅ 1.5B · Custom 9 B/param: 16.8 GB fits one H100 80 GB"
    assert callback.embed["color"] == 0x2ECC71
    assert "🟨\u00a0model states 13.5\u00a0GB 🟪\u00a0activations 3.2\u00a0GB" in description


async def test_a_model_that_fits_is_green(fake: FakeDiscord, bot: VramBot) -> None:
    callback = await fake.invoke("vram", params=5)
    assert callback.embed["title"].startswith("✅")  # exactly 80 GB
    assert "🟦🟩🟨🟨🟨🟨🟨🟨 100\u00a0%\u00a0of\u00a080\u00a0GB" in callback.embed["description"]
    assert callback.embed["color"] == 0x2ECC71


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"params": -1}, "`params` = -1 is not allowed: give a number greater than 0 and at most 100,000"),
        ({"params": 0}, "`params` = 0 is not allowed"),
        ({"params": 7, "activations": -5}, "`activations` = -5 is not allowed: give a number at least 0"),
        ({"params": 7, "bytes_per_param": 100}, "`bytes_per_param` = 100 is not allowed"),
        (
            {"params": 7, "optimizer": "rmsprop"},
            "one of adam, adam8bit, sgd, paged_adam8bit, adafactor, lion, muon",
        ),
        # Discord itself never sends a string for a number option; a broken or hostile client might.
        ({"params": "seven"}, "`params` has a value of the wrong type"),
        ({"params": 7, "activations": True}, "`activations` has a value of the wrong type"),
    ],
)
async def test_invalid_input_gets_an_ephemeral_explanation(
    fake: FakeDiscord, bot: VramBot, options: dict[str, Any], expected: str
) -> None:
    callback = await fake.invoke("vram", **options)
    assert callback.type == 4
    assert callback.ephemeral
    assert "embeds" not in callback.data or not callback.data["embeds"]
    assert expected in callback.data["content"]
    assert callback.data["allowed_mentions"] == {"parse": []}
    # ...and the bot serves the next command.
    after = await fake.invoke("vram", params=7)
    assert "= **112.0 GB**" in after.embed["description"]


async def test_unexpected_error_apologises_logs_and_keeps_serving(
    fake: FakeDiscord, bot: VramBot, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*_: object) -> dict[str, Any]:
        raise RuntimeError("renderer exploded")

    monkeypatch.setitem(RENDERERS, ESTIMATE, broken)
    with caplog.at_level(logging.DEBUG):
        callback = await fake.invoke("vram", params=7)
    assert callback.ephemeral
    assert callback.data["content"].startswith("Sorry, something went wrong")
    assert "renderer exploded" not in callback.data["content"]  # no internals shown to users
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1  # one traceback, logged once
    assert errors[0].name == "bot.runtime.errors"
    assert errors[0].exc_info is not None
    assert str(errors[0].exc_info[1]) == "renderer exploded"

    monkeypatch.undo()
    after = await fake.invoke("vram", params=7)
    assert not after.ephemeral
    assert "= **112.0 GB**" in after.embed["description"]


async def test_no_unknown_routes_were_called(fake: FakeDiscord, bot: VramBot) -> None:
    await fake.invoke("vram", params=13)
    assert fake.unknown_routes == []


async def test_registered_scaling_options(fake: FakeDiscord, bot: VramBot) -> None:
    options = {o["name"]: o for o in registered_vram(fake)["options"]}
    assert options["model"]["type"] == 3
    assert options["model"]["autocomplete"] is True
    gpu_values = [c["value"] for c in options["gpu"]["choices"]]
    assert gpu_values[0] == "h100"
    assert {"a100-40", "a100-80", "h200", "b200", "mi300x", "l40s", "rtx4090", "t4", "v100-32"} <= set(
        gpu_values
    )
    assert (options["gpus"]["type"], options["gpus"]["min_value"], options["gpus"]["max_value"]) == (
        4,
        1,
        4096,
    )
    assert (options["lora_rank"]["type"], options["lora_rank"]["max_value"]) == (4, 1024)
    assert options["batch_size"]["type"] == options["seq_len"]["type"] == 4
    assert options["checkpointing"]["type"] == options["flash_attention"]["type"] == 5  # BOOLEAN
    assert len(registered_vram(fake)["options"]) <= 25


async def test_model_autocomplete_suggests_loosely(fake: FakeDiscord, bot: VramBot) -> None:
    interaction = fake.slash_interaction(
        "vram", [{"name": "model", "type": 3, "value": "qwen72", "focused": True}]
    )
    interaction["type"] = 4  # APPLICATION_COMMAND_AUTOCOMPLETE
    callback = await fake.send_interaction(interaction)
    assert callback.type == 8  # APPLICATION_COMMAND_AUTOCOMPLETE_RESULT
    choices = callback.data["choices"]
    assert choices[0] == {"name": "Qwen2.5 72B · 72.7B params", "value": "qwen2.5-72b"}
    assert len(choices) <= 25


async def test_preset_embed_with_card_sharding_lora_rank_and_activations(
    fake: FakeDiscord, bot: VramBot
) -> None:
    callback = await fake.invoke(
        "vram", model="llama-3.1-8b", gpu="a100-80", gpus=8, lora_rank=32, batch_size=2, seq_len=4096
    )
    assert not callback.ephemeral
    embed = callback.embed
    # Issue 21: V per GPU fits with ZeRO-3 (77.3 GB), but a card's step peaks at 82.2 GB. It was a
    # green "77.3 GB per GPU"; the verdict follows the peak: red, the card's peak for the 8 cards, a
    # bar beyond one card, and what would fit, none of it already on.
    assert embed["title"] == "❌ Llama 3.1 8B · Adam: 82.2 GB peak per GPU on 8 × A100 80 GB with ZeRO-3"
    assert embed["color"] == 0xE74C3C
    # A long answer gives the breakdown's words back to fit a phone: each part its square and GB.
    # The square, its sign and its figure hold together: a phone never breaks after "≈".
    assert "🟪\u00a0≈\u00a057.1\u00a0GB" in embed["description"]
    assert "💡 Fits with checkpointing 54.8 GB · 10 × A100 80 GB ZeRO-3" in embed["description"].replace(
        "\u00a0", " "
    )
    assert embed["description"].splitlines()[-1].endswith("1.1\u00a0×\u00a080\u00a0GB")  # one card's
    details = await click(fake, callback.message, control(callback.message, "vram:det:"))
    values = fields(details)
    assert "8,030,261,248 parameters, counted from its architecture" in values["The preset"]
    assert "batch 2 × 4,096 tokens" in values["Activations are entered separately"]
    assert "FlashAttention" in values["Activations are entered separately"]
    cluster = values["On 8 × NVIDIA A100 80 GB"]
    assert "ZeRO-1" in cluster
    assert "No strategy fits on this many cards; ZeRO-3 needs 10 of them." in cluster
    assert (
        "The verdict follows the step's peak, 82.2 GB per GPU with ZeRO-3" in values["Does it fit the card?"]
    )
    lora = "rank 32 on q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj in every layer: 83.9M"
    assert lora in values["Why LoRA changes the picture"]


async def test_unknown_model_lists_close_matches(fake: FakeDiscord, bot: VramBot) -> None:
    callback = await fake.invoke("vram", model="lama 3.1 8b")
    assert callback.ephemeral
    assert "`model` = `lama 3.1 8b` is not allowed" in callback.data["content"]
    assert "Llama 3.1 8B" in callback.data["content"]
