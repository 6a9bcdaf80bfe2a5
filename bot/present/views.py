"""The views of an estimate, by the name their controls carry: the answer, Compare and Details.

:func:`render_message` is the whole message a view is sent as (embed, controls, the name of the chart
it shows), shared by the runtime and the terminal preview so that both show the same thing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.estimate.core import Estimate, estimate
from bot.estimate.request import EstimateRequest
from bot.estimate.serving import ServingEstimate, serving_estimate
from bot.estimate.value_type import value_type
from bot.present.answer import render_embed
from bot.present.compare import CHART_NAME, render_compare
from bot.present.controls import render_controls
from bot.present.custom_ids import COMPARE, DETAILS, ESTIMATE
from bot.present.details import render_details
from bot.present.i18n import Language
from bot.present.serving import render_serving_compare, render_serving_details, render_serving_embed

Renderer = Callable[[Estimate, Language], dict[str, Any]]

RENDERERS: dict[str, Renderer] = {
    ESTIMATE: render_embed,
    COMPARE: render_compare,
    DETAILS: render_details,
}
# The same views of a serving request (task:serve), under the same names.
SERVING_RENDERERS: dict[str, Callable[[ServingEstimate, Language], dict[str, Any]]] = {
    ESTIMATE: render_serving_embed,
    COMPARE: render_serving_compare,
    DETAILS: render_serving_details,
}


@value_type
class Message:
    """One view as it is sent. The chart itself is drawn by :func:`bot.present.chart.compare_png`
    only where it is sent or written, so that building a message never loads the plotting library."""

    embed: dict[str, Any]
    components: list[dict[str, Any]]
    attachment: str | None  # the file name of the picture the embed shows, if any

    def to_json(self) -> dict[str, Any]:
        """The message as Discord's JSON, with its attachment named as the upload names it."""
        # allowed_mentions as the runtime sends every answer: it pings nobody.
        data: dict[str, Any] = {
            "embeds": [self.embed],
            "components": self.components,
            "allowed_mentions": {"parse": []},
        }
        if self.attachment is not None:
            data["attachments"] = [{"id": 0, "filename": self.attachment}]
        return data


def render_message(
    request: EstimateRequest, view_name: str, language: Language, *, shareable: bool = False
) -> Message:
    """``view_name`` of ``request`` with its controls; ``shareable`` adds the Share button."""
    components = render_controls(request, view_name, language, shareable=shareable)
    if request.serving:  # serving's Compare is its lines, with no chart
        return Message(SERVING_RENDERERS[view_name](serving_estimate(request), language), components, None)
    embed = RENDERERS[view_name](estimate(request), language)
    return Message(embed, components, CHART_NAME if view_name == COMPARE else None)
