"""No gateway frame or event stops the bot: an undecodable frame costs a reconnect, an unreadable
event is dropped.

orjson (discord.py's decoder when installed) rejects JSON that Python's ``json`` accepts, such as an
escaped lone surrogate (``"\\udcff"``) in a user's text. discord.py lets that ``JSONDecodeError``
escape its connect loop (or, sharded, terminate every shard), so one hostile autocomplete used to stop
the bot.

Why here, and this way: ``DiscordWebSocket`` (exported by ``discord.gateway``) is the one class that
both ``Client.connect`` and every ``AutoShardedClient`` shard read frames through, and
``ReconnectWebSocket`` (also exported) is the library's own "close, reconnect and resume" signal,
the path it takes for Discord's RECONNECT opcode. Raising it keeps discord.py's resume logic,
backoff and sharding intact. A ``Client.connect`` override would only see the error after the
library gave up: it could not resume, and the sharded client would already be closed. A decoding
fallback to ``json`` was rejected: the surrogate would then reach our code and fail again when an
answer echoing it is encoded. The frame is dropped instead, and logged once.

A frame that decodes but holds an event discord.py cannot read (an ``INTERACTION_CREATE`` without its
``token``, a mistyped ``id``) is dropped too, with no reconnect: the connection is fine, only the event
is bad. discord.py has no public hook for that (``on_error`` sees only listeners' errors), and its
parser's exception would end the connect loop. :func:`tolerate_unreadable_events` wraps each entry of
the client's table of event parsers, the narrowest place that sees exactly one event being read. What
discord.py reads later, in tasks of its own (the command tree, the component dispatch), would fail
there as "Task exception was never retrieved", so an interaction is first checked for the shape those
tasks read (:mod:`bot.runtime.interaction_shape`); either way the event is logged once, as one WARNING line
naming the event and what was wrong, never its content (the interaction's token is a credential).
"""

from __future__ import annotations

import asyncio
import json
import logging
import traceback
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from discord.gateway import DiscordWebSocket, ReconnectWebSocket

from bot.runtime.interaction_shape import interaction_problem

log = logging.getLogger(__name__)

_Receive = Callable[[DiscordWebSocket, Any], Awaitable[None]]


def frame_sequence(document: str) -> int | None:
    """The frame's sequence number, read with the lenient stdlib decoder; None when unreadable."""
    try:
        frame = json.loads(document)
    except ValueError:
        return None
    sequence = frame.get("s") if isinstance(frame, dict) else None
    return sequence if isinstance(sequence, int) and not isinstance(sequence, bool) else None


def tolerate_undecodable_frames() -> None:
    """Wrap ``DiscordWebSocket.received_message`` once per process (idempotent)."""
    original: _Receive = DiscordWebSocket.received_message
    if getattr(original, "_vram_bot_tolerant", False):
        return

    async def received_message(ws: DiscordWebSocket, msg: Any, /) -> None:
        try:
            await original(ws, msg)
        except json.JSONDecodeError as exc:  # orjson.JSONDecodeError subclasses it
            # The happy path pays nothing: the try block costs no time in Python 3.11+.
            sequence = frame_sequence(exc.doc)
            if sequence is not None:
                # Resume *after* the bad frame: resuming before it would make Discord replay it.
                ws.sequence = sequence
            log.warning(
                "Dropped a gateway frame that cannot be decoded (%s, sequence %s); reconnecting",
                exc.msg,
                sequence if sequence is not None else "unknown",
            )
            await ws.close(code=4000)  # not 1000: a 1000 close ends the session and forbids a resume
            # Resume when there is a session to resume; before READY there is none.
            raise ReconnectWebSocket(ws.shard_id, resume=ws.session_id is not None) from None

    received_message._vram_bot_tolerant = True  # type: ignore[attr-defined]
    DiscordWebSocket.received_message = received_message  # type: ignore[method-assign]


# -- events discord.py cannot read -----------------------------------------------------------------

_Parse = Callable[[Any], None]

# Events checked before discord.py's parser reads them, for what it reads later.
_CHECKS: dict[str, Callable[[object], str | None]] = {"INTERACTION_CREATE": interaction_problem}


def _describe_failure(error: Exception, payload: object) -> str:
    """The exception's type, its text without the payload's token, and where in discord.py it arose."""
    text = str(error)
    token = payload.get("token") if isinstance(payload, dict) else None
    if isinstance(token, str) and token:
        text = text.replace(token, "<token>")
    if len(text) > 120:
        text = text[:120] + "…"
    frames = traceback.extract_tb(error.__traceback__)
    place = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    return f"{type(error).__name__}: {text}{place}"


def _tolerant(event: str, parse: _Parse) -> _Parse:
    check = _CHECKS.get(event)

    def parse_or_drop(payload: Any) -> None:
        try:
            problem = check(payload) if check is not None else None
            if problem is None:
                parse(payload)
                return
        except Exception as error:  # whatever discord.py's reader raised: the event is unreadable
            problem = _describe_failure(error, payload)
        log.warning("Dropped a gateway event discord.py cannot read: %s (%s)", event, problem)

    parse_or_drop._vram_bot_tolerant = True  # type: ignore[attr-defined]
    return parse_or_drop


def tolerate_unreadable_events(parsers: MutableMapping[str, _Parse]) -> None:
    """Wrap each of a client's event parsers (``client._connection.parsers``, which every shard's
    connection reads through) so that an event it cannot read is logged and dropped (idempotent)."""
    for event, parse in list(parsers.items()):
        if not getattr(parse, "_vram_bot_tolerant", False):
            parsers[event] = _tolerant(event, parse)


# discord.py names the task that runs a command or an autocomplete for the tree ("CommandTree-invoker",
# app_commands/tree.py): an option it cannot read (one without a "type") raises there, after the
# cog's on_interaction listener has answered it (bot.runtime.cog), as an unretrieved task exception.
_TREE_TASK = "CommandTree-invoker"


def quiet_unreadable_commands(loop: asyncio.AbstractEventLoop) -> None:
    """Log discord.py's failure to read an interaction's options once, at WARNING, without the
    traceback (the user already has the cog's answer); every other loop error as asyncio would."""
    default = loop.get_exception_handler()

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        task, error = context.get("task") or context.get("future"), context.get("exception")
        if isinstance(task, asyncio.Task) and task.get_name() == _TREE_TASK and isinstance(error, Exception):
            log.warning(
                "discord.py could not read an interaction's options: %s", _describe_failure(error, None)
            )
        elif default is not None:
            default(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handle)
