"""The options described for people: Discord's descriptions, the CLI's help and the README's table.

Both come from the option table (:func:`bot.estimate.request.command_options`) and the catalogue, so
what ``vram-bot estimate --help``, the README and Discord say about an option is the same.
"""

from __future__ import annotations

from bot.estimate.hardware import DEFAULT_GPU
from bot.estimate.options import OptionSpec
from bot.estimate.request import DEFAULT_BATCH_SIZE, DEFAULT_SEQ_LEN
from bot.present.command_line import value_text
from bot.present.i18n import DEFAULT_LANGUAGE, Language
from bot.present.problems import describe_limit
from bot.present.words import Words


def allowed_values(spec: OptionSpec, w: Words) -> str:
    """What the option takes: its range, its choices, or its kind."""
    if spec.option.limit is not None:
        return describe_limit(spec, w)
    if spec.option.choices is not None:
        return w("docs.choice", choices=", ".join(f"`{c.value}`" for c in spec.option.choices))
    if spec.kind == "boolean":
        return w("docs.boolean")
    return w("docs.text", length=w.plain(spec.option.max_length or 0))


def default_value(spec: OptionSpec, w: Words) -> str:
    if spec.default is None:
        return w("docs.no_default")
    return f"`{value_text(spec.default)}`"


def description(spec: OptionSpec, w: Words) -> str:
    """What the option is, in one line (the defaults that are not the option's own filled in)."""
    return w(
        spec.option.description_key,
        gpu=DEFAULT_GPU.display_name,
        batch_size=w.plain(DEFAULT_BATCH_SIZE),
        seq_len=w.plain(DEFAULT_SEQ_LEN),
    )


def discord_description(spec: OptionSpec, language: Language = DEFAULT_LANGUAGE) -> str:
    """The description Discord shows beside the option: what it is and its default, if it has one."""
    w = Words(language)
    if spec.default is None:
        return description(spec, w)
    return w("docs.with_default", description=description(spec, w), default=value_text(spec.default))


def option_help(spec: OptionSpec, language: Language = DEFAULT_LANGUAGE) -> str:
    """One line for ``--help``: what it is, what it takes, its default."""
    w = Words(language)
    allowed = allowed_values(spec, w).replace("`", "")
    default = default_value(spec, w).replace("`", "")
    return w("docs.help", description=description(spec, w), allowed=allowed, default=default)
