"""Small Discord reply helpers for the error handler and the controls.

Every reply here is ephemeral, in the asking user's language, and never pings anyone.
"""

from __future__ import annotations

import logging

import discord

from bot.estimate.request import Problem
from bot.present.i18n import Language, language_for, text
from bot.present.problems import problems_message

log = logging.getLogger(__name__)

# Replies never ping anyone, whatever text ends up in them.
NO_PINGS = discord.AllowedMentions.none()

# Discord's error code when an interaction is no longer known: its 3 s window to answer has passed
# (or it was answered already). Nothing can be sent for it any more, so it is worth one warning.
UNKNOWN_INTERACTION = 10062

# Set in an interaction's extras once a deferred ("thinking") reply was filled in with the answer.
ANSWERED = "vram_answered"


def is_expired(error: BaseException) -> bool:
    """Whether ``error`` is Discord's "unknown interaction"."""
    return isinstance(error, discord.NotFound) and error.code == UNKNOWN_INTERACTION


def warn_expired(interaction: discord.Interaction) -> None:
    log.warning(
        "Interaction %s expired before the answer reached Discord (10062 unknown interaction); skipped",
        interaction.id,
    )


def language_of(interaction: discord.Interaction) -> Language:
    """The language of the user who interacted (their Discord client's locale)."""
    return language_for(interaction.locale)


async def reply_ephemeral(interaction: discord.Interaction, message: str) -> None:
    """Answer only the user who asked, whether or not the interaction was answered already."""
    try:
        thinking = interaction.response.type is discord.InteractionResponseType.deferred_channel_message
        if thinking and not interaction.extras.get(ANSWERED):
            # A "thinking" reply (a Hub lookup) is public when the answer was to be: the first
            # follow-up would replace it publicly, so it goes and the problem comes ephemerally.
            await interaction.delete_original_response()
            await interaction.followup.send(message, ephemeral=True, allowed_mentions=NO_PINGS)
        elif interaction.response.is_done():
            await interaction.followup.send(message, ephemeral=True, allowed_mentions=NO_PINGS)
        else:
            await interaction.response.send_message(message, ephemeral=True, allowed_mentions=NO_PINGS)
    except discord.HTTPException as exc:
        if is_expired(exc):
            warn_expired(interaction)
        else:
            log.warning("Could not send the error reply for interaction %s: %s", interaction.id, exc)


async def reply_problems(interaction: discord.Interaction, problems: list[Problem]) -> None:
    await reply_ephemeral(interaction, problems_message(problems, language_of(interaction)))


async def reply_bad_control(interaction: discord.Interaction) -> None:
    await reply_ephemeral(interaction, text(language_of(interaction), "component.bad_custom_id"))


async def apologize(interaction: discord.Interaction) -> None:
    """The answer to an unexpected error; the caller logs the traceback."""
    await reply_ephemeral(interaction, text(language_of(interaction), "reply.apology"))
