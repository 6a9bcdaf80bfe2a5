"""``--help`` reads right: each flag of ``vram-bot estimate`` in its own sense, with the default used.

The help is generated from the option declarations (bot/present/option_docs.py), so these checks
hold every option, including those declared later, with no test of its own.
"""

from __future__ import annotations

import re

import pytest

from bot.cli import build_parser, main
from bot.estimate.core import estimate
from bot.estimate.options import OptionSpec
from bot.estimate.request import parse_request, request_options
from bot.measure.__main__ import build_parser as measure_parser
from bot.measure.__main__ import parse_args as measure_args
from bot.present.command_line import value_text
from bot.present.figures import figures
from bot.present.words import Words

# "  --flag METAVAR   help" or "  --flag {a,b}" with the help on the next line.
_ENTRY = re.compile(r"^  (\S+)(?: \S+)?(?:\s{2,}(\S.*))?$")


def estimate_help(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """Each flag's help text from ``vram-bot estimate --help``, by flag (``params`` for the positional)."""
    monkeypatch.setenv("COLUMNS", "1000")  # one line per flag: argparse wraps at the terminal's width
    with pytest.raises(SystemExit) as exited:
        main(["estimate", "--help"])
    assert exited.value.code == 0
    helps: dict[str, str] = {}
    flag = None
    for line in capsys.readouterr().out.splitlines():
        entry = _ENTRY.match(line)
        if entry is not None and (line[2] == "-" or entry.group(1) == "params"):
            flag = entry.group(1).rstrip(",")
            if entry.group(2):
                helps[flag] = entry.group(2)
        elif flag is not None and line.startswith("   ") and flag not in helps:
            helps[flag] = line.strip()
    return helps


def _flag(spec: OptionSpec) -> str:
    return spec.name if spec.option.cli_positional else spec.cli_flag


def test_every_flag_reads_in_its_own_sense_with_the_default_used(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    helps = estimate_help(monkeypatch, capsys)
    w = Words()
    for spec in request_options():
        text = helps[_flag(spec)]
        own_sense = w(spec.option.description_key)
        if spec.negated_flag:  # --no-flash-attention: what it turns off, never the option's own sense
            assert _flag(spec).startswith("--no-"), spec.name
            assert not text.startswith(own_sense), (spec.name, text)
            assert text.endswith(f"Default: {spec.name} on; this flag turns it off."), (spec.name, text)
        elif spec.kind == "boolean":  # --checkpointing: turns it on
            assert text == f"{own_sense}. Off unless given.", (spec.name, text)
        else:
            assert text.startswith(own_sense), (spec.name, text)
            shown = "none" if spec.default_used is None else value_text(spec.default_used)
            assert text.endswith(f"Default: {shown}."), (spec.name, text)


def test_a_negated_flag_turns_its_option_off() -> None:
    negated = [spec for spec in request_options() if spec.negated_flag]
    assert negated  # flash_attention
    for spec in negated:
        assert getattr(build_parser().parse_args(["estimate", "7"]), spec.name) is True
        assert getattr(build_parser().parse_args(["estimate", "7", spec.cli_flag]), spec.name) is False


def test_the_default_shown_is_the_one_the_estimate_uses() -> None:
    # An option whose field defaults to None but whose docs show a default (the card, a batch of
    # one): leaving it out and giving that default give the same figures.
    base: dict[str, object] = {"model": "llama-3.1-8b", "batch_size": 2, "seq_len": 1024}
    shown = [spec for spec in request_options() if spec.default is None and spec.default_used is not None]
    assert {"gpu", "batch_size", "seq_len"} <= {spec.name for spec in shown}
    for spec in shown:
        left_out = {name: value for name, value in base.items() if name != spec.name}
        without = figures(estimate(parse_request(**left_out)))
        given = figures(estimate(parse_request(**left_out, **{spec.name: spec.default_used})))
        for varying in ("request", "command_line"):
            without.pop(varying), given.pop(varying)
        assert without == given, spec.name


def test_measure_takes_the_estimates_flag_names_and_the_old_ones_quietly() -> None:
    usage = measure_parser("vram-bot measure").format_help()
    assert "--batch-size" in usage
    assert "--seq-len" in usage
    assert not re.search(r"--batch\b(?!-)|--seq\b(?!-)", usage)  # the old names work but are not shown
    new = measure_args(["llama-3.1-8b", "--batch-size", "3", "--seq-len", "64"], "vram-bot measure")
    old = measure_args(["llama-3.1-8b", "--batch", "3", "--seq", "64"], "vram-bot measure")
    assert (new.batch_size, new.seq_len) == (old.batch_size, old.seq_len) == (3, 64)


def test_a_command_line_that_does_not_estimate_reads_no_answer_strings(
    clean_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """Starting the bot parses its command line: without ``estimate`` among the words, the estimate
    flags' help texts (the answers' catalogue) are not built (the cold start, benchmarks/README.md);
    with it, before or after a global flag, they are."""
    from bot.present.i18n import catalogue, templates

    catalogue.cache_clear()
    templates.cache_clear()
    try:
        assert build_parser(estimate_flags=False).parse_args(["--config", "c.toml"]).command is None
        assert catalogue.cache_info().currsize == 0
    finally:
        catalogue.cache_clear()
        templates.cache_clear()
    assert main(["--config", "none.toml", "estimate", "7", "--format", "json"]) == 0
    assert '"total_gb": 112.0' in capsys.readouterr().out
