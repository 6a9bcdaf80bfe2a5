"""``@value_type``: the dataclass of a result built on every answer (a part, an estimate, a verdict).

Frozen to the type checker: ``mypy`` refuses any assignment to a field, as for ``frozen=True``. At run
time it is a plain slotted dataclass, hashed from its fields like a frozen one. ``frozen=True`` itself
sets every field through ``object.__setattr__`` in ``__init__``, some 1,200 instructions per field
(callgrind); for the dozen results of one ``/vram`` answer that was a sixth of the bot's own work
(``benchmarks/instructions.py``). Small declarations built once at import keep ``frozen=True``; the
family declarations (:mod:`bot.estimate.families`: some 90 families of up to 73 fields, and the
classes' generated ``__setattr__``/``__delattr__``) use this too, 41 M instructions less at the
bot's start (benchmarks/README.md, the cold start).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar, dataclass_transform

T = TypeVar("T")


@dataclass_transform(frozen_default=True)
def value_type(cls: type[T]) -> type[T]:
    return dataclass(slots=True, unsafe_hash=True)(cls)
