"""The bot's command tree: one place that turns malformed payloads and stray errors into replies.

discord.py converts option values while it builds the namespace, before any command or cog error
handler runs, so a payload whose value has the wrong JSON type would otherwise end the handling task
with no answer. The check below runs first (``interaction_check``) and answers it instead.
"""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord import app_commands

from bot.estimate.core import Problem
from bot.runtime.replies import apologize, is_expired, reply_problems, warn_expired

log = logging.getLogger(__name__)

_SUB_COMMAND, _SUB_COMMAND_GROUP = 1, 2
_STRING, _INTEGER, _BOOLEAN, _NUMBER = 3, 4, 5, 10
_SNOWFLAKE_TYPES = {6, 7, 8, 9, 11}  # user, channel, role, mentionable, attachment


def _value_has_its_type(option_type: int, value: Any) -> bool:
    if option_type == _STRING:
        return isinstance(value, str)
    if option_type == _BOOLEAN:
        return isinstance(value, bool)
    if option_type == _INTEGER:
        return isinstance(value, int) and not isinstance(value, bool)
    if option_type == _NUMBER:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if option_type in _SNOWFLAKE_TYPES:
        return isinstance(value, (str, int)) and str(value).isdigit()
    return True  # a type this code does not know: leave it to discord.py


def malformed_options(options: list[dict[str, Any]]) -> list[Problem]:
    """Options whose JSON value does not match the option type they claim (Discord never sends such)."""
    problems: list[Problem] = []
    for option in options:
        option_type = option.get("type")
        name = str(option.get("name", "?"))[:100]
        if option_type in (_SUB_COMMAND, _SUB_COMMAND_GROUP):
            problems += malformed_options(option.get("options", []))
        elif (
            not isinstance(option_type, int)
            or isinstance(option_type, bool)
            or ("value" in option and not _value_has_its_type(option_type, option["value"]))
        ):
            problems.append(Problem("wrong_type", name))
    return problems


class VramCommandTree(app_commands.CommandTree[discord.Client]):
    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        if interaction.type is not discord.InteractionType.application_command:
            return True
        data: Any = interaction.data or {}
        options = data.get("options", [])
        if isinstance(options, list):
            problems = malformed_options(options)
        else:
            problems = [Problem("wrong_type", "options")]
        if problems:
            log.info("Refused a malformed interaction %s: %s", interaction.id, problems)
            await reply_problems(interaction, problems)
            return False
        return True

    async def on_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError, /
    ) -> None:
        # Commands with their own handler (like the /vram cog) have answered already.
        command = interaction.command
        if command is not None and command._has_any_error_handlers():
            return
        if is_expired(error):
            warn_expired(interaction)
            return
        log.error("Command %s failed", getattr(command, "name", "?"), exc_info=error)
        await apologize(interaction)
