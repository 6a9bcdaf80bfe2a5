"""The controls under an answer as Discord's component JSON: an optimizer select and three buttons.

Plain data, like the embeds: ``cogs/explore.py`` sends it and handles the clicks. Building the JSON
here rather than through discord.py's ``ui`` objects keeps an answer cheap to send; the clicks are
still parsed by discord.py's ``DynamicItem`` from the same custom_ids.
"""

from __future__ import annotations

from typing import Any

from bot.estimate.core import EstimateRequest, Optimizer
from bot.present.custom_ids import BUTTON_VIEWS, COMPARE, SELECT_VIEW, STATE_ROOM, control_id, pack
from bot.present.i18n import Language, number, text
from bot.present.render import optimizer_name

ACTION_ROW, BUTTON, STRING_SELECT = 1, 2, 3
PRIMARY, SECONDARY = 1, 2  # button styles
_LABELS = {"est": "component.estimate", "cmp": "component.compare", "det": "component.details"}


def render_controls(
    request: EstimateRequest, current: str, language: Language
) -> list[dict[str, Any]] | None:
    """Two action rows for ``request`` shown as view ``current``; None if it does not fit a custom_id."""
    state = pack(request, STATE_ROOM)
    if state is None:
        return None
    chosen = request.optimizer if request.bytes_per_param is None else None
    select = {
        "type": STRING_SELECT,
        "custom_id": control_id(SELECT_VIEW, state),
        "placeholder": text(language, "component.optimizer_placeholder"),
        "min_values": 1,
        "max_values": 1,
        "options": [
            {
                "label": optimizer_name(optimizer, language),
                "value": optimizer.value,
                "description": text(
                    language,
                    "component.optimizer_option",
                    bytes=number(optimizer.bytes_per_param, "g", language),
                ),
                "default": optimizer is chosen,
            }
            for optimizer in Optimizer
        ],
    }
    buttons = [
        {
            "type": BUTTON,
            "custom_id": control_id(view, state),
            "label": text(language, _LABELS[view]),
            "style": PRIMARY if view == COMPARE else SECONDARY,
            "disabled": view == current,
        }
        for view in BUTTON_VIEWS
    ]
    return [{"type": ACTION_ROW, "components": [select]}, {"type": ACTION_ROW, "components": buttons}]
