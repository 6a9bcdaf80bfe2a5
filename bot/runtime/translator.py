"""Discord localizations for the slash command, from the string catalogues.

discord.py asks a :class:`~discord.app_commands.Translator` for every ``locale_str`` in the command
tree and every Discord locale when it syncs, and sends the answers as ``name_localizations`` /
``description_localizations``. Strings carry their catalogue key in ``extras``; option names carry
none, so they stay the same ASCII words (``params``) in every language.
"""

from __future__ import annotations

import discord
from discord import app_commands

from bot.estimate.core import Optimizer
from bot.estimate.hardware import Gpu
from bot.present.i18n import DEFAULT_LANGUAGE, Language, has_text, text
from bot.present.render import gpu_choice_name, optimizer_choice_name

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


def optimizer_choice(optimizer: Optimizer) -> app_commands.Choice[str]:
    name = app_commands.locale_str(optimizer_choice_name(optimizer), optimizer=optimizer.value)
    return app_commands.Choice(name=name, value=optimizer.value)


def gpu_choice(gpu: Gpu) -> app_commands.Choice[str]:
    return app_commands.Choice(
        name=app_commands.locale_str(gpu_choice_name(gpu), gpu=gpu.value), value=gpu.value
    )


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
        if "optimizer" in extras:
            return optimizer_choice_name(Optimizer(extras["optimizer"]), language)
        if "gpu" in extras:
            return gpu_choice_name(Gpu(extras["gpu"]), language)
        key = extras.get("key")
        if isinstance(key, str) and has_text(language, key):
            return text(language, key)
        return None
