"""The shared VRAM estimator: every figure the bot, the CLI or any other front end shows.

Pure Python and pydantic; nothing here knows about Discord.

The core rule follows the original calculator (``shared/seed``): model states ``M = N × B`` GB with
``N`` parameters in billions and ``B`` bytes per parameter, and the total ``V = M + A`` with the
activation memory ``A`` in GB entered separately. GB are decimal (1 GB = 10^9 bytes), so billions of
parameters times bytes per parameter is GB directly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from bot.activations import ActivationEstimate, estimate_activations
from bot.hardware import DEFAULT_GPU, Gpu
from bot.models import Architecture, close_matches, find_preset
from bot.sharding import PerGpu, Strategy, all_strategies

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


class Part(BaseModel):
    """One line of the breakdown: what is stored for every parameter, and what it costs."""

    model_config = ConfigDict(frozen=True)

    label: str
    kind: PartKind
    bytes_per_param: float
    gb: float = 0.0


def _parts(*rows: tuple[str, PartKind, float]) -> tuple[Part, ...]:
    return tuple(Part(label=label, kind=kind, bytes_per_param=b) for label, kind, b in rows)


class Optimizer(StrEnum):
    """The training set-ups the rules of thumb cover, with their bytes per parameter."""

    ADAM = "adam"
    ADAM8BIT = "adam8bit"
    SGD = "sgd"

    @property
    def display_name(self) -> str:
        return _OPTIMIZER_TITLES[self]

    @property
    def parts(self) -> tuple[Part, ...]:
        return _OPTIMIZER_PARTS[self]

    @property
    def bytes_per_param(self) -> float:
        return sum(part.bytes_per_param for part in self.parts)


_OPTIMIZER_TITLES = {
    Optimizer.ADAM: "Mixed-precision Adam",
    Optimizer.ADAM8BIT: "8-bit Adam",
    Optimizer.SGD: "SGD with momentum",
}

_OPTIMIZER_PARTS: dict[Optimizer, tuple[Part, ...]] = {
    # The mixed-precision Adam rule (Rajbhandari et al. 2020, ZeRO, section 3.1): 2 + 2 + 12.
    Optimizer.ADAM: _parts(
        ("16-bit weights", "weights", 2),
        ("16-bit gradients", "gradients", 2),
        ("fp32 master weights", "optimizer", 4),
        ("Adam momentum (fp32)", "optimizer", 4),
        ("Adam variance (fp32)", "optimizer", 4),
    ),
    # The planning rule of thumb of about 12 B/param. bitsandbytes's own 8-bit states take about
    # 2 B/param (Dettmers et al. 2022, "8-bit Optimizers via Block-wise Quantization"), so the
    # rule's 4 B for the two moments keeps some slack for buffers.
    Optimizer.ADAM8BIT: _parts(
        ("16-bit weights", "weights", 2),
        ("16-bit gradients", "gradients", 2),
        ("fp32 master weights", "optimizer", 4),
        ("Adam moments, low precision (rule of thumb)", "optimizer", 4),
    ),
    Optimizer.SGD: _parts(
        ("16-bit weights", "weights", 2),
        ("16-bit gradients", "gradients", 2),
        ("SGD momentum (fp32)", "optimizer", 4),
    ),
}


@dataclass(frozen=True)
class Limit:
    """The allowed range of one numeric option, shared by validation, messages and the cog."""

    minimum: float
    maximum: float
    minimum_inclusive: bool
    unit: str
    integer: bool = False

    def describe(self) -> str:
        low = "at least" if self.minimum_inclusive else "greater than"
        kind = "a whole number" if self.integer else "a number"
        return f"{kind} {low} {_plain(self.minimum)} and at most {_plain(self.maximum)} ({self.unit})"


def _plain(number: float) -> str:
    """1000000 as "1,000,000", not "1e+06"."""
    return f"{number:,.0f}" if float(number).is_integer() else f"{number:,}"


PARAMS_LIMIT = Limit(0, 100_000, minimum_inclusive=False, unit="billions of parameters")
ACTIVATIONS_LIMIT = Limit(0, 1_000_000, minimum_inclusive=True, unit="GB")
BYTES_PER_PARAM_LIMIT = Limit(0, 64, minimum_inclusive=False, unit="bytes per parameter")
GPUS_LIMIT = Limit(1, 4096, minimum_inclusive=True, unit="GPUs", integer=True)
LORA_RANK_LIMIT = Limit(1, 1024, minimum_inclusive=True, unit="LoRA rank", integer=True)
BATCH_SIZE_LIMIT = Limit(1, 65_536, minimum_inclusive=True, unit="sequences per GPU", integer=True)
SEQ_LEN_LIMIT = Limit(1, 1_048_576, minimum_inclusive=True, unit="tokens", integer=True)
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
            raise PydanticCustomError("unknown_model", "a model preset's name")
        preset = find_preset(value)
        if preset is None:
            close = close_matches(value)
            hint = f"one of the presets, e.g. {', '.join(close)}" if close else "one of the presets"
            raise PydanticCustomError("unknown_model", hint)
        return preset

    @model_validator(mode="after")
    def _enough_to_go_on(self) -> EstimateRequest:
        if self.params is None and self.model is None:
            raise PydanticCustomError(
                "missing_size", "give `params` (billions of parameters) or a `model` preset"
            )
        if self.model is None and (self.batch_size is not None or self.seq_len is not None):
            raise PydanticCustomError(
                "needs_preset",
                "`batch_size` and `seq_len` need a `model` preset to estimate activations; "
                "without one, enter `activations` in GB",
            )
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


class InvalidRequest(ValueError):
    """Raised for input outside the allowed ranges; ``problems`` holds one sentence per option."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


