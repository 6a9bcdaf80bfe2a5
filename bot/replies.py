"""Small Discord reply helpers shared by the cog, the components and the command tree.

Every reply here is ephemeral, in the asking user's language, and never pings anyone.
"""

from __future__ import annotations

import logging

import discord

from bot.estimator import Problem
from bot.i18n import Language, language_for, text
from bot.render import problems_message

log = logging.getLogger(__name__)

# Replies never ping anyone, whatever text ends up in them.
NO_PINGS = discord.AllowedMentions.none()


def language_of(interaction: discord.Interaction) -> Language:
    """The language of the user who interacted (their Discord client's locale)."""
    return language_for(interaction.locale)


async def reply_ephemeral(interaction: discord.Interaction, message: str) -> None:
    """Answer only the user who asked, whether or not the interaction was answered already."""
    try:
        if interaction.response.is_done():
            await interaction.followup.send(message, ephemeral=True, allowed_mentions=NO_PINGS)
        else:
            await interaction.response.send_message(message, ephemeral=True, allowed_mentions=NO_PINGS)
    except discord.HTTPException:
        log.warning("Could not send the error reply for interaction %s", interaction.id, exc_info=True)


async def reply_problems(interaction: discord.Interaction, problems: list[Problem]) -> None:
    await reply_ephemeral(interaction, problems_message(problems, language_of(interaction)))


async def apologize(interaction: discord.Interaction) -> None:
    """The answer to an unexpected error; the caller logs the traceback."""
    await reply_ephemeral(interaction, text(language_of(interaction), "reply.apology"))
