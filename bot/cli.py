"""The ``vram-bot`` command: run the bot, or preview an answer offline with ``vram-bot estimate``."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from bot.preview import EXIT_USAGE, add_estimate_command, run_estimate
from bot.runtime.settings import ConfigError, load_settings, load_token


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vram-bot",
        description="Discord bot that estimates the GPU memory to fully fine-tune an LLM. "
        "Without a sub-command it runs the bot (token from $DISCORD_TOKEN).",
    )
    parser.add_argument(
        "--config", type=Path, help="TOML settings file (default: $VRAM_BOT_CONFIG, else ./config.toml)"
    )
    commands = parser.add_subparsers(dest="command")
    add_estimate_command(commands)
    return parser


def run_bot(args: argparse.Namespace) -> int:
    # The runner pulls in discord.py and the network stack; the preview needs neither.
    import discord

    from bot.runtime.runner import serve

    try:
        settings = load_settings(args.config)
        token = load_token(settings)
        discord.utils.setup_logging(level=getattr(logging, settings.log_level))
        asyncio.run(serve(settings, token.get_secret_value()))
    except ConfigError as exc:
        print(f"vram-bot: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        pass
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "estimate":
        try:
            return run_estimate(args)
        except BrokenPipeError:  # e.g. `vram-bot estimate 7 | head`: the reader left, which is fine
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (stays open until exit, by design)
            return 0
    return run_bot(args)
