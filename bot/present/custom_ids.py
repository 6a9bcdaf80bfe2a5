"""A request packed into a component's ``custom_id`` and back, so buttons need no server-side state.

Discord allows 100 characters per ``custom_id``. The packed form lists only what differs from the
defaults, as ``key=value`` pairs joined by ``;`` with one- or two-letter keys, e.g.
``p=7;o=adam8bit;a=20``. Numbers are written exactly (Python's shortest round-trip form); only when
that does not fit are they rounded to fewer significant digits, and the reply's command line then
shows the rounded inputs it used. Unpacking goes through :func:`bot.estimate.core.parse_request`, so a
tampered value meets the same validation as a typed one.
"""

from __future__ import annotations

from typing import Final

from bot.estimate.core import DEFAULT_LORA_RANK, EstimateRequest, InvalidRequest, Optimizer, parse_request

CUSTOM_ID_MAX: Final = 100

# A control's custom_id is "vram:<view>:<packed request>". The views: the optimizer select (which
# answers with the estimate), and the three buttons.
PREFIX: Final = "vram"
SELECT_VIEW: Final = "opt"
ESTIMATE: Final = "est"
COMPARE: Final = "cmp"
DETAILS: Final = "det"
BUTTON_VIEWS: Final = (ESTIMATE, COMPARE, DETAILS)
STATE_ROOM: Final = CUSTOM_ID_MAX - len(f"{PREFIX}:{ESTIMATE}:")


def control_id(view: str, state: str) -> str:
    return f"{PREFIX}:{view}:{state}"


# Short key -> request field. Never reuse a key for another field: old messages still carry them.
_FIELDS: Final = {
    "p": "params",
    "m": "model",
    "o": "optimizer",
    "a": "activations",
    "b": "bytes_per_param",
    "g": "gpu",
    "n": "gpus",
    "r": "lora_rank",
    "bs": "batch_size",
    "s": "seq_len",
    "c": "checkpointing",
    "f": "flash_attention",
}
_KEYS: Final = {field: key for key, field in _FIELDS.items()}
_FLOATS: Final = {"params", "activations", "bytes_per_param"}
_INTS: Final = {"gpus", "lora_rank", "batch_size", "seq_len"}
_BOOLS: Final = {"checkpointing", "flash_attention"}
_DEFAULTS: Final[dict[str, object]] = {
    "optimizer": Optimizer.ADAM.value,
    "gpus": 1,
    "lora_rank": DEFAULT_LORA_RANK,
    "checkpointing": False,
    "flash_attention": True,
}


class UnreadableState(ValueError):
    """The packed text is not something :func:`pack` wrote (malformed, tampered or out of range)."""


def _number(value: float, digits: int | None) -> str:
    text = repr(float(value)) if digits is None else f"{value:.{digits}g}"
    return text.removesuffix(".0")


def _pairs(request: EstimateRequest, digits: int | None) -> list[str]:
    values: dict[str, object] = {
        "params": request.params,
        "model": request.model.key if request.model else None,
        "optimizer": request.optimizer.value,
        "activations": request.activations,
        "bytes_per_param": request.bytes_per_param,
        "gpu": request.gpu.value if request.gpu else None,
        "gpus": request.gpus,
        "lora_rank": request.lora_rank,
        "batch_size": request.batch_size,
        "seq_len": request.seq_len,
        "checkpointing": request.checkpointing,
        "flash_attention": request.flash_attention,
    }
    pairs = []
    for field, value in values.items():
        if value is None or (field in _DEFAULTS and value == _DEFAULTS[field]):
            continue
        if isinstance(value, bool):
            text = "1" if value else "0"
        elif isinstance(value, float):
            text = _number(value, digits)
        else:
            text = str(value)
        pairs.append(f"{_KEYS[field]}={text}")
    return pairs


def pack(request: EstimateRequest, room: int) -> str | None:
    """The request in at most ``room`` characters, exactly if it fits; None if even rounding fails."""
    for digits in (None, 9, 6, 4):
        packed = ";".join(_pairs(request, digits))
        if len(packed) <= room:
            return packed
    return None


def _value(field: str, text: str) -> object:
    if field in _BOOLS:
        if text not in ("0", "1"):
            raise UnreadableState(f"{field} is not 0 or 1")
        return text == "1"
    if field in _INTS:
        if not text.isascii() or not text.isdigit():
            raise UnreadableState(f"{field} is not a whole number")
        return int(text)
    if field in _FLOATS:
        try:
            return float(text)  # nan / inf parse here and are refused by the request's validation
        except ValueError:
            raise UnreadableState(f"{field} is not a number") from None
    return text


def unpack(packed: str) -> EstimateRequest:
    """The request :func:`pack` wrote, validated like typed input; :class:`UnreadableState` otherwise."""
    if len(packed) > CUSTOM_ID_MAX:
        raise UnreadableState("too long")
    options: dict[str, object] = {}
    for pair in packed.split(";") if packed else []:
        key, sep, text = pair.partition("=")
        field = _FIELDS.get(key)
        if not sep or field is None or field in options:
            raise UnreadableState(f"bad pair {pair[:20]!r}")
        options[field] = _value(field, text)
    try:
        return parse_request(**options)
    except InvalidRequest as exc:
        raise UnreadableState(str(exc)) from None
