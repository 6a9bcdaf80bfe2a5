"""The ``/vram`` slash command: convert the options, call the estimator, send the embed.

Load it into any ``commands.Bot`` with ``await bot.load_extension("cogs.vram")``.
"""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.estimator import OPTION_LIMITS, InvalidRequest, Limit, Optimizer, estimate, parse_request
from bot.render import optimizer_choice_name, render_embed
from bot.replies import APOLOGY, NO_PINGS, reply_ephemeral, reply_problems

log = logging.getLogger(__name__)


class NumberOption(app_commands.Transformer):
    """A number option whose range Discord's client shows, and the estimator enforces.

    Discord's ``min_value`` is inclusive, so an exclusive lower bound registers as inclusive and the
    estimator gives the clear answer for the edge. The transform does not re-check the range itself:
    one place (the estimator) owns the rules and their wording.
    """

    def __init__(self, limit: Limit) -> None:
        self._limit = limit

    @property
    def type(self) -> discord.AppCommandOptionType:
        return discord.AppCommandOptionType.number

    @property
    def min_value(self) -> float:
        return self._limit.minimum

    @property
    def max_value(self) -> float:
        return self._limit.maximum

    async def transform(self, interaction: discord.Interaction, value: Any, /) -> Any:
        return value


ParamsOption = app_commands.Transform[float, NumberOption(OPTION_LIMITS["params"])]
ActivationsOption = app_commands.Transform[float, NumberOption(OPTION_LIMITS["activations"])]
BytesPerParamOption = app_commands.Transform[float, NumberOption(OPTION_LIMITS["bytes_per_param"])]

OPTIMIZER_CHOICES = [app_commands.Choice(name=optimizer_choice_name(o), value=o.value) for o in Optimizer]


class VramCog(commands.Cog):
    """Answers ``/vram`` with the memory needed to fully fine-tune a model."""

    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    @app_commands.command(name="vram", description="Estimate the GPU memory to fully fine-tune an LLM")
    @app_commands.describe(
        params="Model size in billions of parameters, e.g. 7 for a 7B model",
        optimizer="Optimizer, which sets the bytes per parameter (default: mixed-precision Adam, 16)",
        activations="Activation memory in GB, measured or estimated (default 0)",
        bytes_per_param="Custom bytes per parameter (0-64), overrides the optimizer's total",
    )
    @app_commands.choices(optimizer=OPTIMIZER_CHOICES)
    async def vram(
        self,
        interaction: discord.Interaction,
        params: ParamsOption,
        optimizer: str = Optimizer.ADAM.value,
        activations: ActivationsOption = 0.0,
        bytes_per_param: BytesPerParamOption | None = None,
    ) -> None:
        try:
            request = parse_request(
                params=params, optimizer=optimizer, activations=activations, bytes_per_param=bytes_per_param
            )
        except InvalidRequest as exc:
            await reply_problems(interaction, exc.problems)
            return
        embed = discord.Embed.from_dict(render_embed(estimate(request)))
        await interaction.response.send_message(embed=embed, allowed_mentions=NO_PINGS)

    async def cog_app_command_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        # Having this handler stops the tree's default handler from logging a second time.
        if isinstance(error, app_commands.TransformerError):
            await reply_problems(interaction, [f"`{error.value!r}` is not a valid value for this option"])
            return
        log.error("Command /%s failed", getattr(interaction.command, "name", "?"), exc_info=error)
        await reply_ephemeral(interaction, APOLOGY)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(VramCog(bot))
