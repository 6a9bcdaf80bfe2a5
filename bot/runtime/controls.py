"""The controls under a ``/vram`` answer: switch the optimizer, compare every method, show the details.

The controls are stateless. Each one's ``custom_id`` carries a view name and the whole request
(:mod:`bot.present.custom_ids`), or, for a request too long for it, says to read the request from the
command line at the start of the answer the control belongs to. discord.py's ``DynamicItem`` rebuilds
the control from the custom_id, so a control keeps working after a restart and on any shard or process.

Who sees the result: the user who ran the command (or whose control it is) gets the message updated
in place; anyone else in the channel gets the new view as an ephemeral reply of their own, in their
own language. A public answer is part of the conversation, so it should not change under the people
who are reading it because a third person clicked; an ephemeral copy lets everyone explore freely.
"""

from __future__ import annotations

from typing import Any, cast

import discord
from discord import app_commands
from discord.ext import commands

from bot.estimate.core import estimate
from bot.estimate.optimizers import Optimizer
from bot.estimate.request import EstimateRequest
from bot.present.command_line import parse_command_line
from bot.present.controls import render_controls
from bot.present.custom_ids import (
    ESTIMATE,
    FROM_MESSAGE,
    PREFIX,
    SELECT_VIEW,
    UnreadableState,
    control_id,
    unpack,
)
from bot.present.views import RENDERERS
from bot.runtime.replies import language_of
from bot.runtime.send import send_answer
from bot.runtime.tree import ControlError


class ControlsView(discord.ui.View):
    """Sends prebuilt component JSON (:mod:`bot.present.controls`) as a message's controls.

    It holds no items and is stopped at once: clicks reach the ``DynamicItem`` classes below through
    their custom_id, so this view never listens, and discord.py keeps nothing of it per message.
    """

    def __init__(self, components: list[dict[str, Any]]) -> None:
        super().__init__(timeout=None)
        self._components = components
        self.stop()

    def to_components(self) -> list[dict[str, Any]]:
        return self._components


async def send_view(
    interaction: discord.Interaction, request: EstimateRequest, view_name: str, *, ephemeral: bool, edit: bool
) -> None:
    """Answer with ``view_name`` of ``request`` and its controls, in the user's language."""
    language = language_of(interaction)
    # The rendered JSON goes out as it is, with no discord.Embed / View round trip (bot.runtime.send).
    await send_answer(
        interaction,
        RENDERERS[view_name](estimate(request), language),
        render_controls(request, view_name, language),
        ephemeral=ephemeral,
        edit=edit,
    )


def _request_in(interaction: discord.Interaction, state: str) -> EstimateRequest:
    """The request a control carries, or, for one too long to carry, the one its answer shows."""
    if state != FROM_MESSAGE:
        return unpack(state)
    message = interaction.message
    description = message.embeds[0].description if message is not None and message.embeds else None
    if not description:
        raise UnreadableState("the message shows no command line")
    return parse_command_line(description.split("\n", 1)[0])


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


async def answer_control(
    interaction: discord.Interaction, view_name: str, state: str, optimizer: str | None = None
) -> None:
    """Answer a click; whatever goes wrong goes to the command tree's one error handler."""
    try:
        if view_name not in RENDERERS:
            raise UnreadableState(f"unknown view {view_name[:20]!r}")
        request = _request_in(interaction, state)
        if optimizer is not None:
            request = _switch_optimizer(request, optimizer)
        edit = started_by(interaction)
        await send_view(interaction, request, view_name, ephemeral=not edit, edit=edit)
    except Exception as exc:
        # The extension loads only into a commands.Bot, so the client has a command tree.
        tree: app_commands.CommandTree[Any] = cast(commands.Bot, interaction.client).tree
        await tree.on_error(interaction, ControlError(exc))


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
        await answer_control(interaction, self.view_name, self.state)


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
        await answer_control(
            interaction, ESTIMATE, self.state, optimizer=values[0] if len(values) == 1 else ""
        )


DYNAMIC_ITEMS = (ExploreButton, OptimizerSelect)
