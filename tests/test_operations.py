"""The operator's side in small pieces: retry classification, backoff, log formats, settings sources."""

from __future__ import annotations

import io
import json
import logging
import random
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import aiohttp
import discord
import pytest

from bot.runtime.gateway import frame_sequence
from bot.runtime.logs import OneLineRetries, remove_logging, setup_logging
from bot.runtime.retry import FATAL_CLOSE_CODES, Backoff, describe, fatal, transient
from bot.runtime.settings import ConfigError, Settings, load_settings


def http_error(status: int, reason: str, cls: type[discord.HTTPException] = discord.HTTPException) -> Any:
    response = SimpleNamespace(status=status, reason=reason)
    return cls(response, {"message": reason, "code": 0})


def closed(code: int) -> discord.ConnectionClosed:
    socket = SimpleNamespace(close_code=code)
    return discord.ConnectionClosed(socket, shard_id=None, code=code)  # type: ignore[arg-type]


def dns_failure() -> aiohttp.ClientConnectorDNSError:
    key = SimpleNamespace(host="discord.com", port=443, ssl=True)
    return aiohttp.ClientConnectorDNSError(key, OSError(-2, "Name or service not known"))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "error",
    [
        http_error(503, "Service Unavailable", discord.DiscordServerError),
        http_error(502, "Bad Gateway", discord.DiscordServerError),
        http_error(429, "Too Many Requests"),  # a 429 discord.py gave up on (Cloudflare's)
        ConnectionRefusedError(111, "Connection refused"),
        ConnectionResetError(104, "Connection reset by peer"),
        dns_failure(),
        TimeoutError(),
        discord.GatewayNotFound(),  # type: ignore[no-untyped-call]
        closed(1000),
        closed(4000),
    ],
    ids=repr,
)
def test_transient_failures_are_retried(error: BaseException) -> None:
    assert transient(error)
    assert fatal(error) is None


@pytest.mark.parametrize("code", sorted(FATAL_CLOSE_CODES))
def test_documented_fatal_close_codes_stop_with_a_fix(code: int) -> None:
    reason = fatal(closed(code))
    assert isinstance(reason, ConfigError)
    assert str(reason).startswith("Discord closed the gateway: ")
    assert f"({code}):" in str(reason)
    assert not transient(closed(code))


def test_a_rejected_token_is_fatal_and_a_bug_is_neither() -> None:
    assert str(fatal(discord.LoginFailure("Improper token"))).startswith("Discord rejected the token")
    bug = ValueError("a bug")
    assert fatal(bug) is None
    assert not transient(bug)  # it propagates: exit 1 with its traceback


def test_describe_is_one_short_line() -> None:
    assert describe(http_error(503, "Service Unavailable", discord.DiscordServerError)) == (
        "HTTP 503 Service Unavailable"
    )
    assert describe(closed(4000)) == "gateway closed with 4000"
    assert describe(ConnectionRefusedError(111, "Connection refused")).startswith("ConnectionRefusedError: ")


def test_backoff_grows_is_capped_and_jittered() -> None:
    backoff = Backoff(cap=8, first=1, rng=random.Random(1))
    delays = [backoff.next_delay() for _ in range(40)]
    ceilings = [min(8, 2**n) for n in range(40)]
    for delay, ceiling in zip(delays, ceilings, strict=True):
        assert ceiling / 2 <= delay <= ceiling  # half fixed, half random
    assert len({round(d, 6) for d in delays[5:]}) > 30  # capped, yet not in lockstep
    backoff.reset()
    assert backoff.next_delay() <= 1


def test_frame_sequence_reads_what_orjson_refuses() -> None:
    assert frame_sequence('{"op":0,"s":41,"d":"\\udcff"}') == 41
    assert frame_sequence('{"op":11,"s":null}') is None
    assert frame_sequence("not json") is None


@pytest.fixture
def root_logging() -> Iterator[None]:
    """Put the root logger's handlers and level back after a test that sets logging up."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in set(root.handlers) - set(handlers):
        remove_logging(handler)
    root.setLevel(level)


def reconnect_record() -> logging.LogRecord:
    """What discord.py logs for each gateway reconnect attempt: logger.exception, a traceback."""
    try:
        raise ConnectionRefusedError(111, "Connection refused")
    except ConnectionRefusedError:
        return logging.getLogger("discord.client").makeRecord(
            "discord.client",
            logging.ERROR,
            __file__,
            1,
            "Attempting a reconnect in %.2fs",
            (1.5,),
            sys.exc_info(),
        )


@pytest.mark.usefixtures("root_logging")
def test_plain_text_off_a_terminal_with_one_line_per_reconnect() -> None:
    stream = io.StringIO()  # not a terminal
    setup_logging("debug".upper(), "text", stream)
    logging.getLogger("bot.test").info("hello %s", "operator")
    logging.getLogger("discord.client").handle(reconnect_record())
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].endswith("INFO     bot.test: hello operator")
    assert "WARNING  discord.client: Attempting a reconnect in 1.50s (ConnectionRefusedError:" in lines[1]
    assert "\x1b[" not in stream.getvalue()


@pytest.mark.usefixtures("root_logging")
def test_json_lines_for_log_collectors() -> None:
    stream = io.StringIO()
    setup_logging("INFO", "json", stream)
    logging.getLogger("bot.test").warning("über %d", 3)
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logging.getLogger("bot.test").exception("failed")
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first["level"] == "WARNING"
    assert first["logger"] == "bot.test"
    assert first["message"] == "über 3"
    assert first["time"].endswith("+00:00")
    assert "RuntimeError: boom" in second["traceback"]


def test_the_retry_filter_leaves_other_records_alone() -> None:
    record = logging.LogRecord("bot.x", logging.ERROR, __file__, 1, "Attempting a reconnect in", (), None)
    assert OneLineRetries().filter(record)
    assert record.levelno == logging.ERROR


@pytest.mark.usefixtures("clean_env")
def test_environment_variables_override_the_file_in_any_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("log_level = 'warning'\nsync_commands = true\nshard_count = 4\n", encoding="utf-8")
    assert load_settings(config).log_level == "WARNING"  # any case in the file
    monkeypatch.setenv("VRAM_BOT_LOG_LEVEL", "debug")
    monkeypatch.setenv("vram_bot_sync_commands", "false")
    monkeypatch.setenv("VRAM_BOT_SHARD_IDS", "[1, 3]")
    monkeypatch.setenv("VRAM_BOT_STARTUP_RETRY_S", "600")
    settings = load_settings(config)
    assert settings.log_level == "DEBUG"
    assert settings.sync_commands is False
    assert (settings.shard_count, settings.shard_ids) == (4, [1, 3])
    assert settings.startup_retry_s == 600


def test_the_readme_settings_table_names_every_setting() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Settings\n", 1)[1].split("\n\n|", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    named = {key for row in rows for key in re.findall(r"`([a-z_]+)`", row.split("|")[1])}
    assert named == set(Settings.model_fields)
