"""The interaction responses and webhook bodies, written as discord.py writes them for the gateway cog.

The embed and the controls go through the same discord.py objects the gateway path sends
(:func:`bot.runtime.send.embed_of`, :func:`bot.runtime.send.controls_of`), and the keys come in
discord.py's order, so the HTTP front end's bytes are the gateway bot's (``tests/test_http.py``
compares them). A reply with a file (Compare's chart) is sent as multipart, as discord.py sends it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.http.payload import EPHEMERAL
from bot.present.views import Message
from bot.runtime.send import controls_of, embed_of

PONG, CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE, UPDATE_MESSAGE, AUTOCOMPLETE_RESULT = 1, 4, 5, 7, 8
NO_PINGS: dict[str, Any] = {"parse": []}


@dataclass(frozen=True)
class Reply:
    """A JSON body, and the files that go with it (by file name)."""

    body: dict[str, Any]
    files: dict[str, bytes] = field(default_factory=dict)


def _message_fields(message: Message) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    embeds: list[dict[str, Any]] = [dict(embed_of(message.embed).to_dict())]
    components = controls_of(message.components).to_components()
    return embeds, components


def _attachments(files: dict[str, bytes]) -> list[dict[str, Any]]:
    return [{"id": index, "filename": name} for index, name in enumerate(files)]


def new_message(
    message: Message, files: dict[str, bytes], *, ephemeral: bool, content: str | None
) -> dict[str, Any]:
    """A new message (``send_message``): the answer, a click's private copy, or a shared view."""
    embeds, components = _message_fields(message)
    data: dict[str, Any] = {"tts": False, "embeds": embeds, "content": content, "components": components}
    if ephemeral:
        data["flags"] = EPHEMERAL
    data["allowed_mentions"] = NO_PINGS
    if files:
        data["attachments"] = _attachments(files)
    return data


def edited_message(message: Message, files: dict[str, bytes]) -> dict[str, Any]:
    """The clicked message updated in place (``edit_message``): its files become ``files``."""
    embeds, components = _message_fields(message)
    return {
        "tts": False,
        "embeds": embeds,
        "components": components,
        "allowed_mentions": NO_PINGS,
        "attachments": _attachments(files),
    }


def original_edit(message: Message, files: dict[str, bytes]) -> dict[str, Any]:
    """The deferred "thinking" reply filled in (``edit_original_response``)."""
    embeds, components = _message_fields(message)
    return {
        "embeds": embeds,
        "components": components,
        "tts": False,
        "allowed_mentions": NO_PINGS,
        "attachments": _attachments(files),
    }


def ephemeral_text(content: str) -> dict[str, Any]:
    """A short reply only the user sees (a problem, "nothing changed", an apology)."""
    return {"tts": False, "content": content, "flags": EPHEMERAL, "allowed_mentions": NO_PINGS}


def followup_text(content: str) -> dict[str, Any]:
    """The same as a follow-up through the webhook (after a "thinking" reply or an answer)."""
    return {"content": content, "tts": False, "flags": EPHEMERAL, "allowed_mentions": NO_PINGS}


def response(kind: int, data: dict[str, Any] | None = None, files: dict[str, bytes] | None = None) -> Reply:
    body: dict[str, Any] = {"type": kind}
    if data is not None:
        body["data"] = data
    return Reply(body, files or {})


def deferred(*, ephemeral: bool) -> Reply:
    """The "thinking" reply a slow Hub lookup sends first."""
    return response(DEFERRED_CHANNEL_MESSAGE, {"flags": EPHEMERAL} if ephemeral else None)


def suggestions(choices: list[tuple[str, str]]) -> Reply:
    return response(AUTOCOMPLETE_RESULT, {"choices": [{"name": n, "value": v} for n, v in choices]})
