"""The views of an estimate, by the name their controls carry: the answer, Compare and Details."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.estimate.core import Estimate
from bot.present.answer import render_embed
from bot.present.compare import render_compare
from bot.present.custom_ids import COMPARE, DETAILS, ESTIMATE
from bot.present.details import render_details
from bot.present.i18n import Language

Renderer = Callable[[Estimate, Language], dict[str, Any]]

RENDERERS: dict[str, Renderer] = {
    ESTIMATE: render_embed,
    COMPARE: render_compare,
    DETAILS: render_details,
}
