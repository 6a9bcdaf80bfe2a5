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
from functools import lru_cache
from typing import Literal

from bot.estimate.activations import ActivationEstimate
from bot.estimate.hardware import Gpu
from bot.estimate.methods import Method, MethodStates, adapter_states, states_of
from bot.estimate.models import Architecture
from bot.estimate.optimizers import (
    CUSTOM_PART_KEY,
    Optimizer,
    Part,
    PartKind,
    Precision,
    bytes_per_param_for,
    frozen_part,
    muon_parts,
    parts_for,
)
from bot.estimate.parts_table import PartsTable, parts_table
from bot.estimate.request import DEFAULT_BATCH_SIZE, DEFAULT_SEQ_LEN, EstimateRequest
from bot.estimate.saved_activations import MeasuredActivations, measured_activations
from bot.estimate.savers import offloaded_activation_bytes, place_parts, saved_on_card
from bot.estimate.setup import Setup
from bot.estimate.sharding import (
    STRATEGIES,
    WHOLE_MODEL,
    PerGpu,
    Strategy,
    ZeroThree,
    all_strategies,
    card_share,
    deepspeed_gathered_gb,
    deepspeed_per_gpu_gb,
    deepspeed_strategies,
    per_gpu_gb,
    zero_three,
)
from bot.estimate.step_peak import StepPeak, muon_adamw_share, step_peak
from bot.estimate.value_type import value_type

# Usual card sizes, smallest first, for "the smallest card it fits" in the LoRA hint
# (RTX 4090 / 3090, L40S / RTX 6000 Ada / A6000, H100 / A100 80 GB).
USUAL_CARDS_GB = (24.0, 48.0, 80.0)

# The largest batch reported is capped at the batch_size option's own maximum.
MAX_BATCH = 65_536


@value_type
class GpuVerdict:
    """Whether one card holds the figure the verdict follows (the step's peak where the bot estimates
    it, else V), and how many cards hold it with the model states sharded."""

    gpu: Gpu
    named: bool  # the user picked the card (otherwise the verdict speaks of "80 GB GPU")
    capacity_gb: float
    fits: bool
    headroom_gb: float  # capacity - the judged figure on one card; negative when it overflows
    # The fewest cards under ZeRO-3 / FSDP full shard whose per-card figure (peak where estimated)
    # fits. None when what every card holds whatever the sharding (the activations, the step's
    # transients) fills the card, which sharding model states cannot fix.
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
    # The figure the verdict judges per card under each strategy: the larger of the row's V and the
    # card's step peak where the bot estimates it, else the row itself.
    judged: tuple[PerGpu, ...]

    @property
    def smallest_fitting(self) -> Strategy | None:
        return next((row.strategy for row in self.judged if row.fits), None)

    @property
    def followed(self) -> PerGpu:
        """The judged row the verdict follows: the smallest strategy that fits, else ZeRO-3, which
        needs the least."""
        wanted = self.smallest_fitting or "ZeRO-3"
        return next(row for row in self.judged if row.strategy == wanted)


VerdictBasis = Literal["peak", "total"]
# What the short answer may advise when the request does not fit, cheapest first: the same cards with
# activation checkpointing (about a third more compute), more cards under ZeRO-3 (the same run on more
# hardware), then training adapters instead of the whole model (LoRA, then QLoRA's 4-bit base).
ChangeKind = Literal["checkpointing", "cards", "lora", "qlora"]


@value_type
class Change:
    """A change to the request that makes it fit: what it is, the per-card figure it fits at, and on
    how many cards (the request's, unless the change is more cards)."""

    kind: ChangeKind
    gb: float
    gpus: int


