"""Turn an :class:`~bot.estimate.core.Estimate` into plain data: a Discord embed dict and terminal text.

Nothing here talks to Discord; the cog wraps the dict with ``discord.Embed.from_dict`` and the CLI
prints :func:`embed_to_text`, so both show the same content. Every word comes from the string
catalogue of the reader's language (:mod:`bot.present.i18n`).
"""

from __future__ import annotations

import math
from typing import Any, TypedDict

from bot.estimate.core import (
    DEFAULT_LORA_RANK,
    OPTION_LIMITS,
    SINGLE_GPU_GB,
    AdapterHint,
    Estimate,
    EstimateRequest,
    Optimizer,
    Problem,
)
from bot.estimate.hardware import Gpu
from bot.estimate.models import Architecture
from bot.estimate.sharding import Strategy
from bot.present.i18n import DEFAULT_LANGUAGE, Language, catalogue, number, text

FITS_COLOUR = 0x2ECC71
DOES_NOT_FIT_COLOUR = 0xE74C3C
NEUTRAL_COLOUR = 0x5865F2

BAR_CELLS = 20  # cells for one 80 GB card: 4 GB a cell
BAR_MAX_OVERFLOW_CELLS = 20
GIVEN_MAX = 100  # characters of a user's value echoed back in an error

# Discord's embed limits (https://discord.com/developers/docs/resources/message#embed-object-embed-limits).
EMBED_LIMITS = {
    "title": 256,
    "description": 4096,
    "fields": 25,
    "field.name": 256,
    "field.value": 1024,
    "footer.text": 2048,
    "total": 6000,
}

_STRATEGY_KEYS: dict[Strategy, str] = {
    "data parallel": "strategy.data_parallel",
    "ZeRO-1": "strategy.zero1",
    "ZeRO-2": "strategy.zero2",
    "ZeRO-3": "strategy.zero3",
}


class EmbedField(TypedDict):
    name: str
    value: str
    inline: bool


class Words:
    """The catalogue and number formats of one language, bound for short call sites: ``w("key")``."""

    __slots__ = ("_strings", "language")

    def __init__(self, language: Language = DEFAULT_LANGUAGE) -> None:
        self.language = language
        self._strings = catalogue(language)  # bound once: an embed looks up some 30 strings

    def __call__(self, key: str, /, **values: object) -> str:
        return self._strings[key].format(**values)

    def num(self, value: float, spec: str = "g") -> str:
        return number(value, spec, self.language)

    def short(self, value: float) -> str:
        """Short, exact-looking numbers: 7, 0.5, 70.6, 405, 1,234,567."""
        return self.num(value, ",.6g" if abs(value) < 1e6 else ",.0f")

    def plain(self, value: float) -> str:
        """1000000 as "1,000,000", not "1e+06"."""
        return self.num(value, ",.0f") if float(value).is_integer() else self.num(value, ",")

    def gb(self, value: float) -> str:
        if value == 0:
            return "0 GB"
        if abs(value) < 1:
            return f"{self.num(value, '.2g')} GB"
        return f"{self.num(value, ',.1f')} GB"

    def count(self, count: float) -> str:
        """A parameter count as 41.9M or 8.03B (41,9 Mio. / 8,03 Mrd. in German)."""
        if count >= 1e9:
            return self("count.billion", n=self.num(count / 1e9, ",.3g"))
        if count >= 1e6:
            return self("count.million", n=self.num(count / 1e6, ",.3g"))
        return self.num(count, ",.0f")


def format_gb(value: float, language: Language = DEFAULT_LANGUAGE) -> str:
    return Words(language).gb(value)


def format_count(count: float, language: Language = DEFAULT_LANGUAGE) -> str:
    return Words(language).count(count)


