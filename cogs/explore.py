"""The controls under a ``/vram`` answer: switch the optimizer, compare every method, show the details.

The controls are stateless. Each one's ``custom_id`` carries the whole request (:mod:`bot.present.custom_ids`)
and a view name, and discord.py's ``DynamicItem`` rebuilds the control from it, so a control keeps
working after a restart and on any shard or process.

Who sees the result: the user who ran the command (or whose control it is) gets the message updated
in place; anyone else in the channel gets the new view as an ephemeral reply of their own, in their
own language. A public answer is part of the conversation, so it should not change under the people
who are reading it because a third person clicked; an ephemeral copy lets everyone explore freely.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import discord

from bot.estimate.core import Estimate, EstimateRequest, Optimizer, estimate
from bot.present.compare import render_compare
from bot.present.controls import render_controls
from bot.present.custom_ids import (
    COMPARE,
    DETAILS,
    ESTIMATE,
    PREFIX,
    SELECT_VIEW,
    UnreadableState,
    control_id,
    unpack,
)
from bot.present.details import render_details
from bot.present.i18n import Language, text
from bot.present.render import render_embed
from bot.runtime.replies import NO_PINGS, apologize, is_expired, language_of, reply_ephemeral, warn_expired

log = logging.getLogger(__name__)

RENDERERS: dict[str, Callable[[Estimate, Language], dict[str, Any]]] = {
    ESTIMATE: render_embed,
    COMPARE: render_compare,
    DETAILS: render_details,
}


# The controls are drawn as JSON by bot.present.controls; these classes only receive the clicks.
# discord.py hands a factory whichever component has the matching custom_id, so the button's template
# must not match the select's ("vram:opt:...").
class ExploreButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=rf"{PREFIX}:(?P<view>(?!{SELECT_VIEW}:)[^:]*):(?P<state>.*)",
):
    """A click on "Estimate", "Compare" or "Details" for the request packed in ``state``."""

    def __init__(self, view: str, state: str) -> None:
        super().__init__(discord.ui.Button(custom_id=control_id(view, state)))
        self.view_name = view
        self.state = state

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: Any, /
    ) -> ExploreButton:
        # Never raise here: discord.py would only log it and the user would get no answer.
        # The state is checked when the button is used, where a bad one gets an ephemeral reply.
        return cls(match["view"], match["state"])

    async def callback(self, interaction: discord.Interaction) -> None:
        await answer(interaction, self.view_name, self.state)


class OptimizerSelect(
    discord.ui.DynamicItem[discord.ui.Select[Any]], template=rf"{PREFIX}:{SELECT_VIEW}:(?P<state>.*)"
):
    """A pick in the optimizer select: answers with the estimate for that optimizer."""

    def __init__(self, state: str) -> None:
        super().__init__(discord.ui.Select(custom_id=control_id(SELECT_VIEW, state)))
        self.state = state

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: Any, /
    ) -> OptimizerSelect:
        return cls(match["state"])

    async def callback(self, interaction: discord.Interaction) -> None:
        values = self.item.values  # discord.py fills them in from the interaction
        await answer(interaction, ESTIMATE, self.state, optimizer=values[0] if len(values) == 1 else "")


class ControlsView(discord.ui.View):
    """Sends prebuilt component JSON (:mod:`bot.present.controls`) as a message's controls.

    It holds no items and is stopped at once: clicks reach the ``DynamicItem`` classes above through
    their custom_id, so this view never listens, and discord.py keeps nothing of it per message.
    """

    def __init__(self, components: list[dict[str, Any]]) -> None:
        super().__init__(timeout=None)
        self._components = components
        self.stop()

    def to_components(self) -> list[dict[str, Any]]:
        return self._components


def explore_view(request: EstimateRequest, current: str, language: Language) -> discord.ui.View | None:
    """The select and the three buttons for ``request``; None if the request cannot be packed."""
    components = render_controls(request, current, language)
    return ControlsView(components) if components is not None else None


def _switch_optimizer(request: EstimateRequest, choice: str) -> EstimateRequest:
    """The same request with another optimizer; a custom B gives way to the optimizer picked."""
    try:
        optimizer = Optimizer(choice)
    except ValueError:
        raise UnreadableState("not an optimizer") from None
    return request.model_copy(update={"optimizer": optimizer, "bytes_per_param": None})


def started_by(interaction: discord.Interaction) -> bool:
    """Whether the user who clicked is the one whose interaction produced the message."""
    message = interaction.message
    metadata = message.interaction_metadata if message is not None else None
    return metadata is not None and metadata.user.id == interaction.user.id


async def answer(
    interaction: discord.Interaction, view_name: str, state: str, optimizer: str | None = None
) -> None:
    language = language_of(interaction)
    try:
        if view_name not in RENDERERS:
            raise UnreadableState(f"unknown view {view_name[:20]!r}")
        request = unpack(state)
        if optimizer is not None:
            request = _switch_optimizer(request, optimizer)
    except UnreadableState as exc:
        log.info("Refused component %s of interaction %s: %s", view_name[:20], interaction.id, exc)
        await reply_ephemeral(interaction, text(language, "component.bad_custom_id"))
        return
    try:
        embed = discord.Embed.from_dict(RENDERERS[view_name](estimate(request), language))
        controls = explore_view(request, view_name, language) or discord.utils.MISSING
        if started_by(interaction):
            await interaction.response.edit_message(embed=embed, view=controls, allowed_mentions=NO_PINGS)
        else:
            await interaction.response.send_message(
                embed=embed, view=controls, ephemeral=True, allowed_mentions=NO_PINGS
            )
    except Exception as exc:
        if is_expired(exc):
            warn_expired(interaction)
            return
        log.exception("Component %s of interaction %s failed", view_name, interaction.id)
        await apologize(interaction)


DYNAMIC_ITEMS = (ExploreButton, OptimizerSelect)
