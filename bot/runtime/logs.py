"""Log set-up for operators: plain lines off a terminal, JSON for collectors, one line per retry."""

from __future__ import annotations

import datetime
import json
import logging
import os
import sys
from typing import IO, Literal

import discord

PLAIN_FORMAT = "%(asctime)s %(levelname)-8s %(name)s: %(message)s"

# discord.py's gateway loops log each reconnect attempt with logger.exception, i.e. a traceback
# per attempt; during an outage that is dozens of lines a minute. These are the messages it uses.
_RETRY_MESSAGES = ("Attempting a reconnect in", "Failed to connect for shard_id")


class OneLineRetries(logging.Filter):
    """Turn discord.py's reconnect tracebacks into one WARNING line naming the error.

    A handler filter (public logging API) rather than a change to discord.py: the library keeps its
    own reconnect loop and backoff, and we only shorten what it prints. A retry is expected during an
    outage, so WARNING, not ERROR.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if (
            record.exc_info
            and record.name.startswith("discord.")
            and isinstance(record.msg, str)
            and record.msg.startswith(_RETRY_MESSAGES)
        ):
            error = record.exc_info[1]
            record.msg = f"{record.msg} ({type(error).__name__}: {error})"
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line, the shape log collectors (Loki, Elastic, CloudWatch) parse as is."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["traceback"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def wants_colour(stream: IO[str]) -> bool:
    # Colour only for a person at a terminal: `docker logs`, journald and files get plain text.
    # NO_COLOR is the common opt-out (no-color.org).
    return stream.isatty() and not os.environ.get("NO_COLOR")


def setup_logging(
    level: str, log_format: Literal["text", "json"], stream: IO[str] | None = None
) -> logging.Handler:
    """Log to ``stream`` (stderr) through one handler on the root logger.

    Returns the handler so that a caller running the bot in-process (the tests) can remove it again.
    """
    stream = sys.stderr if stream is None else stream
    handler = logging.StreamHandler(stream)
    handler.addFilter(OneLineRetries())
    formatter: logging.Formatter | None
    if log_format == "json":
        formatter = JsonFormatter()
    elif wants_colour(stream):
        formatter = None  # discord.py's own coloured formatter, as before
    else:
        formatter = logging.Formatter(PLAIN_FORMAT)
    # discord.utils.setup_logging is public: given a formatter it uses ours, else its own coloured
    # one (we only leave it the choice for a terminal, where colour is wanted).
    discord.utils.setup_logging(
        handler=handler, formatter=formatter or discord.utils.MISSING, level=getattr(logging, level)
    )
    return handler
