"""Hypothesis strategies for valid requests, built from the option table so they cover every option."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from bot.estimate.models import presets
from bot.estimate.options import OptionSpec, Task
from bot.estimate.request import EstimateRequest, option, parse_request, request_options


def values_of(spec: OptionSpec) -> st.SearchStrategy[Any]:
    """Any value a user can give option ``spec`` (within its limits)."""
    limit = spec.option.limit
    if spec.kind == "number" and limit is not None:
        return st.floats(
            min_value=limit.minimum,
            max_value=limit.maximum,
            exclude_min=not limit.minimum_inclusive,
            allow_nan=False,
        )
    if spec.kind == "integer" and limit is not None:
        return st.integers(min_value=int(limit.minimum), max_value=int(limit.maximum))
    if spec.kind == "boolean":
        return st.booleans()
    if spec.option.choices is not None:
        return st.sampled_from([choice.value for choice in spec.option.choices])
    return st.sampled_from(sorted(presets()))  # the one text option: a model preset's key


@st.composite
def requests(draw: st.DrawFn) -> EstimateRequest:
    """A valid request with any subset of the options given."""
    options = {spec.name: draw(values_of(spec)) for spec in request_options() if draw(st.booleans())}
    if "model" not in options:  # a batch or sequence length needs a model to estimate with
        options.pop("batch_size", None)
        options.pop("seq_len", None)
        options.setdefault("params", draw(values_of(option("params"))))
    # Only the options of the task drawn (training's by default), and gpus that split a served model.
    task = Task(options.get("task", Task.TRAIN))
    options = {name: value for name, value in options.items() if task in option(name).option.tasks}
    if task is Task.SERVE and "model" in options:
        options.pop("gpus", None)
    if options.get("optimizer_in_backward") is True:  # it steps each gradient at once: no accumulation
        options.pop("grad_accum", None)
    return parse_request(**options)
