"""Log set-up for operators: plain lines off a terminal, JSON for collectors, one line per retry, and
no secret in any line.

Everything goes through one handler on the root logger, the libraries' records included (discord.py,
huggingface_hub, httpx2 and httpcore2, asyncio, and ``warnings`` through ``logging.captureWarnings``),
so that each line is one record in the chosen format. The handler's filters see every record, whoever
logged it: one shortens discord.py's reconnect tracebacks, the other redacts secrets.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable
from typing import IO, Any, Literal

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


REDACTED = "<redacted>"

# What a secret looks like in a log line, whoever wrote it; group 1 (kept) is what names it.
_SECRET_SHAPES = tuple(
    re.compile(pattern)
    for pattern in (
        # A Hugging Face access token (huggingface.co/docs/hub/security-tokens): "hf_" and 34 letters
        # and digits; 20 or more, so that names such as hf_hub_download or hf_transfer stay.
        r"()\bhf_[A-Za-z0-9]{20,}",
        # An Authorization header's value as any library renders it: "Authorization: Bot x",
        # ('Authorization', 'Bearer x'), (b'authorization', b'Bearer x'), {'Authorization': 'x'}.
        r"(?i)(authorization['\"]?\s*[:=,]\s*(?:b?['\"])?(?:(?:bearer|bot|basic|token)\s+)?)[^\s'\"\])},]+",
        r"(?i)(\bbearer\s+)[^\s'\"\])},]+",
        # An interaction's token: in the event discord.py logs at DEBUG, and in the routes of its answer.
        r"(['\"]token['\"]\s*:\s*['\"])[^'\"]+",
        r"(/(?:interactions|webhooks)/\d+/)[^/\s?'\"]+",
    )
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every known secret and everything shaped like one replaced by ``<redacted>``."""
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    for shape in _SECRET_SHAPES:
        text = shape.sub(lambda match: match.group(1) + REDACTED, text)
    return text


class RedactSecrets(logging.Filter):
    """Redact tokens from every record that reaches the handler: its message with its arguments, its
    traceback and its stack. ``secrets`` are the values known to be secret (the Discord token, the Hub
    token); anything shaped like a token is redacted as well.

    A handler filter, not a logger filter: logger filters see only records logged on that logger,
    while a handler's see every record it writes, the third-party loggers' too (httpcore2 logs the
    headers of a response at DEBUG, which a mirror may fill with the request's Authorization).
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        # Longest first, so that a secret containing another is replaced whole.
        self.secrets = sorted({s for s in secrets if len(s) >= 8}, key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a library's arguments that do not fit its format: keep what there is
            message = f"{record.msg} {record.args!r}"
            record.msg, record.args = message, None  # (logging would print a raw traceback)
        clean = redact(message, self.secrets)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, self.secrets)
        if record.stack_info:
            record.stack_info = redact(record.stack_info, self.secrets)
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
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:  # what RedactSecrets left of the traceback
            entry["traceback"] = record.exc_text
        if record.stack_info:
            entry["stack"] = record.stack_info
        return json.dumps(entry, ensure_ascii=False)


def wants_colour(stream: IO[str]) -> bool:
    # Colour only for a person at a terminal: `docker logs`, journald and files get plain text.
    # NO_COLOR is the common opt-out (no-color.org).
    return stream.isatty() and not os.environ.get("NO_COLOR")


def _log_unraisable(unraisable: sys.UnraisableHookArgs) -> None:
    logging.getLogger("py.unraisable").warning(
        "%s: %r",
        unraisable.err_msg or "Exception ignored in",
        unraisable.object,
        exc_info=unraisable.exc_value,
    )


def _log_thread_exception(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:
        return  # the default hook ignores it too
    thread = args.thread.name if args.thread is not None else "a thread"
    logging.getLogger("py.threading").error("Unexpected error in %s", thread, exc_info=args.exc_value)


def route_hub_logs_through_root() -> None:
    """Let huggingface_hub's records reach the root handler only.

    When it is imported, huggingface_hub gives its logger a bare ``StreamHandler`` of its own and
    still passes each record on to the root: each of its lines (a retry, say) came out twice, once
    raw, unformatted and unredacted. Its level stays its own (WARNING, or ``HF_HUB_VERBOSITY``).
    Importing the logging module alone costs about 7 ms once discord.py is loaded; the rest of
    huggingface_hub still loads on the first lookup (``bot.runtime.hub_client``).
    """
    import huggingface_hub.utils.logging  # noqa: F401 (adds that handler, once per process)

    hub_logger = logging.getLogger("huggingface_hub")
    for own in [h for h in hub_logger.handlers if type(h) is logging.StreamHandler]:
        hub_logger.removeHandler(own)


def setup_logging(
    level: str,
    log_format: Literal["text", "json"],
    stream: IO[str] | None = None,
    *,
    secrets: Iterable[str] = (),
) -> logging.Handler:
    """Log to ``stream`` (stderr) through one handler on the root logger, redacting ``secrets``.

    Returns the handler so that a caller running the bot in-process (the tests) can remove it again.
    """
    stream = sys.stderr if stream is None else stream
    handler = logging.StreamHandler(stream)
    handler.addFilter(OneLineRetries())
    handler.addFilter(RedactSecrets(secrets))  # last: it sees the message the filters before it made
    formatter: logging.Formatter | None
    if log_format == "json":
        formatter = JsonFormatter()
    elif wants_colour(stream):
        formatter = None  # discord.py's own coloured formatter, as before
    else:
        formatter = logging.Formatter(PLAIN_FORMAT)
    # In place before discord.py is imported (this module does not import it at the top): the
    # warnings libraries give when imported (discord.py's "'audioop' is deprecated", with -W default)
    # are records in the chosen format too, not raw lines.
    handler.setFormatter(formatter or logging.Formatter(PLAIN_FORMAT))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(True)  # warnings.warn() as records ("py.warnings")
    _replaced_hooks.append((sys.unraisablehook, threading.excepthook))
    sys.unraisablehook = _log_unraisable  # "Exception ignored in ...", which Python prints raw
    threading.excepthook = _log_thread_exception  # "Exception in thread ...", likewise
    import discord

    # discord.utils.setup_logging is public: given a formatter it uses ours, else its own coloured
    # one (we only leave it the choice for a terminal, where colour is wanted). The handler is
    # already the root's, so it is not added twice.
    discord.utils.setup_logging(
        handler=handler, formatter=formatter or discord.utils.MISSING, level=getattr(logging, level)
    )
    route_hub_logs_through_root()
    return handler


_replaced_hooks: list[tuple[Callable[[sys.UnraisableHookArgs], Any], Callable[..., Any]]] = []


def remove_logging(handler: logging.Handler) -> None:
    """Undo :func:`setup_logging`, for callers that run the bot in their own process (the tests)."""
    logging.getLogger().removeHandler(handler)
    logging.captureWarnings(False)
    if _replaced_hooks:
        sys.unraisablehook, threading.excepthook = _replaced_hooks.pop()