def _describe_problem(error: Any) -> str:
    location = error.get("loc") or ()
    if not location:
        return str(error.get("msg"))
    option = str(location[0])
    given = error.get("input")
    if isinstance(given, str) and len(given) > MODEL_NAME_MAX:
        given = given[:MODEL_NAME_MAX] + "…"
    if option in OPTION_LIMITS:
        allowed = OPTION_LIMITS[option].describe()
    elif option == "optimizer":
        allowed = "one of " + ", ".join(o.value for o in Optimizer)
    elif option == "gpu":
        allowed = "one of " + ", ".join(g.value for g in Gpu)
    elif error.get("type") == "extra_forbidden":
        return f"`{option}` is not an option"
    else:
        allowed = str(error.get("msg", "a valid value"))
    if error.get("type") == "missing":
        return f"`{option}` is required: give {allowed}"
    return f"`{option}` = {given!r} is not allowed: give {allowed}"


def parse_request(**options: object) -> EstimateRequest:
    """Validate raw options into a request, raising :class:`InvalidRequest` with clear messages.

    Options given as ``None`` count as not given, as Discord leaves out options nobody filled in.
    """
    given = {name: value for name, value in options.items() if value is not None}
    try:
        return EstimateRequest.model_validate(given)
    except ValidationError as exc:
        raise InvalidRequest([_describe_problem(e) for e in exc.errors()]) from exc


class GpuVerdict(BaseModel):
    """Whether the total fits one card, and how many cards hold it with the model states sharded."""

    model_config = ConfigDict(frozen=True)

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


class ClusterVerdict(BaseModel):
    """Per-GPU memory on ``gpus`` data-parallel cards for each strategy, and the least that fits."""

    model_config = ConfigDict(frozen=True)

    gpus: int
    rows: tuple[PerGpu, ...]

    @property
    def smallest_fitting(self) -> Strategy | None:
        return next((row.strategy for row in self.rows if row.fits), None)


class AdapterHint(BaseModel):
    """LoRA or QLoRA: frozen base plus trainable adapters plus activations."""

    model_config = ConfigDict(frozen=True)

    method: Literal["LoRA", "QLoRA"]
    base_bytes_per_param: float
    base_gb: float
    rank: int | None  # None: no preset to count adapters, the 1 % rule applies
    adapter_params_billion: float
    adapters_gb: float
    activations_gb: float
    total_gb: float
    smallest_card_gb: float | None  # None: larger than every usual card


class Estimate(BaseModel):
    """The full answer: breakdown, totals, the verdicts and the LoRA hint."""

    model_config = ConfigDict(frozen=True)

    request: EstimateRequest
    optimizer_title: str
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
            Part(
                label="custom bytes per parameter", kind="optimizer", bytes_per_param=request.bytes_per_param
            ),
        )
        title = f"Custom {request.bytes_per_param:g} B/param"
    else:
        parts = request.optimizer.parts
        title = request.optimizer.display_name
    bytes_per_param = sum(part.bytes_per_param for part in parts)
    parts = tuple(part.model_copy(update={"gb": n * part.bytes_per_param}) for part in parts)

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
        optimizer_title=title,
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
