"""Languages, the string catalogues and locale-aware numbers.

Every user-facing string lives in ``bot/data/strings/<language>.toml``, one catalogue per language,
addressed by dotted keys (``field.total``) and filled with ``str.format`` placeholders. Nothing here
knows about Discord: the cog maps ``interaction.locale`` to a :class:`Language` with
:func:`language_for`.
"""

from __future__ import annotations

import string
import tomllib
from enum import StrEnum
from functools import cache, lru_cache
from importlib import resources
from typing import Any


class Language(StrEnum):
    EN = "en"
    DE = "de"


DEFAULT_LANGUAGE = Language.EN


def language_for(locale: object) -> Language:
    """The catalogue for a Discord locale (``de``, ``en-US``): by its language code, else English."""
    return _language_of_code(str(locale or ""))


# Every answer asks for its user's language: matched once per locale (Discord has some 30), not per
# answer; the bound keeps crafted locales from growing it.
@lru_cache(maxsize=64)
def _language_of_code(code: str) -> Language:
    code = code.lower()
    for language in Language:
        if code == language.value or code.startswith(f"{language.value}-"):
            return language
    return DEFAULT_LANGUAGE


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, str]:
    flat: dict[str, str] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{name}."))
        elif isinstance(value, str):
            flat[name] = value
        else:
            raise TypeError(f"catalogue entry {name} is not a string")
    return flat


@cache
def catalogue(language: Language) -> dict[str, str]:
    """All strings of one language, keyed by their dotted name."""
    source = resources.files("bot").joinpath("data", "strings", f"{language.value}.toml")
    return _flatten(tomllib.loads(source.read_text(encoding="utf-8")))


@cache
def fixed_strings(language: Language) -> dict[str, str]:
    """The strings of one language that have no placeholders, as shown (``{{`` already ``{``): most
    of an answer's words, looked up rather than formatted every time."""
    return {
        key: template.format() for key, template in catalogue(language).items() if not placeholders(template)
    }


def text(language: Language, key: str, /, **values: object) -> str:
    """The catalogue string ``key`` in ``language``, with its placeholders filled in."""
    return catalogue(language)[key].format(**values)


def has_text(language: Language, key: str) -> bool:
    return key in catalogue(language)


def placeholders(template: str) -> set[str]:
    """The names a catalogue string expects, e.g. ``{"gb"}`` for ``"{gb} to spare"``."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


# -- numbers ---------------------------------------------------------------------------------------

# English groups thousands with "," and writes "." before decimals; German the other way round
# (DIN 5008 / Duden: 1.000,5). None: Python's own (English) separators.
_DIGIT_SWAPS: dict[Language, dict[int, str] | None] = {
    Language.EN: None,
    Language.DE: str.maketrans({",": ".", ".": ","}),
}


def digit_swaps(language: Language) -> dict[int, str] | None:
    """The ``str.translate`` table that turns Python's English separators into ``language``'s, or None."""
    return _DIGIT_SWAPS[language]


def localize_digits(formatted: str, language: Language) -> str:
    """Turn a number Python formatted the English way (``1,234.5``) into ``language``'s way."""
    swaps = _DIGIT_SWAPS[language]
    return formatted if swaps is None else formatted.translate(swaps)


def number(value: float, spec: str, language: Language) -> str:
    """``format(value, spec)`` with the separators of ``language``; use "," in ``spec`` for groups."""
    return localize_digits(format(value, spec), language)