@value_type
class Verdict:
    """The one verdict every view reads: the figure judged per card, what it is, and whether it fits.

    ``basis`` "peak": the bot estimated the step's peak, and the judged figure is the larger of the
    peak and V on a card (a step never holds less than its peak; V = M + A can be larger where the step
    frees the gradients or the activations before its peak). "total": V alone, when the activations
    were entered (taken as measured) or there is no step to estimate, as in the original calculator.
    On several cards every figure is per GPU under ``strategy``: the smallest that fits, else ZeRO-3.
    """

    basis: VerdictBasis
    strategy: Strategy | None  # None: one card
    gpus: int
    capacity_gb: float
    judged_gb: float  # per GPU under ``strategy``
    total_gb: float  # V on one card (per GPU under ``strategy``), beside the judged figure
    peak_gb: float | None  # the step's peak on one card (per GPU under ``strategy``); None: not estimated
    fits: bool
    cards_needed: int | None  # the fewest cards under ZeRO-3 that hold it; None: no number does
    changes: tuple[Change, ...]  # what would make it fit, cheapest first (empty when it fits)

    @property
    def overflow_gb(self) -> float:
        return max(0.0, self.judged_gb - self.capacity_gb)

    @property
    def cheapest(self) -> Change | None:
        return self.changes[0] if self.changes else None


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
    # Every part, where it lives (the card, host RAM, not held) and its GB, planned (and measured,
    # where ``vram-bot measure`` ran a step): the one table every view reads (bot.estimate.parts_table).
    table: PartsTable
    model_states_gb: float
    activations_gb: float
    activation_estimate: ActivationEstimate | None
    total_gb: float
    single_gpu: GpuVerdict
    cluster: ClusterVerdict | None
    verdict: Verdict  # the one verdict every view reads (title, colour, bar, card count, JSON)
    largest_batch: LargestBatch | None  # with a known architecture and no entered activations
    peak: PeakEstimate | None  # when the activations were estimated here
    # The model's context when seq_len goes beyond it (the estimate still assumes seq_len).
    beyond_context: int | None
    lora: AdapterHint
    qlora: AdapterHint

    @property
    def parts(self) -> tuple[Part, ...]:
        """B's parts: what each trained parameter stores on the card."""
        return self.table.parts("gpu")

    @property
    def frozen(self) -> Part | None:
        """What each frozen parameter stores (its weights); None: nothing is frozen."""
        frozen = self.table.parts("gpu", frozen=True)
        return frozen[0] if frozen else None

    @property
    def in_host(self) -> tuple[Part, ...]:
        """B's parts the savers keep in host RAM (offloaded or paged out), outside B and M."""
        return self.table.parts("host")

    @property
    def not_held(self) -> tuple[Part, ...]:
        """B's parts not held at all (the gradients under the optimizer in backward), outside B and M."""
        return self.table.parts("none")

    @property
    def host_activations_gb(self) -> float:
        """The saved activations offloaded to host RAM, outside A."""
        return self.table.gb("host", "activations")

    @property
    def host_gb(self) -> float:
        """Host RAM the savers use: the offloaded or paged parts and the offloaded activations."""
        return self.table.gb("host")

    @property
    def judged_gb(self) -> float:
        """The figure the verdict follows, per GPU on several cards."""
        return self.verdict.judged_gb

    @property
    def verdict_basis(self) -> VerdictBasis:
        return self.verdict.basis

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


