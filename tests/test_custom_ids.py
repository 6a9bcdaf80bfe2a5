"""Requests packed into a component's custom_id and back, and the command line read back."""

from __future__ import annotations

import re

import pytest

from bot.estimate.request import EstimateRequest, parse_request
from bot.present.command_line import UnreadableCommand, command_line, parse_command_line, plain_number
from bot.present.custom_ids import (
    CUSTOM_ID_MAX,
    FROM_MESSAGE,
    STATE_ROOM,
    VIEWS,
    UnreadableState,
    carried,
    control_id,
    pack,
    unpack,
)
from tests.property_runs import property_test
from tests.strategies import requests


def test_defaults_are_left_out_and_keys_are_short() -> None:
    assert pack(parse_request(params=7)) == "p=7"
    assert pack(parse_request(params=7, optimizer="adam8bit", activations=20)) == "p=7;o=adam8bit;a=20"
    assert pack(parse_request(params=7, checkpointing=True, flash_attention=False)) == "p=7;c=1;f=0"


def test_a_state_too_long_for_share_packs_its_choices_by_their_starts() -> None:
    options: dict[str, object] = {"model": "llama-3.1-8b", "optimizer": "paged_adam8bit", "precision": "bf16"}
    options |= {"gpu": "rtxpro6000", "gpus": 64, "method": "qlora", "lora_targets": "attention"}
    options |= {"batch_size": 1, "seq_len": 512, "checkpointing": True, "offload": "activations"}
    request = parse_request(**options, chunked_loss=True, grad_accum=4)  # 118 characters as typed
    packed = pack(request)
    assert packed == "m=llama-3.1-8b;o=p;x=b;g=rtxp;n=64;mt=q;lt=at;bs=1;s=512;c=1;of=a;cl=1;ga=4"
    assert unpack(packed) == request
    assert carried(request)  # Share's custom_id too: the answer need not show its command line
    # "adam" is a choice of its own beside "adam8bit"; a start two choices share is refused.
    assert unpack("p=7;o=adam").optimizer == "adam"
    assert unpack("p=7;o=adam8").optimizer == "adam8bit"
    with pytest.raises(UnreadableState):
        unpack("p=7;o=ada")


def test_every_control_id_fits_discord() -> None:
    assert all(len(control_id(view, "x" * STATE_ROOM)) <= CUSTOM_ID_MAX for view in VIEWS)


@property_test(300, requests())
def test_any_request_packs_exactly_or_points_at_the_command_line(request: EstimateRequest) -> None:
    packed = pack(request)
    assert len(packed) <= STATE_ROOM
    if packed == FROM_MESSAGE:
        assert parse_command_line(command_line(request)) == request
    else:
        assert unpack(packed) == request


@property_test(300, requests())
def test_the_command_line_parses_back_to_the_same_request(request: EstimateRequest) -> None:
    line = command_line(request)
    assert re.search(r"\d[eE][+-]?\d", line) is None  # numbers as typed, never 1e-05 (a preset may hold "e-")
    assert parse_command_line(line) == request


def test_the_longest_request_a_user_can_type_points_at_the_command_line() -> None:
    request = parse_request(
        params=12345.678901234567,
        model="llama-3.1-405b",
        optimizer="adam8bit",
        activations=987654.3210987654,
        bytes_per_param=63.98765432109876,
        gpu="rtx6000ada",
        gpus=4095,
        lora_rank=1023,
        batch_size=65_535,
        seq_len=1_048_575,
        checkpointing=True,
        flash_attention=False,
    )
    assert pack(request) == FROM_MESSAGE
    assert parse_command_line(command_line(request)) == request


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (7.0, "7"),
        (70.6, "70.6"),
        (99999.999, "99999.999"),
        (999999.9, "999999.9"),
        (1234.5678901234, "1234.5678901234"),
        (1e-06, "0.000001"),
        (-0.0, "0"),
        (1e6, "1000000"),
    ],
)
def test_numbers_are_shown_as_typed(value: float, shown: str) -> None:
    assert plain_number(value) == shown


@pytest.mark.parametrize(
    "packed",
    [
        "",
        "p",
        "p=",
        "p=x",
        "p=7;p=7",
        "q=7",
        "p=7;n=2.5",
        "p=7;n=-1",
        "p=7;c=yes",
        "p=inf",
        "p=7;o=rmsprop",
        "p=7;g=tpu",
        "m=nope",
        "p=7;" + "a=1;" * 30,
        "p=7;bs=4",
        "p=7;n=٣",
        FROM_MESSAGE,
    ],
)
def test_anything_else_is_unreadable(packed: str) -> None:
    with pytest.raises(UnreadableState):
        unpack(packed)


@pytest.mark.parametrize(
    "line",
    [
        "",
        "/vram",
        "/ping params:7",
        "/vram params:seven",
        "/vram params:7 params:8",
        "/vram params:7 private:True",  # shapes the reply, not the estimate: never in the line
        "/vram params:7 flavour:vanilla",
        "/vram params:7 checkpointing:yes",
        "/vram params:-1",
    ],
)
def test_a_line_that_is_not_a_request_is_unreadable(line: str) -> None:
    with pytest.raises(UnreadableCommand):
        parse_command_line(line)
