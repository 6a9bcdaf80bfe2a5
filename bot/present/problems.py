"""What was wrong with the input, in one sentence per problem, in the reader's language."""

from __future__ import annotations

import math

from bot.estimate.options import OptionSpec
from bot.estimate.request import Problem, option
from bot.present.i18n import DEFAULT_LANGUAGE, Language, number, text
from bot.present.words import Words

GIVEN_MAX = 100  # characters of a user's value echoed back in an error


def given_value(value: object, w: Words) -> str:
    """A user's value, echoed safely: numbers in the reader's format, text in a code span."""
    if isinstance(value, bool) or value is None:
        return f"`{value}`"
    if isinstance(value, int):
        return w.num(value, ",")[:GIVEN_MAX]
    if isinstance(value, float):
        # Up to 15 significant digits: 0 rather than 0.0, 1e+308 rather than 309 digits.
        # An echo of what was typed, so 1e+308 stays 1e+308 (the answers themselves never use exponents).
        return number(value, ",.15g", w.language) if math.isfinite(value) else f"`{value}`"
    shown = str(value)
    if len(shown) > GIVEN_MAX:
        shown = shown[:GIVEN_MAX] + "…"
    # A backtick would end the code span early, and a newline would break the line.
    return "`" + shown.replace("`", "ˋ").replace("\n", " ") + "`"


def describe_limit(spec: OptionSpec, w: Words) -> str:
    """ "a whole number at least 1 and at most 4,096 (GPUs)", from the option's declaration."""
    limit = spec.option.limit
    if limit is None:
        raise ValueError(f"{spec.name} has no limit")
    unit_key = spec.option.unit_key
    return w(
        "limit.inclusive" if limit.minimum_inclusive else "limit.exclusive",
        kind=w("limit.whole_number" if spec.kind == "integer" else "limit.number"),
        minimum=w.plain(limit.minimum),
        maximum=w.plain(limit.maximum),
        unit=w(unit_key) if unit_key else "",
    )


def _known(name: str | None) -> OptionSpec | None:
    try:
        return option(name) if name is not None else None
    except KeyError:
        return None


def describe_problem(problem: Problem, language: Language = DEFAULT_LANGUAGE) -> str:
    """One sentence that says what was wrong and what is allowed."""
    w = Words(language)
    name = (problem.option or "?")[:GIVEN_MAX].replace("`", "ˋ")
    given = given_value(problem.given, w)
    spec = _known(problem.option)
    code = problem.code
    if code == "out_of_range" and spec is not None and spec.option.limit is not None:
        return w("problem.out_of_range", option=name, given=given, allowed=describe_limit(spec, w))
    if code == "not_a_choice" and spec is not None and spec.option.choices is not None:
        choices = ", ".join(choice.value for choice in spec.option.choices)
        return w("problem.not_a_choice", option=name, given=given, choices=choices)
    if code == "unknown_model":
        if problem.close:
            return w("problem.unknown_model_close", option=name, given=given, close=", ".join(problem.close))
        return w("problem.unknown_model", option=name, given=given)
    if code == "bad_repo_id":
        return w("hub.bad_repo_id", option=name, given=given)
    if code == "unresolved_repo":
        return w("hub.unresolved_repo", option=name, given=given)
    if code == "missing_size":
        return w("problem.missing_size")
    if code == "needs_preset":
        return w("problem.needs_preset")
    if code == "in_backward_accum":
        return w("saver.problem_in_backward_accum")
    if code == "not_an_option":
        return w("problem.not_an_option", option=name)
    if code == "not_for_task":
        return w("serve.not_for_task", option=name, task=str(problem.given))
    if code == "tensor_parallel":
        return w("serve.tensor_parallel", given=given)
    if code == "lora_no_attention":
        return w("lora.no_attention_targets", model=given)
    if code == "wrong_type":
        return w("problem.wrong_type", option=name)
    if problem.option is None:
        return w("problem.invalid_value", given=given)
    return w("problem.invalid", option=name, given=given)


def problems_message(problems: list[Problem], language: Language = DEFAULT_LANGUAGE) -> str:
    lines = [text(language, "problem.intro")]
    lines += [f"• {describe_problem(p, language)}" for p in problems]
    return "\n".join(lines)
