"""The one error handler for everything ``/vram``, its autocomplete and its controls raise.

The cog calls :func:`answer_error` from its own handlers (``cog_app_command_error``, its
``on_interaction`` listener for payloads discord.py cannot read) and the controls call it from theirs,
so what the user sees for bad input, an expired interaction or a bug is decided in one place, with
discord.py's default command tree: nothing here needs the host bot's tree.
"""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord import app_commands

from bot.estimate.hub import HubFailure
from bot.estimate.request import InvalidRequest, Problem
from bot.present.command_line import UnreadableCommand
from bot.present.custom_ids import UnreadableState
from bot.present.hub_problems import hub_failure_message
from bot.runtime.replies import (
    apologize,
    is_expired,
    language_of,
    reply_bad_control,
    reply_ephemeral,
    reply_problems,
    warn_expired,
)

log = logging.getLogger(__name__)

_SUB_COMMAND, _SUB_COMMAND_GROUP = 1, 2
_STRING, _INTEGER, _BOOLEAN, _NUMBER = 3, 4, 5, 10
_SNOWFLAKE_TYPES = {6, 7, 8, 9, 11}  # user, channel, role, mentionable, attachment


class MalformedOptions(app_commands.AppCommandError):
    """The payload's option values do not have the JSON types their options claim."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(f"malformed options: {problems}")
        self.problems = problems


class NothingToSuggest(app_commands.AppCommandError):
    """An autocomplete for an option that has no suggestions, or with no option being typed."""


# The JSON types each option type's value may have, as decoded (exact types: a boolean is not a
# number, although Python's bool is an int).
_VALUE_TYPES: dict[int, tuple[type, ...]] = {
    _STRING: (str,),
    _BOOLEAN: (bool,),
    _INTEGER: (int,),
    _NUMBER: (int, float),
}


def _value_has_its_type(option_type: int, value: Any) -> bool:
    allowed = _VALUE_TYPES.get(option_type)
    if allowed is not None:
        return type(value) in allowed
    if option_type in _SNOWFLAKE_TYPES:
        return type(value) in (str, int) and str(value).isdigit()
    return True  # a type this code does not know: leave it to discord.py


def malformed_options(options: list[Any]) -> list[Problem]:
    """Options whose JSON value does not match the option type they claim (Discord never sends such)."""
    problems: list[Problem] = []
    for option in options:
        if not isinstance(option, dict):
            problems.append(Problem("wrong_type", "options"))
            continue
        option_type = option.get("type")
        if option_type in (_SUB_COMMAND, _SUB_COMMAND_GROUP):
            nested = option.get("options", [])
            problems += (
                malformed_options(nested) if isinstance(nested, list) else [Problem("wrong_type", "options")]
            )
        elif option.get("focused") is True and isinstance(option.get("value"), str):
            continue  # the option being typed in an autocomplete: its value is the text so far
        elif (
            not isinstance(option_type, int)
            or isinstance(option_type, bool)
            or ("value" in option and not _value_has_its_type(option_type, option["value"]))
        ):
            problems.append(Problem("wrong_type", str(option.get("name", "?"))[:100]))
    return problems


def payload_problems(data: Any) -> list[Problem]:
    """What is wrong with the option values of a command's payload ``data``: empty when nothing."""
    options = data.get("options", []) if isinstance(data, dict) else []
    if not isinstance(options, list):
        return [Problem("wrong_type", "options")]
    return malformed_options(options)


def _top_options(data: Any) -> list[dict[str, Any]]:
    options = data.get("options", []) if isinstance(data, dict) else []
    return [o for o in options if isinstance(o, dict)] if isinstance(options, list) else []


def focused_option(data: Any) -> tuple[Any, Any] | None:
    """The name and value of the option being typed in an autocomplete payload ``data``, as the raw
    JSON holds them: the first option whose ``focused`` is true-ish, as discord.py picks it (a
    top-level option: ``/vram`` has no sub-commands)."""
    focused = next((o for o in _top_options(data) if o.get("focused")), None)
    return None if focused is None else (focused.get("name"), focused.get("value"))


def first_option_name(data: Any) -> str:
    """The name of a payload's first option (a sub-command's, when it names one), for the answer."""
    options = _top_options(data)
    return str(options[0].get("name", ""))[:100] if options else ""


async def answer_error(interaction: discord.Interaction, error: Exception) -> None:
    """What the user sees when answering failed: the problem, "nothing changed", or an apology.

    Bad input is the user's to fix, so it gets an ephemeral explanation and no log at ERROR; an expired
    interaction cannot be answered at all, so it gets one warning; anything else is a bug, logged with
    its traceback once, and the user gets a short apology.
    """
    original = getattr(error, "original", error)  # CommandInvokeError wraps it
    if interaction.type is discord.InteractionType.autocomplete:
        await _no_suggestions(interaction, original)
    elif isinstance(original, MalformedOptions | InvalidRequest):
        log.info("Refused the input of interaction %s: %s", interaction.id, original.problems)
        await reply_problems(interaction, original.problems)
    elif isinstance(original, app_commands.CommandNotFound):
        # A sub-command Discord never registered (a crafted payload, which the fuzzer sends): bad input.
        log.info("Refused the input of interaction %s: no command %r", interaction.id, original.name)
        await reply_problems(interaction, [Problem("not_an_option", original.name[:100])])
    elif isinstance(original, HubFailure):
        # The user's to act on (another ID, a token for the operator, a retry): no traceback.
        log.info("Hub lookup failed for interaction %s: %s", interaction.id, original)
        await reply_ephemeral(interaction, hub_failure_message(original, language_of(interaction)))
    elif isinstance(original, UnreadableState | UnreadableCommand):
        log.info("Refused a control of interaction %s: %s", interaction.id, original)
        await reply_bad_control(interaction)
    elif is_expired(original):
        warn_expired(interaction)  # too late to answer at all, so no apology either
    else:
        log.error("Answering interaction %s failed", interaction.id, exc_info=original)
        await apologize(interaction)


async def _no_suggestions(interaction: discord.Interaction, error: Exception) -> None:
    """An autocomplete shows no message, so whatever went wrong, it gets an empty list of suggestions.

    Input Discord's client never sends (wrong types, a focused option without suggestions, discord.py's
    own refusals of a payload such as "no focused option") is the sender's problem, logged at INFO;
    anything else is a bug, logged with its traceback.
    """
    refused = isinstance(error, app_commands.AppCommandError)  # MalformedOptions and NothingToSuggest too
    if refused and not isinstance(error, app_commands.CommandInvokeError):
        log.info("No suggestions for interaction %s: %s", interaction.id, error)
    else:
        log.error("Suggesting for interaction %s failed", interaction.id, exc_info=error)
    try:
        await interaction.response.autocomplete([])
    except discord.HTTPException as exc:
        log.warning("Could not answer autocomplete %s: %s", interaction.id, exc)
