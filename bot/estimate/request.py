"""What the user asks, validated: the request, its options (declared once, here) and its problems.

Every ``/vram`` option that shapes the estimate is a field of :class:`EstimateRequest`, declared with
its :class:`~bot.estimate.options.Option`: kind, range, default, custom_id key, catalogue keys and
CLI form. :func:`options` reads those declarations as a table for everything else to derive from.
Pure Python and pydantic; nothing here knows Discord or words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import cache
from typing import Annotated, Any, Literal, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from bot.estimate.hardware import DEFAULT_GPU, Gpu
from bot.estimate.hub import HubModel, is_repo_id, looks_like_repo_id, registered
from bot.estimate.kv_cache import KvDtype
from bot.estimate.methods import LoraTargets, Method, has_attention_targets
from bot.estimate.models import Architecture, close_matches, find_preset, preset_variant
from bot.estimate.optimizers import Optimizer, Precision
from bot.estimate.options import BOTH_TASKS, Kind, Limit, Option, OptionSpec, Task
from bot.estimate.savers import NO_SAVERS, Offload, Savers
from bot.estimate.tensors import CountedModel
from bot.estimate.weight_formats import WeightFormat

# Without a batch size or a sequence length, an activation estimate assumes these.
DEFAULT_BATCH_SIZE = 1
DEFAULT_SEQ_LEN = 2048

# Read on every answer: enum members as module constants (bot/README.md, "Code on every answer's path").
_SERVE, _FULL, _ATTENTION = Task.SERVE, Method.FULL, LoraTargets.ATTENTION
# The saver options, named as Savers names its fields.
_SAVER_OPTIONS = frozenset(field.name for field in fields(Savers))


class EstimateRequest(BaseModel):
    """What the user asks: a model (size or preset), optimizer, activations, hardware and LoRA rank.

    Each field is one option, declared once; the order here is the order users see.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    params: (
        Annotated[
            float,
            Option(
                kind="number",
                description_key="option.params",
                packed_key="p",
                limit=Limit(0, 100_000, minimum_inclusive=False),
                unit_key="unit.params",
                cli_positional=True,
                tasks=BOTH_TASKS,
            ),
        ]
        | None
    ) = None
    model: (
        Annotated[
            HubModel,
            Option(
                kind="text",
                description_key="option.model",
                packed_key="m",
                max_length=100,
                autocomplete=True,
                tasks=BOTH_TASKS,
            ),
        ]
        | None
    ) = None
    optimizer: Annotated[
        Optimizer,
        Option(
            kind="choice",
            description_key="option.optimizer",
            packed_key="o",
            choices=Optimizer,
            always_shown=True,
        ),
    ] = Optimizer.ADAM
    precision: Annotated[
        Precision,
        Option(
            kind="choice",
            description_key="option.precision",
            packed_key="x",
            choices=Precision,
        ),
    ] = Precision.MIXED
    activations: (
        Annotated[
            float,
            Option(
                kind="number",
                description_key="option.activations",
                packed_key="a",
                limit=Limit(0, 1_000_000),
                unit_key="unit.activations",
            ),
        ]
        | None
    ) = None
    bytes_per_param: (
        Annotated[
            float,
            Option(
                kind="number",
                description_key="option.bytes_per_param",
                packed_key="b",
                limit=Limit(0, 64, minimum_inclusive=False),
                unit_key="unit.bytes_per_param",
            ),
        ]
        | None
    ) = None
    gpu: (
        Annotated[
            Gpu,
            Option(
                kind="choice",
                description_key="option.gpu",
                packed_key="g",
                choices=Gpu,
                default_when_unset=DEFAULT_GPU,
                tasks=BOTH_TASKS,
            ),
        ]
        | None
    ) = None
    gpus: Annotated[
        int,
        Option(
            kind="integer",
            description_key="option.gpus",
            packed_key="n",
            limit=Limit(1, 4096),
            unit_key="unit.gpus",
            tasks=BOTH_TASKS,
        ),
    ] = 1
    # Full fine-tuning (the seed's rules), or LoRA / QLoRA adapters on a frozen base.
    method: Annotated[
        Method,
        Option(kind="choice", description_key="option.method", packed_key="mt", choices=Method),
    ] = Method.FULL
    lora_rank: Annotated[
        int,
        Option(
            kind="integer",
            description_key="option.lora_rank",
            packed_key="r",
            limit=Limit(1, 1024),
            unit_key="unit.lora_rank",
        ),
    ] = 16
    lora_targets: Annotated[
        LoraTargets,
        Option(kind="choice", description_key="option.lora_targets", packed_key="lt", choices=LoraTargets),
    ] = LoraTargets.ALL_LINEAR
    batch_size: (
        Annotated[
            int,
            Option(
                kind="integer",
                description_key="option.batch_size",
                packed_key="bs",
                limit=Limit(1, 65_536),
                unit_key="unit.batch_size",
                default_when_unset=DEFAULT_BATCH_SIZE,
                tasks=BOTH_TASKS,
            ),
        ]
        | None
    ) = None
    seq_len: (
        Annotated[
            int,
            Option(
                kind="integer",
                description_key="option.seq_len",
                packed_key="s",
                limit=Limit(1, 1_048_576),
                unit_key="unit.seq_len",
                default_when_unset=DEFAULT_SEQ_LEN,
                tasks=BOTH_TASKS,
            ),
        ]
        | None
    ) = None
    checkpointing: Annotated[
        bool, Option(kind="boolean", description_key="option.checkpointing", packed_key="c")
    ] = False
    flash_attention: Annotated[
        bool,
        Option(
            kind="boolean",
            description_key="option.flash_attention",
            packed_key="f",
            off_description_key="option.flash_attention_off",
        ),
    ] = True
    # A multimodal model's vision and audio towers are counted in N and, as fine-tuning recipes do,
    # frozen: their weights only. This trains them too (every parameter then costs B).
    train_vision: Annotated[
        bool, Option(kind="boolean", description_key="option.train_vision", packed_key="v")
    ] = False

    # The memory savers (bot.estimate.savers), one block: where the optimizer state and the
    # activations live, when the optimizer steps, how the loss is computed, micro-batches per step.
    offload: Annotated[
        Offload,
        Option(kind="choice", description_key="saver.option_offload", packed_key="of", choices=Offload),
    ] = Offload.NONE
    optimizer_in_backward: Annotated[
        bool, Option(kind="boolean", description_key="saver.option_optimizer_in_backward", packed_key="ob")
    ] = False
    chunked_loss: Annotated[
        bool, Option(kind="boolean", description_key="saver.option_chunked_loss", packed_key="cl")
    ] = False
    grad_accum: Annotated[
        int,
        Option(
            kind="integer",
            description_key="saver.option_grad_accum",
            packed_key="ga",
            limit=Limit(1, 4096),
            unit_key="saver.unit_grad_accum",
        ),
    ] = 1

    # Serving (issue 22): what the memory is for, and the served model's weights and KV cache.
    task: Annotated[
        Task,
        Option(
            kind="choice", description_key="serve.option_task", packed_key="t", choices=Task, tasks=BOTH_TASKS
        ),
    ] = Task.TRAIN
    weights: Annotated[
        WeightFormat,
        Option(
            kind="choice",
            description_key="serve.option_weights",
            packed_key="w",
            choices=WeightFormat,
            tasks=(Task.SERVE,),
        ),
    ] = WeightFormat.BF16
    kv_cache: Annotated[
        KvDtype,
        Option(
            kind="choice",
            description_key="serve.option_kv_cache",
            packed_key="kv",
            choices=KvDtype,
            tasks=(Task.SERVE,),
        ),
    ] = KvDtype.BF16

    @field_validator("model", mode="before")
    @classmethod
    def _preset(cls, value: object) -> object:
        if value is None or isinstance(value, Architecture | CountedModel):
            return value
        limit = option("model").option.max_length or 0
        if not isinstance(value, str) or len(value) > limit:
            raise PydanticCustomError("unknown_model", "not a model preset", {"close": ()})
        preset = find_preset(value)
        if preset is not None:  # a preset's Hub ID or alias stays offline
            return preset
        if looks_like_repo_id(value):
            # A Hub repo: the runtime looks it up before validating (validation stays pure and
            # synchronous) and registers its architecture; "unresolved_repo" asks it to.
            if not is_repo_id(value):
                raise PydanticCustomError("bad_repo_id", "not a Hub repo ID")
            found = registered(value)
            if found is None:
                raise PydanticCustomError("unresolved_repo", "Hub repo not looked up yet", {"repo": value})
            return found
        raise PydanticCustomError(
            "unknown_model", "not a model preset", {"close": tuple(close_matches(value))}
        )

    @model_validator(mode="after")
    def _enough_to_go_on(self) -> EstimateRequest:
        if self.params is None and self.model is None:
            raise PydanticCustomError("missing_size", "give params or a model preset")
        if self.model is None and (self.batch_size is not None or self.seq_len is not None):
            raise PydanticCustomError("needs_preset", "batch_size and seq_len need a model preset")
        if self.optimizer_in_backward and self.grad_accum > 1:
            # Each gradient is stepped and freed as it is made: there is nothing to accumulate into.
            raise PydanticCustomError("in_backward_accum", "optimizer_in_backward needs grad_accum 1")
        # Every field's value, as pydantic keeps them: one left at its default is never refused.
        for name in not_for_task(self.task, vars(self)):
            raise PydanticCustomError(
                "not_for_task", "option not for this task", {"option": name, "task": self.task.value}
            )
        model = self.architecture
        if self.task is _SERVE and model is not None and not tensor_parallel_fits(model, self.gpus):
            raise PydanticCustomError("tensor_parallel", "gpus do not split the heads", {"gpus": self.gpus})
        if (
            self.method is not _FULL
            and self.lora_targets is _ATTENTION
            and model is not None
            and not has_attention_targets(model)
        ):  # lora: peft finds none of the attention's modules in a Mamba model, and raises
            raise PydanticCustomError("lora_no_attention", "no attention to adapt", {"model": model.name})
        return self

    @property
    def savers(self) -> Savers:
        """The memory savers switched on, as one value (default: none)."""
        if self.model_fields_set.isdisjoint(_SAVER_OPTIONS):  # most requests: no saver given
            return NO_SAVERS
        return Savers(
            offload=self.offload,
            optimizer_in_backward=self.optimizer_in_backward,
            chunked_loss=self.chunked_loss,
            grad_accum=self.grad_accum,
        )

    @property
    def serving(self) -> bool:
        return self.task is _SERVE

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
    def architecture(self) -> Architecture | None:
        """The model's shape, where its family is declared: what activations, LoRA's layers and the
        step's peak are computed from. A repo known only by its tensors' count has none."""
        return self.model if isinstance(self.model, Architecture) else None

    @property
    def activation_shape(self) -> Architecture | None:
        """The architecture whose activations the bot estimates: ``architecture`` where its family's
        formulas were measured (``family_traits.offers_activations``), else None (as for a repo known
        by its tensors only: activations need ``activations``)."""
        shape = self.architecture
        if shape is None:
            return None
        # The family declarations load with the first model asked about, not at the bot's start.
        from bot.estimate.family_traits import offers_activations

        return shape if offers_activations(shape) else None

    @property
    def tower_params(self) -> int:
        """The model's vision and audio towers (0 for a text model, or when ``params`` replaced the
        model's count)."""
        if self.model is None or self.params is not None:
            return 0
        return self.model.tower_params

    @property
    def frozen_params(self) -> int:
        """The parameters not trained: the towers, unless ``train_vision``."""
        return 0 if self.train_vision else self.tower_params

    @property
    def wants_activation_estimate(self) -> bool:
        # The options first: the shape's check is the costly one (some 10 k instructions).
        return (
            self.activations is None
            and (self.batch_size is not None or self.seq_len is not None)
            and self.activation_shape is not None
        )

    def given(self) -> dict[str, object]:
        """The options as a user would type them (a preset by its key, a choice by its value), by name,
        leaving out those at their default; :func:`parse_request` turns this back into the request."""
        values: dict[str, object] = {}
        # Only the fields set at validation can differ from their defaults: those, in the table's order.
        table = _given_table()
        for name in sorted(self.model_fields_set, key=option_positions().__getitem__):
            default, kind = table[name]
            value = getattr(self, name)
            if value is None or value == default:
                continue
            if kind == "text":  # the model: a preset by its key, a Hub repo (or a preset's variant) by its ID
                value = value.hub_id if value.source == "hub" or preset_variant(value) else value.key
            elif kind == "choice":
                value = str(value)  # a StrEnum's str() is its value
            values[name] = value
        return values


