"""The optimizers the rules of thumb cover, and what each stores per parameter.

The original calculator's rules (``shared/seed``): mixed-precision Adam 2 + 2 + 4 + 4 + 4 = 16 bytes per
parameter, 8-bit Adam about 12, SGD with momentum about 8. The optimizers teams run in 2026 beside them
(paged 8-bit AdamW, Adafactor, Lion, Muon) each name their source below; measured on CPU with torch in
``benchmarks/accuracy_optimizers.py``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from bot.estimate.value_type import value_type

PartKind = Literal["weights", "gradients", "optimizer"]


@value_type
class Part:
    """One line of the breakdown: what is stored for every parameter (what it costs for a model is
    :meth:`bot.estimate.core.Estimate.part_gb`).

    ``key`` is the part's catalogue key, which holds its wording.
    """

    key: str
    kind: PartKind
    bytes_per_param: float
    # The weights of the parameters not trained (a multimodal model's vision and audio towers): they
    # cost their weights only, no gradients and no optimizer state, so they are not part of B.
    frozen: bool = False
    # Kept in paged (CUDA unified) memory, which the driver evicts to host RAM when the card is full
    # (bitsandbytes' paged optimizers): the card need not hold it at the step's peak.
    paged: bool = False


class Optimizer(StrEnum):
    """The optimizers the rules of thumb cover (the seed's three first, their names and figures kept)."""

    ADAM = "adam"
    ADAM8BIT = "adam8bit"
    SGD = "sgd"
    PAGED_ADAM8BIT = "paged_adam8bit"
    ADAFACTOR = "adafactor"
    LION = "lion"
    MUON = "muon"

    @property
    def parts(self) -> tuple[Part, ...]:
        """What it stores per parameter in the seed's mixed-precision setup."""
        return parts_for(self, Precision.MIXED)

    @property
    def bytes_per_param(self) -> float:
        return bytes_per_param_for(self, Precision.MIXED)


class Precision(StrEnum):
    """How a training run keeps its weights, gradients and optimizer state.

    ``mixed``: 16-bit weights and gradients with an fp32 master copy (DeepSpeed, Megatron; the seed's
    rules). ``amp``: fp32 weights and gradients, with bf16 autocast in forward and backward (the
    Hugging Face Trainer's ``--bf16``, PyTorch AMP). ``bf16``: everything in bf16, no master copy
    (torchtune's default).
    """

    MIXED = "mixed"
    AMP = "amp"
    BF16 = "bf16"


WEIGHTS16 = Part("part.weights16", "weights", 2)
GRADIENTS16 = Part("part.gradients16", "gradients", 2)
WEIGHTS32 = Part("part.weights32", "weights", 4)
GRADIENTS32 = Part("part.gradients32", "gradients", 4)
MASTER32 = Part("part.master32", "optimizer", 4)
MOMENTUM32 = Part("part.adam_momentum32", "optimizer", 4)
VARIANCE32 = Part("part.adam_variance32", "optimizer", 4)
# bitsandbytes' 8-bit Adam (Dettmers et al. 2022): both moments in one byte each, quantized block-wise
# with one fp32 absmax per block of 256 values per moment: 2 + 2 × 4 / 256 = 2.03 B/param.
BNB_MOMENTS = Part("part.adam_moments_bnb", "optimizer", 2 + 2 * 4 / 256)
# bitsandbytes' PagedAdamW8bit (``is_paged=True``): the same two block-wise 8-bit moments, allocated with
# cudaMallocManaged, which pages them out to host RAM under memory pressure and back for the update
# (bitsandbytes docs, "Paged optimizers"). The fp32 master copy of mixed precision is the framework's
# and stays on the card. Mixed precision budgets the moments at the seed's 4 B, as for adam8bit.
PAGED_MOMENTS8 = Part("optimizer.part_paged_moments8", "optimizer", 4, paged=True)
PAGED_MOMENTS_BNB = Part("optimizer.part_paged_moments_bnb", "optimizer", 2 + 2 * 4 / 256, paged=True)
# Adafactor (Shazeer & Stern 2018; torch.optim.Adafactor and transformers' Adafactor defaults: beta1
# None, no first moment): the second moment factored into a row and a column vector per 2-D weight,
# (r + c) values for r × c parameters, a full one for 1-D norms and biases. That is 4 (r + c) / (r c)
# B/param in fp32: 0.0013 for Llama 3.1 8B's MLP, 0.002 for a 4096 × 4096 weight, 0.016 for a
# 512-wide model; budgeted at 0.01 (0.005 in bf16, torch keeps the state in the parameters' dtype).
ADAFACTOR_FACTORED32 = Part("optimizer.part_adafactor_factored32", "optimizer", 0.01)
ADAFACTOR_FACTORED16 = Part("optimizer.part_adafactor_factored16", "optimizer", 0.005)
# Lion (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms", Program 1): one momentum,
# the update is the sign of an interpolation of it with the gradient.
LION_MOMENTUM32 = Part("optimizer.part_lion_momentum32", "optimizer", 4)
LION_MOMENTUM16 = Part("optimizer.part_lion_momentum16", "optimizer", 2)
# Muon (Jordan et al. 2024, github.com/KellerJordan/Muon; torch.optim.Muon): one momentum buffer per
# 2-D hidden weight, orthogonalized by Newton-Schulz in bf16; the embeddings, the LM head, norms and
# biases train with AdamW, as the reference's MuonWithAuxAdam does, so they keep a second moment too.
# Their share of the parameters is the model's (``muon_parts``); without a model, Llama 3.1 8B's
# 2 × 128,256 × 4,096 / 8.03 B = 0.13.
MUON_DEFAULT_ADAMW_SHARE = 0.13

_PARTS: dict[tuple[Optimizer, Precision], tuple[Part, ...]] = {
    # The mixed-precision Adam rule (Rajbhandari et al. 2020, ZeRO, section 3.1): 2 + 2 + 12.
    (Optimizer.ADAM, Precision.MIXED): (WEIGHTS16, GRADIENTS16, MASTER32, MOMENTUM32, VARIANCE32),
    # The seed's planning rule of about 12 B/param: the two moments budgeted at 4 B together, which
    # keeps slack over bitsandbytes' own 2.03 B for buffers.
    (Optimizer.ADAM8BIT, Precision.MIXED): (
        WEIGHTS16,
        GRADIENTS16,
        MASTER32,
        Part("part.adam_moments8", "optimizer", 4),
    ),
    (Optimizer.SGD, Precision.MIXED): (WEIGHTS16, GRADIENTS16, Part("part.sgd_momentum32", "optimizer", 4)),
    # fp32 weights and gradients (torch.autocast computes in bf16 but keeps the parameters fp32);
    # torch.optim.AdamW keeps exp_avg and exp_avg_sq like the parameters, fp32.
    (Optimizer.ADAM, Precision.AMP): (WEIGHTS32, GRADIENTS32, MOMENTUM32, VARIANCE32),
    (Optimizer.ADAM8BIT, Precision.AMP): (WEIGHTS32, GRADIENTS32, BNB_MOMENTS),
    (Optimizer.SGD, Precision.AMP): (WEIGHTS32, GRADIENTS32, Part("part.sgd_momentum32", "optimizer", 4)),
    # Pure bf16: torch.optim keeps its states in the parameters' dtype, so 2 + 2 + 2 + 2 for AdamW.
    (Optimizer.ADAM, Precision.BF16): (
        WEIGHTS16,
        GRADIENTS16,
        Part("part.adam_momentum16", "optimizer", 2),
        Part("part.adam_variance16", "optimizer", 2),
    ),
    (Optimizer.ADAM8BIT, Precision.BF16): (WEIGHTS16, GRADIENTS16, BNB_MOMENTS),
    (Optimizer.SGD, Precision.BF16): (WEIGHTS16, GRADIENTS16, Part("part.sgd_momentum16", "optimizer", 2)),
    (Optimizer.PAGED_ADAM8BIT, Precision.MIXED): (WEIGHTS16, GRADIENTS16, MASTER32, PAGED_MOMENTS8),
    (Optimizer.PAGED_ADAM8BIT, Precision.AMP): (WEIGHTS32, GRADIENTS32, PAGED_MOMENTS_BNB),
    (Optimizer.PAGED_ADAM8BIT, Precision.BF16): (WEIGHTS16, GRADIENTS16, PAGED_MOMENTS_BNB),
    (Optimizer.ADAFACTOR, Precision.MIXED): (WEIGHTS16, GRADIENTS16, MASTER32, ADAFACTOR_FACTORED32),
    (Optimizer.ADAFACTOR, Precision.AMP): (WEIGHTS32, GRADIENTS32, ADAFACTOR_FACTORED32),
    (Optimizer.ADAFACTOR, Precision.BF16): (WEIGHTS16, GRADIENTS16, ADAFACTOR_FACTORED16),
    (Optimizer.LION, Precision.MIXED): (WEIGHTS16, GRADIENTS16, MASTER32, LION_MOMENTUM32),
    (Optimizer.LION, Precision.AMP): (WEIGHTS32, GRADIENTS32, LION_MOMENTUM32),
    (Optimizer.LION, Precision.BF16): (WEIGHTS16, GRADIENTS16, LION_MOMENTUM16),
}
# Muon's parts depend on the model (how many parameters AdamW trains), so they are built by muon_parts.
_MUON_BASE: dict[Precision, tuple[Part, ...]] = {
    Precision.MIXED: (WEIGHTS16, GRADIENTS16, MASTER32),
    Precision.AMP: (WEIGHTS32, GRADIENTS32),
    Precision.BF16: (WEIGHTS16, GRADIENTS16),
}


def muon_parts(precision: Precision, adamw_share: float = MUON_DEFAULT_ADAMW_SHARE) -> tuple[Part, ...]:
    """Muon's parts when AdamW trains ``adamw_share`` of the parameters: every parameter keeps one
    momentum (Muon's, or AdamW's first moment) in the optimizer's dtype (fp32 for mixed and amp, bf16
    for bf16), and AdamW's share keeps a second moment as well."""
    if precision is Precision.BF16:
        state, momentum = 2, "optimizer.part_muon_momentum16"
        variance = "optimizer.part_muon_adamw_variance16"
    else:
        state, momentum = 4, "optimizer.part_muon_momentum32"
        variance = "optimizer.part_muon_adamw_variance32"
    return (
        *_MUON_BASE[precision],
        Part(momentum, "optimizer", state),
        Part(variance, "optimizer", round(state * adamw_share, 4)),
    )


for _precision in Precision:
    _PARTS[(Optimizer.MUON, _precision)] = muon_parts(_precision)


def parts_for(optimizer: Optimizer, precision: Precision) -> tuple[Part, ...]:
    """What ``optimizer`` stores per parameter when training in ``precision`` (Muon at its default
    AdamW share; :func:`muon_parts` for a model's own)."""
    return _PARTS[(optimizer, precision)]


# B of each setup: the sum of its parts, added up once rather than on every estimate.
_BYTES_PER_PARAM = {setup: sum(part.bytes_per_param for part in parts) for setup, parts in _PARTS.items()}


def bytes_per_param_for(optimizer: Optimizer, precision: Precision) -> float:
    """B: the bytes per parameter of :func:`parts_for`'s parts together (paged parts included)."""
    return _BYTES_PER_PARAM[(optimizer, precision)]


# What each setup's card holds per parameter: B less the paged parts (shown in the option menus).
_ON_CARD_BYTES_PER_PARAM = {
    setup: sum(part.bytes_per_param for part in parts if not part.paged) for setup, parts in _PARTS.items()
}


def on_card_bytes_per_param_for(optimizer: Optimizer, precision: Precision) -> float:
    """B on the card: :func:`bytes_per_param_for` less what pages out to host RAM."""
    return _ON_CARD_BYTES_PER_PARAM[(optimizer, precision)]


def frozen_part(parts: tuple[Part, ...]) -> Part:
    """What a frozen parameter costs beside ``parts``: its weights only, as the trained parameters'
    weights are kept (2 B in bf16 for mixed precision's 16-bit copy and pure bf16, 4 B fp32 under
    amp). The fp32 master copy is optimizer state (ZeRO, section 3.1) and exists only for trained
    parameters, as do the gradients and the moments: a frozen tensor has requires_grad=False, so
    autograd keeps no gradient and torch.optim no state for it."""
    weights = sum(part.bytes_per_param for part in parts if part.kind == "weights")
    return Part(FROZEN_PART_KEY, "weights", weights, frozen=True)


FROZEN_PART_KEY = "part.frozen_weights"

# A custom bytes-per-parameter figure replaces the optimizer's breakdown with this one part.
CUSTOM_PART_KEY = "part.custom"
