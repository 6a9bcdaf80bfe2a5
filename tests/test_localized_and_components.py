"""German and English, and the controls under an answer: all through the loopback fake Discord."""

from __future__ import annotations

from typing import Any

import pytest

from bot.estimate.optimizers import Optimizer
from bot.present.custom_ids import CUSTOM_ID_MAX
from bot.runtime.runner import VramBot
from tests.fake_discord import Callback, FakeDiscord, custom_ids

pytestmark = pytest.mark.asyncio(loop_scope="module")


def fields(embed: dict[str, Any]) -> dict[str, str]:
    return {f["name"]: f["value"] for f in embed["fields"]}


def vram_command(fake: FakeDiscord) -> dict[str, Any]:
    return next(c for c in fake.registered["global"] if c["name"] == "vram")


def control(message: dict[str, Any], prefix: str) -> str:
    return next(c for c in custom_ids(message) if c.startswith(prefix))


async def click(fake: FakeDiscord, message: dict[str, Any], custom_id: str, **options: Any) -> Callback:
    return await fake.send_interaction(fake.component_interaction(message, custom_id, **options))


async def test_the_command_is_registered_with_german_localizations(fake: FakeDiscord, bot: VramBot) -> None:
    command = vram_command(fake)
    assert command["description_localizations"]["de"] == (
        "Schätzt den GPU-Speicher für das vollständige Feintuning eines LLM"
    )
    assert command["description_localizations"]["en-US"] == command["description"]
    options = {o["name"]: o for o in command["options"]}
    assert options["params"]["description_localizations"]["de"].startswith("Modellgröße in Milliarden")
    assert options["private"]["description_localizations"]["de"].startswith("Die Antwort nur Ihnen")
    for option in command["options"]:  # option names stay the same ASCII words in every language
        assert option["name"].isascii()
        assert option["name"] == option["name"].lower()
        assert set(option.get("name_localizations") or {}) <= {"en-US", "en-GB", "de"}
        assert all(v == option["name"] for v in (option.get("name_localizations") or {}).values())
        assert option["description_localizations"]["de"] != option["description"]
    sgd = next(c for c in options["optimizer"]["choices"] if c["value"] == "sgd")
    assert sgd["name_localizations"]["de"] == "sgd · SGD mit Momentum, ~8 B/Param."


async def test_the_command_is_offered_in_servers_dms_and_user_installs(
    fake: FakeDiscord, bot: VramBot
) -> None:
    command = vram_command(fake)
    assert sorted(command["integration_types"]) == [0, 1]  # guild install, user install
    assert sorted(command["contexts"]) == [0, 1, 2]  # guild, bot DM, private channel


async def test_a_german_user_gets_a_german_embed(fake: FakeDiscord, bot: VramBot) -> None:
    interaction = fake.slash_interaction(
        "vram", fake.command_options("vram", params=7, activations=20), locale="de"
    )
    callback = await fake.send_interaction(interaction)
    embed = callback.embed
    assert embed["title"] == "❌ 7B · Adam: 132,0 GB — 3 × H100 80 GB mit ZeRO-3"
    assert "M = N × B = 7 × 16 = 112,0 GB" in embed["description"]
    assert "V = M + A = 112,0 + 20,0 = **132,0 GB**" in embed["description"]
    assert "🟪\u00a0Aktivierungen 20,0\u00a0GB" in embed["description"]
    # 1.65 cards' worth, which DeepSpeed's ZeRO-3 holds on 3: the caption says the title's count.
    assert "🟦🟩🟨🟨🟨🟨🟨🟪 3\u00a0×\u00a080\u00a0GB" in embed["description"]
    assert "Schätzung erster Ordnung" in embed["footer"]["text"]
    select, buttons = (row["components"] for row in callback.data["components"])
    assert select[0]["placeholder"] == "Optimizer wechseln"
    assert [o["label"] for o in select[0]["options"]] == [
        "Mixed-Precision-Adam",
        "8-Bit-Adam",
        "SGD mit Momentum",
        "Gepagter 8-Bit-AdamW (Momente im Host-RAM)",
        "Adafactor",
        "Lion",
        "Muon (AdamW für Embeddings und Kopf)",
    ]
    assert [b["label"] for b in buttons] == ["Schätzung", "Vergleichen", "Details"]


async def test_an_english_user_gets_an_english_embed(fake: FakeDiscord, bot: VramBot) -> None:
    interaction = fake.slash_interaction("vram", fake.command_options("vram", params=7, activations=20))
    embed = (await fake.send_interaction(interaction)).embed
    assert embed["title"] == "❌ 7B · Adam: 132.0 GB — 3 × H100 80 GB with ZeRO-3"
    assert "M = N × B = 7 × 16 = 112.0 GB" in embed["description"]


