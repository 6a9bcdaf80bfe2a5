"""The ``vram-bot`` command: run the bot, or preview an answer offline with ``vram-bot estimate``."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from bot import __version__
from bot.preview import EXIT_USAGE, add_estimate_command, run_estimate
from bot.runtime.settings import ConfigError, load_public_key, load_settings, load_token

# --- operator hooks (runtime team): exit codes, --version, `health`; the README lists the codes ---
EXIT_CRASH = 1  # an unexpected error, with its traceback: a bug; a supervisor may restart
EXIT_GAVE_UP = 3  # Discord stayed unreachable for longer than startup_retry_s
RUN_EPILOG = """exit codes: 0 stopped by SIGTERM/SIGHUP/SIGINT; 1 unexpected error (a bug: traceback logged);
  2 the operator must fix something (bad setting, missing or rejected token, fatal gateway close code);
  3 Discord unreachable for longer than startup_retry_s

settings: every key of config.example.toml, with its default there; any key can also be set as
  VRAM_BOT_<KEY> in the environment, which wins over the file

examples:
  DISCORD_TOKEN=... vram-bot                      run the bot with ./config.toml, if any
  VRAM_BOT_LOG_LEVEL=debug vram-bot --config /etc/vram-bot.toml
  DISCORD_PUBLIC_KEY=... vram-bot http            answer interactions over HTTP instead
  DISCORD_TOKEN=... vram-bot sync                 register /vram (for an HTTP deployment), then exit
  vram-bot health                                 is the running bot connected? (exit 0 = yes)
  vram-bot estimate 7 --optimizer adam8bit        preview an answer offline"""
HEALTH_EPILOG = """Reads status_file (a setting, e.g. VRAM_BOT_STATUS_FILE=/tmp/vram-bot/status.json), which
the running bot rewrites every status_interval_s. Healthy (exit 0): the gateway is connected and the
status is at most 3 x status_interval_s old. Otherwise exit 1, with the reason on one line.

