"""Small Discord reply helpers shared by the cog and the command tree: ephemeral, never pinging."""

from __future__ import annotations

import logging

import discord

log = logging.getLogger(__name__)

# Replies never ping anyone, whatever text ends up in them.
NO_PINGS = discord.AllowedMentions.none()

APOLOGY = "Sorry, something went wrong while estimating. The error was logged; please try again."


async def reply_ephemeral(interaction: discord.Interaction, text: str) -> None:
    """Answer only the user who asked, whether or not the interaction was answered already."""
    try:
        if interaction.response.is_done():
            await interaction.followup.send(text, ephemeral=True, allowed_mentions=NO_PINGS)
        else:
            await interaction.response.send_message(text, ephemeral=True, allowed_mentions=NO_PINGS)
    except discord.HTTPException:
        log.warning("Could not send the error reply for interaction %s", interaction.id, exc_info=True)


async def reply_problems(interaction: discord.Interaction, problems: list[str]) -> None:
    await reply_ephemeral(interaction, "That input doesn't work:\n" + "\n".join(f"• {p}" for p in problems))
