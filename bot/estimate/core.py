"""The shared VRAM estimator: every figure the bot, the CLI or any other front end shows.

Pure Python; nothing here knows about Discord or words.

The core rule follows the original calculator (``shared/seed``): model states ``M = N × B`` GB with
``N`` parameters in billions and ``B`` bytes per parameter, and the total ``V = M + A`` with the
activation memory ``A`` in GB entered separately. GB are decimal (1 GB = 10^9 bytes), so billions of
parameters times bytes per parameter is GB directly.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

from bot.estimate.activations import ActivationEstimate
from bot.estimate.hardware import Gpu
from bot.estimate.models import Architecture
from bot.estimate.optimizers import (
    CUSTOM_PART_KEY,
    Optimizer,
    Part,
    PartKind,
    Precision,
    bytes_per_param_for,
    frozen_part,
    parts_for,
)
from bot.estimate.request import DEFAULT_BATCH_SIZE, DEFAULT_SEQ_LEN, EstimateRequest
from bot.estimate.saved_activations import MeasuredActivations, measured_activations
from bot.estimate.sharding import (
    WHOLE_MODEL,
    CardShare,
    PerGpu,
    Strategy,
    ZeroThree,
    all_strategies,
    card_share,
    deepspeed_gathered_gb,
    deepspeed_strategies,
    per_gpu_gb,
    zero_three,
)
from bot.estimate.step_peak import OptimizerKind, StepPeak, step_peak
from bot.estimate.value_type import value_type

# Usual card sizes, smallest first, for "the smallest card it fits" in the LoRA hint
# (RTX 4090 / 3090, L40S / RTX 6000 Ada / A6000, H100 / A100 80 GB).
USUAL_CARDS_GB = (24.0, 48.0, 80.0)

# LoRA trains small adapters; the seed's rule of thumb is that they cover well under 1 % of the
# parameters, so without a preset to count them the hint budgets the upper end of that: 1 % of N.
LORA_TRAINABLE_FRACTION = 0.01
# The largest batch reported is capped at the batch_size option's own maximum.
MAX_BATCH = 65_536

# Frozen base weights: 16-bit for LoRA; QLoRA keeps them in 4-bit NF4 with double quantization,
# about 4.127 bits = 0.516 B/param including the quantization constants (Dettmers et al. 2023,
# "QLoRA: Efficient Finetuning of Quantized LLMs", section 2), rounded to 0.52.
LORA_BASE_BYTES_PER_PARAM = 2.0
QLORA_BASE_BYTES_PER_PARAM = 0.52


@value_type
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


@value_type
class LargestBatch:
    """The most sequences per GPU whose training step fits the card at the request's sequence
    length, with and without full checkpointing; None where not even one sequence fits."""

    seq_len: int
    # On several cards under ZeRO, the verdict's strategy, whose share of the model states (and of the
    # optimizer step's temporaries) a card holds; None: a card holds them all (one card, data parallel).
    strategy: Strategy | None
    batch: int | None
    checkpointed_batch: int | None  # the same with full activation checkpointing
    per_sequence_gb: float
    per_sequence_checkpointed_gb: float


# The CUDA context and the libraries' workspaces, which the allocator never sees: about 300 MB of
# context with lazy module loading (CUDA 11.7 and later; pytorch/pytorch#107667, where it was over
# 1 GB before), plus cuBLAS and cuDNN workspaces; rounded up. Not measured here: no GPU.
CUDA_CONTEXT_GB = 0.5

# The optimizer each choice runs as, for its step's temporaries (torch.optim's AdamW defaults to the
# foreach implementation; bitsandbytes' AdamW8bit).
_STEP_OPTIMIZERS: dict[Optimizer, OptimizerKind] = {
    Optimizer.ADAM: "adamw",
    Optimizer.ADAM8BIT: "adam8bit",
    Optimizer.SGD: "sgd",
}


@value_type
class PeakEstimate:
    """The most memory one training step holds at once: V plus its transients (the loss's logits and
    their gradients, a layer rebuilt under checkpointing, the optimizer step's temporaries) plus the
    CUDA context. ``moment`` says where the peak falls."""

    peak_gb: float
    transients_gb: float
    moment: str
    fits: bool
    # On several cards under ZeRO: one card's peak with the strategy the verdict follows.
    per_card: CardPeak | None


@value_type
class CardPeak:
    """One card's step peak on several cards under ZeRO: its share of the model states under
    ``strategy`` (and DeepSpeed ZeRO-3's gathered module), its share of the step's transients, the
    activations and the CUDA context."""

    strategy: Strategy
    peak_gb: float
    moment: str
    fits: bool


ShardingSource = Literal["deepspeed", "paper"]


@value_type
class ClusterVerdict:
    """Per-GPU memory on ``gpus`` data-parallel cards for each strategy, and the least that fits.

    ``rows`` are what the framework that runs the setup holds: DeepSpeed for the seed's mixed
    precision (``source`` "deepspeed"), else the ZeRO paper's figures, which FSDP follows. The
    paper's figures are kept in ``paper_rows`` either way.
    """

    gpus: int
    rows: tuple[PerGpu, ...]
    paper_rows: tuple[PerGpu, ...]
    source: ShardingSource
    # DeepSpeed ZeRO-3 gathers the largest module whole; None when no architecture says how large.
    largest_module_billion: float | None

    @property
    def smallest_fitting(self) -> Strategy | None:
        return next((row.strategy for row in self.rows if row.fits), None)

    @property
    def followed(self) -> PerGpu:
        """The row the verdict follows: the smallest strategy that fits, else ZeRO-3, which needs
        the least."""
        wanted = self.smallest_fitting or "ZeRO-3"
        return next(row for row in self.rows if row.strategy == wanted)


@value_type
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


@value_type
class Estimate:
    """The full answer: breakdown, totals, the verdicts and the LoRA hint."""

    request: EstimateRequest
    params_billion: float  # N: the request's, read once (every view shows it)
    # N split: the parameters trained, which cost B each, and the frozen ones (a multimodal model's
    # towers, unless train_vision), which cost their weights only; frozen is 0 for a text model.
    trained_params_billion: float
    frozen_params_billion: float
    bytes_per_param: float  # B: a trained parameter's
    parts: tuple[Part, ...]  # B's parts: what each trained parameter stores
    frozen: Part | None  # what each frozen parameter stores (its weights); None: nothing is frozen
    model_states_gb: float
    activations_gb: float
    activation_estimate: ActivationEstimate | None
    total_gb: float
    single_gpu: GpuVerdict
    cluster: ClusterVerdict | None
    largest_batch: LargestBatch | None  # with a known architecture and no entered activations
    peak: PeakEstimate | None  # when the activations were estimated here
    # The model's context when seq_len goes beyond it (the estimate still assumes seq_len).
    beyond_context: int | None
    lora: AdapterHint
    qlora: AdapterHint

    def part_gb(self, part: Part) -> float:
        """What ``part`` costs for this model: the trained (or frozen) parameters × its bytes."""
        count = self.frozen_params_billion if part.frozen else self.trained_params_billion
        return count * part.bytes_per_param

    @property
    def all_parts(self) -> tuple[Part, ...]:
        """Every line of the breakdown: B's parts, then the frozen weights where a tower is frozen."""
        return self.parts if self.frozen is None else (*self.parts, self.frozen)

    @property
    def custom_bytes(self) -> bool:
        """A custom B replaced the optimizer's breakdown."""
        return self.request.bytes_per_param is not None

    @property
    def preset_overridden(self) -> bool:
        """Both ``params`` and ``model`` were given; ``params`` won."""
        return self.request.model is not None and self.request.params is not None


def gpus_needed_sharded(
    model_states_gb: float, activations_gb: float, capacity_gb: float, *, per_gpu: ZeroThree | None = None
) -> int | None:
    """The fewest GPUs that hold the model states fully sharded (ZeRO-3 / FSDP full shard), or None
    when the activations alone fill a card; 1 when M + A fits one card.

    By the paper's rule M/n + A ≤ capacity, or, with ``per_gpu``, by what DeepSpeed holds per GPU
    (its gathered largest module plus its sharded states, see :mod:`bot.estimate.sharding`), so that
    the count matches the ZeRO-3 row of ``gpus:n``.
    """
    if model_states_gb + activations_gb <= capacity_gb:
        return 1
    fixed, sharded = (0.0, model_states_gb) if per_gpu is None else (per_gpu.gathered_gb, per_gpu.sharded_gb)
    free = capacity_gb - activations_gb - fixed
    if free <= 0:
        return None
    n = max(1, math.ceil(sharded / free))
    # Guard against float noise at an exact boundary (e.g. 160 / 80 landing just above 2).
    if n > 1 and sharded / (n - 1) <= free * (1 + 1e-12):
        n -= 1
    return n


def smallest_card(total_gb: float) -> float | None:
    for card in USUAL_CARDS_GB:
        if total_gb <= card:
            return card
    return None


def _adapters(request: EstimateRequest, params_billion: float) -> tuple[int | None, float]:
    """The LoRA rank and the adapters' parameters in billions: counted from a preset's layers at
    ``lora_rank``, else the usual fraction of the model (no layers to count, so no rank)."""
    shape = request.architecture
    if shape is not None and request.params is None:
        return request.lora_rank, shape.lora_adapter_params(request.lora_rank) / 1e9
    return None, params_billion * LORA_TRAINABLE_FRACTION


def _adapter_hint(
    method: Literal["LoRA", "QLoRA"],
    base_bytes: float,
    adapters: tuple[int | None, float],
    params_billion: float,
    bytes_per_param: float,
    activations_gb: float,
) -> AdapterHint:
    rank, adapter_params = adapters
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
    """Bytes per trained parameter of weights, gradients and optimizer state, for the ZeRO formulas.

    A custom B has no breakdown: it keeps the usual 16-bit weight and gradient (2 + 2) and counts the
    rest as optimizer state; below 4 B it is split evenly between weight and gradient.
    """
    if request.bytes_per_param is not None:
        total = request.bytes_per_param
        weights = gradients = min(2.0, total / 2)
        return weights, gradients, total - weights - gradients

    by_kind: dict[PartKind, float] = {"weights": 0.0, "gradients": 0.0, "optimizer": 0.0}
    for part in parts:
        by_kind[part.kind] += part.bytes_per_param
    return by_kind["weights"], by_kind["gradients"], by_kind["optimizer"]


def _states_gb(
    request: EstimateRequest, parts: tuple[Part, ...], trained: float, frozen: float
) -> tuple[float, float, float]:
    """GB of weights, gradients and optimizer state: every parameter's weights (a frozen one's are
    kept as the trained ones' are), the trained parameters' gradients and optimizer state."""
    weights, gradients, optimizer = _shard_split(request, parts)
    return (trained + frozen) * weights, trained * gradients, trained * optimizer


def _saved(request: EstimateRequest, model: Architecture, batch_size: int) -> MeasuredActivations:
    """What autograd keeps for one step, as PyTorch keeps it (the calibrated formulas)."""
    return measured_activations(
        model,
        batch_size,
        request.seq_len or DEFAULT_SEQ_LEN,
        attention="sdpa" if request.flash_attention else "eager",
        precision=request.precision.value,
        checkpointing=request.checkpointing,
    )


def _activations(request: EstimateRequest) -> tuple[float, ActivationEstimate | None]:
    if request.activations is not None:
        return request.activations, None  # an entered figure always wins
    if request.activation_shape is not None and request.wants_activation_estimate:
        batch_size = request.batch_size or DEFAULT_BATCH_SIZE
        saved = _saved(request, request.activation_shape, batch_size)
        found = ActivationEstimate(
            batch_size=batch_size,
            seq_len=saved.seq_len,
            flash_attention=request.flash_attention,
            checkpointing=request.checkpointing,
            per_layer_gb=saved.per_layer_bytes / 1e9,
            outside_layers_gb=saved.outside_layers_bytes / 1e9,
            total_gb=saved.saved_bytes / 1e9,
        )
        return found.total_gb, found
    return 0.0, None


def _step_peak_bytes(
    request: EstimateRequest, model: Architecture, batch_size: int, share: CardShare = WHOLE_MODEL
) -> StepPeak:
    """The measured step on one card: holding the whole model, or ``share`` of it on several cards.
    Its optimizer step's temporaries are the trained parameters' (frozen ones take no step)."""
    return step_peak(
        model,
        round(request.params_billion * 1e9) - request.frozen_params,
        batch_size,
        request.seq_len or DEFAULT_SEQ_LEN,
        attention="sdpa" if request.flash_attention else "eager",
        precision=request.precision.value,
        optimizer=_STEP_OPTIMIZERS[request.optimizer],
        checkpointing=request.checkpointing,
        share=share,
    )


def _beyond_context(request: EstimateRequest) -> int | None:
    model, seq_len = request.model, request.seq_len
    context = model.context_length if model is not None else None
    return context if context is not None and seq_len is not None and seq_len > context else None


def _card_strategy(cluster: ClusterVerdict | None) -> Strategy | None:
    """The strategy a card's step is judged under: the verdict's (None: one card, or plain data
    parallel, where every card holds the whole model)."""
    strategy = cluster.followed.strategy if cluster is not None else None
    return None if strategy == "data parallel" else strategy


def _card_states_gb(
    request: EstimateRequest, parts: tuple[Part, ...], trained: float, frozen: float, strategy: Strategy
) -> float:
    """The model states on one card under ZeRO, which its step's transients are added to (on one
    card, M): the card's share of the seed's parts (the paper's partitioning, as the measured step is
    shared), and under DeepSpeed ZeRO-3 the largest module, gathered whole on every card. DeepSpeed's
    other extra, its fp32 gradient partition, is the step's fp32 copy of the gradients, which the
    measured step's share holds already."""
    weights, gradients, optimizer = _states_gb(request, parts, trained, frozen)
    states = per_gpu_gb(strategy, weights, gradients, optimizer, request.gpus)
    if strategy == "ZeRO-3" and _uses_deepspeed(request):
        states += deepspeed_gathered_gb(_largest_module_billion(request) or 0.0)
    return states


def _card_step(
    request: EstimateRequest, model: Architecture, batch_size: int, card_states_gb: float, share: CardShare
) -> tuple[float, StepPeak]:
    """GB one card holds at its step's peak, and the step: the card's model states
    (``card_states_gb``), what the measured step at that ``share`` holds beyond its own states (the
    saved activations and the transients), and the CUDA context."""
    found = _step_peak_bytes(request, model, batch_size, share)
    return card_states_gb + (found.peak_bytes - found.model_states_bytes) / 1e9 + CUDA_CONTEXT_GB, found


def _peak(
    request: EstimateRequest, total_gb: float, card_states_gb: float, strategy: Strategy | None
) -> PeakEstimate | None:
    """V plus what one step holds beyond it, when the bot estimated the activations itself (an entered
    figure is taken as measured: it gets nothing added) and the optimizer's step is known; under ZeRO
    also one card's peak (``card_states_gb``: its model states under ``strategy``)."""
    model = request.activation_shape  # None where the family's activations were not measured
    if model is None or not request.wants_activation_estimate or request.bytes_per_param is not None:
        return None
    batch_size = request.batch_size or DEFAULT_BATCH_SIZE
    found = _step_peak_bytes(request, model, batch_size)
    transients = found.transients_bytes / 1e9
    peak = total_gb + transients + CUDA_CONTEXT_GB
    capacity = request.card.memory_gb
    per_card = None
    if strategy is not None:
        share = card_share(strategy, request.gpus)
        card_peak, card = _card_step(request, model, batch_size, card_states_gb, share)
        per_card = CardPeak(strategy, card_peak, card.moment, card_peak <= capacity)
    return PeakEstimate(
        peak_gb=peak,
        transients_gb=transients,
        moment=found.moment,
        fits=peak <= capacity,
        per_card=per_card,
    )


def _largest_fitting(fits: Callable[[int], bool]) -> int | None:
    """The largest micro-batch b ≤ MAX_BATCH with fits(b), for a need that grows with b."""
    if not fits(1):
        return None
    low, high = 1, MAX_BATCH
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(middle) else (low, middle - 1)
    return low


def _largest_batch(
    request: EstimateRequest, card_states_gb: float, strategy: Strategy | None
) -> LargestBatch | None:
    """The largest micro-batch whose step fits the card: its peak where the setup is known (the
    card's model states, ``card_states_gb``, plus the step's transients and the CUDA context), else
    the states plus the activations. Under ZeRO (``strategy``), the card's share of the step."""
    # A repo known by its tensors only, or of a family whose activations were not measured, has no
    # step to grow with b.
    model = request.activation_shape
    if model is None or request.activations is not None:
        return None  # an entered figure was measured at one batch, which we do not know
    capacity = request.card.memory_gb
    share = WHOLE_MODEL if strategy is None else card_share(strategy, request.gpus)

    def need_gb(batch: int, checkpointing: bool) -> float:
        variant = request.model_copy(update={"batch_size": batch, "checkpointing": checkpointing})
        if request.bytes_per_param is not None:
            return card_states_gb + _saved(variant, model, batch).saved_bytes / 1e9
        return _card_step(variant, model, batch, card_states_gb, share)[0]

    def one_sequence_gb(checkpointing: bool) -> float:
        variant = request.model_copy(update={"batch_size": 1, "checkpointing": checkpointing})
        return _saved(variant, model, 1).saved_bytes / 1e9

    return LargestBatch(
        seq_len=request.seq_len or DEFAULT_SEQ_LEN,
        strategy=strategy,
        batch=_largest_fitting(lambda b: need_gb(b, False) <= capacity),
        checkpointed_batch=_largest_fitting(lambda b: need_gb(b, True) <= capacity),
        per_sequence_gb=one_sequence_gb(False),
        per_sequence_checkpointed_gb=one_sequence_gb(True),
    )


def _uses_deepspeed(request: EstimateRequest) -> bool:
    """DeepSpeed runs the seed's mixed precision (16-bit weights, fp32 master); a custom B says
    nothing about how it is kept, and amp / bf16 runs are FSDP's, which follows the paper."""
    return request.precision is _MIXED and request.bytes_per_param is None


_MIXED = Precision.MIXED  # read on every estimate that does not fit: a module constant is quicker


def _largest_module_billion(request: EstimateRequest) -> float | None:
    model = request.model if request.params is None else None
    return model.largest_module_params / 1e9 if model is not None else None


def _zero_three(
    request: EstimateRequest, parts: tuple[Part, ...], trained: float, frozen: float
) -> ZeroThree | None:
    """What DeepSpeed's ZeRO-3 keeps per GPU, where DeepSpeed is the framework (else None); its fp32
    gradient partition is the trained parameters'."""
    if not _uses_deepspeed(request):
        return None
    weights, _, optimizer = _states_gb(request, parts, trained, frozen)
    return zero_three(weights, optimizer, trained, _largest_module_billion(request) or 0.0)


def _cluster(
    request: EstimateRequest, parts: tuple[Part, ...], trained: float, frozen: float, activations_gb: float
) -> ClusterVerdict:
    weights, gradients, optimizer = _states_gb(request, parts, trained, frozen)
    capacity = request.card.memory_gb
    paper = all_strategies(weights, gradients, optimizer, activations_gb, request.gpus, capacity)
    if not _uses_deepspeed(request):
        return ClusterVerdict(request.gpus, paper, paper, "paper", None)
    largest = _largest_module_billion(request)
    rows = deepspeed_strategies(
        weights, gradients, optimizer, activations_gb, trained, largest or 0.0, request.gpus, capacity
    )
    return ClusterVerdict(request.gpus, rows, paper, "deepspeed", largest)


def estimate(request: EstimateRequest) -> Estimate:
    """Apply M = N × B and V = M + A, then judge the result against the chosen card(s).

    A multimodal model's frozen towers (``request.frozen_params``) cost their weights only:
    M = N_trained × B + N_frozen × B_weights. With nothing frozen (a text model, or train_vision)
    that is the seed's M = N × B exactly."""
    n = request.params_billion
    if request.bytes_per_param is not None:
        bytes_per_param = request.bytes_per_param
        parts: tuple[Part, ...] = (
            Part(key=CUSTOM_PART_KEY, kind="optimizer", bytes_per_param=bytes_per_param),
        )
    else:
        bytes_per_param = bytes_per_param_for(request.optimizer, request.precision)
        parts = parts_for(request.optimizer, request.precision)
    frozen_count = request.frozen_params
    frozen: Part | None = None
    if frozen_count:
        frozen = frozen_part(parts)
        if request.bytes_per_param is not None:  # no breakdown: the weights _shard_split assumes
            frozen = Part(frozen.key, "weights", _shard_split(request, parts)[0], frozen=True)
        frozen_billion = frozen_count / 1e9
        trained = n - frozen_billion
        model_states = trained * bytes_per_param + frozen_billion * frozen.bytes_per_param
    else:
        frozen_billion, trained = 0.0, n
        model_states = n * bytes_per_param

    activations, activation_estimate = _activations(request)
    total = model_states + activations
    card = request.card
    capacity = card.memory_gb
    fits = total <= capacity
    verdict = GpuVerdict(
        gpu=card,
        named=request.gpu is not None,
        capacity_gb=capacity,
        fits=fits,
        headroom_gb=capacity - total,
        # The framework's ZeRO-3 figures only where one card is not enough.
        sharded_gpus=1
        if fits
        else gpus_needed_sharded(
            model_states, activations, capacity, per_gpu=_zero_three(request, parts, trained, frozen_billion)
        ),
    )
    cluster = _cluster(request, parts, trained, frozen_billion, activations) if request.gpus > 1 else None
    if request.model is None:  # without an architecture: no batch, step peak or context to judge
        largest_batch, peak, beyond_context = None, None, None
    else:
        # One card's step, under the strategy the verdict follows on several cards.
        strategy = _card_strategy(cluster)
        card_states = (
            model_states
            if strategy is None
            else _card_states_gb(request, parts, trained, frozen_billion, strategy)
        )
        largest_batch = _largest_batch(request, card_states, strategy)
        peak, beyond_context = _peak(request, total, card_states, strategy), _beyond_context(request)
    adapters = _adapters(request, trained)  # the same for LoRA and QLoRA
    return Estimate(
        request=request,
        params_billion=n,
        trained_params_billion=trained,
        frozen_params_billion=frozen_billion,
        bytes_per_param=bytes_per_param,
        parts=parts,
        frozen=frozen,
        model_states_gb=model_states,
        activations_gb=activations,
        activation_estimate=activation_estimate,
        total_gb=total,
        single_gpu=verdict,
        cluster=cluster,
        largest_batch=largest_batch,
        peak=peak,
        beyond_context=beyond_context,
        lora=_adapter_hint("LoRA", LORA_BASE_BYTES_PER_PARAM, adapters, n, bytes_per_param, activations),
        qlora=_adapter_hint("QLoRA", QLORA_BASE_BYTES_PER_PARAM, adapters, n, bytes_per_param, activations),
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


def compare_setups(request: EstimateRequest) -> tuple[Estimate, ...]:
    """The same inputs and optimizer in every training setup (mixed, amp, bf16)."""
    return tuple(
        estimate(request.model_copy(update={"precision": precision, "bytes_per_param": None}))
        for precision in Precision
    )