def command_line(request: EstimateRequest) -> str:
    """The inputs as a ``/vram`` line someone can copy and edit: only what differs from the defaults.

    It is command syntax, so it reads the same in every language.
    """
    words = ["/vram"]
    if request.params is not None:
        words.append(f"params:{request.params:g}")
    if request.model is not None:
        words.append(f"model:{request.model.key}")
    words.append(f"optimizer:{request.optimizer.value}")
    optional: list[tuple[str, object, object]] = [
        ("activations", request.activations, None),
        ("bytes_per_param", request.bytes_per_param, None),
        ("gpu", request.gpu.value if request.gpu else None, None),
        ("gpus", request.gpus, 1),
        ("lora_rank", request.lora_rank, DEFAULT_LORA_RANK),
        ("batch_size", request.batch_size, None),
        ("seq_len", request.seq_len, None),
        ("checkpointing", request.checkpointing, False),
        ("flash_attention", request.flash_attention, True),
    ]
    for name, value, default in optional:
        if value != default and value is not None:
            shown = f"{value:g}" if isinstance(value, float) else str(value)
            words.append(f"{name}:{shown}")
    return " ".join(words)


def usage_bar(
    total_gb: float, capacity_gb: float = SINGLE_GPU_GB, language: Language = DEFAULT_LANGUAGE
) -> str:
    """A text bar: ``█`` for memory used, ``░`` for free, ``▓`` beyond the card after the ``|``."""
    w = Words(language)
    gb_per_cell = capacity_gb / BAR_CELLS
    used = min(BAR_CELLS, round(total_gb / gb_per_cell))
    bar = "█" * used + "░" * (BAR_CELLS - used)
    if total_gb > capacity_gb:
        over = math.ceil((total_gb - capacity_gb) / gb_per_cell)
        bar += "|" + "▓" * min(over, BAR_MAX_OVERFLOW_CELLS) + ("…" if over > BAR_MAX_OVERFLOW_CELLS else "")
    percent = w.num(total_gb / capacity_gb * 100, ",.0f")
    return f"`{bar}` " + w("bar.caption", percent=percent, capacity=w.num(capacity_gb))


def optimizer_name(optimizer: Optimizer, language: Language = DEFAULT_LANGUAGE) -> str:
    return text(language, f"method.{optimizer.value}")


def method_name(estimate: Estimate, w: Words) -> str:
    """The optimizer's name, or "Custom 10 B/param" when a custom B replaced it."""
    if estimate.request.bytes_per_param is not None:
        return w("method.custom", bytes=w.num(estimate.request.bytes_per_param))
    return optimizer_name(estimate.request.optimizer, w.language)


def subject(estimate: Estimate, w: Words) -> str:
    """What is being fine-tuned: the preset's name, or "a 7B model"."""
    request = estimate.request
    if request.model is not None and request.params is None:
        return request.model.name
    return w("subject.size", size=w.short(estimate.params_billion))


def title(estimate: Estimate, language: Language = DEFAULT_LANGUAGE) -> str:
    w = Words(language)
    return w("embed.title", subject=subject(estimate, w), method=method_name(estimate, w))


def _breakdown(estimate: Estimate, w: Words) -> str:
    lines = [
        w("breakdown.line", part=w(f"part.{part.key}"), bytes=w.num(part.bytes_per_param), gb=w.gb(part.gb))
        for part in estimate.parts
    ]
    if len(estimate.parts) > 1:
        lines.append(w("breakdown.sum", bytes=w.num(estimate.bytes_per_param)))
    return "\n".join(lines)


def card_name(estimate: Estimate, w: Words) -> str:
    """The picked card's name, or the original calculator's plain "80 GB GPU" when none was picked."""
    verdict = estimate.single_gpu
    return verdict.gpu.display_name if verdict.named else w("card.size", gb=w.num(verdict.capacity_gb))


def verdict_title(estimate: Estimate, language: Language = DEFAULT_LANGUAGE) -> str:
    w = Words(language)
    return w("field.single", card=card_name(estimate, w))


def strategy_name(strategy: Strategy, w: Words) -> str:
    return w(_STRATEGY_KEYS[strategy])


