"""The ``vram-bot`` command: run the bot, or preview an answer offline with ``vram-bot estimate``."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

import discord

from bot.estimator import InvalidRequest, Optimizer, estimate, parse_request
from bot.render import embed_to_text, render_embed
from bot.settings import ConfigError, load_settings, load_token

EXIT_USAGE = 2


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
    preview = commands.add_parser(
        "estimate", help="print the bot's answer in the terminal, no Discord needed"
    )
    preview.add_argument("params", type=float, help="model size in billions of parameters, e.g. 7")
    preview.add_argument("--optimizer", choices=[o.value for o in Optimizer], default=Optimizer.ADAM.value)
    preview.add_argument("--activations", type=float, default=0.0, help="activation memory in GB (default 0)")
    preview.add_argument(
        "--bytes-per-param", type=float, help="custom bytes per parameter, overrides the optimizer"
    )
    preview.add_argument("--json", action="store_true", help="print the embed as Discord's JSON instead")
    return parser


def run_estimate(args: argparse.Namespace) -> int:
    try:
        request = parse_request(
            params=args.params,
            optimizer=args.optimizer,
            activations=args.activations,
            bytes_per_param=args.bytes_per_param,
        )
    except InvalidRequest as exc:
        for problem in exc.problems:
            print(f"vram-bot: {problem.replace('`', '')}", file=sys.stderr)
        return EXIT_USAGE
    embed = render_embed(estimate(request))
    print(json.dumps(embed, ensure_ascii=False, indent=2) if args.json else embed_to_text(embed))
    return 0


def run_bot(args: argparse.Namespace) -> int:
    from bot.runner import serve  # the runner pulls in the network stack; the preview needs none

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
        return run_estimate(args)
    return run_bot(args)
