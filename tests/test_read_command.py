"""How both front ends read a ``/vram`` command's options (bot.present.interactions.read_command)."""

from __future__ import annotations

from bot.estimate.request import command_options, parse_request
from bot.present.interactions import read_command

# What discord.py hands the command's callback (and the HTTP front end builds alike): every option,
# each one not given as its default.
FILLED_IN = {spec.name: spec.default for spec in command_options()}


def test_a_command_holds_the_options_given_and_not_the_defaults_filled_in() -> None:
    command = read_command(FILLED_IN | {"params": 7.0, "optimizer": "adam8bit", "private": True})
    assert command.private
    assert command.options == {"params": 7.0, "optimizer": "adam8bit"}
    request = command.request()
    # The same request as the options alone give (validation walked those, not every option).
    assert request == parse_request(params=7.0, optimizer="adam8bit")
    assert request.model_fields_set == {"params", "optimizer"}


def test_an_option_given_at_another_value_or_of_another_type_is_kept() -> None:
    command = read_command(FILLED_IN | {"params": 7.0, "gpus": 2, "optimizer": "adam"})
    # "adam" is the optimizer's default by value, but typed (a string, not the table's object): the
    # request reads it as the default all the same.
    assert command.options == {"params": 7.0, "gpus": 2, "optimizer": "adam"}
    assert not command.private
    assert command.request() == parse_request(params=7.0, gpus=2)