def _cluster(estimate: Estimate, w: Words) -> tuple[str, str] | None:
    cluster = estimate.cluster
    if cluster is None:
        return None
    lines = [
        w(
            "cluster.row",
            mark="✅" if row.fits else "❌",
            strategy=strategy_name(row.strategy, w),
            gb=w.gb(row.gb),
        )
        for row in cluster.rows
    ]
    best = cluster.smallest_fitting
    if best is None:
        needed = estimate.single_gpu.sharded_gpus
        if needed:
            lines.append(w("cluster.none_fits", gpus=w.plain(needed)))
        else:
            lines.append(w("cluster.none_fits_activations"))
    else:
        lines.append(w("cluster.smallest", strategy=strategy_name(best, w)))
    lines.append(w("cluster.source"))
    name = w("field.cluster", gpus=w.plain(cluster.gpus), card=estimate.single_gpu.gpu.display_name)
    return name, "\n".join(lines)


def verdict_text(estimate: Estimate, w: Words) -> str:
    verdict = estimate.single_gpu
    if verdict.fits:
        return w("verdict.fits", gb=w.gb(verdict.headroom_gb))
    over = w("verdict.over", gb=w.gb(verdict.overflow_gb))
    capacity = w.num(verdict.capacity_gb)
    if verdict.sharded_gpus is None:
        return f"{over} {w('verdict.activations_fill', capacity=capacity)}"
    return f"{over} {w('verdict.sharded', gpus=w.plain(verdict.sharded_gpus), capacity=capacity)}"


def adapter_fit(hint: AdapterHint, w: Words) -> str:
    """ "fits one 24 GB card", naming the smallest usual card that holds the adapter set-up."""
    if hint.smallest_card_gb is None:
        return w("lora.fits_none")
    return w("lora.fits", gb=w.num(hint.smallest_card_gb))


def adapters_text(lora: AdapterHint, params_billion: float, w: Words) -> str:
    """How many adapter parameters LoRA trains, and how that was counted."""
    if lora.rank is None:
        return w("lora.budget")
    share = lora.adapter_params_billion / params_billion * 100
    return w(
        "lora.rank",
        rank=w.plain(lora.rank),
        count=w.count(lora.adapter_params_billion * 1e9),
        share=w.num(share, ".2g"),
    )


def lora_terms(estimate: Estimate, w: Words) -> dict[str, str]:
    """The LoRA sum, base + adapters + activations = total, and the card it fits, as placeholders."""
    lora = estimate.lora
    return {
        "adapters": adapters_text(lora, estimate.params_billion, w),
        "base": w.gb(lora.base_gb),
        "adapter_gb": w.gb(lora.adapters_gb),
        "activations": w.gb(lora.activations_gb),
        "total": w.gb(lora.total_gb),
        "fit": adapter_fit(lora, w),
    }


def lora_text(estimate: Estimate, w: Words) -> str:
    qlora = estimate.qlora
    return w(
        "lora.hint",
        **lora_terms(estimate, w),
        qlora_bytes=w.num(qlora.base_bytes_per_param),
        qlora_total=w.gb(qlora.total_gb),
        qlora_fit=adapter_fit(qlora, w),
    )


def _preset_line(estimate: Estimate, w: Words) -> str | None:
    model = estimate.request.model
    if model is None:
        return None
    if estimate.preset_overridden:
        return w("preset.overridden", model=model.name, count=w.count(model.parameter_count))
    return w(
        "preset.counted",
        model=model.name,
        count=w.plain(model.parameter_count),
        shape=architecture_shape(model, w),
    )


def architecture_shape(model: Architecture, w: Words) -> str:
    shape = w(
        "preset.shape",
        layers=w.plain(model.layers),
        hidden=model.hidden_size,
        heads=model.attention_heads,
        kv_heads=model.kv_heads,
        mlp=model.intermediate_size,
        vocab=model.vocab_size,
    )
    return shape + (w("preset.experts", experts=model.experts) if model.experts > 1 else "")


def activations_value(estimate: Estimate, w: Words) -> str:
    if estimate.activation_estimate is None:
        return w.gb(estimate.activations_gb)
    return w("activations.estimated", gb=w.gb(estimate.activations_gb))


