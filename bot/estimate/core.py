"""The shared VRAM estimator: every figure the bot, the CLI or any other front end shows.

Pure Python and pydantic; nothing here knows about Discord.

The core rule follows the original calculator (``shared/seed``): model states ``M = N × B`` GB with
``N`` parameters in billions and ``B`` bytes per parameter, and the total ``V = M + A`` with the
activation memory ``A`` in GB entered separately. GB are decimal (1 GB = 10^9 bytes), so billions of
parameters times bytes per parameter is GB directly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from bot.estimate.activations import ActivationEstimate, estimate_activations
from bot.estimate.hardware import DEFAULT_GPU, Gpu
from bot.estimate.models import Architecture, close_matches, find_preset
from bot.estimate.sharding import PerGpu, Strategy, all_strategies

# The card the verdict measures against unless the user picks one (an H100 or A100 80 GB).
SINGLE_GPU_GB = DEFAULT_GPU.memory_gb

# Usual card sizes, smallest first, for "the smallest card it fits" in the LoRA hint
# (RTX 4090 / 3090, L40S / RTX 6000 Ada / A6000, H100 / A100 80 GB).
USUAL_CARDS_GB = (24.0, 48.0, 80.0)

# LoRA trains small adapters; the seed's rule of thumb is that they cover well under 1 % of the
# parameters, so without a preset to count them the hint budgets the upper end of that: 1 % of N.
LORA_TRAINABLE_FRACTION = 0.01
DEFAULT_LORA_RANK = 16
# Without a batch size or a sequence length, an activation estimate assumes these.
DEFAULT_BATCH_SIZE = 1
DEFAULT_SEQ_LEN = 2048

# Frozen base weights: 16-bit for LoRA; QLoRA keeps them in 4-bit NF4 with double quantization,
# about 4.127 bits = 0.516 B/param including the quantization constants (Dettmers et al. 2023,
# "QLoRA: Efficient Finetuning of Quantized LLMs", section 2), rounded to 0.52.
LORA_BASE_BYTES_PER_PARAM = 2.0
QLORA_BASE_BYTES_PER_PARAM = 0.52

PartKind = Literal["weights", "gradients", "optimizer"]


@dataclass(frozen=True, slots=True)
class Part:
    """One line of the breakdown: what is stored for every parameter, and what it costs.

    ``key`` names the part for the string catalogues (``part.<key>``), which hold its wording.
    """

    key: str
    kind: PartKind
    bytes_per_param: float
    gb: float = 0.0


def _parts(*rows: tuple[str, PartKind, float]) -> tuple[Part, ...]:
    return tuple(Part(key=key, kind=kind, bytes_per_param=b) for key, kind, b in rows)


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


_OPTIMIZER_PARTS: dict[Optimizer, tuple[Part, ...]] = {
    # The mixed-precision Adam rule (Rajbhandari et al. 2020, ZeRO, section 3.1): 2 + 2 + 12.
    Optimizer.ADAM: _parts(
        ("weights16", "weights", 2),
        ("gradients16", "gradients", 2),
        ("master32", "optimizer", 4),
        ("adam_momentum32", "optimizer", 4),
        ("adam_variance32", "optimizer", 4),
    ),
    # The planning rule of thumb of about 12 B/param. bitsandbytes's own 8-bit states take about
    # 2 B/param (Dettmers et al. 2022, "8-bit Optimizers via Block-wise Quantization"), so the
    # rule's 4 B for the two moments keeps some slack for buffers.
    Optimizer.ADAM8BIT: _parts(
        ("weights16", "weights", 2),
        ("gradients16", "gradients", 2),
        ("master32", "optimizer", 4),
        ("adam_moments8", "optimizer", 4),
    ),
    Optimizer.SGD: _parts(
        ("weights16", "weights", 2),
        ("gradients16", "gradients", 2),
        ("sgd_momentum32", "optimizer", 4),
    ),
}


@dataclass(frozen=True)
class Limit:
    """The allowed range of one numeric option, shared by validation, messages and the cog."""

    minimum: float
    maximum: float
    minimum_inclusive: bool
    integer: bool = False


PARAMS_LIMIT = Limit(0, 100_000, minimum_inclusive=False)
ACTIVATIONS_LIMIT = Limit(0, 1_000_000, minimum_inclusive=True)
BYTES_PER_PARAM_LIMIT = Limit(0, 64, minimum_inclusive=False)
GPUS_LIMIT = Limit(1, 4096, minimum_inclusive=True, integer=True)
LORA_RANK_LIMIT = Limit(1, 1024, minimum_inclusive=True, integer=True)
BATCH_SIZE_LIMIT = Limit(1, 65_536, minimum_inclusive=True, integer=True)
SEQ_LEN_LIMIT = Limit(1, 1_048_576, minimum_inclusive=True, integer=True)
MODEL_NAME_MAX = 100

OPTION_LIMITS: dict[str, Limit] = {
    "params": PARAMS_LIMIT,
    "activations": ACTIVATIONS_LIMIT,
    "bytes_per_param": BYTES_PER_PARAM_LIMIT,
    "gpus": GPUS_LIMIT,
    "lora_rank": LORA_RANK_LIMIT,
    "batch_size": BATCH_SIZE_LIMIT,
    "seq_len": SEQ_LEN_LIMIT,
}


def _bounded(limit: Limit) -> Any:
    inclusive = limit.minimum_inclusive
    return Field(
        ge=limit.minimum if inclusive else None,
        gt=None if inclusive else limit.minimum,
        le=limit.maximum,
        allow_inf_nan=False,
        # Numbers only: no "7" strings or True, and for counts no 7.0 (pydantic's lax mode takes them).
        strict=True,
    )


class EstimateRequest(BaseModel):
    """What the user asks: a model (size or preset), optimizer, activations, hardware and LoRA rank."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    params: Annotated[float, _bounded(PARAMS_LIMIT)] | None = None
    model: Architecture | None = None
    optimizer: Optimizer = Optimizer.ADAM
    activations: Annotated[float, _bounded(ACTIVATIONS_LIMIT)] | None = None
    bytes_per_param: Annotated[float, _bounded(BYTES_PER_PARAM_LIMIT)] | None = None
    gpu: Gpu | None = None
    gpus: Annotated[int, _bounded(GPUS_LIMIT)] = 1
    lora_rank: Annotated[int, _bounded(LORA_RANK_LIMIT)] = DEFAULT_LORA_RANK
    batch_size: Annotated[int, _bounded(BATCH_SIZE_LIMIT)] | None = None
    seq_len: Annotated[int, _bounded(SEQ_LEN_LIMIT)] | None = None
    checkpointing: bool = False
    flash_attention: bool = True

    @field_validator("model", mode="before")
    @classmethod
    def _preset(cls, value: object) -> object:
        if value is None or isinstance(value, Architecture):
            return value
        if not isinstance(value, str) or len(value) > MODEL_NAME_MAX:
            raise PydanticCustomError("unknown_model", "not a model preset", {"close": ()})
        preset = find_preset(value)
        if preset is None:
            raise PydanticCustomError(
                "unknown_model", "not a model preset", {"close": tuple(close_matches(value))}
            )
        return preset

    @model_validator(mode="after")
    def _enough_to_go_on(self) -> EstimateRequest:
        if self.params is None and self.model is None:
            raise PydanticCustomError("missing_size", "give params or a model preset")
        if self.model is None and (self.batch_size is not None or self.seq_len is not None):
            raise PydanticCustomError("needs_preset", "batch_size and seq_len need a model preset")
        return self

    @property
    def card(self) -> Gpu:
        return self.gpu or DEFAULT_GPU

    @property
    def params_billion(self) -> float:
        """``params`` wins over the preset's count when both are given."""
        if self.params is not None:
            return self.params
        if self.model is None:  # the validator rules this out
            raise ValueError("neither params nor model")
        return self.model.params_billion

    @property
    def wants_activation_estimate(self) -> bool:
        return (
            self.model is not None
            and self.activations is None
            and (self.batch_size is not None or self.seq_len is not None)
        )


