"""The "Compare" view: the same inputs under every optimizer, and LoRA and QLoRA, side by side."""

from __future__ import annotations

from typing import Any

from bot.estimate.core import AdapterHint, Estimate, compare_methods
from bot.present.command_line import command_line
from bot.present.i18n import DEFAULT_LANGUAGE, Language
from bot.present.phrases import NEUTRAL_COLOUR, EmbedField, card_name, method_name, subject
from bot.present.words import Words

_ADAPTER_NAME_KEYS = {"LoRA": "compare.lora", "QLoRA": "compare.qlora"}


def _fit(total_gb: float, capacity_gb: float, w: Words) -> str:
    return (
        w("compare.fits") if total_gb <= capacity_gb else w("compare.over", gb=w.gb(total_gb - capacity_gb))
    )


def _full(row: Estimate, w: Words) -> EmbedField:
    capacity = row.single_gpu.capacity_gb
    value = w(
        "compare.full",
        m=w.gb(row.model_states_gb),
        v=w.gb(row.total_gb),
        verdict=_fit(row.total_gb, capacity, w),
    )
    if row.custom_bytes:
        name = method_name(row, w)  # already says "Custom 10 B/param"
    else:
        name = w("compare.row_name", method=method_name(row, w), bytes=w.num(row.bytes_per_param))
    return {"name": name, "value": value, "inline": True}


def _adapter(hint: AdapterHint, chosen: Estimate, w: Words) -> EmbedField:
    name = w(
        "compare.adapter_name", method=w(_ADAPTER_NAME_KEYS[hint.method]), optimizer=method_name(chosen, w)
    )
    value = w(
        "compare.adapter",
        v=w.gb(hint.total_gb),
        verdict=_fit(hint.total_gb, chosen.single_gpu.capacity_gb, w),
    )
    return {"name": name, "value": value, "inline": True}


def render_compare(chosen: Estimate, language: Language = DEFAULT_LANGUAGE) -> dict[str, Any]:
    """One embed: full fine-tuning with each optimizer, then LoRA and QLoRA with the chosen one."""
    w = Words(language)
    rows = compare_methods(chosen.request)
    fields = [_full(row, w) for row in rows]
    fields += [_adapter(chosen.lora, chosen, w), _adapter(chosen.qlora, chosen, w)]
    intro = w("compare.intro", a=w.gb(chosen.activations_gb), card=card_name(chosen, w))
    return {
        "title": w("compare.title", subject=subject(chosen, w)),
        "description": f"`{command_line(chosen.request)}`\n{intro}",
        "color": NEUTRAL_COLOUR,
        "fields": fields,
        "footer": {"text": w("embed.footer")},
    }
