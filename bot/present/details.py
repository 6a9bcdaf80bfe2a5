"""The "Details" view: the formulas with the numbers filled in, explained as the original calculator's
details section explains them (model states dominate, activations are entered separately, LoRA)."""

from __future__ import annotations

from typing import Any

from bot.estimate.core import Estimate
from bot.present.command_line import command_line
from bot.present.i18n import DEFAULT_LANGUAGE, Language
from bot.present.phrases import (
    EmbedField,
    activation_assumptions,
    card_name,
    lora_terms,
    method_name,
    subject,
    verdict_colour,
    verdict_text,
)
from bot.present.words import Words


def _model_states(estimate: Estimate, w: Words) -> str:
    values = {
        "n": w.short(estimate.params_billion),
        "bytes": w.num(estimate.bytes_per_param),
        "m": w.gb(estimate.model_states_gb),
    }
    if estimate.custom_bytes:
        return w("details.custom_states", **values)
    parts = [w("details.part", bytes=w.num(p.bytes_per_param), part=w(p.key)) for p in estimate.parts]
    total = " + ".join(w.num(p.bytes_per_param) for p in estimate.parts)
    return w("details.states", method=method_name(estimate, w), sum=total, parts=", ".join(parts), **values)


def _activations(estimate: Estimate, w: Words) -> str:
    lines = [
        w(
            "details.activations",
            m=w.gb(estimate.model_states_gb),
            a=w.gb(estimate.activations_gb),
            v=w.gb(estimate.total_gb),
        )
    ]
    assumptions = activation_assumptions(estimate, w)
    lines.append(assumptions or w("details.activations_measure"))
    return "\n".join(lines)


def _lora(estimate: Estimate, w: Words) -> str:
    return w("details.lora", bytes=w.num(estimate.bytes_per_param), **lora_terms(estimate, w))


def render_details(estimate: Estimate, language: Language = DEFAULT_LANGUAGE) -> dict[str, Any]:
    w = Words(language)
    verdict = w(
        "details.verdict",
        card=card_name(estimate, w),
        capacity=w.num(estimate.single_gpu.capacity_gb),
        verdict=verdict_text(estimate, w),
    )
    fields: list[EmbedField] = [
        {"name": w("details.states_name"), "value": _model_states(estimate, w), "inline": False},
        {"name": w("details.activations_name"), "value": _activations(estimate, w), "inline": False},
        {"name": w("details.verdict_name"), "value": verdict, "inline": False},
        {"name": w("details.lora_name"), "value": _lora(estimate, w), "inline": False},
    ]
    return {
        "title": w("details.title", subject=subject(estimate, w)),
        "description": f"`{command_line(estimate.request)}`",
        "color": verdict_colour(estimate),
        "fields": fields,
        "footer": {"text": w("embed.footer")},
    }