ProblemCode = Literal[
    "out_of_range",  # a number outside its Limit, or not a number of the right kind
    "not_a_choice",  # optimizer or gpu outside its choices
    "unknown_model",  # no preset by that name (``close`` holds near names)
    "missing_size",  # neither params nor model
    "needs_preset",  # batch_size / seq_len without a model
    "not_an_option",  # an option the request does not have
    "wrong_type",  # a value of the wrong JSON type (seen by the command tree, before the estimator)
    "invalid",  # anything else pydantic reports
]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input, as data: the renderers word it in the user's language."""

    code: ProblemCode
    option: str | None = None  # None: the request as a whole
    given: object = None
    close: tuple[str, ...] = ()  # near preset names, for unknown_model


class InvalidRequest(ValueError):
    """Raised for input outside the allowed ranges; ``problems`` holds one entry per option."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{p.option or 'request'}: {p.code}" for p in problems))


def _problem(error: Any) -> Problem:
    location = error.get("loc") or ()
    kind = str(error.get("type"))
    given = error.get("input")
    if not location:  # the request as a whole
        if kind == "missing_size":
            return Problem("missing_size")
        if kind == "needs_preset":
            return Problem("needs_preset")
        return Problem("invalid")
    option = str(location[0])
    if kind == "extra_forbidden":
        return Problem("not_an_option", option, given)
    if option in OPTION_LIMITS:
        return Problem("out_of_range", option, given)
    if option in ("optimizer", "gpu"):
        return Problem("not_a_choice", option, given)
    if kind == "unknown_model":
        return Problem("unknown_model", option, given, tuple(error.get("ctx", {}).get("close", ())))
    return Problem("invalid", option, given)


def parse_request(**options: object) -> EstimateRequest:
    """Validate raw options into a request, raising :class:`InvalidRequest` with one problem per option.

    Options given as ``None`` count as not given, as Discord leaves out options nobody filled in.
    """
    given = {name: value for name, value in options.items() if value is not None}
    try:
        return EstimateRequest.model_validate(given)
    except ValidationError as exc:
        raise InvalidRequest([_problem(e) for e in exc.errors()]) from exc


@dataclass(frozen=True, slots=True)
class GpuVerdict:
    """Whether the total fits one card, and how many cards hold it with the model states sharded."""

    gpu: Gpu
    named: bool  # the user picked the card (otherwise the verdict speaks of "80 GB GPU")
    capacity_gb: float
    fits: bool
    headroom_gb: float  # capacity - total; negative when it overflows
    # ZeRO-3 / FSDP full shard across n data-parallel GPUs: M/n + A per GPU. None when the
    # activations alone fill the card, which sharding model states cannot fix.
    sharded_gpus: int | None

    @property
    def overflow_gb(self) -> float:
        return max(0.0, -self.headroom_gb)


@dataclass(frozen=True, slots=True)
class ClusterVerdict:
    """Per-GPU memory on ``gpus`` data-parallel cards for each strategy, and the least that fits."""

    gpus: int
    rows: tuple[PerGpu, ...]

    @property
    def smallest_fitting(self) -> Strategy | None:
        return next((row.strategy for row in self.rows if row.fits), None)


@dataclass(frozen=True, slots=True)
class AdapterHint:
    """LoRA or QLoRA: frozen base plus trainable adapters plus activations."""

    method: Literal["LoRA", "QLoRA"]
    base_bytes_per_param: float
    base_gb: float
    rank: int | None  # None: no preset to count adapters, the 1 % rule applies
    adapter_params_billion: float
    adapters_gb: float
    activations_gb: float
    total_gb: float
    smallest_card_gb: float | None  # None: larger than every usual card


@dataclass(frozen=True, slots=True)
class Estimate:
    """The full answer: breakdown, totals, the verdicts and the LoRA hint."""

    request: EstimateRequest
    bytes_per_param: float
    parts: tuple[Part, ...]
    model_states_gb: float
    activations_gb: float
    activation_estimate: ActivationEstimate | None
    total_gb: float
    single_gpu: GpuVerdict
    cluster: ClusterVerdict | None
    lora: AdapterHint
    qlora: AdapterHint

    @property
    def params_billion(self) -> float:
        return self.request.params_billion

    @property
    def custom_bytes(self) -> bool:
        """A custom B replaced the optimizer's breakdown."""
        return self.request.bytes_per_param is not None

    @property
    def preset_overridden(self) -> bool:
        """Both ``params`` and ``model`` were given; ``params`` won."""
        return self.request.model is not None and self.request.params is not None


