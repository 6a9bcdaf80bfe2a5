"""What reaches the log: no secret in any line, whoever logs it, and each record once, in its format."""

from __future__ import annotations

import io
import json
import logging
import threading
import warnings
from collections.abc import Iterator

import pytest

from bot.runtime.logs import REDACTED, RedactSecrets, redact, remove_logging, setup_logging

DISCORD_TOKEN = "MTIzNDU2Nzg5MDEy.GhIjKl.made-up-discord-token"  # made up
HF_TOKEN = "hf_abcdefghijklmnopqrstuvwxyz01234567"  # made up


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    """A fresh stream for ``setup_logging``, and the root logger, its level and warnings put back."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield io.StringIO()
    for handler in set(root.handlers) - set(handlers):
        remove_logging(handler)
    root.setLevel(level)


@pytest.mark.parametrize(
    ("text", "clean"),
    [
        # httpcore2's DEBUG record of a response's headers, a mirror echoing the request's credentials
        (
            f"return_value=(b'HTTP/1.1', 401, [(b'WWW-Authenticate', b'Authorization: Bearer {HF_TOKEN}')])",
            "return_value=(b'HTTP/1.1', 401, [(b'WWW-Authenticate', b'Authorization: Bearer <redacted>')])",
        ),
        ("[(b'authorization', b'Bearer abc.def')]", "[(b'authorization', b'Bearer <redacted>')]"),
        ("{'Authorization': 'Bot xyz'}", "{'Authorization': 'Bot <redacted>'}"),
        ("headers={'authorization': 'secret'}", "headers={'authorization': '<redacted>'}"),
        ("curl -H 'Bearer abc123'", "curl -H 'Bearer <redacted>'"),
        (f"token is {HF_TOKEN}.", "token is <redacted>."),
        (
            "{'id': '1', 'token': 'aW50ZXJhY3Rpb246', 'version': 1}",
            "{'id': '1', 'token': '<redacted>', 'version': 1}",
        ),
        (
            "POST /api/v10/interactions/123/aW50ZXJh/callback",
            "POST /api/v10/interactions/123/<redacted>/callback",
        ),
        ("PATCH /webhooks/9/aW50ZXJh/messages/@original", "PATCH /webhooks/9/<redacted>/messages/@original"),
        # What is not a secret stays.
        (
            "hf_hub_download and hf_transfer; an authorization check",
            "hf_hub_download and hf_transfer; an authorization check",
        ),
    ],
)
def test_what_looks_like_a_secret_is_redacted(text: str, clean: str) -> None:
    assert redact(text) == clean


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_no_secret_reaches_the_stream_from_any_logger_message_argument_or_traceback(
    stream: io.StringIO, log_format: str
) -> None:
    setup_logging("DEBUG", log_format, stream, secrets=[DISCORD_TOKEN])  # type: ignore[arg-type]
    # A third-party record with the secrets in its arguments, as httpcore2 logs headers.
    logging.getLogger("httpcore2.http11").debug("headers=%r", [(b"Authorization", f"Bot {DISCORD_TOKEN}")])
    logging.getLogger("discord.http").debug("sent %s", {"token": DISCORD_TOKEN})
    try:
        raise PermissionError(f"401 for {HF_TOKEN} and {DISCORD_TOKEN}")
    except PermissionError:
        logging.getLogger("huggingface_hub.utils._http").warning("failed", exc_info=True)
    output = stream.getvalue()
    assert DISCORD_TOKEN not in output
    assert HF_TOKEN not in output
    assert "MTIzNDU2" not in output  # no part of them either
    assert "abcdefghij" not in output
    assert output.count(REDACTED) >= 4
    assert "PermissionError: 401 for <redacted> and <redacted>" in output  # the traceback, redacted
    if log_format == "json":
        assert len([json.loads(line) for line in output.splitlines()]) == 3


def test_each_hub_record_is_written_once_and_warnings_are_records(
    stream: io.StringIO, capfd: pytest.CaptureFixture[str]
) -> None:
    setup_logging("INFO", "json", stream)
    # huggingface_hub gives its logger a handler of its own when imported: each retry line came twice,
    # once raw on stderr.
    hub_logger = logging.getLogger("huggingface_hub")
    assert [h for h in hub_logger.handlers if type(h) is logging.StreamHandler] == []
    logging.getLogger("huggingface_hub.utils._http").warning("Retrying in 1s [Retry 1/5].")
    warnings.warn("a library's deprecation", UserWarning, stacklevel=1)
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert (records[0]["logger"], records[0]["message"]) == (
        "huggingface_hub.utils._http",
        "Retrying in 1s [Retry 1/5].",
    )
    assert records[1]["logger"] == "py.warnings"
    assert "a library's deprecation" in records[1]["message"]
    assert len(records) == 2
    assert capfd.readouterr().err == ""  # nothing raw beside the handler


def test_a_record_whose_arguments_do_not_fit_is_still_one_redacted_message() -> None:
    record = logging.LogRecord("lib", logging.WARNING, __file__, 1, "two %s %s", (DISCORD_TOKEN,), None)
    assert RedactSecrets([DISCORD_TOKEN]).filter(record)
    assert record.getMessage() == "two %s %s ('<redacted>',)"  # no raw "--- Logging error ---"


def test_errors_python_would_print_raw_are_records(stream: io.StringIO) -> None:
    setup_logging("INFO", "json", stream)
    thread = threading.Thread(target=lambda: 1 / 0, name="worker")
    thread.start()
    thread.join()
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(r["logger"], r["message"]) for r in records] == [("py.threading", "Unexpected error in worker")]
    assert "ZeroDivisionError" in records[0]["traceback"]
