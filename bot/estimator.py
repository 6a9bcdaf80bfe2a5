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

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

# The one card the verdict measures against (an H100 or A100 80 GB).
SINGLE_GPU_GB = 80.0

# Usual card sizes, smallest first, for "the smallest card it fits" in the LoRA hint
# (RTX 4090 / 3090, L40S / RTX 6000 Ada / A6000, H100 / A100 80 GB).
USUAL_CARDS_GB = (24.0, 48.0, 80.0)

# LoRA trains small adapters; the seed's rule of thumb is that they cover well under 1 % of the
# parameters, so the hint budgets the upper end of that: 1 % of N.
LORA_TRAINABLE_FRACTION = 0.01

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

    def describe(self) -> str:
        low = "at least" if self.minimum_inclusive else "greater than"
        return f"{low} {_plain(self.minimum)} and at most {_plain(self.maximum)} ({self.unit})"


def _plain(number: float) -> str:
    """1000000 as "1,000,000", not "1e+06"."""
    return f"{number:,.0f}" if float(number).is_integer() else f"{number:,}"


PARAMS_LIMIT = Limit(0, 100_000, minimum_inclusive=False, unit="billions of parameters")
ACTIVATIONS_LIMIT = Limit(0, 1_000_000, minimum_inclusive=True, unit="GB")
BYTES_PER_PARAM_LIMIT = Limit(0, 64, minimum_inclusive=False, unit="bytes per parameter")

OPTION_LIMITS: dict[str, Limit] = {
    "params": PARAMS_LIMIT,
    "activations": ACTIVATIONS_LIMIT,
    "bytes_per_param": BYTES_PER_PARAM_LIMIT,
}


def _bounded(limit: Limit) -> Any:
    inclusive = limit.minimum_inclusive
    return Field(
        ge=limit.minimum if inclusive else None,
        gt=None if inclusive else limit.minimum,
        le=limit.maximum,
        allow_inf_nan=False,
    )


class EstimateRequest(BaseModel):
    """What the user asks: model size, optimizer, activations and an optional custom B/param."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    params: Annotated[float, _bounded(PARAMS_LIMIT)]
    optimizer: Optimizer = Optimizer.ADAM
    activations: Annotated[float, _bounded(ACTIVATIONS_LIMIT)] = 0.0
    bytes_per_param: Annotated[float, _bounded(BYTES_PER_PARAM_LIMIT)] | None = None

    @field_validator("params", "activations", "bytes_per_param", mode="before")
    @classmethod
    def _no_booleans(cls, value: object) -> object:
        # pydantic would read True as 1.0; a boolean is never a size.
        if isinstance(value, bool):
            raise ValueError("a boolean is not a number")
        return value


class InvalidRequest(ValueError):
    """Raised for input outside the allowed ranges; ``problems`` holds one sentence per option."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


def _describe_problem(error: Any) -> str:
    location = error.get("loc") or ("input",)
    option = str(location[0])
    given = error.get("input")
    if option in OPTION_LIMITS:
        allowed = f"a number {OPTION_LIMITS[option].describe()}"
    elif option == "optimizer":
        allowed = "one of " + ", ".join(o.value for o in Optimizer)
    elif error.get("type") == "extra_forbidden":
        return f"`{option}` is not an option"
    else:
        allowed = str(error.get("msg", "a valid value"))
    if error.get("type") == "missing":
        return f"`{option}` is required: give {allowed}"
    return f"`{option}` = {given!r} is not allowed: give {allowed}"


def parse_request(**options: object) -> EstimateRequest:
    """Validate raw options into a request, raising :class:`InvalidRequest` with clear messages."""
    try:
        return EstimateRequest.model_validate(options)
    except ValidationError as exc:
        raise InvalidRequest([_describe_problem(e) for e in exc.errors()]) from exc


class GpuVerdict(BaseModel):
    """Whether the total fits one card, and how many cards hold it with the model states sharded."""

    model_config = ConfigDict(frozen=True)

    capacity_gb: float
    fits: bool
    headroom_gb: float  # capacity - total; negative when it overflows
    # ZeRO-3 / FSDP full shard across n data-parallel GPUs: M/n + A per GPU. None when the
    # activations alone fill the card, which sharding model states cannot fix.
    sharded_gpus: int | None

    @property
    def overflow_gb(self) -> float:
        return max(0.0, -self.headroom_gb)


class AdapterHint(BaseModel):
    """LoRA or QLoRA: frozen base plus trainable adapters plus activations."""

    model_config = ConfigDict(frozen=True)

    method: Literal["LoRA", "QLoRA"]
    base_bytes_per_param: float
    base_gb: float
    adapter_params_billion: float
    adapters_gb: float
    activations_gb: float
    total_gb: float
    smallest_card_gb: float | None  # None: larger than every usual card


class Estimate(BaseModel):
    """The full answer: breakdown, totals, the 80 GB verdict and the LoRA hint."""

    model_config = ConfigDict(frozen=True)

    request: EstimateRequest
    optimizer_title: str
    bytes_per_param: float
    parts: tuple[Part, ...]
    model_states_gb: float
    activations_gb: float
    total_gb: float
    single_gpu: GpuVerdict
    lora: AdapterHint
    qlora: AdapterHint


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
    method: Literal["LoRA", "QLoRA"], base_bytes: float, request: EstimateRequest, bytes_per_param: float
) -> AdapterHint:
    adapter_params = request.params * LORA_TRAINABLE_FRACTION
    base_gb = request.params * base_bytes
    adapters_gb = adapter_params * bytes_per_param
    total = base_gb + adapters_gb + request.activations
    return AdapterHint(
        method=method,
        base_bytes_per_param=base_bytes,
        base_gb=base_gb,
        adapter_params_billion=adapter_params,
        adapters_gb=adapters_gb,
        activations_gb=request.activations,
        total_gb=total,
        smallest_card_gb=smallest_card(total),
    )


def estimate(request: EstimateRequest) -> Estimate:
    """Apply M = N × B and V = M + A, then judge the result against one 80 GB GPU."""
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
    parts = tuple(part.model_copy(update={"gb": request.params * part.bytes_per_param}) for part in parts)

    model_states = request.params * bytes_per_param
    total = model_states + request.activations
    verdict = GpuVerdict(
        capacity_gb=SINGLE_GPU_GB,
        fits=total <= SINGLE_GPU_GB,
        headroom_gb=SINGLE_GPU_GB - total,
        sharded_gpus=gpus_needed_sharded(model_states, request.activations, SINGLE_GPU_GB),
    )
    return Estimate(
        request=request,
        optimizer_title=title,
        bytes_per_param=bytes_per_param,
        parts=parts,
        model_states_gb=model_states,
        activations_gb=request.activations,
        total_gb=total,
        single_gpu=verdict,
        lora=_adapter_hint("LoRA", LORA_BASE_BYTES_PER_PARAM, request, bytes_per_param),
        qlora=_adapter_hint("QLoRA", QLORA_BASE_BYTES_PER_PARAM, request, bytes_per_param),
    )
