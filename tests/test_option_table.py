"""The option table is the only declaration of an option: everything that offers or carries an option
agrees with it. For every option, a request with a non-default value survives the custom_id, the
command line, the CLI and a click on every control through the fake Discord."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest

from bot.cli import build_parser
from bot.estimate.models import presets
from bot.estimate.options import OptionSpec, Task
from bot.estimate.request import EstimateRequest, command_options, parse_request, request_options
from bot.present.command_line import command_line, parse_command_line, value_text
from bot.present.custom_ids import BUTTON_VIEWS, FROM_MESSAGE, SELECT_VIEW, pack, unpack
from bot.present.i18n import Language
from bot.present.option_docs import allowed_values, default_value, description
from bot.present.words import Words
from bot.preview import run_estimate
from bot.runtime.runner import VramBot
from tests.fake_discord import Callback, FakeDiscord, custom_ids

README = Path(__file__).resolve().parents[1] / "README.md"
DISCORD_TYPES = {"number": 10, "integer": 4, "boolean": 5, "choice": 3, "text": 3}


def other_value(spec: OptionSpec) -> object:
    """A value a user can give ``spec`` that is not its default."""
    limit = spec.option.limit
    if spec.kind == "number" and limit is not None:
        return 12.75 if limit.maximum >= 12.75 else limit.maximum / 3
    if spec.kind == "integer" and limit is not None:
        return int(limit.minimum) + 3
    if spec.kind == "boolean":
        return not spec.default
    if spec.option.choices is not None:
        return [c.value for c in spec.option.choices if c.value != spec.default][-1]
    return sorted(presets())[0]


def options_with(spec: OptionSpec) -> dict[str, Any]:
    """The smallest valid options with ``spec`` at a non-default value."""
    options: dict[str, Any] = {spec.name: other_value(spec)}
    if spec.name != "params":
        options["params"] = 7
    if spec.name in ("batch_size", "seq_len"):
        options["model"] = "llama-3.1-8b"
    if Task.TRAIN not in spec.option.tasks:  # a serving option (weights, kv_cache)
        options["task"] = Task.SERVE.value
    return options


def cli_words(options: dict[str, Any]) -> list[str]:
    words = []
    for spec in request_options():
        if spec.name not in options:
            continue
        value = options[spec.name]
        if spec.option.cli_positional:
            words.append(value_text(value))
        elif spec.kind == "boolean":
            words.append(spec.cli_flag)  # the flag flips the default
        else:
            words += [spec.cli_flag, value_text(value)]
    return words


def command_line_in(callback: Callback) -> EstimateRequest:
    return parse_command_line(callback.embed["description"].split("\n", 1)[0])


@pytest.mark.parametrize("spec", request_options(), ids=lambda spec: spec.name)
def test_a_non_default_value_survives_packing_the_command_line_and_the_cli(spec: OptionSpec) -> None:
    options = options_with(spec)
    request = parse_request(**options)
    assert request.given()[spec.name] == options[spec.name]
    assert unpack(pack(request)) == request
    line = command_line(request)
    assert f" {spec.name}:{value_text(options[spec.name])}" in line
    assert parse_command_line(line) == request

    args = build_parser().parse_args(["estimate", *cli_words(options)])
    assert parse_request(**{s.name: getattr(args, s.name) for s in request_options()}) == request
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert run_estimate(args) == 0
    assert line in out.getvalue()


def readme_option_table(language: Language = Language.EN) -> str:
    """The README's table of ``/vram`` options, from the table and the catalogue."""
    w = Words(language)
    rows = ["| option | what it is | allowed | default |", "|---|---|---|---|"]
    for spec in command_options():
        cells = [
            f"`{spec.name}`",
            description(spec, w),
            allowed_values(spec, w),
            default_value(spec, w),
        ]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows)


def test_the_readme_shows_the_option_table() -> None:
    table = readme_option_table()
    assert table in README.read_text(encoding="utf-8"), f"paste this table into README.md:\n{table}"


