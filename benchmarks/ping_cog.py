"""No-op commands for the benchmark, loaded only by ``benchmarks/interactions.py`` (``extra_extensions``).

- ``/ping`` answers a plain "Pong.": the cheapest answer discord.py can give.
- ``/ping_embed`` answers with an embed and controls built once at load, the same size as a
  ``/vram`` answer, without computing anything: the part of ``/vram``'s cost that is discord.py
  sending (and parsing back) an answer of that size, rather than our estimating and rendering.
"""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.estimate.core import estimate
from bot.estimate.request import parse_request
from bot.present.answer import render_embed
from bot.present.controls import render_controls
from bot.present.custom_ids import ESTIMATE
from bot.present.i18n import Language
from bot.runtime.controls import ControlsView
from bot.runtime.replies import NO_PINGS

_REQUEST = parse_request(params=7.0, optimizer="adam8bit", activations=20.0)
_EMBED = render_embed(estimate(_REQUEST))
_CONTROLS = render_controls(_REQUEST, ESTIMATE, Language.EN)


class PingCog(commands.Cog):
    @app_commands.command(name="ping", description="Answer with a plain message (benchmark baseline)")
    async def ping(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message("Pong.", allowed_mentions=NO_PINGS)

    @app_commands.command(name="ping_embed", description="A prebuilt /vram-sized answer (benchmark baseline)")
    async def ping_embed(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message(
            embed=discord.Embed.from_dict(_EMBED),
            view=ControlsView(_CONTROLS),
            allowed_mentions=NO_PINGS,
        )


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(PingCog())
