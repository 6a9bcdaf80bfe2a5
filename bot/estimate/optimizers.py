"""The optimizers the rules of thumb cover, and what each stores per parameter.

The original calculator's rules (``shared/seed``): mixed-precision Adam 2 + 2 + 4 + 4 + 4 = 16 bytes per
parameter, 8-bit Adam about 12, SGD with momentum about 8.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

PartKind = Literal["weights", "gradients", "optimizer"]


@dataclass(frozen=True, slots=True)
class Part:
    """One line of the breakdown: what is stored for every parameter, and what it costs.

    ``key`` is the part's catalogue key, which holds its wording.
    """

    key: str
    kind: PartKind
    bytes_per_param: float
    gb: float = 0.0


class Optimizer(StrEnum):
    """The training set-ups the rules of thumb cover, with their bytes per parameter."""

    ADAM = "adam"
    ADAM8BIT = "adam8bit"
    SGD = "sgd"

    @property
    def parts(self) -> tuple[Part, ...]:
        return _OPTIMIZER_PARTS[self]

    @property
    def bytes_per_param(self) -> float:
        return sum(part.bytes_per_param for part in self.parts)


WEIGHTS16 = Part("part.weights16", "weights", 2)
GRADIENTS16 = Part("part.gradients16", "gradients", 2)
MASTER32 = Part("part.master32", "optimizer", 4)

_OPTIMIZER_PARTS: dict[Optimizer, tuple[Part, ...]] = {
    # The mixed-precision Adam rule (Rajbhandari et al. 2020, ZeRO, section 3.1): 2 + 2 + 12.
    Optimizer.ADAM: (
        WEIGHTS16,
        GRADIENTS16,
        MASTER32,
        Part("part.adam_momentum32", "optimizer", 4),
        Part("part.adam_variance32", "optimizer", 4),
    ),
    # The planning rule of thumb of about 12 B/param. bitsandbytes's own 8-bit states take about
    # 2 B/param (Dettmers et al. 2022, "8-bit Optimizers via Block-wise Quantization"), so the
    # rule's 4 B for the two moments keeps some slack for buffers.
    Optimizer.ADAM8BIT: (WEIGHTS16, GRADIENTS16, MASTER32, Part("part.adam_moments8", "optimizer", 4)),
    Optimizer.SGD: (WEIGHTS16, GRADIENTS16, Part("part.sgd_momentum32", "optimizer", 4)),
}

# A custom bytes-per-parameter figure replaces the optimizer's breakdown with this one part.
CUSTOM_PART_KEY = "part.custom"