def tensor_parallel_fits(model: Architecture, gpus: int) -> bool:
    """Whether ``gpus`` can split the model by tensor parallelism: the attention heads evenly, and
    the K/V heads evenly or each head whole on several GPUs (vLLM's and Megatron-LM's condition)."""
    if model.attention_heads % gpus:
        return False
    return model.is_mla or model.kv_heads % gpus == 0 or gpus % model.kv_heads == 0


def not_for_task(task: object, given: Mapping[str, object]) -> list[str]:
    """The options of ``given`` (by name) that do not apply to ``task`` by their declarations, in
    table order; none for a task that is not one (its own problem says so). An option at its default
    changes nothing, so it is never refused (the CLI and the slash command pass every default)."""
    try:
        chosen = task if isinstance(task, Task) else Task(str(task))
    except ValueError:
        return []
    return [name for name, default in _not_for(chosen) if name in given and given[name] != default]


@cache
def _not_for(task: Task) -> tuple[tuple[str, object], ...]:
    """The options that do not apply to ``task``, with their defaults, in table order: the few that
    :func:`not_for_task` looks for (every answer asks, in the validator)."""
    return tuple((spec.name, spec.default) for spec in request_options() if task not in spec.option.tasks)


def _option_of(annotation: Any) -> Option:
    """The :class:`Option` inside ``Annotated[T, Option(...)]`` or ``Annotated[...] | None``."""
    candidates = [annotation, *get_args(annotation)]
    for candidate in candidates:
        if get_origin(candidate) is Annotated:
            found = [m for m in get_args(candidate)[1:] if isinstance(m, Option)]
            if found:
                return found[0]
    raise TypeError(f"{annotation!r} declares no Option")


