"""The controls under a ``/vram`` answer: switch the optimizer, compare every method, show the details.

The controls are stateless. Each one's ``custom_id`` carries a view name and the whole request
(:mod:`bot.present.custom_ids`), or, for a request too long for it, says to read the request from the
command line at the start of the answer the control belongs to. discord.py's ``DynamicItem`` rebuilds
the control from the custom_id, so a control keeps working after a restart and on any shard or process.

Who sees the result: the user who ran the command (or whose control it is) gets the message updated
in place; anyone else in the channel gets the new view as an ephemeral reply of their own, in their
own language. A public answer is part of the conversation, so it should not change under the people
who are reading it because a third person clicked; an ephemeral copy lets everyone explore freely.

An ephemeral answer (``private``, or such a copy) carries Share, which posts the same view to the
channel as a new public message, attributed to the person who shared it by name.
"""

from __future__ import annotations

import asyncio
import io
from typing import Any, cast

import discord
from discord.ext import commands

from bot.estimate.hub import HubFailure
from bot.estimate.request import EstimateRequest
from bot.present.command_line import UnreadableCommand
from bot.present.custom_ids import (
    ESTIMATE,
    EXPLORE_TEMPLATE,
    READABLE_TEMPLATES,
    SELECT_TEMPLATE,
    SELECT_VIEW,
    SHARE_TEMPLATE,
    UNREADABLE_TEMPLATE,
    UnreadableState,
    control_id,
    share_id,
)
from bot.present.i18n import text
from bot.present.interactions import control_request, switch_optimizer, unresolved_repo
from bot.runtime.errors import answer_error
from bot.runtime.replies import ANSWERED, NO_PINGS, language_of
from bot.runtime.send import send_answer
from bot.runtime.warm_up import warm_up_module

# The estimator and the renderers (and all they import): an answer's work, which the bot's start
# leaves out (benchmarks/README.md, the cold start). send_view imports them where first needed, and
# warm_up_answers ahead of that, once the bot is READY.
ANSWER_MODULE = "bot.present.views"


async def warm_up_answers() -> None:
    """Import the answer's modules ahead of the first answer (bot.runtime.warm_up)."""
    await warm_up_module(ANSWER_MODULE)


async def send_view(
    interaction: discord.Interaction,
    request: EstimateRequest,
    view_name: str,
    *,
    ephemeral: bool,
    edit: bool,
    shared_by: str | None = None,
) -> None:
    """Answer with ``view_name`` of ``request`` and its controls, in the user's language.

    An ephemeral answer gets Share (an edited one stays what it was); one posted by Share says who
    shared it (``shared_by``, a name, never a mention). Compare attaches its chart as a file.
    """
    from bot.present.views import render_message  # ANSWER_MODULE, not imported at start

    language = language_of(interaction)
    shareable = _is_ephemeral(interaction.message) if edit else ephemeral
    message = render_message(request, view_name, language, shareable=shareable)
    files: list[discord.File] = []
    if message.attachment is not None:
        # Pillow is imported here, on the first Compare, so the default answer never loads it.
        from bot.present.chart import compare_png

        files.append(discord.File(io.BytesIO(compare_png(request, language)), filename=message.attachment))
    content = None if shared_by is None else text(language, "share.by", name=shared_by)
    deferred = not edit and interaction.response.is_done()  # the Hub took long: a "thinking" reply
    await send_answer(
        interaction,
        message.embed,
        message.components,
        edit=edit,
        ephemeral=ephemeral,
        content=content,
        files=files,
        allowed_mentions=NO_PINGS,
    )
    if deferred:
        interaction.extras[ANSWERED] = True  # an error after this must not remove the answer


def _is_ephemeral(message: discord.Message | None) -> bool:
    return message is not None and message.flags.ephemeral


def can_post_publicly(interaction: discord.Interaction) -> bool:
    """Whether Discord lets the app post a public message where the click happened.

    Not without Send Messages in the channel (``app_permissions``, which Discord computes for the app
    there), nor in a server where the app is only installed to the user's account and is no member:
    there Discord may turn the message ephemeral or refuse it, so Share says so instead of trying.
    """
    if not interaction.app_permissions.send_messages:
        return False
    return interaction.guild_id is None or interaction.is_guild_integration()


def shared_name(user: discord.User | discord.Member) -> str:
    """The sharer's display name as plain text: no mention, and no markdown that could change the
    line (the message pings nobody in any case)."""
    return discord.utils.escape_mentions(discord.utils.escape_markdown(user.display_name))


