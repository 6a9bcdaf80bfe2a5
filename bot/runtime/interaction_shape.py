"""What an ``INTERACTION_CREATE`` payload must hold for discord.py to read it to the end.

discord.py reads part of an interaction when the event arrives (its parser, which raises on what it
cannot read: :mod:`bot.runtime.gateway` catches that) and the rest later, in tasks of its own: the
command tree reads the command's name and options, the view store the clicked component and the
message it rebuilds a view from. A payload those tasks cannot read failed there, as "Task exception
was never retrieved", after the event had been accepted. :func:`interaction_problem` says up front
what they would trip over, from Discord's documented shapes
(discord.com/developers/docs/interactions/receiving-and-responding#interaction-object) and what
discord.py 2.7 reads of them; ``tests/test_fuzz_gateway.py`` fuzzes every field to keep it complete.

What the bot answers with a clear message itself (an option's value or type that does not fit: the
cog, ``bot.runtime.cog``) is left alone here: dropping the event would leave the user with no answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeGuard

import discord

_Check = Callable[[object], bool]
_PING, _COMMAND, _COMPONENT, _AUTOCOMPLETE, _MODAL = 1, 2, 3, 4, 5
_SUB_COMMANDS = (1, 2)  # option types: sub-command, sub-command group
_ACTION_ROW = 1
# What an action row of a classic view holds: buttons and the five kinds of select.
_ROW_ITEMS = frozenset({2, 3, 5, 6, 7, 8})
_COMMAND_TYPES = frozenset(kind.value for kind in discord.AppCommandType)
_OPTION_TYPES = frozenset(kind.value for kind in discord.AppCommandOptionType)


def _kind(value: object) -> str:
    """The JSON kind of a value, for the log line (the value itself may be a secret)."""
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list"}
    if value == "":
        return "an empty string"
    return "null" if value is None else names.get(type(value), "an object")


def _is_snowflake(value: object) -> bool:
    # Discord sends IDs as decimal strings; discord.py calls int() on them.
    if type(value) is int:
        return 0 <= value < 2**64
    return type(value) is str and value.isascii() and value.isdigit() and len(value) <= 20


def _is_integer(value: object) -> bool:
    return type(value) is int  # not bool, which Python counts as an int


def _is_text(value: object) -> bool:
    return type(value) is str and value != ""


def _is_string(value: object) -> bool:
    return type(value) is str  # a name, which may be empty: the command tree answers it


def _is_object(value: object) -> TypeGuard[dict[str, Any]]:
    return type(value) is dict


def _is_list(value: object) -> TypeGuard[list[Any]]:
    return type(value) is list


def _is_one_of(value: object, allowed: frozenset[int]) -> bool:
    return type(value) is int and value in allowed


_WHAT: dict[_Check, str] = {
    _is_snowflake: "an ID",
    _is_integer: "a whole number",
    _is_text: "a non-empty string",
    _is_string: "a string",
    _is_object: "an object",
    _is_list: "a list",
}


def _field_problem(
    payload: dict[str, Any], key: str, check: _Check, where: str = "", *, required: bool = True
) -> str | None:
    """What is wrong with ``payload[key]``: missing (when required) or not what ``check`` accepts."""
    if key not in payload:
        return f"no {where}{key}" if required else None
    value = payload[key]
    return None if check(value) else f"{where}{key} is {_kind(value)}, not {_WHAT[check]}"


def _options_problem(options: object, where: str, *, autocomplete: bool) -> str | None:
    """Every option, at every depth, names itself with a string (the command tree indexes by it) and
    carries a value unless it is a sub-command; in an autocomplete, the option being typed (focused,
    with the text so far) has an option type.

    Otherwise option types and values are left to the cog, which answers a wrong one with a clear
    message or an empty list of suggestions (``bot.runtime.cog``); a dropped event would get
    neither. The focused option is the one it leaves to discord.py, which hands it to the command's
    autocomplete by its type.
    """
    if not _is_list(options):
        return None  # the command tree answers that
    for index, option in enumerate(options):
        if not _is_object(option):
            continue  # the command tree answers that too
        at = f"{where}options[{index}]."
        problem = _field_problem(option, "name", _is_string, at)
        # The text typed so far, which the cog leaves to discord.py (bot.runtime.cog).
        typed = autocomplete and option.get("focused") is True and type(option.get("value")) is str
        if typed and not problem and not _is_one_of(option.get("type"), _OPTION_TYPES):
            problem = f"{at}type of the focused option is not an option type"
        if option.get("type") in _SUB_COMMANDS:
            problem = problem or _options_problem(option.get("options"), at, autocomplete=autocomplete)
        elif "value" not in option:
            problem = problem or f"no {at}value"
        if problem:
            return problem
    return None


def _command_problem(data: dict[str, Any], *, autocomplete: bool) -> str | None:
    """What discord.py's command tree reads of a command or autocomplete, in a task of its own."""
    problem = (
        _field_problem(data, "name", _is_string, "data.")
        or _field_problem(data, "type", _is_integer, "data.", required=False)
        or _field_problem(data, "guild_id", _is_snowflake, "data.", required=False)
        or _field_problem(data, "resolved", _is_object, "data.", required=False)
        or _options_problem(data.get("options"), "data.", autocomplete=autocomplete)
    )
    if not problem and not _is_one_of(data.get("type", 1), _COMMAND_TYPES):
        problem = f"data.type {data['type']} is not a command type"
    for kind, entries in data.get("resolved", {}).items():
        if not problem and not (_is_object(entries) and all(map(_is_object, entries.values()))):
            problem = f"data.resolved.{kind} is not an object of objects"
    return problem