@cache
def request_options() -> tuple[OptionSpec, ...]:
    """The option table of the request, in declaration order."""
    hints = get_type_hints(EstimateRequest, include_extras=True)
    return tuple(
        OptionSpec(name=name, default=field.default, option=_option_of(hints[name]))
        for name, field in EstimateRequest.model_fields.items()
    )


@cache
def _given_table() -> dict[str, tuple[object, Kind]]:
    """The option table as :meth:`EstimateRequest.given` reads it: each option's default and kind."""
    return {spec.name: (spec.default, spec.kind) for spec in request_options()}


@cache
def option_positions() -> dict[str, int]:
    """Each option's place in the option table, by name."""
    return {spec.name: position for position, spec in enumerate(request_options())}


# The one option that shapes only the reply: who sees it. It is not part of the estimate, so it is
# neither packed into controls nor shown in the command line.
PRIVATE = OptionSpec(
    name="private",
    default=False,
    option=Option(kind="boolean", description_key="option.private", packed_key=None),
)


@cache
def command_options() -> tuple[OptionSpec, ...]:
    """Every ``/vram`` option: the request's, then the reply's."""
    return (*request_options(), PRIVATE)


def option(name: str) -> OptionSpec:
    """The table row of one option by name; KeyError for a name that is not an option."""
    for spec in command_options():
        if spec.name == name:
            return spec
    raise KeyError(name)