def activation_assumptions(estimate: Estimate, w: Words) -> str | None:
    found = estimate.activation_estimate
    if found is None:
        return None
    return w(
        "activations.assumptions",
        batch=w.plain(found.batch_size),
        seq_len=w.plain(found.seq_len),
        attention=w("activations.flash" if found.flash_attention else "activations.standard"),
        recompute=w("activations.checkpointing" if found.checkpointing else "activations.no_checkpointing"),
        per_layer=w.gb(found.per_layer_gb),
        outside=w.gb(found.outside_layers_gb),
    )


def formula(estimate: Estimate, w: Words) -> str:
    """M = N × B and V = M + A with the numbers filled in."""
    model_states = w(
        "formula.model_states",
        n=w.short(estimate.params_billion),
        b=w.num(estimate.bytes_per_param),
        m=w.gb(estimate.model_states_gb),
    )
    total = w(
        "formula.total",
        m=w.gb(estimate.model_states_gb),
        a=w.gb(estimate.activations_gb),
        v=w.gb(estimate.total_gb),
    )
    return f"{model_states}\n{total}"


def verdict_colour(estimate: Estimate) -> int:
    return FITS_COLOUR if estimate.single_gpu.fits else DOES_NOT_FIT_COLOUR


def render_embed(estimate: Estimate, language: Language = DEFAULT_LANGUAGE) -> dict[str, Any]:
    """The answer as a Discord embed object (the JSON shape Discord documents)."""
    w = Words(language)
    fields: list[EmbedField] = [
        {"name": w("field.breakdown"), "value": _breakdown(estimate, w), "inline": False},
        {"name": w("field.model_states"), "value": w.gb(estimate.model_states_gb), "inline": True},
        {"name": w("field.activations"), "value": activations_value(estimate, w), "inline": True},
        {"name": w("field.total"), "value": f"**{w.gb(estimate.total_gb)}**", "inline": True},
    ]
    assumptions = activation_assumptions(estimate, w)
    if assumptions:
        fields.append({"name": w("field.activation_estimate"), "value": assumptions, "inline": False})
    fields.append(
        {"name": verdict_title(estimate, language), "value": verdict_text(estimate, w), "inline": False}
    )
    cluster = _cluster(estimate, w)
    if cluster:
        fields.append({"name": cluster[0], "value": cluster[1], "inline": False})
    fields += [
        {"name": w("field.lora"), "value": lora_text(estimate, w), "inline": False},
        {
            "name": w("field.memory"),
            "value": usage_bar(estimate.total_gb, estimate.single_gpu.capacity_gb, language),
            "inline": False,
        },
    ]
    description = [f"`{command_line(estimate.request)}`"]
    preset = _preset_line(estimate, w)
    if preset:
        description.append(preset)
    description.append(formula(estimate, w))
    return {
        "title": title(estimate, language),
        "description": "\n".join(description),
        "color": verdict_colour(estimate),
        "fields": fields,
        "footer": {"text": w("embed.footer")},
    }


# -- problems --------------------------------------------------------------------------------------


def given_value(value: object, w: Words) -> str:
    """A user's value, echoed safely: numbers in the reader's format, text in a code span."""
    if isinstance(value, bool) or value is None:
        return f"`{value}`"
    if isinstance(value, int):
        return w.num(value, ",")[:GIVEN_MAX]
    if isinstance(value, float):
        # Up to 15 significant digits: 0 rather than 0.0, 1e+308 rather than 309 digits.
        return w.num(value, ",.15g") if math.isfinite(value) else f"`{value}`"
    shown = str(value)
    if len(shown) > GIVEN_MAX:
        shown = shown[:GIVEN_MAX] + "…"
    # A backtick would end the code span early, and a newline would break the line.
    return "`" + shown.replace("`", "ˋ").replace("\n", " ") + "`"


def describe_limit(option: str, w: Words) -> str:
    limit = OPTION_LIMITS[option]
    return w(
        "limit.inclusive" if limit.minimum_inclusive else "limit.exclusive",
        kind=w("limit.whole_number" if limit.integer else "limit.number"),
        minimum=w.plain(limit.minimum),
        maximum=w.plain(limit.maximum),
        unit=w(f"unit.{option}"),
    )


