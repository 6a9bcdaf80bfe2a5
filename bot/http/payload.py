"""A raw interaction as Discord POSTs it, read the way discord.py reads the same fields for the cog.

Each reader is total: a field that is missing or of the wrong JSON type reads as absent, so a crafted
payload gets an answer rather than a crash.
"""

from __future__ import annotations

import math
from typing import Any

from bot.present.i18n import Language, language_for

PING, APPLICATION_COMMAND, MESSAGE_COMPONENT, AUTOCOMPLETE = 1, 2, 3, 4
_STRING, _INTEGER, _BOOLEAN, _NUMBER = 3, 4, 5, 10
SEND_MESSAGES = 1 << 11  # the permission bit (https://discord.com/developers/docs/topics/permissions)
EPHEMERAL = 1 << 6  # a message flag


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def data_of(interaction: dict[str, Any]) -> Any:
    return interaction.get("data")


def language_of(interaction: dict[str, Any]) -> Language:
    """The user's language, from their client's ``locale`` (discord.py's default is en-US)."""
    locale = interaction.get("locale", "en-US")
    return language_for(locale if isinstance(locale, str) else "en-US")


def user_of(interaction: dict[str, Any]) -> dict[str, Any]:
    """Who interacted: the member's user in a server, the user in a DM."""
    return as_dict(as_dict(interaction.get("member")).get("user")) or as_dict(interaction.get("user"))


def display_name(interaction: dict[str, Any]) -> str:
    """As discord.py's ``display_name``: a member's server nickname, else the global name, else the
    user name."""
    user = user_of(interaction)
    for name in (
        as_dict(interaction.get("member")).get("nick"),
        user.get("global_name"),
        user.get("username"),
    ):
        if isinstance(name, str) and name:
            return name
    return ""


def same_id(a: Any, b: Any) -> bool:
    return a is not None and b is not None and str(a) == str(b)


def guild_id(interaction: dict[str, Any]) -> Any:
    return interaction.get("guild_id")


def can_post_publicly(interaction: dict[str, Any]) -> bool:
    """As :func:`bot.runtime.controls.can_post_publicly`: Send Messages where the click happened, and
    in a server only where the app is installed to the server (not only to the user's account)."""
    try:
        permissions = int(interaction.get("app_permissions") or 0)
    except (TypeError, ValueError):
        permissions = 0
    if not permissions & SEND_MESSAGES:
        return False
    guild = guild_id(interaction)
    owners = as_dict(interaction.get("authorizing_integration_owners"))
    return guild is None or same_id(owners.get("0"), guild)


def message_of(interaction: dict[str, Any]) -> dict[str, Any]:
    """The message a component belongs to."""
    return as_dict(interaction.get("message"))


def started_by(interaction: dict[str, Any]) -> bool:
    """Whether the user who clicked is the one whose interaction produced the message."""
    metadata = as_dict(message_of(interaction).get("interaction_metadata"))
    return same_id(as_dict(metadata.get("user")).get("id"), user_of(interaction).get("id"))


def is_ephemeral_message(interaction: dict[str, Any]) -> bool:
    flags = message_of(interaction).get("flags")
    return isinstance(flags, int) and bool(flags & EPHEMERAL)


def shown_command(interaction: dict[str, Any]) -> str | None:
    """The description of the message's first embed, whose first line is the answer's command line."""
    embeds = message_of(interaction).get("embeds")
    if not isinstance(embeds, list) or not embeds:
        return None
    description = as_dict(embeds[0]).get("description")
    return description if isinstance(description, str) else None


def option_values(options: list[Any]) -> dict[str, Any]:
    """The options' values by name, as discord.py's ``Namespace`` reads them: strings, whole numbers
    and booleans as sent, numbers as floats (a focused one as typed), other types skipped. Raises
    like the Namespace does for a value it cannot read."""
    values: dict[str, Any] = {}
    for option in options:
        kind, name = option["type"], option["name"]
        if kind in (_STRING, _INTEGER, _BOOLEAN):
            values[name] = option["value"]
        elif kind == _NUMBER:
            value = option["value"]
            if value is None or value == "":
                values[name] = math.nan
            else:
                values[name] = value if option.get("focused", False) else float(value)
    return values