def gpus_needed_sharded(model_states_gb: float, activations_gb: float, capacity_gb: float) -> int | None:
    """Smallest n with M/n + A ≤ capacity (ZeRO-3 / FSDP full shard), or None when A alone fills it."""
    free = capacity_gb - activations_gb
    if free <= 0:
        return None
    if model_states_gb <= free:
        return 1
    n = math.ceil(model_states_gb / free)
    # Guard against float noise at an exact boundary (e.g. 160 / 80 landing just above 2).
    if n > 1 and model_states_gb / (n - 1) <= free * (1 + 1e-12):
        n -= 1
    return n


def smallest_card(total_gb: float) -> float | None:
    return next((card for card in USUAL_CARDS_GB if total_gb <= card), None)


def _adapter_hint(
    method: Literal["LoRA", "QLoRA"],
    base_bytes: float,
    request: EstimateRequest,
    params_billion: float,
    bytes_per_param: float,
    activations_gb: float,
) -> AdapterHint:
    if request.model is not None and request.params is None:
        rank: int | None = request.lora_rank
        adapter_params = request.model.lora_adapter_params(request.lora_rank) / 1e9
    else:
        rank = None
        adapter_params = params_billion * LORA_TRAINABLE_FRACTION
    base_gb = params_billion * base_bytes
    adapters_gb = adapter_params * bytes_per_param
    total = base_gb + adapters_gb + activations_gb
    return AdapterHint(
        method=method,
        base_bytes_per_param=base_bytes,
        base_gb=base_gb,
        rank=rank,
        adapter_params_billion=adapter_params,
        adapters_gb=adapters_gb,
        activations_gb=activations_gb,
        total_gb=total,
        smallest_card_gb=smallest_card(total),
    )


