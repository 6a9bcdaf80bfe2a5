"""One training setup: how a step trains (method, precision, optimizer, attention, checkpointing and
the memory savers), as one value that the saved activations and the step's peak read, built from the
request.

Pure Python; nothing here knows Discord or words.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Literal

from bot.estimate.methods import LoraTargets, Method
from bot.estimate.savers import NO_SAVERS, Savers
from bot.estimate.value_type import value_type

if TYPE_CHECKING:
    from bot.estimate.request import EstimateRequest

PrecisionName = Literal["mixed", "amp", "bf16"]
AttentionName = Literal["sdpa", "eager"]
# The optimizer a step runs, for its state and its step's temporaries (torch.optim's AdamW defaults
# to the foreach implementation; bitsandbytes' AdamW8bit and PagedAdamW8bit; torch.optim's Adafactor
# and Muon; Lion as its paper states it).
OptimizerKind = Literal[
    "adamw", "adamw_fused", "sgd", "adam8bit", "paged_adam8bit", "adafactor", "lion", "muon"
]
_STEP_OPTIMIZERS: dict[str, OptimizerKind] = {
    "adam": "adamw",
    "adam8bit": "adam8bit",
    "sgd": "sgd",
    "paged_adam8bit": "paged_adam8bit",
    "adafactor": "adafactor",
    "lion": "lion",
    "muon": "muon",
}


@value_type
class Setup:
    """What one training step does, whatever the model: the method (and its adapters), the precision,
    the optimizer it steps with, the attention kernel and full activation checkpointing."""

    method: Method = Method.FULL
    precision: PrecisionName = "mixed"
    optimizer: OptimizerKind = "adamw"
    attention: AttentionName = "sdpa"
    checkpointing: bool = False
    lora_rank: int = 16
    lora_targets: LoraTargets = LoraTargets.ALL_LINEAR
    savers: Savers = NO_SAVERS  # where the states and activations live, when the optimizer steps

    @property
    def adapters(self) -> bool:
        """LoRA or QLoRA: the base is frozen and only the adapters train."""
        return self.method is not Method.FULL

    def but(self, **changes: object) -> Setup:
        """The same setup with ``changes`` (e.g. ``checkpointing=True``)."""
        return replace(self, **changes)  # type: ignore[arg-type]

    @classmethod
    def of(cls, request: EstimateRequest) -> Setup:
        """The request's setup (the options that say how the step trains)."""
        return cls(
            method=request.method,
            precision=request.precision.value,
            optimizer=_STEP_OPTIMIZERS[request.optimizer.value],
            attention="sdpa" if request.flash_attention else "eager",
            checkpointing=request.checkpointing,
            lora_rank=request.lora_rank,
            lora_targets=request.lora_targets,
            savers=request.savers,
        )


FULL_FINE_TUNE = Setup()
