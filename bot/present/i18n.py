"""Languages, the string catalogues and locale-aware numbers.

Every user-facing string lives in ``bot/data/strings/``, one catalogue per language, addressed by
dotted keys (``field.total``) and filled with ``str.format`` placeholders. A language's catalogue is
two files: ``<language>.command.toml``, what Discord shows of the command before it runs (its
description, the options' descriptions, their choices' names), which the bot reads at start to sync
the command; and ``<language>.toml``, everything else, read when a first answer needs it (the larger
file is most of the catalogues' parsing, some 80 M instructions of the start: benchmarks/README.md,
the cold start). Nothing here knows about Discord: the cog maps ``interaction.locale`` to a
:class:`Language` with :func:`language_for`.
"""

from __future__ import annotations

import string
import tomllib
from collections.abc import Mapping
from enum import StrEnum
from functools import cache, lru_cache
from importlib import resources
from operator import itemgetter
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


def _read(file_name: str) -> dict[str, str]:
    source = resources.files("bot").joinpath("data", "strings", file_name)
    return _flatten(tomllib.loads(source.read_text(encoding="utf-8")))


@cache
def command_catalogue(language: Language) -> dict[str, str]:
    """The strings of one language that Discord shows of the command before it runs."""
    return _read(f"{language.value}.command.toml")


@cache
def catalogue(language: Language) -> dict[str, str]:
    """All strings of one language, keyed by their dotted name: the command's and the answers'."""
    command, answers = command_catalogue(language), _read(f"{language.value}.toml")
    if twice := sorted(command.keys() & answers.keys()):
        raise ValueError(f"{language.value}: in both {language.value}.command.toml and .toml: {twice}")
    return {**command, **answers}


class Template:
    """A catalogue string made quick to fill: ``Template("{gb} to spare").fill({"gb": "4.0 GB"})``.

    ``str.format_map`` parses the text and looks each placeholder up by name on every call, about
    2,000 instructions per placeholder (callgrind); an answer fills a few dozen. Parsed once here, the
    text keeps printf-style ``%s`` slots, and one ``itemgetter`` call takes the values in order, for
    half the cost. Only plain named placeholders (``{gb}``) are allowed, as in every catalogue string.
    """

    __slots__ = ("_pick", "_text", "names")

    def __init__(self, source: str) -> None:
        literals: list[str] = []
        slots: list[str] = []
        names: list[str] = []
        for literal, name, spec, conversion in string.Formatter().parse(source):
            literals.append(literal)
            slots.append(literal.replace("%", "%%"))
            if name is None:
                continue
            if not name.isidentifier() or spec or conversion:
                raise ValueError(f"{source!r}: only plain named placeholders such as {{gb}}")
            slots.append("%s")
            names.append(name)
        self.names = tuple(names)
        # Without placeholders the text is final; with them, "%" is escaped for the slots.
        self._text = "".join(slots) if names else "".join(literals)
        # itemgetter of two names or more gives a tuple; of one, the bare value (see fill()).
        self._pick = itemgetter(*names) if len(names) > 1 else None

    def fill(self, values: Mapping[str, object]) -> str:
        """The text with each placeholder's value (``str()`` of it, as ``format`` gives for the
        numbers and words filled in); a KeyError names a missing one, and extra values are ignored."""
        if self._pick is not None:
            filled: str = self._text % self._pick(values)  # (typeshed: itemgetter gives Any)
            return filled
        if self.names:
            return self._text % (values[self.names[0]],)
        return self._text


class Templates(dict[str, Template]):
    """The strings of one language, each made a :class:`Template` when first looked up: the start
    needs only the command's descriptions of the catalogue's hundreds (benchmarks/README.md, the cold
    start), an answer a few dozen. An unknown key is a KeyError, as in the catalogue."""

    __slots__ = ("_language",)

    def __init__(self, language: Language) -> None:
        super().__init__()
        self._language = language

    def __missing__(self, key: str) -> Template:
        template = self[key] = Template(_source(self._language, key))
        return template


def _source(language: Language, key: str) -> str:
    """A catalogue string, read from the command's small file while that holds it, so that syncing
    the command never reads the answers' file."""
    command = command_catalogue(language)
    return command[key] if key in command else catalogue(language)[key]


@cache
def templates(language: Language) -> dict[str, Template]:
    """All strings of one language, ready to fill (:class:`Template`), keyed by their dotted name."""
    return Templates(language)


def text(language: Language, key: str, /, **values: object) -> str:
    """The catalogue string ``key`` in ``language``, with its placeholders filled in."""
    return templates(language)[key].fill(values)


def has_text(language: Language, key: str) -> bool:
    return key in command_catalogue(language) or key in catalogue(language)


def placeholders(template: str) -> set[str]:
    """The names a catalogue string expects, e.g. ``{"gb"}`` for ``"{gb} to spare"``."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def substituted(template: str, replacements: dict[str, str]) -> str:
    """``template`` with each placeholder named in ``replacements`` replaced by that template text,
    its literal braces still escaped, so that catalogue strings can be joined into one template and
    filled in one go (:class:`Template`): ``substituted("weights {gb}", {"gb": "{gb_weights}"})`` is
    ``"weights {gb_weights}"``. A replaced placeholder has no format spec (none in the catalogue has)."""
    pieces: list[str] = []
    for literal, name, spec, conversion in string.Formatter().parse(template):
        pieces.append(literal.replace("{", "{{").replace("}", "}}"))
        if name is None:
            continue
        if name in replacements:
            if spec or conversion:
                raise ValueError(f"{{{name}}} has a format spec: it cannot be replaced by text")
            pieces.append(replacements[name])
        else:
            field = name + (f"!{conversion}" if conversion else "")
            pieces.append(f"{{{field}:{spec}}}" if spec else f"{{{field}}}")
    return "".join(pieces)


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
