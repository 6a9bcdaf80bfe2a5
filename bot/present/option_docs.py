"""The options described for people: Discord's descriptions, the CLI's help and the README's table.

All three come from the option table (:func:`bot.estimate.request.command_options`) and the
catalogue, so what ``vram-bot estimate --help``, the README and Discord say about an option is the
same. The default shown is the one the estimate uses (:attr:`OptionSpec.default_used`), and a CLI
flag's help reads in the flag's own sense: ``--checkpointing`` turns it on, ``--no-flash-attention``
turns it off. An option declared later gets all of this from its declaration alone.
"""

from __future__ import annotations

from bot.estimate.options import OptionSpec
from bot.present.command_line import value_text
from bot.present.i18n import DEFAULT_LANGUAGE, Language
from bot.present.problems import describe_limit
from bot.present.words import Words


def allowed_values(spec: OptionSpec, w: Words, *, on_discord: bool = True) -> str:
    """What the option takes: its range, its choices, or its kind (Discord's typing hints only where
    Discord is the one offering them)."""
    if spec.option.limit is not None:
        return describe_limit(spec, w)
    if spec.option.choices is not None:
        return w("docs.choice", choices=", ".join(f"`{c.value}`" for c in spec.option.choices))
    if spec.kind == "boolean":
        return w("docs.boolean")
    text = w("docs.text", length=w.plain(spec.option.max_length or 0))
    if on_discord and spec.option.autocomplete:
        return w("docs.suggested", allowed=text)
    return text


def default_value(spec: OptionSpec, w: Words) -> str:
    """The default the estimate uses, as typed (``h100``, ``2048``), or that there is none."""
    if spec.default_used is None:
        return w("docs.no_default")
    return f"`{value_text(spec.default_used)}`"


def description(spec: OptionSpec, w: Words) -> str:
    """What the option is, in one line, in the option's own (Discord's) sense."""
    return w(spec.option.description_key)


def discord_description(spec: OptionSpec, language: Language = DEFAULT_LANGUAGE) -> str:
    """The description Discord shows beside the option: what it is and its default, if it has one."""
    w = Words(language)
    if spec.default_used is None:
        return description(spec, w)
    return w("docs.with_default", description=description(spec, w), default=value_text(spec.default_used))


def flag_description(spec: OptionSpec, w: Words) -> str:
    """What giving the CLI flag does: a negated flag (``--no-…``) describes what it turns off."""
    if not spec.negated_flag:
        return description(spec, w)
    if spec.option.off_description_key is not None:
        return w(spec.option.off_description_key)
    return w("docs.turns_off", description=description(spec, w))


def option_help(spec: OptionSpec, language: Language = DEFAULT_LANGUAGE) -> str:
    """One line for ``--help``: what the flag does, what it takes, its default."""
    w = Words(language)
    what = flag_description(spec, w)
    if spec.negated_flag:
        return w("docs.help_negated_flag", description=what, option=spec.name)
    if spec.kind == "boolean":
        return w("docs.help_flag", description=what)
    allowed = allowed_values(spec, w, on_discord=False).replace("`", "")
    default = default_value(spec, w).replace("`", "")
    return w("docs.help", description=what, allowed=allowed, default=default)