def describe_problem(problem: Problem, language: Language = DEFAULT_LANGUAGE) -> str:
    """One sentence that says what was wrong and what is allowed."""
    w = Words(language)
    option = (problem.option or "?")[:GIVEN_MAX].replace("`", "ˋ")
    given = given_value(problem.given, w)
    if problem.code == "out_of_range" and problem.option in OPTION_LIMITS:
        return w(
            "problem.out_of_range", option=option, given=given, allowed=describe_limit(problem.option, w)
        )
    if problem.code == "not_a_choice":
        choices = Optimizer if problem.option == "optimizer" else Gpu
        return w(
            "problem.not_a_choice", option=option, given=given, choices=", ".join(c.value for c in choices)
        )
    if problem.code == "unknown_model":
        if problem.close:
            return w(
                "problem.unknown_model_close", option=option, given=given, close=", ".join(problem.close)
            )
        return w("problem.unknown_model", option=option, given=given)
    if problem.code in ("missing_size", "needs_preset"):
        return w(f"problem.{problem.code}")
    if problem.code in ("not_an_option", "wrong_type"):
        return w(f"problem.{problem.code}", option=option)
    if problem.option is None:
        return w("problem.invalid_value", given=given)
    return w("problem.invalid", option=option, given=given)


def problems_message(problems: list[Problem], language: Language = DEFAULT_LANGUAGE) -> str:
    lines = [text(language, "problem.intro")]
    lines += [f"• {describe_problem(p, language)}" for p in problems]
    return "\n".join(lines)


# -- limits and the terminal -----------------------------------------------------------------------


def embed_limit_problems(embed: dict[str, Any]) -> list[str]:
    """Every way ``embed`` breaks Discord's embed limits; empty when it is within them."""
    problems: list[str] = []
    fields = embed.get("fields", [])
    texts = {
        "title": embed.get("title", ""),
        "description": embed.get("description", ""),
        "footer.text": embed.get("footer", {}).get("text", ""),
    }
    for key, value in texts.items():
        if len(value) > EMBED_LIMITS[key]:
            problems.append(f"{key} has {len(value)} characters")
    if len(fields) > EMBED_LIMITS["fields"]:
        problems.append(f"{len(fields)} fields")
    for index, field in enumerate(fields):
        for key in ("name", "value"):
            value = field[key]
            if not value.strip():
                problems.append(f"field {index} {key} is empty")
            if len(value) > EMBED_LIMITS[f"field.{key}"]:
                problems.append(f"field {index} {key} has {len(value)} characters")
    total = sum(len(t) for t in texts.values()) + sum(len(f["name"]) + len(f["value"]) for f in fields)
    if total > EMBED_LIMITS["total"]:
        problems.append(f"{total} characters in all")
    return problems


def embed_to_text(embed: dict[str, Any]) -> str:
    """The embed for a terminal: the same words, without Discord's markdown."""

    def plain(value: str) -> str:
        return value.replace("**", "").replace("`", "")

    lines = [plain(embed["title"]), "=" * len(embed["title"]), plain(embed["description"]), ""]
    for field in embed["fields"]:
        name, value = plain(field["name"]), plain(field["value"])
        if "\n" in value or len(name) + len(value) > 78:
            if lines[-1]:
                lines.append("")
            lines += [f"{name}:", *(f"  {line}" for line in value.splitlines()), ""]
        else:
            lines.append(f"{name}: {value}")
    if lines[-1]:
        lines.append("")
    lines.append(plain(embed["footer"]["text"]))
    return "\n".join(lines)


def optimizer_choice_name(optimizer: Optimizer, language: Language = DEFAULT_LANGUAGE) -> str:
    """How a choice reads in Discord's picker; it starts with the key so typing the key finds it."""
    w = Words(language)
    return w(
        "choice.optimizer",
        key=optimizer.value,
        name=optimizer_name(optimizer, language),
        bytes=w.num(optimizer.bytes_per_param),
    )


def gpu_choice_name(gpu: Gpu, language: Language = DEFAULT_LANGUAGE) -> str:
    return text(language, "choice.gpu", key=gpu.value, name=gpu.display_name)
