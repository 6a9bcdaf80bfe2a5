"""The request as the ``/vram …`` line a user can copy, and that line read back into the request.

It is command syntax, so it reads the same in every language. It lists the options that differ from
their defaults, in the order of the option table, with numbers in Python's shortest round-trip form
and never an exponent, so the line reproduces exactly the values the estimate used. Every view's
description starts with it (the short answer's, where a phone is short of rows, with only the options
given, or not at all when its controls carry the request), which is also how a control finds a request
too long for its custom_id.
"""

from __future__ import annotations

from decimal import Decimal
from functools import cache

from bot.estimate.options import OptionSpec, Task
from bot.estimate.request import (
    EstimateRequest,
    InvalidRequest,
    command_options,
    option_positions,
    parse_request,
    request_options,
)
from bot.estimate.value_type import value_type

COMMAND = "/vram"


class UnreadableCommand(ValueError):
    """The text is not a ``/vram`` line this module wrote (or its values are not valid)."""


def plain_number(value: float) -> str:
    """7, 70.6, 0.000001 (not 1e-06), 1000000 (not 1e+06): the shortest digits that round-trip.

    Never an exponent, even for the tiniest value the limits allow: the line is for copying, and a
    value far below anything meaningful may be long, but it is still the value the estimate used.
    """
    if value == 0:
        return "0"  # also for -0.0
    shortest = repr(float(value))  # Python's repr is the shortest round-trip form (PEP 3101 / 'r')
    if "e" not in shortest:
        return shortest.removesuffix(".0")
    digits = format(Decimal(shortest), "f")  # the same digits, written out without the exponent
    if "." in digits:
        digits = digits.rstrip("0").removesuffix(".")
    return digits


def value_text(value: object) -> str:
    """One option's value as typed in a command: numbers in plain form, anything else as text."""
    if isinstance(value, bool):
        return str(value)  # True / False, as Discord writes a boolean option
    if isinstance(value, float):
        return plain_number(value)
    return str(value)


def read_value(spec: OptionSpec, text: str) -> object:
    """The value ``text`` stands for in option ``spec``; validation happens in the request."""
    kind = spec.kind
    if kind == "boolean":
        if text not in ("True", "False"):
            raise UnreadableCommand(f"{spec.name} is not True or False")
        return text == "True"
    if kind == "integer":
        if not text.isascii() or not text.isdigit():
            raise UnreadableCommand(f"{spec.name} is not a whole number")
        return int(text)
    if kind == "number":
        try:
            return float(text)  # nan and inf parse here, and the request's validation refuses them
        except ValueError:
            raise UnreadableCommand(f"{spec.name} is not a number") from None
    return text


def command_line(request: EstimateRequest) -> str:
    """``/vram params:7 optimizer:adam8bit``: the options that differ from their defaults."""
    return typed(request).line


def given_line(request: EstimateRequest) -> str:
    """The command line in its shortest exact form: only the options that differ from their defaults
    (none that it always shows at theirs), for an answer short of room; it reads back the same."""
    return " ".join([COMMAND, *[f"{name}:{text}" for name, _, text in typed(request).given]])


@value_type
class Typed:
    """A request as typed: what its command line and its controls' custom_id are written from."""

    given: tuple[tuple[str, object, str], ...]  # (name, value, text) of each option not at its default
    line: str  # the command line: those, and the options it always shows, in the table's order


# Every answer writes both its command line and its controls' custom_id: the request is frozen, so
# the last one's typed form is kept by identity.
_last_typed: tuple[EstimateRequest, Typed] | None = None


def typed(request: EstimateRequest) -> Typed:
    """The options of ``request`` as typed (numbers in :func:`plain_number`'s form)."""
    global _last_typed
    last = _last_typed  # one read: another thread may replace it meanwhile
    if last is not None and last[0] is request:
        return last[1]
    given = [(name, value, value_text(value)) for name, value in request.given().items()]
    texts = {name: text for name, _, text in given}
    for name, tasks in _always_shown():
        # Shown where it applies: a serving line never carries training's optimizer.
        # At its default: added, and put back in the table's order.
        if name not in texts and request.task in tasks:
            texts[name] = value_text(getattr(request, name))
            texts = {other: texts[other] for other in sorted(texts, key=option_positions().__getitem__)}
    found = Typed(tuple(given), " ".join([COMMAND, *[f"{name}:{text}" for name, text in texts.items()]]))
    _last_typed = (request, found)
    return found


@cache
def _always_shown() -> tuple[tuple[str, tuple[Task, ...]], ...]:
    """The options the command line shows even at their default, with the tasks they apply to."""
    return tuple((spec.name, spec.option.tasks) for spec in request_options() if spec.option.always_shown)


def parse_command_line(line: str) -> EstimateRequest:
    """The request a :func:`command_line` stands for; :class:`UnreadableCommand` for anything else."""
    words = line.strip().strip("`").split(" ")
    if words[0] != COMMAND:
        raise UnreadableCommand("not a /vram line")
    options: dict[str, object] = {}
    by_name = {spec.name: spec for spec in command_options()}
    for word in words[1:]:
        name, sep, text = word.partition(":")
        spec = by_name.get(name)
        if not sep or spec is None or spec.option.packed_key is None or name in options:
            raise UnreadableCommand(f"bad word {word[:20]!r}")
        options[name] = read_value(spec, text)
    try:
        return parse_request(**options)
    except InvalidRequest as exc:
        raise UnreadableCommand(str(exc)) from exc  # the cause tells a Hub repo to look up
