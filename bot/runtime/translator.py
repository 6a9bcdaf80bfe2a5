"""Discord localizations for the slash command, from the string catalogues.

discord.py asks a :class:`~discord.app_commands.Translator` for every ``locale_str`` in the command
tree and every Discord locale when it syncs, and sends the answers as ``name_localizations`` /
``description_localizations``. Descriptions carry their catalogue key in ``extras``, choice names
the option and the value; option names carry nothing, so they stay the same ASCII words (``params``)
in every language.
"""

from __future__ import annotations

from enum import StrEnum

import discord
from discord import app_commands

from bot.estimate.options import OptionSpec
from bot.estimate.request import option
from bot.present.i18n import DEFAULT_LANGUAGE, Language, has_text, text
from bot.present.option_docs import discord_description
from bot.present.phrases import choice_name

# Discord's locales we have a catalogue for. English ones are registered too, so that a client set
# to British English sees the same words as the default.
LOCALES: dict[discord.Locale, Language] = {
    discord.Locale.german: Language.DE,
    discord.Locale.american_english: Language.EN,
    discord.Locale.british_english: Language.EN,
}


def localized(key: str) -> app_commands.locale_str:
    """A catalogue string for the command tree: English as the default, the key for the translator."""
    return app_commands.locale_str(text(DEFAULT_LANGUAGE, key), key=key)


def localized_description(spec: OptionSpec) -> app_commands.locale_str:
    """An option's description for the command tree, with its default, localized by the translator."""
    return app_commands.locale_str(discord_description(spec), description_of=spec.name)


def localized_choice(option_name: str, choice: StrEnum) -> app_commands.Choice[str]:
    """One choice of a choice option, named in English by default and localized by the translator."""
    name = app_commands.locale_str(choice_name(choice), option=option_name, value=choice.value)
    return app_commands.Choice(name=name, value=choice.value)


class CatalogueTranslator(app_commands.Translator):
    async def translate(
        self,
        string: app_commands.locale_str,
        locale: discord.Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        language = LOCALES.get(locale)
        if language is None:
            return None
        extras = string.extras
        if "description_of" in extras:
            return discord_description(option(extras["description_of"]), language)
        if "option" in extras:  # a choice's name
            choices = option(extras["option"]).option.choices
            return choice_name(choices(extras["value"]), language) if choices is not None else None
        key = extras.get("key")
        if isinstance(key, str) and has_text(language, key):
            return text(language, key)
        return None
