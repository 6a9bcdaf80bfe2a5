"""The ``/vram`` slash command: its parameters come from the option table; it validates, estimates, answers.

Load it into any ``commands.Bot`` as the extension ``cogs.vram`` (or ``bot.runtime.cog``, the same).
Every error it raises, bad input included, goes to the command tree's one handler
(:func:`bot.runtime.tree.answer_error`).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import discord
from discord import app_commands
from discord.ext import commands

from bot.estimate.hub import is_repo_id
from bot.estimate.models import find_preset, search_presets
from bot.estimate.options import OptionSpec
from bot.estimate.request import PRIVATE, command_options, parse_request
from bot.hub_settings import HubSettings, hub_settings_from_env
from bot.present.custom_ids import ESTIMATE
from bot.present.hub_problems import rate_limited_note
from bot.present.i18n import text
from bot.present.words import format_count
from bot.runtime.controls import DYNAMIC_ITEMS, send_view
from bot.runtime.hub_client import HubClient, Resolved, warm_up
from bot.runtime.replies import NO_PINGS, language_of
from bot.runtime.translator import CatalogueTranslator, localized, localized_choice, localized_description
from bot.runtime.tree import VramCommandTree

log = logging.getLogger(__name__)

AUTOCOMPLETE_MAX = 25  # Discord shows at most 25 suggestions
# Discord wants the first answer within 3 s: a Hub lookup still running after this long gets a
# "thinking" reply first, leaving time for the defer itself to reach Discord.
DEFER_AFTER_S = 1.5
# Autocomplete has no defer: past this the suggestions are the presets only (the search keeps going
# and fills the cache for the next keystroke).
HUB_SUGGESTIONS_WAIT_S = 2.0
HUB_CACHE_MAX_REPOS = 2000  # a host bot without the setting (the runner's default is the same)


def _annotation(spec: OptionSpec) -> Any:
    """The parameter type discord.py turns into the option's type and range on Discord's side.

    ``Range`` only declares the range to Discord's client: the request's validation checks it (with an
    exclusive minimum where the option has one), so a hostile client meets the same rules and words.
    """
    limit, kind = spec.option.limit, spec.kind
    if kind == "number" and limit is not None:
        return app_commands.Range[float, limit.minimum, limit.maximum]
    if kind == "integer" and limit is not None:
        return app_commands.Range[int, int(limit.minimum), int(limit.maximum)]
    if kind == "boolean":
        return bool
    if kind == "text" and spec.option.max_length is not None:
        return app_commands.Range[str, 1, spec.option.max_length]
    return str


CommandCallback = TypeVar("CommandCallback", bound=Callable[..., Coroutine[Any, Any, None]])


def _with_the_options(callback: CommandCallback) -> CommandCallback:
    """Give ``callback(self, interaction, **options)`` one keyword parameter per option of the table,
    which is what discord.py reads to register the command's options."""
    head = list(inspect.signature(callback).parameters.values())[:2]  # self, interaction
    parameters = [
        inspect.Parameter(
            spec.name, inspect.Parameter.KEYWORD_ONLY, annotation=_annotation(spec), default=spec.default
        )
        for spec in command_options()
    ]
    callback.__dict__["__signature__"] = inspect.Signature([*head, *parameters])
    return callback


_DESCRIPTIONS = {spec.name: localized_description(spec) for spec in command_options()}
_CHOICES = {
    spec.name: [localized_choice(spec.name, choice) for choice in spec.option.choices]
    for spec in command_options()
    if spec.option.choices is not None
}


