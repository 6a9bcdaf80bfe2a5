"""The answer to ``/vram``: the estimate as a Discord embed (plain JSON data, no Discord I/O)."""

from __future__ import annotations

import math
from typing import Any

from bot.estimate.core import Estimate
from bot.estimate.hardware import DEFAULT_GPU
from bot.present.command_line import command_line
from bot.present.i18n import DEFAULT_LANGUAGE, Language
from bot.present.phrases import (
    EmbedField,
    activation_assumptions,
    adapter_fit,
    architecture_notes,
    architecture_shape,
    card_name,
    largest_batch_text,
    lora_terms,
    method_name,
    subject,
    verdict_colour,
    verdict_text,
)
from bot.present.words import Words, strategy_name

BAR_CELLS = 20  # cells for one 80 GB card: 4 GB a cell
BAR_MAX_OVERFLOW_CELLS = 20


def title(estimate: Estimate, language: Language = DEFAULT_LANGUAGE) -> str:
    w = Words(language)
    return w("embed.title", subject=subject(estimate, w), method=method_name(estimate, w))


def _breakdown(estimate: Estimate, w: Words) -> str:
    lines = [
        w("breakdown.line", part=w(part.key), bytes=w.num(part.bytes_per_param), gb=w.gb(part.gb))
        for part in estimate.parts
    ]
    if len(estimate.parts) > 1:
        lines.append(w("breakdown.sum", bytes=w.num(estimate.bytes_per_param)))
    return "\n".join(lines)


def verdict_title(estimate: Estimate, language: Language = DEFAULT_LANGUAGE) -> str:
    w = Words(language)
    return w("field.single", card=card_name(estimate, w))


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
    lines.append(w("cluster.deepspeed" if cluster.source == "deepspeed" else "cluster.source"))
    name = w("field.cluster", gpus=w.plain(cluster.gpus), card=estimate.single_gpu.gpu.display_name)
    return name, "\n".join(lines)


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
    line = w(
        "preset.counted",
        model=model.name,
        count=w.plain(model.parameter_count),
        shape=architecture_shape(model, w),
    )
    return " ".join([line, *architecture_notes(model, w)])


def activations_value(estimate: Estimate, w: Words) -> str:
    if estimate.activation_estimate is None:
        return w.gb(estimate.activations_gb)
    return w("activations.estimated", gb=w.gb(estimate.activations_gb))


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


def usage_bar(
    total_gb: float, capacity_gb: float = DEFAULT_GPU.memory_gb, language: Language = DEFAULT_LANGUAGE
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
    batch = largest_batch_text(estimate, w)
    if batch:
        fields.append({"name": w("field.largest_batch"), "value": batch, "inline": False})
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
