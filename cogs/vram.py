"""The ``/vram`` slash command: convert the options, call the estimator, send the embed.

Load it into any ``commands.Bot`` with ``await bot.load_extension("cogs.vram")``.
"""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.estimator import (
    DEFAULT_LORA_RANK,
    OPTION_LIMITS,
    InvalidRequest,
    Limit,
    Optimizer,
    estimate,
    parse_request,
)
from bot.hardware import Gpu
from bot.models import search_presets
from bot.render import format_count, optimizer_choice_name, render_embed
from bot.replies import APOLOGY, NO_PINGS, reply_ephemeral, reply_problems

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

OPTIMIZER_CHOICES = [app_commands.Choice(name=optimizer_choice_name(o), value=o.value) for o in Optimizer]
GPU_CHOICES = [app_commands.Choice(name=f"{g.value} · {g.display_name}", value=g.value) for g in Gpu]


class VramCog(commands.Cog):
    """Answers ``/vram`` with the memory needed to fully fine-tune a model."""

    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    @app_commands.command(name="vram", description="Estimate the GPU memory to fully fine-tune an LLM")
    @app_commands.describe(
        params="Model size in billions of parameters, e.g. 7 for a 7B model (or pick a model)",
        model="A model preset, e.g. Llama 3.1 8B, instead of params",
        optimizer="Optimizer, which sets the bytes per parameter (default: mixed-precision Adam, 16)",
        activations="Activation memory in GB, measured or estimated (default 0, or estimated with a model)",
        bytes_per_param="Custom bytes per parameter (0-64), overrides the optimizer's total",
        gpu="The GPU to measure against (default: H100 80 GB)",
        gpus="Number of GPUs for data parallelism and ZeRO, 1-4096 (default 1)",
        lora_rank="LoRA rank for the adapter count, 1-1024 (default 16; needs a model)",
        batch_size="Sequences per GPU, to estimate activations (needs a model; default 1)",
        seq_len="Sequence length in tokens, to estimate activations (needs a model; default 2048)",
        checkpointing="Estimate with full activation checkpointing (default: off)",
        flash_attention="Estimate with FlashAttention, no s² attention term (default: on)",
    )
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
        embed = discord.Embed.from_dict(render_embed(estimate(request)))
        await interaction.response.send_message(embed=embed, allowed_mentions=NO_PINGS)

    @vram.autocomplete("model")
    async def _model_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return [
            app_commands.Choice(name=f"{m.name} · {format_count(m.parameter_count)} params", value=m.key)
            for m in search_presets(current, limit=25)
        ]

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
