"""A gateway frame that cannot be decoded costs a reconnect, never the process.

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
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from discord.gateway import DiscordWebSocket, ReconnectWebSocket

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