def _component_problem(data: dict[str, Any], message: object) -> str | None:
    """What discord.py's view store reads of a click or a pick, and of the message clicked, whose
    view it rebuilds from the message's components."""
    problem = _field_problem(data, "custom_id", _is_text, "data.") or _field_problem(
        data, "component_type", _is_integer, "data."
    )
    values = data.get("values", [])
    if not problem and not (_is_list(values) and all(type(v) is str for v in values)):
        problem = "data.values is not a list of strings"
    if problem:
        return problem
    if not _is_object(message) or not _is_list(message.get("components")):
        return "message is not an object with a list of components"
    problem = _field_problem(message, "flags", _is_integer, "message.", required=False)
    for index, row in enumerate(message["components"]):
        at = f"message.components[{index}]"
        if problem:
            break
        if not _is_object(row) or not _is_integer(row.get("type")):
            problem = f"{at} is not a component"
        elif row["type"] == _ACTION_ROW:
            items = row.get("components", [])
            problem = None if _is_list(items) else f"{at}.components is not a list"
            for place, item in enumerate(items if _is_list(items) else ()):
                problem = problem or _row_item_problem(item, f"{at}.components[{place}]")
    return problem


def _row_item_problem(item: object, at: str) -> str | None:
    """What discord.py checks when it rebuilds a button or a select of the clicked message."""
    if not _is_object(item) or not _is_one_of(item.get("type"), _ROW_ITEMS):
        return f"{at} is not a button or a select"
    for key in ("custom_id", "url", "label", "placeholder"):
        value = item.get(key)
        if value is not None and type(value) is not str:
            return f"{at}.{key} is {_kind(value)}, not a string"
    # A select has its custom_id; a button that, a link (url) or a purchase (sku_id): one of them.
    targets = [key for key in ("custom_id", "url", "sku_id") if item.get(key) is not None]
    if len(targets) != 1:
        return f"{at} has {' and '.join(targets) or 'no custom_id'}"
    options = item.get("options", [])
    if not (_is_list(options) and all(map(_is_object, options))):
        return f"{at}.options is not a list of objects"
    return None


def _modal_problem(data: dict[str, Any]) -> str | None:
    return _field_problem(data, "custom_id", _is_text, "data.") or _field_problem(
        data, "components", _is_list, "data."
    )


# What every interaction carries (discord.com/developers/docs/interactions/receiving-and-responding
# #interaction-object), and what it may carry, as discord.py reads them.
_REQUIRED: dict[str, _Check] = {
    "id": _is_snowflake,
    "application_id": _is_snowflake,
    "type": _is_integer,
    "token": _is_text,
    "version": _is_integer,
}
_OPTIONAL: dict[str, _Check] = {"locale": _is_string, "guild_locale": _is_string}


def interaction_problem(payload: object) -> str | None:
    """Why discord.py could not read this ``INTERACTION_CREATE`` payload, or None when it can.

    Only the shape discord.py reads outside its parser (its command tree and view store run in tasks,
    where a failure would be "Task exception was never retrieved" and no log of the event), and what
    it keeps unread but the bot reads (the locale, the user); what the parser itself reads, it
    reports by raising, which :func:`tolerate_unreadable_events` catches.
    """
    if not _is_object(payload):
        return f"the interaction is {_kind(payload)}"
    for key, check in _REQUIRED.items():
        problem = _field_problem(payload, key, check)
        if problem:
            return problem
    for key, check in _OPTIONAL.items():
        problem = _field_problem(payload, key, check, required=False)
        if problem:
            return problem
    guild_id = payload.get("guild_id")
    if guild_id is not None and not _is_snowflake(guild_id):
        return f"guild_id is {_kind(guild_id)}, not an ID"
    if guild_id:  # in a server: the member, with their user; discord.py ignores "user" there
        member = payload.get("member")
        if not _is_object(member) or not _is_object(member.get("user")):
            return "no member with a user, in a server"
    elif not _is_object(payload.get("user")):
        return "no user, outside a server"
    kind, data = payload["type"], payload.get("data")
    if kind == _PING:
        return None
    if not _is_object(data):
        return "no data" if data is None else f"data is {_kind(data)}, not an object"
    if kind in (_COMMAND, _AUTOCOMPLETE):
        return _command_problem(data, autocomplete=kind == _AUTOCOMPLETE)
    if kind == _COMPONENT:
        return _component_problem(data, payload.get("message"))
    if kind == _MODAL:
        return _modal_problem(data)
    return None