async def test_a_german_user_gets_german_error_messages(fake: FakeDiscord, bot: VramBot) -> None:
    interaction = fake.slash_interaction("vram", fake.command_options("vram", params=-1), locale="de")
    callback = await fake.send_interaction(interaction)
    assert callback.ephemeral
    assert callback.data["content"] == (
        "Diese Eingabe funktioniert nicht:\n"
        "• `params` = -1 ist nicht zulässig: Geben Sie eine Zahl größer als 0 und höchstens 100.000 "
        "(Milliarden Parameter) an"
    )


async def test_the_answer_carries_an_optimizer_select_and_three_buttons(
    fake: FakeDiscord, bot: VramBot
) -> None:
    callback = await fake.invoke("vram", params=7, optimizer="adam8bit")
    rows = callback.data["components"]
    select = rows[0]["components"][0]
    assert select["type"] == 3  # string select
    assert [o["value"] for o in select["options"]] == [optimizer.value for optimizer in Optimizer]
    assert [o.get("default", False) for o in select["options"]] == [
        o["value"] == "adam8bit" for o in select["options"]
    ]
    buttons = rows[1]["components"]
    assert [b["label"] for b in buttons] == ["Estimate", "Compare", "Details"]
    assert [b.get("disabled", False) for b in buttons] == [True, False, False]
    for custom_id in custom_ids(callback.message):
        assert custom_id.startswith("vram:")
        assert len(custom_id) <= CUSTOM_ID_MAX
        assert custom_id.endswith(":p=7;o=adam8bit")  # the inputs travel in the custom_id


async def test_the_invoker_switching_the_optimizer_updates_the_message(
    fake: FakeDiscord, bot: VramBot
) -> None:
    answer = await fake.invoke("vram", params=7, activations=20)
    callback = await click(fake, answer.message, control(answer.message, "vram:opt:"), values=["sgd"])
    assert callback.type == 7  # UPDATE_MESSAGE: the invoker's own answer changes in place
    assert callback.data["allowed_mentions"] == {"parse": []}
    embed = callback.embed
    assert embed["title"] == "✅ 7B · SGD: 76.0 GB fits one H100 80 GB"  # 7 × 8 + 20
    assert fake.messages[answer.message["id"]]["embeds"][0]["title"] == embed["title"]
    assert custom_ids(callback.message)[0] == "vram:opt:p=7;o=sgd;a=20"


async def test_someone_else_comparing_gets_their_own_ephemeral_copy(fake: FakeDiscord, bot: VramBot) -> None:
    answer = await fake.invoke("vram", params=7, activations=20)
    original = answer.message["embeds"]
    callback = await click(
        fake, answer.message, control(answer.message, "vram:cmp:"), user="bob", locale="de"
    )
    assert callback.type == 4
    assert callback.ephemeral
    embed = callback.embed
    assert embed["title"] == "Alle Verfahren im Vergleich beim Feintuning eines 7B-Modells"
    lines = embed["description"].replace("\u00a0", " ").splitlines()
    assert lines[1] == "Aktivierungen 20,0 GB in jedem Balken; Urteile für eine 80-GB-GPU."
    assert lines[2:] == [
        "Adam · 16 B/Param.: **132,0 GB**, ❌ 52,0 GB zu viel",
        "8-Bit-Adam · 12 B/Param.: **104,0 GB**, ❌ 24,0 GB zu viel",
        "SGD · 8 B/Param.: **76,0 GB**, ✅ passt",
        "Gepagter 8-Bit-AdamW · 8 B/Param.: **76,0 GB**, ✅ passt",  # its moments page out
        "Adafactor · 8,01 B/Param.: **76,1 GB**, ✅ passt",
        "Lion · 12 B/Param.: **104,0 GB**, ❌ 24,0 GB zu viel",
        "Muon · 12,5 B/Param.: **107,6 GB**, ❌ 27,6 GB zu viel",
        "LoRA · Adam: **35,1 GB**, ✅ passt",  # 14 + 0.07 × 16 + 20
        "QLoRA · Adam: **24,8 GB**, ✅ passt",
        # The training setups side by side: pure bf16 halves Adam's states.
        "Adam je Trainings-Setup (`precision`): ❌ mixed 132,0 GB · ❌ amp 132,0 GB · ✅ bf16 76,0 GB",
    ]  # with no-break spaces in each verdict, so that a phone keeps it in one piece
    assert "fields" not in embed  # inline columns broke words on a phone
    # The chart is uploaded with the answer and shown as the embed's picture.
    assert embed["image"]["url"] == "attachment://compare.png"
    assert list(callback.files) == ["compare.png"]
    assert callback.files["compare.png"].startswith(b"\x89PNG\r\n\x1a\n")
    assert [a["filename"] for a in callback.message["attachments"]] == ["compare.png"]
    assert fake.messages[answer.message["id"]]["embeds"] == original  # the public answer is untouched


