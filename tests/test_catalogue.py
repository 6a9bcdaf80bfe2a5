"""The string catalogues: complete in both languages, consistent placeholders, within Discord's limits."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from discord import app_commands

from bot.estimate.core import estimate
from bot.estimate.hardware import Gpu
from bot.estimate.models import presets
from bot.estimate.optimizers import Optimizer
from bot.estimate.request import command_options, parse_request
from bot.present.answer import render_embed
from bot.present.compare import render_compare
from bot.present.details import render_details
from bot.present.i18n import (
    Language,
    Template,
    Templates,
    catalogue,
    command_catalogue,
    language_for,
    number,
    placeholders,
    substituted,
    templates,
)
from bot.present.option_docs import discord_description
from bot.present.phrases import gpu_choice_name, optimizer_choice_name
from bot.runtime.translator import LOCALES, CatalogueTranslator
from tests.embed_limits import embed_limit_problems

RENDERERS = (render_embed, render_compare, render_details)
DISCORD_DESCRIPTION_MAX = 100  # for commands, options and choice names


def test_every_key_is_in_both_languages() -> None:
    english, german = catalogue(Language.EN), catalogue(Language.DE)
    assert sorted(set(english) - set(german)) == []
    assert sorted(set(german) - set(english)) == []


def test_placeholders_match_and_no_string_is_empty() -> None:
    # One test for all the keys (a test per key was 400 tests' start-up for microseconds of work),
    # which names every key that fails.
    english, german = catalogue(Language.EN), catalogue(Language.DE)
    assert len(english) > 100
    mismatched = [
        key for key in sorted(english) if placeholders(english[key]) != placeholders(german.get(key, ""))
    ]
    assert mismatched == [], "placeholders differ between English and German"
    empty = [key for key in sorted(english) if not english[key].strip() or not german.get(key, "").strip()]
    assert empty == [], "empty strings"


@pytest.mark.parametrize("language", list(Language))
def test_every_string_fills_as_str_format_fills_it(language: Language) -> None:
    # Values with the characters the two syntaxes treat specially: "%" and braces.
    for key, source in catalogue(language).items():
        values = {name: f"<{name} 50 % {{x}} %s>" for name in placeholders(source)}
        assert templates(language)[key].fill(values) == source.format_map(values), key


def test_a_template_fills_repeated_placeholders_numbers_and_literal_braces_as_format_does() -> None:
    source = "{a} of {b}: {a} is 100 % {{sure}}"
    template = Template(source)
    values = {"a": 1.5, "b": 7, "unused": "x"}
    assert template.fill(values) == "1.5 of 7: 1.5 is 100 % {sure}" == source.format_map(values)
    # One placeholder takes its value as it is, even a tuple, as format does.
    assert Template("{gb} to spare").fill({"gb": (1, 2)}) == "(1, 2) to spare"
    assert Template("100 % {{sure}}").fill({}) == "100 % {sure}"
    with pytest.raises(KeyError):
        template.fill({"a": 1})


@pytest.mark.parametrize("source", ["{gb:.1f}", "{gb!r}", "{0}", "{}", "{a.b}", "{a[0]}"])
def test_a_template_refuses_placeholders_the_catalogue_never_uses(source: str) -> None:
    with pytest.raises(ValueError, match="only plain named placeholders"):
        Template(source)


def test_substituted_puts_template_text_in_place_of_a_placeholder_and_keeps_literal_braces() -> None:
    joined = substituted("{{gb}} weights {gb} of {total}", {"gb": "{gb_weights} GB"})
    assert joined == "{{gb}} weights {gb_weights} GB of {total}"
    assert joined.format(gb_weights=3, total=9) == "{gb} weights 3 GB of 9"
    with pytest.raises(ValueError, match="format spec"):
        substituted("{gb:.1f}", {"gb": "{x}"})


def test_german_uses_the_terms_of_the_field() -> None:
    german = "\n".join(catalogue(Language.DE).values())
    for term in (
        "Feintuning",
        "Optimizer-Zustand",
        "Aktivierungen",
        "Modellzustände",
        "Mixed-Precision-Adam",
    ):
        assert term in german


@pytest.mark.parametrize(
    ("value", "spec", "english", "german"),
    [
        (112.0, ",.1f", "112.0", "112,0"),
        (1234567.891, ",.2f", "1,234,567.89", "1.234.567,89"),
        (0.52, "g", "0.52", "0,52"),
    ],
)
def test_numbers_follow_the_language(value: float, spec: str, english: str, german: str) -> None:
    assert number(value, spec, Language.EN) == english
    assert number(value, spec, Language.DE) == german


@pytest.mark.parametrize(
    ("locale", "language"),
    [("de", Language.DE), ("en-US", Language.EN), ("fr", Language.EN), (None, Language.EN)],
)
def test_the_locale_picks_the_language(locale: str | None, language: Language) -> None:
    assert language_for(locale) is language


EXTREMES: list[dict[str, Any]] = [
    {"gpus": 4096, "batch_size": 65_536, "seq_len": 1_048_576, "lora_rank": 1024, "flash_attention": False},
    {"gpus": 2, "activations": 999_999.123456789, "bytes_per_param": 63.987654321, "gpu": "t4"},
]


def _preset_params() -> list[Any]:
    """Every preset; in the default suite the longest name and the first of each family, which have
    every kind of line (a family's presets differ in their numbers, held by the limits' own margins),
    the rest under ``-m fuzz`` (CI runs both)."""
    found = presets()
    quick = {max(found, key=lambda key: len(found[key].name))}
    kinds: set[tuple[str | None, bool, bool]] = set()
    for key in sorted(found):
        kind = (found[key].family, found[key].is_moe, found[key].non_text_params > 0)
        if kind not in kinds:
            kinds.add(kind)
            quick.add(key)
    return [pytest.param(key, marks=() if key in quick else pytest.mark.fuzz) for key in sorted(found)]


@pytest.mark.parametrize("language", list(Language))
@pytest.mark.parametrize("key", _preset_params())
def test_every_view_of_every_preset_stays_within_discords_limits(language: Language, key: str) -> None:
    for extra in EXTREMES:
        result = estimate(
            parse_request(model=key, params=99_999.123456789 if "activations" in extra else None, **extra)
        )
        for render in RENDERERS:
            assert embed_limit_problems(render(result, language)) == [], (render.__name__, extra)


@pytest.mark.parametrize("language", list(Language))
def test_descriptions_and_choice_names_fit_discord(language: Language) -> None:
    texts = [discord_description(spec, language) for spec in command_options()]
    texts.append(catalogue(language)["command.description"])
    texts += [optimizer_choice_name(o, language) for o in Optimizer]
    texts += [gpu_choice_name(g, language) for g in Gpu]
    for text in texts:
        assert 1 <= len(text) <= DISCORD_DESCRIPTION_MAX, text


def test_the_translator_answers_german_and_english_and_leaves_other_locales_alone() -> None:
    translator = CatalogueTranslator()
    description = app_commands.locale_str("x", key="command.description")
    context: app_commands.TranslationContextTypes = app_commands.TranslationContext(
        app_commands.TranslationContextLocation.other, None
    )
    answers = {
        locale.value: asyncio.run(translator.translate(description, locale, context)) for locale in LOCALES
    }
    assert answers["de"] == catalogue(Language.DE)["command.description"]
    assert answers["en-GB"] == catalogue(Language.EN)["command.description"]
    import discord

    assert asyncio.run(translator.translate(description, discord.Locale.french, context)) is None
    plain = app_commands.locale_str("params")  # an option name: no key, so no localization
    assert asyncio.run(translator.translate(plain, discord.Locale.german, context)) is None


def test_a_languages_templates_are_built_on_first_lookup() -> None:
    """The start needs a few of the catalogue's strings (the command's descriptions): each Template is
    made when first looked up, not all of them when the language is first used (the cold start)."""
    built = Templates(Language.DE)
    assert len(built) == 0
    assert built["command.description"].fill({}) == catalogue(Language.DE)["command.description"]
    assert built["verdict.fits"].names == Template(catalogue(Language.DE)["verdict.fits"]).names
    assert list(built) == ["command.description", "verdict.fits"]
    with pytest.raises(KeyError):
        built["no.such_key"]
    assert isinstance(templates(Language.EN), Templates)


def test_syncing_the_command_reads_only_the_commands_catalogue() -> None:
    """Every string of the command as discord.py syncs it, in every locale we translate, comes from
    the small ``<language>.command.toml``: the answers' catalogue is not read at start (the cold
    start, benchmarks/README.md)."""
    import discord
    from discord.ext import commands

    async def sync_payload() -> list[dict[str, Any]]:
        bot = commands.Bot(command_prefix=commands.when_mentioned, intents=discord.Intents.none())
        await bot.load_extension("cogs.vram")
        await bot.tree.set_translator(CatalogueTranslator())
        tree, translator = bot.tree, bot.tree.translator
        assert translator is not None
        return [await command.get_translated_payload(tree, translator) for command in tree.get_commands()]

    for cached in (catalogue, command_catalogue, templates):
        cached.cache_clear()
    try:
        payload = asyncio.run(sync_payload())
        assert catalogue.cache_info().currsize == 0, "syncing the command read the answers' catalogue"
        assert command_catalogue.cache_info().currsize == len(Language)
        german = [command["description_localizations"]["de"] for command in payload]
        assert german == [catalogue(Language.DE)["command.description"]]
    finally:
        for cached in (catalogue, command_catalogue, templates):
            cached.cache_clear()
