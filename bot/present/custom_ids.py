"""A request packed into a component's ``custom_id`` and back, so controls need no server-side state.

Discord allows 100 characters per ``custom_id``: ``vram:<view>:<state>``. The state lists the options
that differ from their defaults as ``key=value`` pairs joined by ``;``, with each option's short key
from the option table, e.g. ``p=7;o=adam8bit;a=20``; numbers are exact (shortest round-trip form).
A state too long for Share's custom_id gives each choice by its shortest unambiguous start
(``of=a`` for ``offload:activations``; an exact value reads as itself, so ``o=adam`` stays Adam).
A request whose state still does not fit gets the state ``~`` instead: its controls then read the request
from the command line that starts the answer they are attached to (:mod:`bot.present.command_line`),
which holds it exactly. Either way the request meets the same validation as typed input.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Final

from bot.estimate.options import OptionSpec
from bot.estimate.request import EstimateRequest, InvalidRequest, parse_request, request_options
from bot.present.command_line import UnreadableCommand, read_value, typed

CUSTOM_ID_MAX: Final = 100

# A control's custom_id is "vram:<view>:<packed request>". The views: the optimizer select (which
# answers with the estimate), and the three buttons.
PREFIX: Final = "vram"
SELECT_VIEW: Final = "opt"
ESTIMATE: Final = "est"
COMPARE: Final = "cmp"
DETAILS: Final = "det"
BUTTON_VIEWS: Final = (ESTIMATE, COMPARE, DETAILS)
VIEWS: Final = (SELECT_VIEW, *BUTTON_VIEWS)
STATE_ROOM: Final = CUSTOM_ID_MAX - max(len(f"{PREFIX}:{view}:") for view in VIEWS)
# Share (on ephemeral answers only): "vram:shr:<view>:<state>", the view to post and its request. It
# names a view as well, so it has four characters less room; a state that does not fit there is
# read from the message's command line, like any state too long (see :func:`share_id`).
SHARE: Final = "shr"
SHARE_STATE_ROOM: Final = CUSTOM_ID_MAX - max(len(f"{PREFIX}:{SHARE}:{view}:") for view in VIEWS)
# The state of a request too long to pack: "read it from the message's command line".
FROM_MESSAGE: Final = "~"

# Which control a custom_id is, read back (the gateway's dynamic items and the HTTP front end both
# match with these). Each matches the whole custom_id, and none matches another's: the button's must
# read neither the select's ("vram:opt:...") nor Share's ("vram:shr:..."). DOTALL: a state with a line
# break is still the control's (then refused by unpack), not nobody's.
EXPLORE_TEMPLATE: Final = re.compile(
    rf"{PREFIX}:(?P<view>(?!(?:{SELECT_VIEW}|{SHARE}):)[^:]*):(?P<state>.*)", re.DOTALL
)
SELECT_TEMPLATE: Final = re.compile(rf"{PREFIX}:{SELECT_VIEW}:(?P<state>.*)", re.DOTALL)
SHARE_TEMPLATE: Final = re.compile(rf"{PREFIX}:{SHARE}:(?P<view>[^:]*):(?P<state>.*)", re.DOTALL)
# Every other custom_id of ours, which none of the three reads: no view ("vram", "vram:est"), or Share
# without a view and a state ("vram:shr:p=7", "vram:shr:cmp").
UNREADABLE_TEMPLATE: Final = re.compile(rf"{PREFIX}(?::[^:]*|:{SHARE}:[^:]*)?", re.DOTALL)
READABLE_TEMPLATES: Final = (EXPLORE_TEMPLATE, SELECT_TEMPLATE, SHARE_TEMPLATE)


class UnreadableState(ValueError):
    """The packed text is not something :func:`pack` wrote (malformed, tampered or out of range)."""


def control_id(view: str, state: str) -> str:
    """``vram:<view>:<state>``, for any view: a click's custom_id may name one we do not have."""
    return f"{PREFIX}:{view}:{state}"


# Each view's custom_id up to its state ("vram:cmp:"), for writing the controls of every answer.
ID_PREFIXES: Final = {view: control_id(view, "") for view in VIEWS}