def test_the_cli_help_lists_every_option_of_the_request(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["estimate", "--help"])
    usage = capsys.readouterr().out.split("\n\n", 1)[0]
    for spec in request_options():
        assert (f"[{spec.name}]" if spec.option.cli_positional else f"[{spec.cli_flag}") in usage


@pytest.mark.asyncio(loop_scope="module")
async def test_the_registered_command_follows_the_table(fake: FakeDiscord, bot: VramBot) -> None:
    command = next(c for c in fake.registered["global"] if c["name"] == "vram")
    registered = {o["name"]: o for o in command["options"]}
    assert list(registered) == [spec.name for spec in command_options()]
    for spec in command_options():
        option = registered[spec.name]
        assert option["type"] == DISCORD_TYPES[spec.kind], spec.name
        assert option.get("required", False) is False
        assert option.get("autocomplete", False) is spec.option.autocomplete
        if spec.option.limit is not None:
            assert option["min_value"] == spec.option.limit.minimum
            assert option["max_value"] == spec.option.limit.maximum
        if spec.option.choices is not None:
            assert [c["value"] for c in option["choices"]] == [c.value for c in spec.option.choices]
        if spec.option.max_length is not None:
            assert option["max_length"] == spec.option.max_length


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("spec", request_options(), ids=lambda spec: spec.name)
async def test_a_non_default_value_survives_a_click_on_every_control(
    fake: FakeDiscord, bot: VramBot, spec: OptionSpec
) -> None:
    request = parse_request(**options_with(spec))
    answer = await fake.invoke("vram", **options_with(spec))
    assert command_line_in(answer) == request
    for custom_id in custom_ids(answer.message):
        view = custom_id.split(":")[1]
        if view == SELECT_VIEW:
            # A serving answer's select switches the weights' precision, training's the optimizer.
            pick = "fp8" if request.serving else "sgd"
            clicked = await fake.send_interaction(
                fake.component_interaction(answer.message, custom_id, values=[pick], user="bob")
            )
            switched = {"weights": pick} if request.serving else {"optimizer": pick, "bytes_per_param": None}
            expected = request.model_copy(update=switched)
            assert command_line_in(clicked) == parse_request(**expected.given())
        else:
            assert view in BUTTON_VIEWS
            clicked = await fake.send_interaction(
                fake.component_interaction(answer.message, custom_id, user="bob")
            )
            assert command_line_in(clicked) == request, view


@pytest.mark.asyncio(loop_scope="module")
async def test_the_longest_request_a_user_can_type_gets_working_controls(
    fake: FakeDiscord, bot: VramBot
) -> None:
    options: dict[str, Any] = {
        "params": 12345.678901234567,
        "model": "llama-3.1-405b",
        "optimizer": "adam8bit",
        "activations": 987654.3210987654,
        "bytes_per_param": 63.98765432109876,
        "gpu": "rtx6000ada",
        "gpus": 4095,
        "lora_rank": 1023,
        "batch_size": 65_535,
        "seq_len": 1_048_575,
        "checkpointing": True,
        "flash_attention": False,
    }
    request = parse_request(**options)
    answer = await fake.invoke("vram", **options)
    ids = custom_ids(answer.message)
    assert len(ids) == 4
    assert all(custom_id.endswith(f":{FROM_MESSAGE}") for custom_id in ids)
    for custom_id in ids[1:]:  # the three buttons, clicked by someone else: an ephemeral copy each
        clicked = await fake.send_interaction(
            fake.component_interaction(answer.message, custom_id, user="bob")
        )
        assert clicked.ephemeral
        assert command_line_in(clicked) == request
        shared = custom_ids(clicked.message)  # the ephemeral copy carries Share as well
        assert len(shared) == 5
        assert all(custom_id.endswith(f":{FROM_MESSAGE}") for custom_id in shared)
