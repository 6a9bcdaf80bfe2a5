"""The ``/vram`` slash command: its parameters come from the option table; it validates, estimates, answers.

Load it into any ``commands.Bot`` as the extension ``cogs.vram`` (or ``bot.runtime.cog``, the same),
with discord.py's default command tree or the host's own. The cog answers every error of ``/vram``, its
autocomplete and its controls itself, through the one handler :func:`bot.runtime.errors.answer_error`:
``cog_app_command_error`` for what the command raises (bad input included), and an ``on_interaction``
listener for the few payloads discord.py drops before any handler of the command runs. The host's
other commands and their errors are left to the host.
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

from bot.estimate.options import OptionSpec
from bot.estimate.request import Problem, command_options
from bot.hub_settings import HubSettings, hub_settings_from_env
from bot.present.custom_ids import ESTIMATE
from bot.present.hub_problems import rate_limited_note
from bot.present.interactions import (
    MODEL,
    model_suggestions,
    preset_suggestions,
    read_command,
    wants_hub_search,
)
from bot.runtime.controls import DYNAMIC_ITEMS, send_view, warm_up_answers
from bot.runtime.errors import (
    MalformedOptions,
    NothingToSuggest,
    answer_error,
    first_option_name,
    focused_option,
    payload_problems,
)
from bot.runtime.hub_client import HubClient, Resolved, shared_cache, warm_up
from bot.runtime.replies import NO_PINGS, language_of
from bot.runtime.translator import CatalogueTranslator, localized, localized_choice, localized_description

log = logging.getLogger(__name__)

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


def with_vram_options(callback: CommandCallback) -> CommandCallback:
    """``/vram``'s options on a command callback: their parameters, descriptions and choices (the
    benchmark's peer, benchmarks/ping_cog.py, declares the same, so discord.py reads the same)."""
    return app_commands.describe(**_DESCRIPTIONS)(
        app_commands.choices(**_CHOICES)(_with_the_options(callback))
    )


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
        # Once connected (not before: start-up is quicker without them), load the answer's modules
        # and the Hub modules in a thread, so that neither the first answer nor the first
        # model:owner/name need wait for the import.
        if self._warming is None:
            self._warming = asyncio.create_task(self._warm_up())

    async def _warm_up(self) -> None:
        await warm_up_answers()
        if self.hub.enabled:
            await warm_up()

    async def cog_unload(self) -> None:
        await self.hub.close()  # the shared cache's connections, if any

    @app_commands.command(name="vram", description=localized("command.description"))
    # Servers, DMs with the bot and, installed to a user's account, any channel the user is in.
    @app_commands.allowed_installs(guilds=True, users=True)
    @app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)
    @with_vram_options
    async def vram(self, interaction: discord.Interaction, /, **options: Any) -> None:
        command = read_command(options)
        private, repo = command.private, command.repo
        resolved: Resolved | None = None
        if repo is not None:
            # Validation is pure and synchronous: look the repo up first (HubFailure goes to
            # cog_app_command_error), which registers its architecture for the validator.
            resolved = await self._look_up(interaction, repo, private)
        request = command.request()  # InvalidRequest goes to cog_app_command_error
        await send_view(interaction, request, ESTIMATE, ephemeral=private, edit=False)
        if resolved is not None and resolved.rate_limited:
            await interaction.followup.send(
                rate_limited_note(repo or "", language_of(interaction)),
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

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        """Refuse option values of the wrong JSON type before ``/vram`` runs (Discord's client never
        sends them). discord.py has already read them into the namespace, converting some on the way
        (a string "7" for a number became 7.0), so the raw payload tells. Autocomplete skips this check:
        the option being typed never depends on what the others hold."""
        problems = payload_problems(interaction.data)
        if problems:
            raise MalformedOptions(problems)  # to cog_app_command_error
        return True

    async def cog_app_command_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        # discord.py calls this for /vram only (never for the host's commands), then the tree's on_error,
        # which the default tree leaves silent for a command with its own handler.
        await answer_error(interaction, error)

    @commands.Cog.listener()
    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """Answer the ``/vram`` payloads discord.py drops before any handler of the command runs.

        The tree reads the options into a namespace before it calls the command, and a value it cannot
        read (a list for a number, an option without a type) ends its task with no handler called. The
        same reading, :attr:`discord.Interaction.namespace`, fails here for exactly those payloads, which
        the tree then never answers. Two more it does not hand to the command's handlers: a sub-command
        ``/vram`` does not have, and an autocomplete for an option without suggestions (or of a type
        its namespace skips). Discord's own client sends none of these; a crafted payload may.
        """
        if not self._is_vram(interaction):
            return
        try:
            # Both are discord.py's own reading of the payload, cached once the tree has read it.
            command = interaction.command
            _ = interaction.namespace
        except Exception:  # discord.py's own reading failed: its tree gave up on this interaction
            if interaction.type is discord.InteractionType.autocomplete:
                await self._suggest_despite_the_others(interaction)
            else:
                problems = payload_problems(interaction.data) or [Problem("wrong_type", "options")]
                await answer_error(interaction, MalformedOptions(problems))
            return
        if command is None:  # the tree found no such sub-command, and tells only its own on_error
            name = first_option_name(interaction.data)
            await answer_error(interaction, app_commands.CommandNotFound(name, [self.vram.name]))
        elif interaction.type is discord.InteractionType.autocomplete:
            focused = focused_option(interaction.data)
            if focused is None:
                return  # the tree hands "no focused option" to cog_app_command_error
            name = focused[0]
            parameter = self.vram.get_parameter(name) if isinstance(name, str) else None
            if parameter is None or not parameter.autocomplete or name not in interaction.namespace:
                # An option without suggestions, or one the namespace lacks (of a type discord.py
                # skips): discord.py would log it at ERROR and leave the user's picker spinning.
                await answer_error(interaction, NothingToSuggest(f"no suggestions for {str(name)[:100]!r}"))

    def _is_vram(self, interaction: discord.Interaction) -> bool:
        """Whether the interaction is for this cog's ``/vram`` (and not a host's command of that name)."""
        data: Any = interaction.data
        if interaction.type not in _COMMAND_KINDS or not isinstance(data, dict):
            return False
        if data.get("type", 1) != 1 or data.get("name") != self.vram.name:
            return False
        # Looked up as discord.py does: a guild's copy (copy_global_to) first, then the global one.
        tree, guild_id = self.bot.tree, data.get("guild_id")
        command = None
        if guild_id is not None:
            if not str(guild_id).isdigit():
                return False
            command = tree.get_command(self.vram.name, guild=discord.Object(int(guild_id)))
        if command is None and (guild_id is None or tree.fallback_to_global):
            command = tree.get_command(self.vram.name)
        return command is not None and command in self.get_app_commands()

    async def _suggest_despite_the_others(self, interaction: discord.Interaction) -> None:
        """The suggestions for ``model`` as it is typed, read from the raw payload when discord.py
        could not read the other options: they do not change what the suggestions are."""
        focused = focused_option(interaction.data)
        if focused is None or focused[0] != MODEL or not isinstance(focused[1], str):
            await answer_error(interaction, NothingToSuggest("no model being typed"))
            return
        try:
            await interaction.response.autocomplete(await self._model_choices(interaction, focused[1]))
        except Exception as exc:
            await answer_error(interaction, exc)

    @vram.autocomplete(MODEL)
    async def _model_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        """Suggestions for ``model`` from what is typed so far; whatever the other options hold."""
        try:
            if not isinstance(current, str):  # a crafted payload's focused value
                raise MalformedOptions([Problem("wrong_type", MODEL)])
            return await self._model_choices(interaction, current)
        except Exception as exc:
            # discord.py would only log it and leave the picker spinning: answer no suggestions.
            await answer_error(interaction, exc)
            return []

    async def _model_choices(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        presets = preset_suggestions(current, language_of(interaction))
        repos: tuple[str, ...] = ()
        if wants_hub_search(current, len(presets)):
            repos = await self.hub.suggest(current.strip(), self.hub_suggestions_wait_s)
        suggested = model_suggestions(presets, repos)
        return [app_commands.Choice(name=name, value=value) for name, value in suggested]


_COMMAND_KINDS = (discord.InteractionType.application_command, discord.InteractionType.autocomplete)


async def setup(bot: commands.Bot) -> None:
    # The answers' controls are rebuilt from their custom_id, also for messages sent before a restart.
    bot.add_dynamic_items(*DYNAMIC_ITEMS)
    # Localizations need a translator on the tree; keep one the host bot has set up itself.
    if bot.tree.translator is None:
        await bot.tree.set_translator(CatalogueTranslator())
    await bot.add_cog(VramCog(bot, _hub_client(bot)))


def _hub_client(bot: commands.Bot) -> HubClient:
    """The Hub client as the bot's settings say (``hub_lookups``, ``hub_timeout_s``,
    ``hub_cache_max_repos``, ``hub_shared_cache_url``); a host bot without them gets the defaults.
    Endpoint, token and offline mode come from huggingface_hub's own environment variables
    (HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE)."""
    settings = getattr(bot, "settings", None)
    enabled = bool(getattr(settings, "hub_lookups", True))
    timeout = float(getattr(settings, "hub_timeout_s", HubSettings.timeout_s))
    cache_max = int(getattr(settings, "hub_cache_max_repos", HUB_CACHE_MAX_REPOS))
    shared = shared_cache(getattr(settings, "hub_shared_cache_url", None))  # the fleet's Redis, if set
    return HubClient(hub_settings_from_env(os.environ, timeout, cache_max), enabled=enabled, shared=shared)


async def teardown(bot: commands.Bot) -> None:
    bot.remove_dynamic_items(*DYNAMIC_ITEMS)
