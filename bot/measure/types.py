"""What a measured training step reports: pure Python, importable without torch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.estimate.activations import estimate_activations
from bot.estimate.methods import LoraTargets as TargetsChoice
from bot.estimate.methods import Method as MethodChoice
from bot.estimate.models import Architecture
from bot.estimate.saved_activations import MeasuredActivations, measured_activations
from bot.estimate.setup import Setup as TrainingSetup
from bot.estimate.step_peak import step_peak_bytes

Precision = Literal["mixed", "amp", "bf16"]
OptimizerName = Literal["adamw", "adamw_fused", "sgd", "adam8bit"]
Attention = Literal["sdpa", "eager"]
Method = Literal["full", "lora", "qlora"]
LoraTargets = Literal["all-linear", "attention"]

PRECISIONS: tuple[Precision, ...] = ("mixed", "amp", "bf16")
OPTIMIZERS: tuple[OptimizerName, ...] = ("adamw", "adamw_fused", "sgd", "adam8bit")
ATTENTIONS: tuple[Attention, ...] = ("sdpa", "eager")
METHODS: tuple[Method, ...] = ("full", "lora", "qlora")


@dataclass(frozen=True, slots=True)
class MeasureSetup:
    """A training setup: precision, optimizer, attention implementation, checkpointing, shape."""

    precision: Precision = "mixed"
    optimizer: OptimizerName = "adamw"
    attention: Attention = "sdpa"
    checkpointing: bool = False
    batch_size: int = 2
    seq_len: int = 128
    # ``full`` trains every parameter; ``lora`` freezes the base and trains peft's LoRA adapters
    # (rank ``lora_rank``, ``lora_targets``: peft's "all-linear", or the attention's linears only);
    # ``qlora`` first quantizes the base's linear layers to NF4 (bitsandbytes, double quantization).
    method: Method = "full"
    lora_rank: int = 16
    lora_targets: LoraTargets = "all-linear"

    @property
    def training(self) -> TrainingSetup:
        """The estimate's view of this setup (everything but the shape)."""
        return TrainingSetup(
            method=MethodChoice(self.method),
            precision=self.precision,
            optimizer=self.optimizer,
            attention=self.attention,
            checkpointing=self.checkpointing,
            lora_rank=self.lora_rank,
            lora_targets=TargetsChoice(self.lora_targets),
        )

    def current_saved_bytes(self, arch: Architecture) -> float:
        """The estimate before calibration (Korthikanti et al.'s formula) for this setup."""
        found = estimate_activations(
            arch,
            self.batch_size,
            self.seq_len,
            flash_attention=self.attention == "sdpa",
            checkpointing=self.checkpointing,
        )
        return found.total_gb * 1e9

    def proposed(self, arch: Architecture) -> MeasuredActivations:
        """The calibrated saved bytes (and transients) for this setup."""
        return measured_activations(
            arch,
            self.batch_size,
            self.seq_len,
            setup=self.training,
        )

    def proposed_peak_bytes(self, arch: Architecture, parameters: int) -> float:
        """The calibrated peak of one step for this setup."""
        return step_peak_bytes(
            arch,
            parameters,
            self.batch_size,
            self.seq_len,
            setup=self.training,
        )


@dataclass(frozen=True, slots=True)
class Measurement:
    """Bytes of one measured step of a model ``layers`` decoder layers deep.

    ``saved_*`` are what autograd saved in the forward pass (each storage once); ``before_forward``
    … ``after_step`` the live tensor bytes at the phase boundaries and ``peak_*`` the highest live
    bytes within each phase (forward includes the loss, step the optimizer's temporaries).
    """

    setup: MeasureSetup
    layers: int
    parameters: int
    param_bytes: int
    grad_bytes: int
    master_bytes: int
    optimizer_bytes: int
    saved_per_layer: list[int]
    saved_outside: int
    saved_weight_copies: int
    before_forward: int
    after_forward: int
    weight_copies_live: int
    after_backward: int
    after_step: int
    peak_forward: int
    peak_backward: int
    peak_step: int
    # Each phase's peak split into states, activations, weight copies, gradients and temporaries.
    peak_parts: dict[str, dict[str, int]]
    seconds: float
    # The weights of the parameters not trained (a LoRA step's base), each storage once.
    frozen_bytes: int = 0

    @property
    def model_state_bytes(self) -> int:
        trained = self.param_bytes + self.grad_bytes + self.master_bytes + self.optimizer_bytes
        return trained + self.frozen_bytes

    @property
    def saved_bytes(self) -> int:
        """Saved activations, without parameters and without autocast's weight copies."""
        return sum(self.saved_per_layer) + self.saved_outside

    @property
    def retained_bytes(self) -> int:
        """What the forward pass leaves alive for backward beyond the model states (activations,
        checkpoint inputs and autocast's weight copies)."""
        return self.after_forward - self.before_forward

    @property
    def peak_bytes(self) -> int:
        return max(self.peak_forward, self.peak_backward, self.peak_step)

    @property
    def peak_phase(self) -> str:
        peaks = {"forward": self.peak_forward, "backward": self.peak_backward, "step": self.peak_step}
        return max(peaks, key=lambda phase: peaks[phase])


@dataclass(frozen=True, slots=True)
class Extrapolated:
    """Two depths' measurements extended linearly to ``layers`` (per-layer = their difference)."""

    layers: int
    parameters: int
    model_state_bytes: float
    saved_per_layer: float
    saved_outside: float
    saved_bytes: float
    retained_per_layer: float
    retained_bytes: float
    # Each phase's peak is affine in depth; their maximum is not, so they are extended one by one.
    peak_forward: float
    peak_backward: float
    peak_step: float

    @property
    def peak_bytes(self) -> float:
        return max(self.peak_forward, self.peak_backward, self.peak_step)

    @property
    def peak_phase(self) -> str:
        peaks = {"forward": self.peak_forward, "backward": self.peak_backward, "step": self.peak_step}
        return max(peaks, key=lambda phase: peaks[phase])


def extrapolate(shallow: Measurement, deep: Measurement, layers: int) -> Extrapolated:
    """Extend the measurement of two depths to ``layers``: every figure is affine in depth."""
    span = deep.layers - shallow.layers
    if span <= 0:
        raise ValueError("the second measurement must be deeper than the first")

    def line(a: float, b: float) -> float:
        return a + (b - a) * (layers - shallow.layers) / span

    per_layer = (deep.saved_bytes - shallow.saved_bytes) / span
    outside = shallow.saved_bytes - shallow.layers * per_layer
    return Extrapolated(
        layers=layers,
        parameters=round(line(shallow.parameters, deep.parameters)),
        model_state_bytes=line(shallow.model_state_bytes, deep.model_state_bytes),
        saved_per_layer=per_layer,
        saved_outside=outside,
        saved_bytes=outside + layers * per_layer,
        retained_per_layer=(deep.retained_bytes - shallow.retained_bytes) / span,
        retained_bytes=line(shallow.retained_bytes, deep.retained_bytes),
        peak_forward=line(shallow.peak_forward, deep.peak_forward),
        peak_backward=line(shallow.peak_backward, deep.peak_backward),
        peak_step=line(shallow.peak_step, deep.peak_step),
    )
