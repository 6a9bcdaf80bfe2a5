"""Requests packed into a component's custom_id and back."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.estimate.core import EstimateRequest, Optimizer, parse_request
from bot.estimate.hardware import Gpu
from bot.estimate.models import presets
from bot.present.custom_ids import CUSTOM_ID_MAX, UnreadableState, pack, unpack

ROOM = CUSTOM_ID_MAX - len("vram:est:")


def test_defaults_are_left_out() -> None:
    assert pack(parse_request(params=7), ROOM) == "p=7"
    assert pack(parse_request(params=7, optimizer="adam8bit", activations=20), ROOM) == "p=7;o=adam8bit;a=20"


def test_every_option_round_trips() -> None:
    request = parse_request(
        params=70.6,
        model="llama-3.1-70b",
        optimizer="sgd",
        bytes_per_param=9.5,
        gpu="h200",
        gpus=64,
        lora_rank=8,
        batch_size=4,
        seq_len=8192,
        checkpointing=True,
        flash_attention=False,
    )
    packed = pack(request, ROOM)
    assert packed is not None
    assert len(packed) <= ROOM
    assert unpack(packed) == request


requests = st.builds(
    lambda p, a, b, o, g, n, model: parse_request(
        params=p, activations=a, bytes_per_param=b, optimizer=o, gpu=g, gpus=n, model=model
    ),
    st.floats(min_value=1e-9, max_value=100_000),
    st.none() | st.floats(min_value=0, max_value=1_000_000),
    st.none() | st.floats(min_value=1e-9, max_value=64),
    st.sampled_from([o.value for o in Optimizer]),
    st.none() | st.sampled_from([g.value for g in Gpu]),
    st.integers(min_value=1, max_value=4096),
    st.none() | st.sampled_from(sorted(presets())),
)


@settings(max_examples=300, deadline=None)
@given(requests)
def test_any_request_packs_within_the_room_and_exactly_when_it_can(request: EstimateRequest) -> None:
    packed = pack(request, ROOM)
    assert packed is not None
    assert len(packed) <= ROOM
    back = unpack(packed)
    if packed == pack(request, 10_000):  # it fitted unrounded: the round trip is exact
        assert back == request
    else:  # rounded: the same request up to the rounding
        assert back.params == pytest.approx(request.params, rel=1e-3)
        assert back.model == request.model
        assert back.optimizer == request.optimizer


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
        "p=7;o=lion",
        "p=7;g=tpu",
        "m=nope",
        "p=7;" + "a=1;" * 30,
        "p=7;bs=4",
        "p=7;n=٣",
    ],
)
def test_anything_else_is_unreadable(packed: str) -> None:
    with pytest.raises(UnreadableState):
        unpack(packed)
