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

from bot import __version__
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
# --- operator hooks (runtime team): exit codes, --version, `health`; the README lists the codes ---
EXIT_CRASH = 1  # an unexpected error, with its traceback: a bug; a supervisor may restart
EXIT_GAVE_UP = 3  # Discord stayed unreachable for longer than startup_retry_s
RUN_EPILOG = """exit codes: 0 stopped by SIGTERM/SIGINT; 1 unexpected error (a bug: traceback logged);
  2 the operator must fix something (bad setting, missing or rejected token, fatal gateway close code);
  3 Discord unreachable for longer than startup_retry_s

settings: every key of config.example.toml, with its default there; any key can also be set as
  VRAM_BOT_<KEY> in the environment, which wins over the file

examples:
  DISCORD_TOKEN=... vram-bot                      run the bot with ./config.toml, if any
  VRAM_BOT_LOG_LEVEL=debug vram-bot --config /etc/vram-bot.toml
  vram-bot health                                 is the running bot connected? (exit 0 = yes)
  vram-bot estimate 7 --optimizer adam8bit        preview an answer offline"""
HEALTH_EPILOG = """Reads status_file (a setting, e.g. VRAM_BOT_STATUS_FILE=/tmp/vram-bot/status.json), which
the running bot rewrites every status_interval_s. Healthy (exit 0): the gateway is connected and the
status is at most 3 x status_interval_s old. Otherwise exit 1, with the reason on one line.

example:
  VRAM_BOT_STATUS_FILE=/tmp/vram-bot/status.json vram-bot health"""
ESTIMATE_EPILOG = """examples:
  vram-bot estimate 7 --optimizer adam8bit
  vram-bot estimate --model "llama 3.1 70b" --gpus 8 --seq-len 4096
  vram-bot estimate --list-models"""
# --- end of operator hooks ---


def build_parser() -> argparse.ArgumentParser:
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
    preview = commands.add_parser(
        "estimate",
        help="print the bot's answer in the terminal, no Discord needed",
        epilog=ESTIMATE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
    # The runner pulls in the network stack; the preview and `health` need none, so import it here.
    from bot.runtime.logs import setup_logging
    from bot.runtime.retry import GaveUp
    from bot.runtime.runner import serve

    handler = None
    try:
        settings = load_settings(args.config)
        token = load_token(settings)
        handler = setup_logging(settings.log_level, settings.log_format)
        asyncio.run(serve(settings, token.get_secret_value()))
    except ConfigError as exc:
        print(f"vram-bot: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except GaveUp as exc:
        print(f"vram-bot: {exc}", file=sys.stderr)
        return EXIT_GAVE_UP
    except KeyboardInterrupt:
        pass
    finally:
        if handler is not None:  # in-process callers (the tests) get the root logger back as it was
            logging.getLogger().removeHandler(handler)
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
    args = build_parser().parse_args(argv)
    if args.command == "estimate":
        try:
            return run_estimate(args)
        except BrokenPipeError:  # e.g. `vram-bot estimate 7 | head`: the reader left, which is fine
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (stays open until exit, by design)
            return 0
    if args.command == "health":
        return run_health(args)
    return run_bot(args)