def _adapter_hint(method: Literal["LoRA", "QLoRA"], states: MethodStates, activations: float) -> AdapterHint:
    """LoRA's or QLoRA's total for the same request (the hint beside a full fine-tune, and the
    figures Compare shows): the method's frozen base and adapters (``states``), and ``activations``,
    what the adapted step saves (the same for both: QLoRA's base is frozen as LoRA's)."""
    base_gb = states.frozen_billion * states.frozen.bytes_per_param
    adapters_gb = states.trained_billion * states.bytes_per_param
    total = base_gb + adapters_gb + activations
    return AdapterHint(
        method=method,
        base_bytes_per_param=states.frozen.bytes_per_param,
        base_gb=base_gb,
        rank=states.rank,
        adapter_params_billion=states.trained_billion,
        adapters_gb=adapters_gb,
        activations_gb=activations,
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


def _states_gb(request: EstimateRequest, states: _ModelStates) -> tuple[float, float, float]:
    """GB of weights, gradients and optimizer state: every parameter's weights (a frozen one's as its
    part says: kept as the trained ones' are, or LoRA's 16-bit or NF4 base), the trained parameters'
    gradients and optimizer state."""
    weights, gradients, optimizer = _shard_split(request, states.parts)
    frozen_weights = weights if states.frozen is None else states.frozen.bytes_per_param
    trained = states.trained
    return (
        trained * weights + states.frozen_billion * frozen_weights,
        trained * gradients,
        trained * optimizer,
    )


def _saved(model: Architecture, batch_size: int, seq_len: int, setup: Setup) -> MeasuredActivations:
    """What autograd keeps on the card for one step, as PyTorch keeps it (the calibrated formulas),
    under the setup's savers."""
    return saved_on_card(measured_activations(model, batch_size, seq_len, setup=setup), model, setup.savers)


def _all_saved(request: EstimateRequest, model: Architecture, batch_size: int) -> MeasuredActivations:
    return measured_activations(
        model, batch_size, request.seq_len or DEFAULT_SEQ_LEN, setup=Setup.of(request)
    )


def _activations(request: EstimateRequest) -> tuple[float, ActivationEstimate | None]:
    if request.activations is not None:
        return request.activations, None  # an entered figure always wins
    if request.activation_shape is not None and request.wants_activation_estimate:
        batch_size = request.batch_size or DEFAULT_BATCH_SIZE
        seq_len = request.seq_len or DEFAULT_SEQ_LEN
        saved = _saved(request.activation_shape, batch_size, seq_len, Setup.of(request))
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


def _step_parameters(request: EstimateRequest, setup: Setup) -> int:
    """The parameters the measured step is given: its optimizer step's temporaries are the trained
    ones' (frozen ones take no step); under LoRA or QLoRA the whole base, which it keeps frozen (it
    counts the adapters itself)."""
    return round(request.params_billion * 1e9) - (0 if setup.adapters else request.frozen_params)


@value_type
class _Variant:
    """The request at another micro-batch, with or without checkpointing: what the largest batch and
    the advice ask the judge about (nothing else of the request changes)."""

    batch_size: int
    checkpointing: bool


def _beyond_context(request: EstimateRequest) -> int | None:
    model, seq_len = request.model, request.seq_len
    context = model.context_length if model is not None else None
    return context if context is not None and seq_len is not None and seq_len > context else None


def _peak(judge: _Judge, total_gb: float, strategy: Strategy | None) -> PeakEstimate | None:
    """V plus what one step holds beyond it, when the bot estimated the activations itself (an entered
    figure is taken as measured: it gets nothing added) and the optimizer's step is known; under ZeRO
    also one card's peak under ``strategy``, the verdict's."""
    if judge.model is None:
        return None
    found = judge.step(None, 1)
    transients = found.transients_bytes / 1e9
    peak = total_gb + transients + CUDA_CONTEXT_GB
    capacity = judge.capacity
    per_card = None
    if strategy is not None and strategy != "data parallel":  # data parallel: every card holds it all
        n = judge.gpus
        card_peak = judge.figures(strategy, n)[1] or 0.0  # judge.model is set: a peak
        per_card = CardPeak(strategy, card_peak, judge.step(strategy, n).moment, card_peak <= capacity)
    return PeakEstimate(
        peak_gb=peak, transients_gb=transients, moment=found.moment, fits=peak <= capacity, per_card=per_card
    )


# The card count's search bound: far beyond the gpus option's 4,096, so that "3,157 ×" is a count.
MAX_CARDS = 1 << 20


class _Judge:
    """The figures one card holds for one request, under a strategy on ``n`` cards: V (the model
    states the framework keeps per card plus the activations) and, where the bot estimates the step,
    its peak; the verdict, the card count, the largest batch and the advice all read them here."""

    __slots__ = (
        "_parameters",
        "_setup",
        "_split",
        "_zero",
        "activations_gb",
        "architecture",
        "capacity",
        "deepspeed",
        "gpus",
        "known",
        "largest",
        "model",
        "model_states_gb",
        "optimizer_offloaded",
        "request",
        "states",
        "trained",
    )

    def __init__(self, request: EstimateRequest, states: _ModelStates, activations_gb: float) -> None:
        self.request, self.states, self.trained = request, states, states.trained
        self._split: tuple[float, float, float] | None = None  # split(): asked for on several cards only
        self._zero: ZeroThree | None = None  # zero(): asked for by DeepSpeed's ZeRO-3 figures only
        # setup(), _parameters: the step's, read once for every step the judge asks for.
        self._setup: Setup | None = None
        self._parameters: int | None = None
        self.model_states_gb, self.activations_gb = states.model_states_gb, activations_gb
        # The request's card, count and savers, read once: the figures below ask for them again and again.
        self.capacity, self.gpus = request.card.memory_gb, request.gpus
        self.optimizer_offloaded = request.savers.optimizer_offloaded
        self.deepspeed = _uses_deepspeed(request)
        self.largest = _largest_module_billion(request) or 0.0
        # A step to estimate: an architecture, activations estimated here (an entered figure is taken
        # as measured), and a known optimizer (a custom B says nothing of its step).
        self.architecture = request.architecture if request.model is not None else None
        step = self.architecture is not None and request.wants_activation_estimate
        self.model = self.architecture if step and request.bytes_per_param is None else None
        # The figures asked for so far, by (strategy, cards, variant).
        self.known: dict[tuple[Strategy | None, int, _Variant | None], tuple[float, float | None]] = {}

    def split(self) -> tuple[float, float, float]:
        """GB of weights, gradients and optimizer state (:func:`_states_gb`), which the strategies
        share out; worked out once asked (an answer on one card that fits never asks)."""
        if self._split is None:
            self._split = _states_gb(self.request, self.states)
        return self._split

    def zero(self) -> ZeroThree:
        """DeepSpeed ZeRO-3's terms on a card (the gathered module, the sharded rest), worked out once:
        the card count asks for its figure at many counts."""
        if self._zero is None:
            weights, _, optimizer = self.split()
            self._zero = zero_three(
                weights, optimizer, self.trained, self.largest, optimizer_offloaded=self.optimizer_offloaded
            )
        return self._zero

    def states_gb(self, strategy: Strategy | None, n: int) -> float:
        """V's model states on one card: all of them on one card, else the strategy's row."""
        if strategy is None:
            return self.model_states_gb
        if strategy == "ZeRO-3" and self.deepspeed:
            return self.zero().per_gpu_gb(n)  # deepspeed_per_gpu_gb's ZeRO-3 figure
        weights, gradients, optimizer = self.split()
        if self.deepspeed:
            return deepspeed_per_gpu_gb(
                strategy,
                weights,
                gradients,
                optimizer,
                self.trained,
                self.largest,
                n,
                optimizer_offloaded=self.optimizer_offloaded,
            )
        return per_gpu_gb(strategy, weights, gradients, optimizer, n)

    def peak_states_gb(self, strategy: Strategy | None, n: int) -> float:
        """The model states a card's step adds its transients to: M on one card, else the card's share
        (the paper's partitioning, as the measured step is shared) and DeepSpeed ZeRO-3's gathered
        module."""
        if strategy is None or strategy == "data parallel":
            return self.model_states_gb
        states = per_gpu_gb(strategy, *self.split(), n)
        if strategy == "ZeRO-3" and self.deepspeed:
            states += deepspeed_gathered_gb(self.largest)
        return states

    def setup(self, variant: _Variant | None = None) -> Setup:
        """The request's training setup (worked out once), or the variant's."""
        if self._setup is None:
            self._setup = Setup.of(self.request)
        setup = self._setup
        if variant is None or variant.checkpointing == setup.checkpointing:
            return setup
        return setup.but(checkpointing=variant.checkpointing)

    def batch(self, variant: _Variant | None = None) -> int:
        return (self.request.batch_size or DEFAULT_BATCH_SIZE) if variant is None else variant.batch_size

    def saved(self, model: Architecture, variant: _Variant | None = None) -> MeasuredActivations:
        """What autograd keeps on the card for the request's step, or the variant's (:func:`_saved`)."""
        return _saved(
            model, self.batch(variant), self.request.seq_len or DEFAULT_SEQ_LEN, self.setup(variant)
        )

    def step(self, strategy: Strategy | None, n: int, variant: _Variant | None = None) -> StepPeak:
        """The measured step on one card: holding the whole model, or its share under ``strategy``."""
        if self.model is None:
            raise ValueError("no step to estimate")  # callers check judge.model first
        share = WHOLE_MODEL if strategy is None else card_share(strategy, n)
        setup = self.setup(variant)
        if self._parameters is None:
            self._parameters = _step_parameters(self.request, setup)
        seq_len = self.request.seq_len or DEFAULT_SEQ_LEN
        return step_peak(self.model, self._parameters, self.batch(variant), seq_len, setup=setup, share=share)

    def figures(
        self, strategy: Strategy | None, n: int, variant: _Variant | None = None
    ) -> tuple[float, float | None]:
        """(V, peak) on one card; the peak is None where the bot does not estimate the step. Kept per
        strategy, count and variant: the verdict, the card count, the advice and the largest batch
        ask for the same figures again."""
        key = (strategy, n, variant)
        found = self.known.get(key)
        if found is None:
            found = self.known[key] = self._figures(strategy, n, variant)
        return found

    def _figures(
        self, strategy: Strategy | None, n: int, variant: _Variant | None
    ) -> tuple[float, float | None]:
        states = self.states_gb(strategy, n)
        if self.model is not None:
            step = self.step(strategy, n, variant)
            # The step's own saved activations are the seed's A at that batch (the same formulas).
            activations = self.activations_gb if variant is None else step.saved_bytes / 1e9
            beyond = (step.peak_bytes - step.model_states_bytes) / 1e9
            return states + activations, self.peak_states_gb(strategy, n) + beyond + CUDA_CONTEXT_GB
        if variant is None:
            return states + self.activations_gb, None
        if self.architecture is None:
            raise ValueError("no architecture to grow the activations with")
        return states + self.saved(self.architecture, variant).saved_bytes / 1e9, None

    def judged_gb(self, strategy: Strategy | None, n: int, variant: _Variant | None = None) -> float:
        total, peak = self.figures(strategy, n, variant)
        return total if peak is None else max(total, peak)

    def rows(self, variant: _Variant | None = None) -> tuple[PerGpu, ...]:
        """The judged figure per card under each strategy on the request's cards."""
        n, capacity = self.gpus, self.capacity
        judged = [(strategy, self.judged_gb(strategy, n, variant)) for strategy in STRATEGIES]
        return tuple(PerGpu(strategy=s, gb=gb, fits=gb <= capacity) for s, gb in judged)

    def followed(self, variant: _Variant | None = None) -> Strategy | None:
        """The strategy the verdict follows: None on one card, else the smallest whose judged figure
        fits each card, else ZeRO-3, which needs the least."""
        if self.gpus == 1:
            return None
        for strategy in STRATEGIES[:-1]:
            if self.judged_gb(strategy, self.gpus, variant) <= self.capacity:
                return strategy
        return "ZeRO-3"

    def cards_needed(self, variant: _Variant | None = None) -> int | None:
        """The fewest cards whose judged figure under ZeRO-3 fits (1: one card holds it all); None when
        no number of cards does (what every card holds whatever the sharding fills it)."""
        capacity = self.capacity

        def fits(n: int) -> bool:
            return self.judged_gb(None if n == 1 else "ZeRO-3", n, variant) <= capacity

        if fits(1):
            return 1
        if self.model is None and variant is None:
            # V alone: the closed form, which matches the ZeRO-3 row of gpus:n.
            zero = self.zero() if self.deepspeed else None
            return gpus_needed_sharded(self.model_states_gb, self.activations_gb, capacity, per_gpu=zero)
        if not fits(MAX_CARDS):
            return None
        low, high = 2, 2
        while not fits(high):  # ZeRO-3's figure falls as n grows: double, then halve the gap
            low, high = high + 1, high * 2
        while low < high:
            middle = (low + high) // 2
            low, high = (low, middle) if fits(middle) else (middle + 1, high)
        return low


_LINE_STEPS = 8  # a step's need has a few pieces, one per moment that can hold the peak


def _largest_fitting(need: Callable[[int], float], capacity: float) -> int | None:
    """The largest micro-batch b ≤ MAX_BATCH with need(b) ≤ capacity, for a need that grows with b.

    The need is the largest of the step's moments, each affine in b (step_peak.py), so it is
    piecewise linear and convex: the line through the need at b and b + 1, followed down from the
    top (Newton's method), lands on the answer or, convexity keeping it above, on a later piece's
    line, which it then follows; some five evaluations, where bisection took 17. Where a step does
    not get closer (a need that is not convex, or rounding at the edge) bisection finishes between
    the bounds so far, so the answer is bisection's (tests/test_largest_batch.py checks that)."""
    if need(1) > capacity:
        return None
    over = need(MAX_BATCH)
    if over <= capacity:
        return MAX_BATCH
    low, high = 1, MAX_BATCH - 1  # need(low) fits, need(high + 1) = over does not
    for _ in range(_LINE_STEPS):
        if high == low:  # need(low) fits and need(low + 1) does not: no need to ask again
            return low
        at = need(high)
        if at <= capacity:
            return high
        slope = over - at
        if slope <= 0:
            break
        # The last b at or under capacity on that line, below high (whose need is over it).
        guess = max(low, min(high - 1, math.floor(high + 1 - (over - capacity) / slope)))
        over = at if guess + 1 == high else need(guess + 1)  # need(high) is known: not asked again
        if over <= capacity:  # the line fell short: rounding, or a need that is not convex here
            low = guess + 1
            if need(low + 1) > capacity:
                return low
            break
        high = guess
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if need(middle) <= capacity else (low, middle - 1)
    return low


def _largest_batch(judge: _Judge, strategy: Strategy | None) -> LargestBatch | None:
    """The largest micro-batch whose judged figure fits the card (the larger of V and the step's
    peak where the setup is known, else V), under the verdict's ``strategy`` on several cards."""
    request = judge.request
    # A repo known by its tensors only, or of a family whose activations were not measured (hybrid
    # layers among them), has no step to grow with b.
    model = request.activation_shape
    if model is None or request.activations is not None:
        return None  # an entered figure was measured at one batch, which we do not know
    capacity, n = judge.capacity, judge.gpus

    def need_gb(batch: int, checkpointing: bool) -> float:
        return judge.judged_gb(strategy, n, _Variant(batch, checkpointing))

    def one_sequence_gb(checkpointing: bool) -> float:
        return judge.saved(model, _Variant(1, checkpointing)).saved_bytes / 1e9

    return LargestBatch(
        seq_len=request.seq_len or DEFAULT_SEQ_LEN,
        strategy=None if strategy == "data parallel" else strategy,
        batch=_largest_fitting(lambda b: need_gb(b, False), capacity),
        checkpointed_batch=_largest_fitting(lambda b: need_gb(b, True), capacity),
        per_sequence_gb=one_sequence_gb(False),
        per_sequence_checkpointed_gb=one_sequence_gb(True),
    )


def _changes(
    judge: _Judge, cards_needed: int | None, adapters: tuple[AdapterHint, ...]
) -> tuple[Change, ...]:
    """What would make a request that does not fit fit, cheapest first (:data:`ChangeKind`), each
    judged as the verdict is, and never one that the request has on already."""
    request = judge.request
    capacity, n = judge.capacity, judge.gpus
    changes: list[Change] = []
    if not request.checkpointing and judge.architecture is not None and request.wants_activation_estimate:
        variant = _Variant(judge.batch(), True)
        gb = judge.judged_gb(judge.followed(variant), n, variant)
        if gb <= capacity:
            changes.append(Change("checkpointing", gb, n))
    if cards_needed is not None and cards_needed > n:
        changes.append(Change("cards", judge.judged_gb("ZeRO-3", cards_needed), cards_needed))
    method = str(getattr(request, "method", "full"))  # a method already on is no advice
    for hint in adapters:
        kind: ChangeKind = "lora" if hint.method == "LoRA" else "qlora"
        if kind != method and hint.total_gb <= capacity:
            changes.append(Change(kind, hint.total_gb, n))
    return tuple(changes)


def _uses_deepspeed(request: EstimateRequest) -> bool:
    """DeepSpeed runs the seed's mixed precision (16-bit weights, fp32 master); a custom B says
    nothing about how it is kept, and amp / bf16 runs are FSDP's, which follows the paper."""
    return request.precision is _MIXED and request.bytes_per_param is None and request.method is _FULL


# Read on every answer: enum members as module constants (bot/README.md, "Code on every answer's path").
_MIXED, _FULL, _MUON = Precision.MIXED, Method.FULL, Optimizer.MUON


def _largest_module_billion(request: EstimateRequest) -> float | None:
    model = request.model if request.params is None else None
    return model.largest_module_params / 1e9 if model is not None else None


def _cluster(judge: _Judge, judged: tuple[PerGpu, ...]) -> ClusterVerdict:
    request, trained, activations_gb = judge.request, judge.trained, judge.activations_gb
    weights, gradients, optimizer = judge.split()  # the judge's, asked for already
    capacity, n = judge.capacity, judge.gpus
    paper = all_strategies(weights, gradients, optimizer, activations_gb, n, capacity)
    if not judge.deepspeed:
        return ClusterVerdict(n, paper, paper, "paper", None, judged)
    largest = _largest_module_billion(request)
    rows = deepspeed_strategies(
        weights,
        gradients,
        optimizer,
        activations_gb,
        trained,
        largest or 0.0,
        n,
        capacity,
        optimizer_offloaded=judge.optimizer_offloaded,
    )
    return ClusterVerdict(n, rows, paper, "deepspeed", largest, judged)


@value_type
class _ModelStates:
    """What the trained and frozen parameters hold: B and its parts on the card, the frozen part,
    the parameters (billions), M, and the parts the savers moved off the card."""

    bytes_per_param: float
    parts: tuple[Part, ...]
    frozen: Part | None
    trained: float
    frozen_billion: float
    model_states_gb: float
    in_host: tuple[Part, ...] = ()  # offloaded or paged out to host RAM
    not_held: tuple[Part, ...] = ()  # gradients under the optimizer in backward


def _full_fine_tune(request: EstimateRequest) -> _ModelStates:
    """The full fine-tune's model states: M = N × B, or with frozen towers
    N_trained × B + N_frozen × B_weights; B counts what the card holds under the savers."""
    n = request.params_billion
    in_host: tuple[Part, ...] = ()
    not_held: tuple[Part, ...] = ()
    if request.bytes_per_param is not None:
        bytes_per_param = request.bytes_per_param
        parts: tuple[Part, ...] = (
            Part(key=CUSTOM_PART_KEY, kind="optimizer", bytes_per_param=bytes_per_param),
        )
    else:
        parts = _optimizer_parts(request)
        # The savers move parts off the card: B and M count what the card holds.
        placed = place_parts(parts, request.savers)
        parts, in_host, not_held = placed.on_card, placed.in_host, placed.not_held
        # The table's B, added up once, unless a saver moved a part or Muon took the model's share.
        own_sum = bool(in_host or not_held) or request.optimizer is _MUON
        bytes_per_param = (
            sum(part.bytes_per_param for part in parts)
            if own_sum
            else bytes_per_param_for(request.optimizer, request.precision)
        )
    frozen_count = request.frozen_params
    if not frozen_count:
        return _ModelStates(bytes_per_param, parts, None, n, 0.0, n * bytes_per_param, in_host, not_held)
    frozen = frozen_part(parts)
    if request.bytes_per_param is not None:  # no breakdown: the weights _shard_split assumes
        frozen = Part(frozen.key, "weights", _shard_split(request, parts)[0], frozen=True)
    frozen_billion = frozen_count / 1e9
    trained = n - frozen_billion
    model_states = trained * bytes_per_param + frozen_billion * frozen.bytes_per_param
    return _ModelStates(
        bytes_per_param, parts, frozen, trained, frozen_billion, model_states, in_host, not_held
    )


# Kept for the last requests: an estimate depends on its request alone (a frozen, hashable model),
# and one Compare asks for the same ones again (its text and its chart list every optimizer, and the
# chosen one's row is the answer's own estimate): 19 estimates a click became 9
# (benchmarks/README.md). 64 estimates are some hundred kB.
@lru_cache(maxsize=64)
def estimate(request: EstimateRequest) -> Estimate:
    """Apply M = N × B and V = M + A, then judge the result against the chosen card(s).

    A multimodal model's frozen towers (``request.frozen_params``) cost their weights only:
    M = N_trained × B + N_frozen × B_weights. With nothing frozen (a text model, or train_vision)
    that is the seed's M = N × B exactly."""
    n = request.params_billion
    hints = adapter_states(request)  # LoRA's and QLoRA's, shown beside every answer
    adapted = states_of(request.method, hints)  # LoRA / QLoRA: the adapters train, the base is frozen
    if adapted is not None:
        states = _ModelStates(
            adapted.bytes_per_param,
            adapted.parts,
            adapted.frozen,
            adapted.trained_billion,
            n,
            adapted.model_states_gb,
        )
    else:
        states = _full_fine_tune(request)
    bytes_per_param, parts, frozen = states.bytes_per_param, states.parts, states.frozen
    trained, frozen_billion, model_states = states.trained, states.frozen_billion, states.model_states_gb

    activations, activation_estimate = _activations(request)
    # The adapted step saves what LoRA's does; it differs only where the bot estimates the step.
    adapted_activations = (
        activations
        if adapted is not None or not request.wants_activation_estimate
        else _activations(request.model_copy(update={"method": Method.LORA}))[0]
    )
    total = model_states + activations
    judge = _Judge(request, states, activations)
    capacity, gpus = judge.capacity, judge.gpus
    cluster = None
    if gpus > 1:
        cluster = _cluster(judge, judge.rows())
    strategy = None if cluster is None else cluster.followed.strategy
    card_total, card_peak = judge.figures(strategy, gpus)
    judged = card_total if card_peak is None else max(card_total, card_peak)
    one_judged = judged if strategy is None else judge.judged_gb(None, 1)
    cards_needed = judge.cards_needed()
    lora = _adapter_hint("LoRA", hints[0], adapted_activations)
    qlora = _adapter_hint("QLoRA", hints[1], adapted_activations)
    fits = judged <= capacity
    verdict = Verdict(
        basis="peak" if card_peak is not None and card_peak >= card_total else "total",
        strategy=strategy,
        gpus=gpus,
        capacity_gb=capacity,
        judged_gb=judged,
        total_gb=card_total,
        peak_gb=card_peak,
        fits=fits,
        cards_needed=cards_needed,
        changes=() if fits else _changes(judge, cards_needed, (lora, qlora)),
    )
    single_gpu = GpuVerdict(
        gpu=request.card,
        named=request.gpu is not None,
        capacity_gb=capacity,
        fits=one_judged <= capacity,
        headroom_gb=capacity - one_judged,
        sharded_gpus=cards_needed,
    )
    if request.model is None:  # without an architecture: no batch, step peak or context to judge
        largest_batch, peak, beyond_context = None, None, None
    else:
        largest_batch = _largest_batch(judge, strategy)
        peak, beyond_context = _peak(judge, total, strategy), _beyond_context(request)
    return Estimate(
        request=request,
        params_billion=n,
        trained_params_billion=trained,
        frozen_params_billion=frozen_billion,
        bytes_per_param=bytes_per_param,
        table=parts_table(
            on_card=parts,
            in_host=states.in_host,
            not_held=states.not_held,
            frozen=frozen,
            trained_billion=trained,
            frozen_billion=frozen_billion,
            activations_gb=activations,
            host_activations_gb=_host_activations_gb(request),
        ),
        model_states_gb=model_states,
        activations_gb=activations,
        activation_estimate=activation_estimate,
        total_gb=total,
        single_gpu=single_gpu,
        cluster=cluster,
        verdict=verdict,
        largest_batch=largest_batch,
        peak=peak,
        beyond_context=beyond_context,
        lora=lora,
        qlora=qlora,
    )


def _optimizer_parts(request: EstimateRequest) -> tuple[Part, ...]:
    """B's parts; Muon's with the model's own share of AdamW-trained parameters where it is known."""
    optimizer, precision = request.optimizer, request.precision
    if optimizer is _MUON:
        model = request.architecture
        if model is not None and request.params is None:
            return muon_parts(precision, muon_adamw_share(model, model.parameter_count))
    return parts_for(optimizer, precision)


def _host_activations_gb(request: EstimateRequest) -> float:
    """GB of saved activations offloaded to host RAM (only where the bot estimated them)."""
    model = request.architecture
    if model is None or not request.wants_activation_estimate or not request.savers.activations_offloaded:
        return 0.0
    saved = _all_saved(request, model, request.batch_size or DEFAULT_BATCH_SIZE)
    return offloaded_activation_bytes(saved, model.layers, request.savers) / 1e9


@lru_cache(maxsize=8)  # Compare's text and its chart both list them (see ``estimate``'s cache)
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