def share_id(view: str, state: str) -> str:
    """The Share button's custom_id for ``view`` of the request packed as ``state``."""
    custom_id = f"{PREFIX}:{SHARE}:{view}:{state}"
    return custom_id if len(custom_id) <= CUSTOM_ID_MAX else f"{PREFIX}:{SHARE}:{view}:{FROM_MESSAGE}"


def pack(request: EstimateRequest) -> str:
    """The request's state for its controls' custom_ids: exact, or :data:`FROM_MESSAGE`. A state too
    long as typed for Share's custom_id gives each choice by its shortest unambiguous start ("of=a"
    for offload's activations), which :func:`unpack` reads back, before it gives up."""
    keys = _packed_keys()
    given = typed(request).given
    # The options as the command line types them, in the table's order, which is the packed order;
    # a boolean is packed as 1 or 0.
    pairs = [(name, str(int(value)) if isinstance(value, bool) else text) for name, value, text in given]
    packed = ";".join([f"{keys[name]}={text}" for name, text in pairs])
    if len(packed) <= SHARE_STATE_ROOM:  # Share's custom_id carries it too
        return packed
    starts = _choice_starts()
    packed = ";".join([f"{keys[name]}={starts.get((name, text), text)}" for name, text in pairs])
    return packed if len(packed) <= STATE_ROOM else FROM_MESSAGE


def carried(request: EstimateRequest) -> bool:
    """Whether every control of the request's answers carries it in its own custom_id (Share's, four
    characters shorter, too), so that none reads the message's command line: an answer short of room
    may then leave that line to Details."""
    state = pack(request)
    return state != FROM_MESSAGE and len(state) <= SHARE_STATE_ROOM


@cache
def _choice_starts() -> dict[tuple[str, str], str]:
    """Each choice's shortest start that no other choice of its option shares (an exact value is
    read as itself first, so "adam" stays "adam" beside "adam8bit"), by (option, value)."""
    starts = {}
    for spec in request_options():
        choices = spec.option.choices
        if spec.option.packed_key is None or choices is None:
            continue
        values = [str(choice) for choice in choices]
        for value in values:
            others = [other for other in values if other != value]
            start = next(
                value[:end]
                for end in range(1, len(value) + 1)
                if value[:end] == value or not any(other.startswith(value[:end]) for other in others)
            )
            starts[spec.name, value] = start
    return starts


@cache
def _packed_keys() -> dict[str, str]:
    """Each option's key in the packed state, by the option's name."""
    return {spec.name: spec.option.packed_key for spec in request_options() if spec.option.packed_key}


def _by_key() -> dict[str, OptionSpec]:
    return {spec.option.packed_key: spec for spec in request_options() if spec.option.packed_key}


def _value(spec: OptionSpec, text: str) -> object:
    if spec.kind == "boolean":
        if text not in ("0", "1"):
            raise UnreadableState(f"{spec.name} is not 0 or 1")
        return text == "1"
    choices = spec.option.choices
    if choices is not None and text not in {str(choice) for choice in choices}:
        # A choice by its start, as pack shortens a long state: the one choice that starts so.
        starting = [str(choice) for choice in choices if str(choice).startswith(text)] if text else []
        if len(starting) != 1:
            raise UnreadableState(f"{spec.name}: no one choice starts with {text[:20]!r}")
        return starting[0]
    try:
        return read_value(spec, text)
    except UnreadableCommand as exc:
        raise UnreadableState(str(exc)) from None


def unpack(packed: str) -> EstimateRequest:
    """The request :func:`pack` wrote, validated like typed input; :class:`UnreadableState` otherwise.

    :data:`FROM_MESSAGE` is not a request by itself: the caller reads the message's command line.
    """
    if len(packed) > CUSTOM_ID_MAX:
        raise UnreadableState("too long")
    by_key = _by_key()
    options: dict[str, object] = {}
    for pair in packed.split(";") if packed else []:
        key, sep, text = pair.partition("=")
        spec = by_key.get(key)
        if not sep or spec is None or spec.name in options:
            raise UnreadableState(f"bad pair {pair[:20]!r}")
        options[spec.name] = _value(spec, text)
    try:
        return parse_request(**options)
    except InvalidRequest as exc:
        raise UnreadableState(str(exc)) from exc  # the cause tells a Hub repo to look up