def _shard_split(request: EstimateRequest, parts: tuple[Part, ...]) -> tuple[float, float, float]:
    """Bytes per parameter of weights, gradients and optimizer state, for the ZeRO formulas.

    A custom B has no breakdown: it keeps the usual 16-bit weight and gradient (2 + 2) and counts the
    rest as optimizer state; below 4 B it is split evenly between weight and gradient.
    """
    if request.bytes_per_param is not None:
        total = request.bytes_per_param
        weights = gradients = min(2.0, total / 2)
        return weights, gradients, total - weights - gradients

    def of_kind(kind: PartKind) -> float:
        return sum(p.bytes_per_param for p in parts if p.kind == kind)

    return of_kind("weights"), of_kind("gradients"), of_kind("optimizer")


def _activations(request: EstimateRequest) -> tuple[float, ActivationEstimate | None]:
    if request.activations is not None:
        return request.activations, None  # an entered figure always wins
    if request.model is not None and request.wants_activation_estimate:
        found = estimate_activations(
            request.model,
            request.batch_size or DEFAULT_BATCH_SIZE,
            request.seq_len or DEFAULT_SEQ_LEN,
            flash_attention=request.flash_attention,
            checkpointing=request.checkpointing,
        )
        return found.total_gb, found
    return 0.0, None


def estimate(request: EstimateRequest) -> Estimate:
    """Apply M = N × B and V = M + A, then judge the result against the chosen card(s)."""
    n = request.params_billion
    if request.bytes_per_param is not None:
        parts: tuple[Part, ...] = (
            Part(key="custom", kind="optimizer", bytes_per_param=request.bytes_per_param),
        )
    else:
        parts = request.optimizer.parts
    bytes_per_param = sum(part.bytes_per_param for part in parts)
    parts = tuple(replace(part, gb=n * part.bytes_per_param) for part in parts)

    activations, activation_estimate = _activations(request)
    model_states = n * bytes_per_param
    total = model_states + activations
    card = request.card
    verdict = GpuVerdict(
        gpu=card,
        named=request.gpu is not None,
        capacity_gb=card.memory_gb,
        fits=total <= card.memory_gb,
        headroom_gb=card.memory_gb - total,
        sharded_gpus=gpus_needed_sharded(model_states, activations, card.memory_gb),
    )
    cluster = None
    if request.gpus > 1:
        weights, gradients, optimizer = (n * b for b in _shard_split(request, parts))
        rows = all_strategies(weights, gradients, optimizer, activations, request.gpus, card.memory_gb)
        cluster = ClusterVerdict(gpus=request.gpus, rows=rows)
    return Estimate(
        request=request,
        bytes_per_param=bytes_per_param,
        parts=parts,
        model_states_gb=model_states,
        activations_gb=activations,
        activation_estimate=activation_estimate,
        total_gb=total,
        single_gpu=verdict,
        cluster=cluster,
        lora=_adapter_hint("LoRA", LORA_BASE_BYTES_PER_PARAM, request, n, bytes_per_param, activations),
        qlora=_adapter_hint("QLoRA", QLORA_BASE_BYTES_PER_PARAM, request, n, bytes_per_param, activations),
    )


def compare_methods(request: EstimateRequest) -> tuple[Estimate, ...]:
    """The same inputs under every optimizer (and the custom B first, when one was given).

    LoRA and QLoRA come with each estimate (``lora`` / ``qlora``), so one list covers them all.
    """
    estimates = [estimate(request)] if request.bytes_per_param is not None else []
    for optimizer in Optimizer:
        estimates.append(
            estimate(request.model_copy(update={"optimizer": optimizer, "bytes_per_param": None}))
        )
    return tuple(estimates)