example:
  VRAM_BOT_STATUS_FILE=/tmp/vram-bot/status.json vram-bot health"""
# --- end of operator hooks ---


def build_parser(estimate_flags: bool = True) -> argparse.ArgumentParser:
    """The command line; ``estimate_flags`` False leaves out the ``estimate`` sub-command's flags,
    whose help texts are the answers' strings: the bot's start then never reads that catalogue (the
    cold start, benchmarks/README.md). ``vram-bot --help`` lists the sub-command either way."""
    parser = argparse.ArgumentParser(
        prog="vram-bot",
        description="Discord bot that estimates the GPU memory to fully fine-tune an LLM. "
        "Without a sub-command it runs the bot (token from $DISCORD_TOKEN).",
        epilog=RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,  # keep the examples' line breaks
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--config", type=Path, help="TOML settings file (default: $VRAM_BOT_CONFIG, else ./config.toml)"
    )
    commands = parser.add_subparsers(dest="command")
    commands.add_parser(
        "health",
        help="exit 0 if the running bot is connected to Discord, else 1 (for Docker's HEALTHCHECK)",
        description="Tell whether the running bot's gateway is connected, from its status file.",
        epilog=HEALTH_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    http = commands.add_parser(
        "http",
        help="answer interactions over HTTP (Discord's Interactions Endpoint URL) instead of the gateway",
        description="Serve POST /interactions and GET /healthz; the public key from $DISCORD_PUBLIC_KEY "
        "or public_key in the settings. Register the command with `vram-bot sync`.",
    )
    http.add_argument("--host", help="address to listen on (default: the http_host setting, 127.0.0.1)")
    http.add_argument(
        "--port", type=int, help="port to listen on (default: the http_port setting, 8080; 0 picks one)"
    )
    commands.add_parser(
        "sync",
        help="register /vram with Discord over REST (token from $DISCORD_TOKEN), then exit",
        description="Register the slash command as the gateway bot does at start-up: globally, or in "
        "dev_guild_id. An HTTP deployment runs this once per release.",
    )
    add_estimate_command(commands, flags=estimate_flags)
    # `vram-bot measure` hands its arguments to bot.measure, which needs the optional `measure` extra
    # (torch and transformers); the bot never imports it.
    # Listed here for --help; main() hands everything after the word to bot.measure's own parser.
    commands.add_parser(
        "measure",
        help="measure one real training step of a preset, Hub repo or config.json against the estimate "
        '(pip install "vram-bot[measure]"; vram-bot measure --help)',
        add_help=False,
    )
    return parser


def run_bot(args: argparse.Namespace) -> int:
    # The runner pulls in discord.py and the network stack; the preview and `health` need neither.
    # It is imported once logging is set up, so that what the imports warn about is logged too.
    from bot.runtime.logs import remove_logging, setup_logging

    handler = None
    json_logs = False

    def last_word(message: str) -> None:
        # One line for the operator; with JSON logs, one more JSON record, so that every line parses.
        if json_logs:
            logging.getLogger("bot.cli").error("vram-bot: %s", message)
        else:
            print(f"vram-bot: {message}", file=sys.stderr)

    try:
        settings = load_settings(args.config)
        over_http = args.command == "http" or (args.command is None and settings.mode == "http")
        # What signs (HTTP) or logs in (gateway, sync); never in a log line, whichever library writes
        # it (bot.runtime.logs).
        secret = load_public_key(settings).hex() if over_http else load_token(settings).get_secret_value()
        secrets = (secret, os.environ.get("HF_TOKEN", ""))
        handler = setup_logging(settings.log_level, settings.log_format, secrets=secrets)
        json_logs = settings.log_format == "json"
        from bot.runtime.retry import GaveUp

        try:
            if over_http:
                from bot.http.server import serve_http

                host, port = getattr(args, "host", None), getattr(args, "port", None)
                asyncio.run(serve_http(settings, bytes.fromhex(secret), host=host, port=port))
            elif args.command == "sync":
                from bot.http.sync import sync_commands

                asyncio.run(sync_commands(settings, secret))
            else:
                from bot.runtime.runner import serve

                asyncio.run(serve(settings, secret))
        except GaveUp as exc:
            last_word(str(exc))
            return EXIT_GAVE_UP
    except ConfigError as exc:
        last_word(str(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        pass
    except Exception:
        if handler is None:
            raise  # before logging is set up: Python's own traceback
        # Through the log handler: in the chosen format, and with its secrets redacted.
        logging.getLogger("bot.cli").critical("Unexpected error; stopping", exc_info=True)
        return EXIT_CRASH
    finally:
        if handler is not None:  # in-process callers (the tests) get the root logger back as it was
            remove_logging(handler)
    return 0


def run_health(args: argparse.Namespace) -> int:
    from bot.runtime.health import EXIT_HEALTHY, EXIT_UNHEALTHY, check

    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        print(f"vram-bot: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if settings.status_file is None:
        print("vram-bot: unhealthy: no status_file is set, so the bot writes no status", file=sys.stderr)
        return EXIT_UNHEALTHY
    healthy, reason = check(settings.status_file, settings.status_max_age_s)
    print(reason, file=sys.stdout if healthy else sys.stderr)
    return EXIT_HEALTHY if healthy else EXIT_UNHEALTHY


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["measure"]:
        from bot.measure.__main__ import main as measure  # torch only when asked for

        return measure(words[1:], prog="vram-bot measure")
    args = build_parser(estimate_flags="estimate" in words).parse_args(words)
    if args.command == "estimate":
        try:
            return run_estimate(args)
        except BrokenPipeError:  # e.g. `vram-bot estimate 7 | head`: the reader left, which is fine
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (stays open until exit, by design)
            return 0
    if args.command == "health":
        return run_health(args)
    return run_bot(args)