async def test_details_fill_the_formulas_in(fake: FakeDiscord, bot: VramBot) -> None:
    answer = await fake.invoke("vram", params=7, activations=20)
    callback = await click(fake, answer.message, control(answer.message, "vram:det:"))
    assert callback.type == 7
    values = fields(callback.embed)
    assert "2 + 2 + 4 + 4 + 4 = 16 bytes per parameter" in values["Model states dominate"]
    assert "M = 7 × 16 = **112.0 GB**" in values["Model states dominate"]
    assert "V = M + A = 112.0 GB + 20.0 GB = **132.0 GB**" in values["Activations are entered separately"]
    buttons = callback.data["components"][1]["components"]
    assert [b.get("disabled", False) for b in buttons] == [False, False, True]


@pytest.mark.parametrize(
    "tamper",
    [
        lambda cid: cid.replace("p=7", "p=-5"),  # out of range
        lambda cid: cid.replace("p=7", "p=nan"),
        lambda cid: cid.replace("p=7", "p=7;p=8"),  # a key twice
        lambda cid: cid.replace("p=7", "x=7"),  # unknown key
        lambda cid: cid.replace("p=7", "p"),  # no value
        lambda cid: cid.replace("vram:cmp:", "vram:xyz:"),  # unknown view
        lambda cid: cid.replace("p=7", "m=" + "y" * 80),  # no such preset
        lambda cid: cid.split(":", 2)[0] + ":cmp:",  # nothing to estimate
    ],
)
async def test_a_tampered_custom_id_gets_an_ephemeral_error_and_changes_nothing(
    fake: FakeDiscord, bot: VramBot, tamper: Any
) -> None:
    answer = await fake.invoke("vram", params=7)
    good = control(answer.message, "vram:cmp:")
    bad = tamper(good)
    assert bad != good
    message = dict(answer.message)
    message["components"] = [
        {
            **row,
            "components": [
                {**c, "custom_id": bad} if c["custom_id"] == good else c for c in row["components"]
            ],
        }
        for row in answer.message["components"]
    ]
    before = fake.messages[answer.message["id"]]
    callback = await click(fake, message, bad)
    assert callback.type == 4
    assert callback.ephemeral
    assert "nothing changed" in callback.data["content"]
    assert fake.messages[answer.message["id"]] == before


async def test_an_unknown_optimizer_in_the_select_is_refused(fake: FakeDiscord, bot: VramBot) -> None:
    answer = await fake.invoke("vram", params=7)
    callback = await click(fake, answer.message, control(answer.message, "vram:opt:"), values=["rmsprop"])
    assert callback.type == 4
    assert callback.ephemeral
    assert "nothing changed" in callback.data["content"]


async def test_private_answers_only_the_user(fake: FakeDiscord, bot: VramBot) -> None:
    callback = await fake.invoke("vram", params=7, private=True)
    assert callback.ephemeral
    assert callback.embed["title"].startswith("❌ 7B · Adam: 112.0 GB")
    assert callback.data["components"]  # the controls work on the private answer too


async def test_a_dm_with_the_bot_gets_the_answer(fake: FakeDiscord, bot: VramBot) -> None:
    interaction = fake.slash_interaction("vram", fake.command_options("vram", params=13), in_dm=True)
    callback = await fake.send_interaction(interaction)
    assert not callback.ephemeral
    assert "M = N × B = 13 × 16 = 208.0 GB" in callback.embed["description"]


async def test_answers_clicks_and_errors_ping_nobody(fake: FakeDiscord, bot: VramBot) -> None:
    start = len(fake.callbacks)
    answer = await fake.invoke("vram", params=7, activations=20)
    for custom_id in custom_ids(answer.message)[1:]:
        await click(fake, answer.message, custom_id)  # the invoker: the message is updated
        await click(fake, answer.message, custom_id, user="bob", locale="de")  # someone else: a copy
    await click(fake, answer.message, control(answer.message, "vram:opt:"), values=["sgd"])
    await fake.invoke("vram", params=-1)  # an error reply
    answers = fake.callbacks[start:]
    assert [c.type for c in answers].count(7) == 4  # three buttons and the select, in place
    assert len(answers) == 9
    for callback in answers:
        assert callback.data.get("allowed_mentions") == {"parse": []}, callback.body


async def test_the_invokers_compare_attaches_the_chart_and_the_next_view_drops_it(
    fake: FakeDiscord, bot: VramBot
) -> None:
    answer = await fake.invoke("vram", params=7, activations=20)
    compare = await click(fake, answer.message, control(answer.message, "vram:cmp:"))
    assert compare.type == 7  # edited in place, with the chart uploaded beside the new embed
    assert list(compare.files) == ["compare.png"]
    assert [a["filename"] for a in fake.messages[answer.message["id"]]["attachments"]] == ["compare.png"]
    details = await click(fake, compare.message, control(compare.message, "vram:det:"))
    assert details.type == 7
    assert details.data["attachments"] == []  # Details has no picture: the chart goes
    assert fake.messages[answer.message["id"]]["attachments"] == []
