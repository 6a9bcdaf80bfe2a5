"""The "Compare" view: the same inputs under every optimizer, and LoRA and QLoRA, side by side.

The picture is the chart (:mod:`bot.present.chart`, attached as ``compare.png``); the text gives each
bar's total and verdict, one line each, so it stays legible on a phone (inline fields break words
there) and says the figures to anyone who cannot see the picture.
"""

from __future__ import annotations

from typing import Any

from bot.estimate.core import AdapterHint, Estimate, compare_methods, compare_setups
from bot.present.command_line import command_line
from bot.present.i18n import DEFAULT_LANGUAGE, Language
from bot.present.phrases import (
    NEUTRAL_COLOUR,
    bytes_text,
    card_name,
    short_method_name,
    short_optimizer_name,
    subject,
)
from bot.present.words import OPTIMIZER_PLAIN_NAME_KEYS, Words

CHART_NAME = "compare.png"  # the attachment's file name, which the embed's image points to
_ADAPTER_NAME_KEYS = {"LoRA": "compare.lora", "QLoRA": "compare.qlora"}


def _fit(total_gb: float, capacity_gb: float, w: Words) -> str:
    """ "✅ fits" or "❌ 52.0 GB over", in one piece: a phone wraps before it, never inside it."""
    verdict = (
        w("compare.fits") if total_gb <= capacity_gb else w("compare.over", gb=w.gb(total_gb - capacity_gb))
    )
    return verdict.replace(" ", "\u00a0")


def _full(row: Estimate, w: Words) -> str:
    """One optimizer's figure and verdict, as its own answer's: judged per card, under its strategy."""
    name = w("compare.row_name", method=short_method_name(row, w), bytes=bytes_text(row.bytes_per_param, w))
    verdict = row.verdict
    return w(
        "compare.row",
        name=name,
        v=w.gb(verdict.judged_gb),
        verdict=_fit(verdict.judged_gb, verdict.capacity_gb, w),
    )


def _adapter(hint: AdapterHint, chosen: Estimate, w: Words) -> str:
    # The optimizer alone: under method:lora the adapters' rows read "LoRA · Lion", never
    # "LoRA · LoRA · Lion".
    name = w(
        "compare.adapter_name",
        method=w(_ADAPTER_NAME_KEYS[hint.method]),
        optimizer=short_optimizer_name(chosen, w),
    )
    verdict = _fit(hint.total_gb, chosen.single_gpu.capacity_gb, w)
    return w("compare.row", name=name, v=w.gb(hint.total_gb), verdict=verdict)


def _setups(chosen: Estimate, w: Words) -> str:
    """The chosen optimizer in each training setup, side by side on one line."""
    rows = [
        w(
            "compare.setup_row",
            mark="✅" if row.verdict.fits else "❌",
            setup=row.request.precision.value,
            v=w.gb(row.verdict.judged_gb),
        )
        for row in compare_setups(chosen.request)
    ]
    optimizer = w(OPTIMIZER_PLAIN_NAME_KEYS[chosen.request.optimizer])
    return w("compare.setups", optimizer=optimizer, rows=" · ".join(rows))


def render_compare(chosen: Estimate, language: Language = DEFAULT_LANGUAGE) -> dict[str, Any]:
    """One embed: full fine-tuning with each optimizer, then LoRA and QLoRA with the chosen one."""
    w = Words(language)
    lines = [f"`{command_line(chosen.request)}`"]
    request = chosen.request
    not_counted = request.model is not None and request.activations is None
    not_counted = not_counted and chosen.activation_estimate is None
    # Each row is judged as its own answer is: per GPU on several cards, at the step's peak where the
    # bot estimates it (the adapters' rows hold the whole model on each card, as data parallel does).
    if request.gpus > 1:
        gpus, card = w.plain(request.gpus), card_name(chosen, w)
        if not_counted:
            lines.append(w("compare_judged.intro_not_counted", gpus=gpus, card=card))
        else:
            lines.append(w("compare_judged.intro", a=w.gb(chosen.activations_gb), gpus=gpus, card=card))
    elif not_counted:
        # As in the answer: a preset without a sequence length has no activations counted.
        lines.append(w("compare.intro_not_counted", card=card_name(chosen, w)))
    else:
        lines.append(w("compare.intro", a=w.gb(chosen.activations_gb), card=card_name(chosen, w)))
    if chosen.verdict.peak_gb is not None:
        lines.append(w("compare_judged.peak"))
    lines += [_full(row, w) for row in compare_methods(chosen.request)]
    lines += [_adapter(chosen.lora, chosen, w), _adapter(chosen.qlora, chosen, w)]
    lines.append(_setups(chosen, w))
    return {
        "title": w("compare.title", subject=subject(chosen, w)),
        "description": "\n".join(lines),
        "color": NEUTRAL_COLOUR,
        "image": {"url": f"attachment://{CHART_NAME}"},
        "footer": {"text": w("glance.footer")},  # the full caveat is in Details
    }
