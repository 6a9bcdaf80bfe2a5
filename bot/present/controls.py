"""The controls under an answer as Discord's component JSON: an optimizer select and three buttons,
and on an answer only its asker sees, a fourth that shares it with the channel.

Plain data, like the embeds: the runtime turns it into discord.py's ``ui`` objects to send it
(``bot.runtime.send``), and discord.py's ``DynamicItem`` classes handle the clicks from the same
custom_ids.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from bot.estimate.optimizers import Optimizer, Precision, on_card_bytes_per_param_for
from bot.estimate.request import EstimateRequest
from bot.estimate.weight_formats import BYTES_PER_WEIGHT, WeightFormat
from bot.present.custom_ids import (
    BUTTON_VIEWS,
    COMPARE,
    DETAILS,
    ESTIMATE,
    ID_PREFIXES,
    SELECT_VIEW,
    SHARE,
    pack,
    share_id,
)
from bot.present.i18n import Language
from bot.present.phrases import bytes_text
from bot.present.words import Words, optimizer_name

ACTION_ROW, BUTTON, STRING_SELECT = 1, 2, 3
PRIMARY, SECONDARY, SUCCESS = 1, 2, 3  # button styles
_LABEL_KEYS = {ESTIMATE: "component.estimate", COMPARE: "component.compare", DETAILS: "component.details"}


@cache
def _optimizer_options(
    language: Language, chosen: Optimizer | None, precision: Precision
) -> list[dict[str, Any]]:
    """The select's options depend only on the language, the optimizer chosen and the training setup,
    so they are built once for each (half of this module's CPU per answer otherwise); callers get
    copies. Each optimizer is named in the request's setup: "Adam, pure bf16", ~8 B/param."""
    w = Words(language)
    return [
        {
            "label": optimizer_name(optimizer, w, precision),
            "value": optimizer.value,
            "description": w(
                "component.optimizer_option",
                bytes=bytes_text(on_card_bytes_per_param_for(optimizer, precision), w),
            ),
            "default": optimizer is chosen,
        }
        for optimizer in Optimizer
    ]


@cache
def _weight_options(language: Language, chosen: WeightFormat) -> list[dict[str, Any]]:
    """A serving answer's select: the weights' formats, each with its bytes per weight."""
    w = Words(language)
    return [
        {
            "label": weights.value,
            "value": weights.value,
            "description": w("serve.select_option", bytes=w.num(BYTES_PER_WEIGHT[weights], ".3g"))
            if weights in BYTES_PER_WEIGHT
            else w("serve.weights_stored_option"),
            "default": weights is chosen,
        }
        for weights in WeightFormat
    ]


@cache
def _labels(language: Language) -> dict[str, str]:
    """The controls' words in ``language``, by view: the same for every answer."""
    w = Words(language)
    labels = {view: w(key) for view, key in _LABEL_KEYS.items()}
    return labels | {SELECT_VIEW: w("component.optimizer_placeholder"), SHARE: w("share.label")}


def render_controls(
    request: EstimateRequest, current: str, language: Language, *, shareable: bool = False
) -> list[dict[str, Any]]:
    """Two action rows for ``request`` shown as view ``current``; ``shareable`` (an ephemeral
    answer) adds Share, which posts the same view to the channel."""
    labels = _labels(language)
    state = pack(request)
    chosen = request.optimizer if request.bytes_per_param is None else None
    select = {
        "type": STRING_SELECT,
        "custom_id": ID_PREFIXES[SELECT_VIEW] + state,  # control_id(), inline: four per answer
        "placeholder": labels[SELECT_VIEW],
        "min_values": 1,
        "max_values": 1,
        "options": [dict(option) for option in _optimizer_options(language, chosen, request.precision)],
    }
    if request.serving:  # the same select switches the weights' precision
        select["placeholder"] = Words(language)("serve.select_placeholder")
        select["options"] = [dict(option) for option in _weight_options(language, request.weights)]
    buttons = [
        {
            "type": BUTTON,
            "custom_id": ID_PREFIXES[view] + state,
            "label": labels[view],
            "style": PRIMARY if view == COMPARE else SECONDARY,
            "disabled": view == current,
        }
        for view in BUTTON_VIEWS
    ]
    if shareable:
        # Green and last: it is the one button that acts on the channel rather than on this answer.
        buttons.append(
            {
                "type": BUTTON,
                "custom_id": share_id(current, state),
                "label": labels[SHARE],
                "style": SUCCESS,
            }
        )
    return [{"type": ACTION_ROW, "components": [select]}, {"type": ACTION_ROW, "components": buttons}]
