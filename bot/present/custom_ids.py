"""A request packed into a component's ``custom_id`` and back, so controls need no server-side state.

Discord allows 100 characters per ``custom_id``: ``vram:<view>:<state>``. The state lists the options
that differ from their defaults as ``key=value`` pairs joined by ``;``, with each option's short key
from the option table, e.g. ``p=7;o=adam8bit;a=20``; numbers are exact (shortest round-trip form).
A request whose state does not fit gets the state ``~`` instead: its controls then read the request
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
    """The request's state for its controls' custom_ids: exact, or :data:`FROM_MESSAGE`."""
    keys = _packed_keys()
    pairs = []
    # The options as the command line types them, in the table's order, which is the packed order;
    # a boolean is packed as 1 or 0.
    for name, value, text in typed(request).given:
        if value is True or value is False:
            text = "1" if value else "0"
        pairs.append(f"{keys[name]}={text}")
    packed = ";".join(pairs)
    return packed if len(packed) <= STATE_ROOM else FROM_MESSAGE


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
