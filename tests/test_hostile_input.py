"""Hostile and odd input through real interaction payloads: each gets a clear answer, none a crash."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from bot.runtime.runner import VramBot
from tests.embed_limits import embed_limit_problems
from tests.fake_discord import FakeDiscord

pytestmark = pytest.mark.asyncio(loop_scope="module")

NUMBER, INTEGER, STRING, BOOLEAN = 10, 4, 3, 5
MESSAGE_CONTENT_MAX = 2000  # Discord's limit for a message's content
LONG = "x" * 6000
MARKDOWN = "**bold** __under__ `code` ||spoiler|| <@123456789012345678> <@&1> <#2> # Heading\n> quote"


def option(name: str, value: Any, kind: int) -> dict[str, Any]:
    return {"name": name, "type": kind, "value": value}


def params(value: Any, kind: int = NUMBER) -> dict[str, Any]:
    return option("params", value, kind)


# (options as Discord's JSON would carry them, "embed: " and the answer's command line, or the part of
# the ephemeral answer that gives the reason)
CASES: list[tuple[str, list[dict[str, Any]], str]] = [
    ("no options at all", [], "give `params` (billions of parameters) or a `model` preset"),
    ("zero", [params(0)], "`params` = 0 is not allowed"),
    ("negative", [params(-7.5)], "`params` = -7.5 is not allowed"),
    ("huge", [params(1e308)], "`params` = 1e+308 is not allowed"),
    ("hugely negative", [params(-1e308)], "`params` = -1e+308 is not allowed"),
    ("the largest allowed", [params(100_000)], "embed: `/vram params:100000 optimizer:adam`"),
    (
        "the tiniest positive",
        [params(1e-300)],
        # Its 300 digits take most of a phone screen: the line keeps only the options given.
        "embed: `/vram params:0." + "0" * 299 + "1`",
    ),
    # JSON has no NaN or infinity, so these can only come as strings (or as numbers too big for a double,
    # which discord.py's JSON decoder refuses before any handler sees them).
    ("NaN as a string", [params("NaN")], "`params` has a value of the wrong type"),
    ("Infinity as a string", [params("Infinity")], "`params` has a value of the wrong type"),
    ("the largest double", [params(1.7976931348623157e308)], "`params` = 1.79769313486232e+308"),
    ("a number as a string", [params("7", NUMBER)], "`params` has a value of the wrong type"),
    ("a boolean for a number", [params(True)], "`params` has a value of the wrong type"),
    ("a list for a number", [params([7])], "`params` has a value of the wrong type"),
    ("an object for a number", [params({"n": 7})], "`params` has a value of the wrong type"),
    ("null for a number", [params(None)], "`params` has a value of the wrong type"),
    ("a fraction for a whole number", [params(7), option("gpus", 2.5, INTEGER)], "`gpus` has a value"),
    ("a whole number out of range", [params(7), option("gpus", 10**15, INTEGER)], "`gpus` = 1,000,000"),
    # Beyond 64 bits the JSON decoder gives a float, which a whole-number option refuses.
    ("a whole number beyond 64 bits", [params(7), option("gpus", 10**30, INTEGER)], "`gpus` has a value"),
    (
        "zero rank",
        [option("model", "mistral-7b", STRING), option("lora_rank", 0, INTEGER)],
        "`lora_rank` = 0",
    ),
    ("a string for a boolean", [params(7), option("private", "yes", BOOLEAN)], "`private` has a value"),
    ("an unknown optimizer", [params(7), option("optimizer", "rmsprop", STRING)], "`optimizer` = `rmsprop`"),
    ("an unknown card", [params(7), option("gpu", "tpu-v5", STRING)], "`gpu` = `tpu-v5`"),
    ("6000 characters of model", [option("model", LONG, STRING)], "`model` = `" + "x" * 100 + "…`"),
    ("6000 characters of optimizer", [params(7), option("optimizer", LONG, STRING)], "`optimizer` = `xxx"),
    ("6000 characters of card", [params(7), option("gpu", LONG, STRING)], "`gpu` = `xxx"),
    ("@everyone as the model", [option("model", "@everyone", STRING)], "`model` = `@everyone`"),
    ("@here as the optimizer", [params(7), option("optimizer", "@here", STRING)], "`optimizer` = `@here`"),
    ("markdown as the model", [option("model", MARKDOWN, STRING)], "`model` = `**bold** __under__ ˋcodeˋ"),
    (
        "batch size without a model",
        [params(7), option("batch_size", 8, INTEGER)],
        "`batch_size` and `seq_len`",
    ),
    ("an option with no type", [{"name": "params", "value": 7}], "`params` has a value of the wrong type"),
    ("an option type as a string", [params(7, "10")], "`params` has a value of the wrong type"),  # type: ignore[arg-type]
    (
        "an unknown option beside a good one",
        [params(7), option("flavour", "vanilla", STRING)],
        "embed: `/vram params:7 optimizer:adam`",
    ),
    (
        "an unknown option with a 6000-character name",
        [params(7), option(LONG, 1, INTEGER)],
        "embed: `/vram params:7 optimizer:adam`",
    ),
    ("the same option twice", [params(7), params(13)], "embed: `/vram params:13 optimizer:adam`"),
]


@pytest.mark.parametrize(("options", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_hostile_input_gets_a_clear_answer_and_the_bot_serves_on(
    fake: FakeDiscord, bot: VramBot, options: list[dict[str, Any]], expected: str
) -> None:
    callback = await fake.send_interaction(fake.slash_interaction("vram", options))
    assert callback.data["allowed_mentions"] == {"parse": []}
    if expected.startswith("embed: "):  # an answer, for the value shown in its command line
        assert not callback.ephemeral
        assert embed_limit_problems(callback.embed) == []
        assert callback.embed["description"].split("\n", 1)[0] == expected.removeprefix("embed: ")
    else:
        assert callback.ephemeral
        content = callback.data["content"]
        assert content.startswith("That input doesn't work:\n• ")
        assert expected in content
        assert len(content) <= MESSAGE_CONTENT_MAX
    after = await fake.invoke("vram", params=7)
    assert "= **112.0 GB**" in after.embed["description"]


async def test_options_that_are_not_a_list_get_a_clear_answer(fake: FakeDiscord, bot: VramBot) -> None:
    interaction = fake.slash_interaction("vram", [])
    interaction["data"]["options"] = "params:7"
    callback = await fake.send_interaction(interaction)
    assert callback.ephemeral
    assert "`options` has a value of the wrong type" in callback.data["content"]


async def test_hostile_answers_ping_nobody(fake: FakeDiscord, bot: VramBot) -> None:
    start = len(fake.callbacks)
    for options in ([option("model", "@everyone", STRING)], [params(7), option("gpu", MARKDOWN, STRING)]):
        await fake.send_interaction(fake.slash_interaction("vram", options))
    answers = fake.callbacks[start:]
    assert len(answers) == 2
    for callback in answers:
        assert callback.data.get("allowed_mentions") == {"parse": []}, callback.body


def autocomplete(fake: FakeDiscord, options: list[dict[str, Any]]) -> dict[str, Any]:
    interaction = fake.slash_interaction("vram", options)
    interaction["type"] = 4  # APPLICATION_COMMAND_AUTOCOMPLETE
    return interaction


def our_errors(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """ERROR records of this bot's own code. discord.py logs the payloads it cannot read itself (an
    autocomplete for an option without one, a task ended by an option it could not convert), which
    Discord never sends; the cog answers them all the same."""
    return [r for r in caplog.records if r.levelno >= logging.ERROR and r.name.startswith("bot.")]


MODEL_TYPED = {**option("model", "llama", STRING), "focused": True}


@pytest.mark.parametrize(
    "sibling",
    [params("abc"), params([7]), params(""), option("gpus", 2.5, INTEGER)],
    ids=["of the wrong type", "as a list", "a number being typed", "a fraction for a whole number"],
)
async def test_model_suggestions_whatever_another_option_holds(
    fake: FakeDiscord, bot: VramBot, sibling: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    alone = await fake.send_interaction(autocomplete(fake, [MODEL_TYPED]))
    with caplog.at_level(logging.INFO):
        callback = await fake.send_interaction(autocomplete(fake, [sibling, MODEL_TYPED]))
    assert callback.type == 8  # APPLICATION_COMMAND_AUTOCOMPLETE_RESULT
    assert alone.data["choices"]
    assert callback.data["choices"] == alone.data["choices"]
    assert our_errors(caplog) == []


AUTOCOMPLETE_CASES = [
    ("focused on an option without suggestions", [{**params("7"), "focused": True}]),
    ("focused on an option we do not have", [{**option("flavour", "x", STRING), "focused": True}]),
    ("nothing focused", [option("model", "llama", STRING)]),
    ("the model focused with a number", [{**option("model", 7, STRING), "focused": True}]),
    # discord.py's namespace skips an option of a type it does not know, then finds no value to complete.
    ("the model focused with no type known", [{**option("model", None, 0), "focused": True}]),
]


@pytest.mark.parametrize(
    ("options"), [c[1] for c in AUTOCOMPLETE_CASES], ids=[c[0] for c in AUTOCOMPLETE_CASES]
)
async def test_odd_autocompletes_get_an_empty_answer_and_no_error(
    fake: FakeDiscord, bot: VramBot, options: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        callback = await fake.send_interaction(autocomplete(fake, options))
    assert callback.type == 8  # APPLICATION_COMMAND_AUTOCOMPLETE_RESULT
    assert callback.data["choices"] == []
    assert our_errors(caplog) == []
    after = await fake.invoke("vram", params=7)
    assert "= **112.0 GB**" in after.embed["description"]
