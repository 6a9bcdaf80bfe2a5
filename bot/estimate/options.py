"""What one ``/vram`` option is: its kind, range, default, keys and flags, declared in one place.

Each option of the request is declared once, as a field of :class:`bot.estimate.request.EstimateRequest`
annotated with an :class:`Option`. Everything else reads that declaration through :func:`options`:
validation (the annotation is also the field's pydantic schema), the slash command's parameters,
the ``custom_id`` packing, the copyable ``/vram …`` line, the CLI flags and the README's table.
Nothing here knows Discord or words: catalogue keys are identifiers, worded by ``bot.present``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from pydantic import GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema

# number: a float; integer: a whole number; boolean: true / false; choice: one value of an enum;
# text: free text (a model name).
Kind = Literal["number", "integer", "boolean", "choice", "text"]


class Task(StrEnum):
    """What the memory is for: a training step (the seed's question) or serving the model."""

    TRAIN = "train"
    SERVE = "serve"


# The tasks an option applies to unless its declaration says otherwise: training's options are
# refused for serving rather than silently dropped.
TRAINING_ONLY = (Task.TRAIN,)
BOTH_TASKS = (Task.TRAIN, Task.SERVE)


@dataclass(frozen=True, slots=True)
class Limit:
    """The allowed range of a numeric option (the maximum is always inclusive)."""

    minimum: float
    maximum: float
    minimum_inclusive: bool = True


@dataclass(frozen=True, slots=True)
class Option:
    """How one request field is offered, validated, packed and documented.

    Used as the field's ``Annotated`` metadata: ``Annotated[float, Option(...)] | None = None``. The
    field's name and default stay where Python puts them, on the field.
    """

    kind: Kind
    description_key: str  # the catalogue key of its one-line description (Discord, CLI help, README)
    # Its key in a control's custom_id (never reuse one: old messages still carry them); None for an
    # option that shapes only the reply, not the estimate.
    packed_key: str | None
    limit: Limit | None = None  # number and integer options
    unit_key: str | None = None  # the catalogue key of the unit its limits are given in
    choices: type[StrEnum] | None = None  # choice options
    max_length: int | None = None  # text options
    autocomplete: bool = False  # Discord suggests values as the user types
    cli_positional: bool = False  # the CLI takes it as a positional argument rather than a flag
    # What the estimate takes when the option is not given, where the field's default is None (the
    # card, a batch of one): the documentation shows it as the default, so that it is the one used.
    default_when_unset: object = None
    # A boolean that defaults to true is turned off by ``--no-…``: the catalogue key of what that flag
    # does, in its own sense; without one, the flag's help says it turns the description off.
    off_description_key: str | None = None
    always_shown: bool = False  # the copyable command line shows it even at its default
    # The tasks it means something for; given for another task, it is refused (``not_for_task``).
    tasks: tuple[Task, ...] = TRAINING_ONLY

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        # Strict numbers (no "7" strings, no True, and no 7.0 for a whole number) and no NaN or
        # infinity; the range is the Limit's. Other kinds validate as their Python type says.
        limit = self.limit
        if self.kind == "number" and limit is not None:
            return core_schema.float_schema(
                ge=limit.minimum if limit.minimum_inclusive else None,
                gt=None if limit.minimum_inclusive else limit.minimum,
                le=limit.maximum,
                allow_inf_nan=False,
                strict=True,
            )
        if self.kind == "integer" and limit is not None:
            return core_schema.int_schema(ge=int(limit.minimum), le=int(limit.maximum), strict=True)
        if self.kind == "boolean":
            return core_schema.bool_schema(strict=True)
        return handler(source)


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One row of the option table: a field's name and default with its :class:`Option`."""

    name: str
    default: object  # None: not given
    option: Option

    @property
    def kind(self) -> Kind:
        return self.option.kind

    @property
    def default_used(self) -> object:
        """The value the estimate uses when the option is not given (None: nothing is assumed)."""
        return self.default if self.default is not None else self.option.default_when_unset

    @property
    def negated_flag(self) -> bool:
        """The CLI flag turns the option off (``--no-flash-attention``): a boolean that is on by default."""
        return self.kind == "boolean" and self.default is True

    @property
    def cli_flag(self) -> str:
        """``--seq-len``; a boolean that defaults to true is turned off with ``--no-…``."""
        flag = self.name.replace("_", "-")
        return f"--no-{flag}" if self.negated_flag else f"--{flag}"
