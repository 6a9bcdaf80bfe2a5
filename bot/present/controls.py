"""The controls under an answer as Discord's component JSON: an optimizer select and three buttons.

Plain data, like the embeds: the runtime sends it and handles the clicks. Building the JSON here
rather than through discord.py's ``ui`` objects keeps an answer cheap to send; the clicks are still
parsed by discord.py's ``DynamicItem`` from the same custom_ids.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from bot.estimate.optimizers import Optimizer
from bot.estimate.request import EstimateRequest
from bot.present.custom_ids import BUTTON_VIEWS, COMPARE, DETAILS, ESTIMATE, SELECT_VIEW, control_id, pack
from bot.present.i18n import Language
from bot.present.words import Words, optimizer_name

ACTION_ROW, BUTTON, STRING_SELECT = 1, 2, 3
PRIMARY, SECONDARY = 1, 2  # button styles
_LABEL_KEYS = {ESTIMATE: "component.estimate", COMPARE: "component.compare", DETAILS: "component.details"}


@cache
def _optimizer_options(language: Language, chosen: Optimizer | None) -> list[dict[str, Any]]:
    """The select's options depend only on the language and the optimizer chosen, so they are built
    once for each (half of this module's CPU per answer otherwise); callers get copies."""
    w = Words(language)
    return [
        {
            "label": optimizer_name(optimizer, w),
            "value": optimizer.value,
            "description": w("component.optimizer_option", bytes=w.num(optimizer.bytes_per_param)),
            "default": optimizer is chosen,
        }
        for optimizer in Optimizer
    ]


def render_controls(request: EstimateRequest, current: str, language: Language) -> list[dict[str, Any]]:
    """Two action rows for ``request`` shown as view ``current``."""
    w = Words(language)
    state = pack(request)
    chosen = request.optimizer if request.bytes_per_param is None else None
    select = {
        "type": STRING_SELECT,
        "custom_id": control_id(SELECT_VIEW, state),
        "placeholder": w("component.optimizer_placeholder"),
        "min_values": 1,
        "max_values": 1,
        "options": [dict(option) for option in _optimizer_options(language, chosen)],
    }
    buttons = [
        {
            "type": BUTTON,
            "custom_id": control_id(view, state),
            "label": w(_LABEL_KEYS[view]),
            "style": PRIMARY if view == COMPARE else SECONDARY,
            "disabled": view == current,
        }
        for view in BUTTON_VIEWS
    ]
    return [{"type": ACTION_ROW, "components": [select]}, {"type": ACTION_ROW, "components": buttons}]