ProblemCode = Literal[
    "out_of_range",  # a number outside its Limit, or not a number of the right kind
    "not_a_choice",  # a choice option's value is not one of its choices
    "unknown_model",  # no preset by that name (``close`` holds near names)
    "bad_repo_id",  # has a "/" but is not of the Hub's owner/name form (a URL, "../", whitespace)
    "unresolved_repo",  # a Hub repo ID nobody has looked up yet: the runtime looks it up and retries
    "missing_size",  # neither params nor model
    "needs_preset",  # batch_size / seq_len without a model
    "in_backward_accum",  # optimizer_in_backward with grad_accum above 1
    "not_an_option",  # an option the request does not have
    "not_for_task",  # an option given for a task it does not apply to (``given``: the task)
    "tensor_parallel",  # gpus that cannot split the model's heads for serving (``given``: the gpus)
    "lora_no_attention",  # lora_targets:attention on a model without attention layers (``given``: it)
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
        if kind == "not_for_task":
            context = error.get("ctx", {})
            return Problem("not_for_task", str(context.get("option")), context.get("task"))
        if kind == "tensor_parallel":
            return Problem("tensor_parallel", "gpus", error.get("ctx", {}).get("gpus"))
        if kind == "in_backward_accum":
            return Problem("in_backward_accum")
        if kind == "lora_no_attention":
            return Problem("lora_no_attention", "lora_targets", error.get("ctx", {}).get("model"))
        return Problem("invalid")
    name = str(location[0])
    if kind == "extra_forbidden":
        return Problem("not_an_option", name, given)
    if kind == "unknown_model":
        return Problem("unknown_model", name, given, tuple(error.get("ctx", {}).get("close", ())))
    if kind == "bad_repo_id":
        return Problem("bad_repo_id", name, given)
    if kind == "unresolved_repo":
        return Problem("unresolved_repo", name, given)
    spec = option(name)
    if spec.option.limit is not None:
        return Problem("out_of_range", name, given)
    if spec.option.choices is not None:
        return Problem("not_a_choice", name, given)
    return Problem("invalid", name, given)


def parse_request(**options: object) -> EstimateRequest:
    """Validate raw options into a request, raising :class:`InvalidRequest` with one problem per option.

    Options given as ``None`` count as not given, as Discord leaves out options nobody filled in.
    """
    given = {name: value for name, value in options.items() if value is not None}
    try:
        return EstimateRequest.model_validate(given)
    except ValidationError as exc:
        # Every option that does not apply to the task, not only the first the validator met (a
        # request that passed has none: the validator checks it).
        task = given.get("task", Task.TRAIN)
        misplaced = [Problem("not_for_task", name, str(task)) for name in not_for_task(task, given)]
        found = [_problem(e) for e in exc.errors()]
        raise InvalidRequest(misplaced + [p for p in found if p not in misplaced]) from exc
