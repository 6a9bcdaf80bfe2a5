"""The ``vram-bot`` command: run the bot, or preview an answer offline with ``vram-bot estimate``."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import discord

from bot.estimate.core import (
    DEFAULT_LORA_RANK,
    EstimateRequest,
    InvalidRequest,
    Optimizer,
    estimate,
    parse_request,
)
from bot.estimate.hardware import Gpu
from bot.estimate.models import presets
from bot.present.i18n import DEFAULT_LANGUAGE, Language
from bot.present.render import describe_problem, embed_to_text, render_embed
from bot.runtime.settings import ConfigError, load_settings, load_token

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
    preview.add_argument("params", type=float, nargs="?", help="model size in billions of parameters, e.g. 7")
    preview.add_argument("--model", help="a model preset instead of params, e.g. 'Llama 3.1 8B'")
    preview.add_argument("--optimizer", choices=[o.value for o in Optimizer], default=Optimizer.ADAM.value)
    preview.add_argument(
        "--activations", type=float, help="activation memory in GB (default 0, or estimated)"
    )
    preview.add_argument(
        "--bytes-per-param", type=float, help="custom bytes per parameter, overrides the optimizer"
    )
    preview.add_argument(
        "--gpu", choices=[g.value for g in Gpu], help="GPU to measure against (default h100)"
    )
    preview.add_argument("--gpus", type=int, default=1, help="number of GPUs for data parallelism / ZeRO")
    preview.add_argument("--lora-rank", type=int, default=DEFAULT_LORA_RANK, help="LoRA rank (default 16)")
    preview.add_argument("--batch-size", type=int, help="sequences per GPU, to estimate activations")
    preview.add_argument("--seq-len", type=int, help="sequence length in tokens, to estimate activations")
    preview.add_argument(
        "--checkpointing", action="store_true", help="estimate with activation checkpointing"
    )
    preview.add_argument(
        "--no-flash-attention",
        dest="flash_attention",
        action="store_false",
        help="keep the s² attention term",
    )
    preview.add_argument(
        "--lang",
        choices=[language.value for language in Language],
        default=DEFAULT_LANGUAGE.value,
        help="language of the answer, as Discord users with that locale see it (default en)",
    )
    preview.add_argument("--list-models", action="store_true", help="list the model presets and exit")
    preview.add_argument("--json", action="store_true", help="print the embed as Discord's JSON instead")
    return parser


def run_estimate(args: argparse.Namespace) -> int:
    if args.list_models:
        for preset in presets().values():
            print(f"{preset.key:16} {preset.name:20} {preset.parameter_count:>17,} parameters")
        return 0
    language = Language(args.lang)
    try:
        # The sub-command's options are named as the request's fields.
        request = parse_request(**{name: getattr(args, name) for name in EstimateRequest.model_fields})
    except InvalidRequest as exc:
        for problem in exc.problems:
            print(f"vram-bot: {describe_problem(problem, language).replace('`', '')}", file=sys.stderr)
        return EXIT_USAGE
    embed = render_embed(estimate(request), language)
    print(json.dumps(embed, ensure_ascii=False, indent=2) if args.json else embed_to_text(embed))
    return 0


def run_bot(args: argparse.Namespace) -> int:
    from bot.runtime.runner import serve  # the runner pulls in the network stack; the preview needs none

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
