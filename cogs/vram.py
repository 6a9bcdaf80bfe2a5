"""The ``/vram`` slash command: convert the options, call the estimator, send the embed.

Load it into any ``commands.Bot`` with ``await bot.load_extension("cogs.vram")``.
"""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.estimate.core import (
    DEFAULT_LORA_RANK,
    OPTION_LIMITS,
    InvalidRequest,
    Limit,
    Optimizer,
    Problem,
    estimate,
    parse_request,
)
from bot.estimate.hardware import Gpu
from bot.estimate.models import search_presets
from bot.present.custom_ids import ESTIMATE
from bot.present.i18n import text
from bot.present.render import format_count, render_embed
from bot.runtime.replies import NO_PINGS, apologize, is_expired, language_of, reply_problems, warn_expired
from bot.runtime.translator import CatalogueTranslator, gpu_choice, localized, optimizer_choice
from cogs.explore import DYNAMIC_ITEMS, explore_view

log = logging.getLogger(__name__)


class NumberOption(app_commands.Transformer):
    """A number (or whole-number) option whose range Discord's client shows, and the estimator enforces.

    Discord's ``min_value`` is inclusive, so an exclusive lower bound registers as inclusive and the
    estimator gives the clear answer for the edge. The transform does not re-check the range itself:
    one place (the estimator) owns the rules and their wording.
    """

    def __init__(self, limit: Limit) -> None:
        self._limit = limit

    @property
    def type(self) -> discord.AppCommandOptionType:
        if self._limit.integer:
            return discord.AppCommandOptionType.integer
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
GpusOption = app_commands.Transform[int, NumberOption(OPTION_LIMITS["gpus"])]
LoraRankOption = app_commands.Transform[int, NumberOption(OPTION_LIMITS["lora_rank"])]
BatchSizeOption = app_commands.Transform[int, NumberOption(OPTION_LIMITS["batch_size"])]
SeqLenOption = app_commands.Transform[int, NumberOption(OPTION_LIMITS["seq_len"])]

OPTIMIZER_CHOICES = [optimizer_choice(o) for o in Optimizer]
GPU_CHOICES = [gpu_choice(g) for g in Gpu]
OPTION_NAMES = (
    "params",
    "model",
    "optimizer",
    "activations",
    "bytes_per_param",
    "gpu",
    "gpus",
    "lora_rank",
    "batch_size",
    "seq_len",
    "checkpointing",
    "flash_attention",
    "private",
)


class VramCog(commands.Cog):
    """Answers ``/vram`` with the memory needed to fully fine-tune a model."""

    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    @app_commands.command(name="vram", description=localized("command.description"))
    @app_commands.describe(**{name: localized(f"option.{name}") for name in OPTION_NAMES})
    # Servers, DMs with the bot and, installed to a user's account, any channel the user is in.
    @app_commands.allowed_installs(guilds=True, users=True)
    @app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)
    @app_commands.choices(optimizer=OPTIMIZER_CHOICES, gpu=GPU_CHOICES)
    async def vram(
        self,
        interaction: discord.Interaction,
        params: ParamsOption | None = None,
        model: str | None = None,
        optimizer: str = Optimizer.ADAM.value,
        activations: ActivationsOption | None = None,
        bytes_per_param: BytesPerParamOption | None = None,
        gpu: str | None = None,
        gpus: GpusOption = 1,
        lora_rank: LoraRankOption = DEFAULT_LORA_RANK,
        batch_size: BatchSizeOption | None = None,
        seq_len: SeqLenOption | None = None,
        checkpointing: bool = False,
        flash_attention: bool = True,
        private: bool = False,
    ) -> None:
        try:
            request = parse_request(
                params=params,
                model=model,
                optimizer=optimizer,
                activations=activations,
                bytes_per_param=bytes_per_param,
                gpu=gpu,
                gpus=gpus,
                lora_rank=lora_rank,
                batch_size=batch_size,
                seq_len=seq_len,
                checkpointing=checkpointing,
                flash_attention=flash_attention,
            )
        except InvalidRequest as exc:
            await reply_problems(interaction, exc.problems)
            return
        language = language_of(interaction)
        embed = discord.Embed.from_dict(render_embed(estimate(request), language))
        await interaction.response.send_message(
            embed=embed,
            view=explore_view(request, ESTIMATE, language) or discord.utils.MISSING,
            ephemeral=private,
            allowed_mentions=NO_PINGS,
        )

    @vram.autocomplete("model")
    async def _model_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        language = language_of(interaction)
        return [
            app_commands.Choice(
                name=text(
                    language, "choice.model", name=m.name, count=format_count(m.parameter_count, language)
                ),
                value=m.key,
            )
            for m in search_presets(current, limit=25)
        ]

    async def cog_app_command_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        # Having this handler stops the tree's default handler from logging a second time.
        if is_expired(error):
            warn_expired(interaction)  # too late to answer at all, so no apology either
            return
        if isinstance(error, app_commands.TransformerError):
            await reply_problems(interaction, [Problem("invalid", None, error.value)])
            return
        log.error("Command /%s failed", getattr(interaction.command, "name", "?"), exc_info=error)
        await apologize(interaction)


async def setup(bot: commands.Bot) -> None:
    # The answers' controls are rebuilt from their custom_id, also for messages sent before a restart.
    bot.add_dynamic_items(*DYNAMIC_ITEMS)
    # Localizations need a translator on the tree; keep one the host bot has set up itself.
    if bot.tree.translator is None:
        await bot.tree.set_translator(CatalogueTranslator())
    await bot.add_cog(VramCog(bot))


async def teardown(bot: commands.Bot) -> None:
    bot.remove_dynamic_items(*DYNAMIC_ITEMS)
