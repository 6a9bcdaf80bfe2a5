"""``vram-bot estimate``: the bot's answer in a terminal, with the same options as ``/vram``.

The flags come from the option table (``--gpus``, ``--no-flash-attention``, …), with the help texts
the README and Discord show. ``--view`` picks the answer, Compare or Details, ``--json`` prints the
message as the bot sends it, ``--chart`` writes Compare's chart. Nothing here imports discord: the
preview runs without it (and Pillow is loaded only for ``--chart``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from bot.estimate.hub import HubFailure, is_repo_id, looks_like_repo_id, register
from bot.estimate.models import find_preset, presets, search_presets
from bot.estimate.options import OptionSpec
from bot.estimate.request import EstimateRequest, InvalidRequest, parse_request, request_options
from bot.present.custom_ids import COMPARE, DETAILS, ESTIMATE
from bot.present.hub_problems import describe_hub_failure
from bot.present.i18n import DEFAULT_LANGUAGE, Language
from bot.present.option_docs import option_help
from bot.present.problems import describe_problem

# The views by the names people type, and the custom_id names they stand for.
VIEW_NAMES = {"estimate": ESTIMATE, "compare": COMPARE, "details": DETAILS}

EXIT_USAGE = 2
EXIT_DOES_NOT_FIT = 1  # with --check: a launch script can guard itself with `vram-bot estimate … --check`
EPHEMERAL = 64  # the message flag of an answer only its asker sees


def _add_option(parser: argparse.ArgumentParser, spec: OptionSpec) -> None:
    """One flag (or the positional ``params``) for one option of the table."""
    arguments: dict[str, Any] = {"help": option_help(spec).replace("%", "%%"), "dest": spec.name}
    kind = spec.kind
    if kind == "boolean":
        arguments["action"] = "store_false" if spec.default is True else "store_true"
    elif kind == "number":
        arguments["type"] = float
    elif kind == "integer":
        arguments["type"] = int
    elif kind == "choice" and spec.option.choices is not None:
        arguments["choices"] = [choice.value for choice in spec.option.choices]
    if spec.option.cli_positional:
        del arguments["dest"]
        parser.add_argument(spec.name, nargs="?", **arguments)
    else:
        parser.add_argument(spec.cli_flag, **arguments)


def add_estimate_command(commands: Any, *, flags: bool = True) -> None:
    """The ``estimate`` sub-command on ``commands`` (what ``add_subparsers`` returned), with its
    flags unless ``flags`` is False (a command line that does not estimate)."""
    preview: argparse.ArgumentParser = commands.add_parser(
        "estimate",
        help="print the bot's answer in the terminal, no Discord needed",
        description="Print the answer /vram would give, with the same options.",
        epilog="example: vram-bot estimate 7 --optimizer adam8bit --activations 20",
    )
    if not flags:
        return
    for spec in request_options():
        _add_option(preview, spec)
    preview.add_argument(
        "--lang",
        choices=[language.value for language in Language],
        default=DEFAULT_LANGUAGE.value,
        help="language of the answer, as Discord users with that locale see it (default en)",
    )
    preview.add_argument("--list-models", action="store_true", help="list the model presets and exit")
    preview.add_argument(
        "--view",
        choices=list(VIEW_NAMES),
        default="estimate",
        help="which view to show: the answer (default), Compare or Details, as the buttons show them",
    )
    preview.add_argument(
        "--json",
        action="store_true",
        help="print the whole message as the bot sends it (embeds, components, attachment names)",
    )
    preview.add_argument(
        "--chart", type=Path, metavar="FILE.png", help="also write Compare's chart to FILE.png"
    )
    preview.add_argument(
        "--private",
        action="store_true",
        help="as an answer only the asker sees, which carries the Share button (--json)",
    )
    preview.add_argument(
        "--format",
        choices=["text", "json"],
        default="text",
        help="json: the estimate's figures for scripts (schema in the README), instead of the answer",
    )
    preview.add_argument(
        "--check",
        action="store_true",
        help=f"exit 0 when it fits, {EXIT_DOES_NOT_FIT} when it does not ({EXIT_USAGE} on bad input)",
    )


def _look_up_model(model: object) -> object:
    """What the CLI hands the validator for ``--model``: a preset by any name, a loose one by the
    search autocomplete uses ("qwen72", "llama 8"), or a Hub repo looked up now (blocking is fine
    here) and registered for validation. Anything else goes on to be refused with its problem."""
    if not isinstance(model, str) or find_preset(model) is not None:
        return model
    if is_repo_id(model):
        # Imported here: huggingface_hub takes a quarter of a second to import, which an estimate
        # for a preset or a size should not pay.
        from bot.hub_lookup import fetch_architecture
        from bot.hub_settings import hub_settings_from_env

        settings = hub_settings_from_env(os.environ)
        register(fetch_architecture(model, settings))
        return model
    if not looks_like_repo_id(model):
        loose = search_presets(model, limit=1)
        if loose:
            return loose[0].key
    return model


def _run_serving(args: argparse.Namespace, request: EstimateRequest, language: Language) -> int:
    """``--task serve``: the serving answer (or its figures); ``--check`` exits 1 when it does not fit."""
    from bot.estimate.serving import serving_estimate
    from bot.present.serving_figures import serving_figures
    from bot.present.terminal import embed_to_text
    from bot.present.views import render_message

    found = serving_estimate(request)
    if args.format == "json":
        print(json.dumps(serving_figures(found), ensure_ascii=False, indent=2))
    else:
        message = render_message(request, VIEW_NAMES[args.view], language, shareable=args.private)
        if args.json:
            data = message.to_json()
            if args.private:
                data["flags"] = EPHEMERAL
            print(json.dumps(data, ensure_ascii=False, indent=2))
        else:
            print(embed_to_text(message.embed))
    return EXIT_DOES_NOT_FIT if args.check and not found.fits else 0


def run_estimate(args: argparse.Namespace) -> int:
    if args.list_models:
        for preset in presets().values():
            print(f"{preset.key:20} {preset.name:24} {preset.parameter_count:>18,} parameters")
        return 0
    language = Language(args.lang)
    options = {spec.name: getattr(args, spec.name) for spec in request_options()}
    try:
        options["model"] = _look_up_model(options["model"])
        request = parse_request(**options)
    except HubFailure as failure:
        print(f"vram-bot: {describe_hub_failure(failure, language).replace('`', '')}", file=sys.stderr)
        return EXIT_USAGE
    except InvalidRequest as exc:
        for problem in exc.problems:
            print(f"vram-bot: {describe_problem(problem, language).replace('`', '')}", file=sys.stderr)
        return EXIT_USAGE
    if request.serving:
        return _run_serving(args, request, language)
    # The estimator and the renderers load here, not with this module: the bot imports it for the
    # parser alone (bot.cli), and its cold start does not need them (benchmarks/README.md).
    from bot.estimate.core import estimate
    from bot.present.figures import figures, fits
    from bot.present.terminal import embed_to_text
    from bot.present.views import render_message

    result = estimate(request)
    if args.format == "json":
        print(json.dumps(figures(result), ensure_ascii=False, indent=2))
        return EXIT_DOES_NOT_FIT if args.check and not fits(result) else 0
    message = render_message(request, VIEW_NAMES[args.view], language, shareable=args.private)
    if args.chart is not None:
        from bot.present.chart import compare_png  # Pillow only when a chart is asked for

        args.chart.write_bytes(compare_png(request, language))
    if args.json:
        data = message.to_json()
        if args.private:
            data["flags"] = EPHEMERAL
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        print(embed_to_text(message.embed))
    return EXIT_DOES_NOT_FIT if args.check and not fits(result) else 0