def _request_in(interaction: discord.Interaction, state: str) -> EstimateRequest:
    """The request a control carries, or, for one too long to carry, the one its answer shows."""
    message = interaction.message
    shown = message.embeds[0].description if message is not None and message.embeds else None
    return control_request(state, shown)


def started_by(interaction: discord.Interaction) -> bool:
    """Whether the user who clicked is the one whose interaction produced the message."""
    message = interaction.message
    metadata = message.interaction_metadata if message is not None else None
    return metadata is not None and metadata.user.id == interaction.user.id


# A click has Discord's 3 s too, and no "thinking" state that keeps an answer in place: a Hub lookup
# that takes longer gets the "unavailable" answer (the lookup goes on, so the next click is served).
CONTROL_LOOKUP_WAIT_S = 2.0


async def _request_looking_up(interaction: discord.Interaction, state: str) -> EstimateRequest:
    """:func:`_request_in`, looking the request's Hub repo up first when this process has not."""
    try:
        return _request_in(interaction, state)
    except (UnreadableState, UnreadableCommand) as exc:
        repo = unresolved_repo(exc)
        cog = cast(commands.Bot, interaction.client).get_cog("VramCog")
        hub = getattr(cog, "hub", None)
        if repo is None or hub is None:
            raise
        try:
            await asyncio.wait_for(hub.resolve(repo), CONTROL_LOOKUP_WAIT_S)
        except TimeoutError:
            raise HubFailure("unavailable", repo) from None
        return _request_in(interaction, state)


async def answer_control(
    interaction: discord.Interaction, view_name: str, state: str, optimizer: str | None = None
) -> None:
    """Answer a click; whatever goes wrong goes to the one error handler (never the host's tree)."""
    from bot.present.views import RENDERERS

    try:
        if view_name not in RENDERERS:
            raise UnreadableState(f"unknown view {view_name[:20]!r}")
        request = await _request_looking_up(interaction, state)
        if optimizer is not None:
            request = switch_optimizer(request, optimizer)
        edit = started_by(interaction)
        await send_view(interaction, request, view_name, ephemeral=not edit, edit=edit)
    except Exception as exc:
        await answer_error(interaction, exc)


async def share(interaction: discord.Interaction, view_name: str, state: str) -> None:
    """Post ``view_name`` of the request publicly in the channel, or say why it cannot be."""
    from bot.present.views import RENDERERS

    try:
        if view_name not in RENDERERS:
            raise UnreadableState(f"unknown view {view_name[:20]!r}")
        request = await _request_looking_up(interaction, state)
        if not can_post_publicly(interaction):
            await interaction.response.send_message(
                text(language_of(interaction), "share.not_allowed"), ephemeral=True, allowed_mentions=NO_PINGS
            )
            return
        await send_view(
            interaction,
            request,
            view_name,
            ephemeral=False,
            edit=False,
            shared_by=shared_name(interaction.user),
        )
    except Exception as exc:
        await answer_error(interaction, exc)


# discord.py hands a click to every dynamic item whose template matches its whole custom_id; the
# templates (bot.present.custom_ids) are written so that no two match one custom_id. UnreadableControl
# answers ours that none of the three reads.


class ExploreButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=EXPLORE_TEMPLATE):
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


class OptimizerSelect(discord.ui.DynamicItem[discord.ui.Select[Any]], template=SELECT_TEMPLATE):
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


class ShareButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=SHARE_TEMPLATE):
    """A click on Share: posts the view publicly (see :func:`share`)."""

    def __init__(self, view: str, state: str) -> None:
        super().__init__(discord.ui.Button(custom_id=share_id(view, state)))
        self.view_name = view
        self.state = state

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: Any, /
    ) -> ShareButton:
        return cls(match["view"], match["state"])

    async def callback(self, interaction: discord.Interaction) -> None:
        await share(interaction, self.view_name, self.state)


class UnreadableControl(discord.ui.DynamicItem[discord.ui.Item[Any]], template=UNREADABLE_TEMPLATE):
    """A click on a ``vram`` control no other control reads (tampered with): answered "nothing
    changed", where discord.py would drop it unanswered."""

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: Any, /
    ) -> UnreadableControl:
        return cls(item)  # the clicked component as it is

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        # discord.py runs every dynamic item whose template matches: should a template above ever
        # grow to read this custom_id too, that control answers it, not this one as well.
        return not any(template.fullmatch(self.custom_id) for template in READABLE_TEMPLATES)

    async def callback(self, interaction: discord.Interaction) -> None:
        await answer_error(interaction, UnreadableState(f"no control reads {self.custom_id[:20]!r}"))


DYNAMIC_ITEMS = (ExploreButton, OptimizerSelect, ShareButton, UnreadableControl)