class VramCog(commands.Cog):
    """Answers ``/vram`` with the memory needed to fine-tune a model."""

    def __init__(self, bot: commands.Bot, hub: HubClient | None = None) -> None:
        self.bot = bot
        self.hub = hub or HubClient()
        self.defer_after_s = DEFER_AFTER_S
        self.hub_suggestions_wait_s = HUB_SUGGESTIONS_WAIT_S
        self._warming: asyncio.Task[None] | None = None

    @commands.Cog.listener()
    async def on_ready(self) -> None:
        # Once connected (not before: start-up is quicker without it), load the Hub modules in a
        # thread, so that the first model:owner/name need not wait for the import.
        if self.hub.enabled and self._warming is None:
            self._warming = asyncio.create_task(warm_up())

    @app_commands.command(name="vram", description=localized("command.description"))
    @app_commands.describe(**_DESCRIPTIONS)
    @app_commands.choices(**_CHOICES)
    # Servers, DMs with the bot and, installed to a user's account, any channel the user is in.
    @app_commands.allowed_installs(guilds=True, users=True)
    @app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)
    @_with_the_options
    async def vram(self, interaction: discord.Interaction, /, **options: Any) -> None:
        private = bool(options.pop(PRIVATE.name, PRIVATE.default))
        model = options.get("model")
        resolved: Resolved | None = None
        if isinstance(model, str) and find_preset(model) is None and is_repo_id(model):
            # Validation is pure and synchronous: look the repo up first (HubFailure goes to the
            # tree's error handler), which registers its architecture for the validator.
            resolved = await self._look_up(interaction, model, private)
        request = parse_request(**options)  # InvalidRequest goes to the tree's error handler
        await send_view(interaction, request, ESTIMATE, ephemeral=private, edit=False)
        if resolved is not None and resolved.rate_limited:
            await interaction.followup.send(
                rate_limited_note(str(model), language_of(interaction)),
                ephemeral=True,
                allowed_mentions=NO_PINGS,
            )

    async def _look_up(self, interaction: discord.Interaction, repo: str, private: bool) -> Resolved:
        """The repo's architecture; a lookup that takes longer than ``defer_after_s`` defers first, so
        the answer (or the error) arrives later as the edited "thinking" reply."""
        if self.hub.cached(repo) is not None:
            return await self.hub.resolve(repo)  # from memory: no task, no wait
        lookup = asyncio.ensure_future(self.hub.resolve(repo))
        done, _ = await asyncio.wait({lookup}, timeout=self.defer_after_s)
        if not done:
            await interaction.response.defer(thinking=True, ephemeral=private)
        return await lookup

    @vram.autocomplete("model")
    async def _model_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        language = language_of(interaction)
        choices = [
            app_commands.Choice(
                name=text(
                    language, "choice.model", name=m.name, count=format_count(m.parameter_count, language)
                ),
                value=m.key,
            )
            for m in search_presets(current, limit=AUTOCOMPLETE_MAX)
        ]
        # Presets first; a "/" says the user is typing a repo ID, so the Hub's search follows.
        if "/" in current and len(choices) < AUTOCOMPLETE_MAX:
            repos = await self.hub.suggest(current.strip(), self.hub_suggestions_wait_s)
            choices += [
                app_commands.Choice(name=repo, value=repo) for repo in repos if find_preset(repo) is None
            ]
        return choices[:AUTOCOMPLETE_MAX]


async def setup(bot: commands.Bot) -> None:
    # The answers' controls are rebuilt from their custom_id, also for messages sent before a restart.
    bot.add_dynamic_items(*DYNAMIC_ITEMS)
    # Localizations need a translator on the tree; keep one the host bot has set up itself.
    if bot.tree.translator is None:
        await bot.tree.set_translator(CatalogueTranslator())
    if not isinstance(bot.tree, VramCommandTree):
        log.warning(
            "The command tree is not a VramCommandTree, so /vram's errors (bad input included) reach "
            "your tree's on_error: call bot.runtime.tree.answer_error from it, or pass "
            "tree_cls=VramCommandTree to your bot"
        )
    await bot.add_cog(VramCog(bot, _hub_client(bot)))


def _hub_client(bot: commands.Bot) -> HubClient:
    """The Hub client as the bot's settings say (``hub_lookups``, ``hub_timeout_s``,
    ``hub_cache_max_repos``); a host bot without them gets the defaults. Endpoint, token and offline
    mode come from huggingface_hub's own environment variables (HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE)."""
    settings = getattr(bot, "settings", None)
    enabled = bool(getattr(settings, "hub_lookups", True))
    timeout = float(getattr(settings, "hub_timeout_s", HubSettings.timeout_s))
    cache_max = int(getattr(settings, "hub_cache_max_repos", HUB_CACHE_MAX_REPOS))
    return HubClient(hub_settings_from_env(os.environ, timeout, cache_max), enabled=enabled)


async def teardown(bot: commands.Bot) -> None:
    bot.remove_dynamic_items(*DYNAMIC_ITEMS)
