"""Answering one raw interaction as the gateway cog answers it (:mod:`bot.runtime.cog`,
:mod:`bot.runtime.controls`, :mod:`bot.runtime.errors`): the same reading
(:mod:`bot.present.interactions`), the same checks of the payload, the same renderer and words.

The first reply goes into the HTTP response (:class:`Exchange`); what comes later (the answer after a
"thinking" reply, a follow-up note) goes through the interaction's webhook once that response is out.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import discord

from bot.estimate.hub import HubFailure
from bot.estimate.request import InvalidRequest, Problem, command_options
from bot.http import payload as raw
from bot.http import replies
from bot.present.command_line import UnreadableCommand
from bot.present.custom_ids import (
    ESTIMATE,
    EXPLORE_TEMPLATE,
    SELECT_TEMPLATE,
    SHARE_TEMPLATE,
    UnreadableState,
)
from bot.present.hub_problems import hub_failure_message, rate_limited_note
from bot.present.i18n import text
from bot.present.interactions import (
    MODEL,
    control_request,
    model_suggestions,
    preset_suggestions,
    read_command,
    switch_optimizer,
    unresolved_repo,
    wants_hub_search,
)
from bot.present.problems import problems_message
from bot.present.views import RENDERERS, render_message
from bot.runtime.cog import DEFER_AFTER_S, HUB_SUGGESTIONS_WAIT_S
from bot.runtime.controls import CONTROL_LOOKUP_WAIT_S
from bot.runtime.errors import MalformedOptions, first_option_name, focused_option, payload_problems
from bot.runtime.hub_client import HubClient

log = logging.getLogger(__name__)

COMMAND_NAME = "vram"
_SUB_COMMANDS = (1, 2)  # option types of a sub-command and a sub-command group
# What the command's parameters default to, as discord.py hands them to the cog's callback.
_DEFAULTS = {spec.name: spec.default for spec in command_options()}


class UnknownInteraction(ValueError):
    """An interaction type this endpoint does not answer (the server says 400)."""


class Webhook(Protocol):
    """The interaction's webhook (:class:`bot.http.webhook.DiscordWebhook`)."""

    async def edit_original(
        self, interaction: dict[str, Any], data: dict[str, Any], files: dict[str, bytes]
    ) -> None: ...

    async def delete_original(self, interaction: dict[str, Any]) -> None: ...

    async def followup(self, interaction: dict[str, Any], data: dict[str, Any]) -> None: ...


class Exchange:
    """One interaction being answered: its first reply, for the HTTP response, and what follows."""

    def __init__(self, interaction: dict[str, Any], webhook: Webhook) -> None:
        self.interaction = interaction
        self.webhook = webhook
        self.first: asyncio.Future[replies.Reply] = asyncio.get_running_loop().create_future()
        self.delivered = asyncio.Event()  # set once the HTTP response has been written
        self.thinking = False  # the first reply was "thinking" (a deferred answer)
        self.answered = False  # ...and has been filled in with the answer

    @property
    def responded(self) -> bool:
        return self.first.done()

    def respond(self, reply: replies.Reply) -> None:
        self.first.set_result(reply)

    async def _after_response(self, call: Callable[[], Awaitable[None]]) -> None:
        # The webhook knows the interaction only once Discord has the first reply.
        await self.delivered.wait()
        await call()

    async def edit_original(self, data: dict[str, Any], files: dict[str, bytes]) -> None:
        await self._after_response(lambda: self.webhook.edit_original(self.interaction, data, files))

    async def delete_original(self) -> None:
        await self._after_response(lambda: self.webhook.delete_original(self.interaction))

    async def followup(self, data: dict[str, Any]) -> None:
        await self._after_response(lambda: self.webhook.followup(self.interaction, data))


def _id(interaction: dict[str, Any]) -> str:
    return str(interaction.get("id", "?"))[:30]


class Answerer:
    """Answers interactions; one per server, with its Hub client (the same as the cog's)."""

    def __init__(self, hub: HubClient) -> None:
        self.hub = hub
        self.defer_after_s = DEFER_AFTER_S
        self.hub_suggestions_wait_s = HUB_SUGGESTIONS_WAIT_S
        self.control_lookup_wait_s = CONTROL_LOOKUP_WAIT_S

    async def answer(self, exchange: Exchange) -> None:
        """Answer ``exchange``: a reply for every interaction, whatever its payload holds."""
        kind = exchange.interaction.get("type")
        if kind == raw.PING:
            exchange.respond(replies.response(replies.PONG))
            return
        handlers = {
            raw.APPLICATION_COMMAND: self._command,
            raw.MESSAGE_COMPONENT: self._control,
            raw.AUTOCOMPLETE: self._autocomplete,
        }
        handler = handlers.get(kind) if isinstance(kind, int) and not isinstance(kind, bool) else None
        if handler is None:
            raise UnknownInteraction(f"interaction type {str(kind)[:20]}")
        try:
            await handler(exchange)
        except Exception as exc:
            await self._error(exchange, exc)

    # -- /vram -----------------------------------------------------------------------------------

    async def _command(self, exchange: Exchange) -> None:
        data = exchange.interaction.get("data")
        if not isinstance(data, dict) or data.get("type", 1) != 1 or data.get("name") != COMMAND_NAME:
            name = raw.as_dict(data).get("name")
            raise MalformedOptions([Problem("not_an_option", str(name)[:100])])
        options = data.get("options", [])
        if isinstance(options, list) and options and raw.as_dict(options[0]).get("type") in _SUB_COMMANDS:
            # A sub-command Discord never registered: the cog answers discord.py's CommandNotFound so.
            raise MalformedOptions([Problem("not_an_option", first_option_name(data))])
        problems = payload_problems(data)
        if problems:
            raise MalformedOptions(problems)
        try:
            values = raw.option_values(options)
        except Exception:  # what discord.py's Namespace cannot read either
            raise MalformedOptions([Problem("wrong_type", "options")]) from None
        command = read_command(_DEFAULTS | {k: v for k, v in values.items() if k in _DEFAULTS})
        repo, resolved = command.repo, None
        if repo is not None:
            resolved = await self._look_up(exchange, repo, command.private)
        request = command.request()
        language = raw.language_of(exchange.interaction)
        message = render_message(request, ESTIMATE, language, shareable=command.private)
        files = _files(request, message, language)
        if exchange.thinking:
            await exchange.edit_original(replies.original_edit(message, files), files)
            exchange.answered = True  # an error after this must not remove the answer
        else:
            data_ = replies.new_message(message, files, ephemeral=command.private, content=None)
            exchange.respond(replies.response(replies.CHANNEL_MESSAGE, data_, files))
        if resolved is not None and resolved.rate_limited:
            await exchange.followup(replies.followup_text(rate_limited_note(repo or "", language)))

    async def _look_up(self, exchange: Exchange, repo: str, private: bool) -> Any:
        if self.hub.cached(repo) is not None:
            return await self.hub.resolve(repo)
        lookup = asyncio.ensure_future(self.hub.resolve(repo))
        done, _ = await asyncio.wait({lookup}, timeout=self.defer_after_s)
        if not done:
            exchange.respond(replies.deferred(ephemeral=private))
            exchange.thinking = True
        return await lookup

    # -- controls --------------------------------------------------------------------------------

    async def _control(self, exchange: Exchange) -> None:
        data = raw.as_dict(exchange.interaction.get("data"))
        custom_id = data.get("custom_id")
        custom_id = custom_id if isinstance(custom_id, str) else ""
        if (found := EXPLORE_TEMPLATE.fullmatch(custom_id)) is not None:
            await self._explore(exchange, found["view"], found["state"])
        elif (found := SELECT_TEMPLATE.fullmatch(custom_id)) is not None:
            values = data.get("values", [])
            picked = values[0] if isinstance(values, list) and len(values) == 1 else ""
            await self._explore(exchange, ESTIMATE, found["state"], str(picked))
        elif (found := SHARE_TEMPLATE.fullmatch(custom_id)) is not None:
            await self._share(exchange, found["view"], found["state"])
        else:  # a control no template of ours reads (tampered with), or none of ours at all
            raise UnreadableState(f"no control reads {custom_id[:20]!r}")

    async def _request_looking_up(self, exchange: Exchange, state: str) -> Any:
        shown = raw.shown_command(exchange.interaction)
        try:
            return control_request(state, shown)
        except (UnreadableState, UnreadableCommand) as exc:
            repo = unresolved_repo(exc)
            if repo is None:
                raise
            try:
                await asyncio.wait_for(self.hub.resolve(repo), self.control_lookup_wait_s)
            except TimeoutError:
                raise HubFailure("unavailable", repo) from None
            return control_request(state, shown)

    async def _explore(self, exchange: Exchange, view: str, state: str, optimizer: str | None = None) -> None:
        if view not in RENDERERS:
            raise UnreadableState(f"unknown view {view[:20]!r}")
        request = await self._request_looking_up(exchange, state)
        if optimizer is not None:
            request = switch_optimizer(request, optimizer)
        interaction = exchange.interaction
        language = raw.language_of(interaction)
        if raw.started_by(interaction):  # the message changes in place
            message = render_message(request, view, language, shareable=raw.is_ephemeral_message(interaction))
            files = _files(request, message, language)
            exchange.respond(
                replies.response(replies.UPDATE_MESSAGE, replies.edited_message(message, files), files)
            )
        else:  # anyone else gets their own copy
            message = render_message(request, view, language, shareable=True)
            files = _files(request, message, language)
            data = replies.new_message(message, files, ephemeral=True, content=None)
            exchange.respond(replies.response(replies.CHANNEL_MESSAGE, data, files))

    async def _share(self, exchange: Exchange, view: str, state: str) -> None:
        if view not in RENDERERS:
            raise UnreadableState(f"unknown view {view[:20]!r}")
        request = await self._request_looking_up(exchange, state)
        interaction = exchange.interaction
        language = raw.language_of(interaction)
        if not raw.can_post_publicly(interaction):
            exchange.respond(
                replies.response(
                    replies.CHANNEL_MESSAGE, replies.ephemeral_text(text(language, "share.not_allowed"))
                )
            )
            return
        name = discord.utils.escape_mentions(discord.utils.escape_markdown(raw.display_name(interaction)))
        message = render_message(request, view, language, shareable=False)
        files = _files(request, message, language)
        content = text(language, "share.by", name=name)
        data = replies.new_message(message, files, ephemeral=False, content=content)
        exchange.respond(replies.response(replies.CHANNEL_MESSAGE, data, files))

    # -- autocomplete ----------------------------------------------------------------------------

    async def _autocomplete(self, exchange: Exchange) -> None:
        data = exchange.interaction.get("data")
        focused = focused_option(data)
        current: Any = None
        if isinstance(data, dict) and data.get("name") == COMMAND_NAME and focused is not None:
            options = data.get("options", [])
            try:
                values = raw.option_values(options)
            except Exception:  # discord.py could not read the others: the typed text still counts
                current = focused[1]
            else:
                current = values.get(MODEL) if focused[0] == MODEL else None
            if focused[0] != MODEL:
                current = None
        if not isinstance(current, str):
            log.info("No suggestions for interaction %s: nothing to suggest", _id(exchange.interaction))
            exchange.respond(replies.suggestions([]))
            return
        presets = preset_suggestions(current, raw.language_of(exchange.interaction))
        repos: tuple[str, ...] = ()
        if wants_hub_search(current, len(presets)):
            repos = await self.hub.suggest(current.strip(), self.hub_suggestions_wait_s)
        exchange.respond(replies.suggestions(model_suggestions(presets, repos)))

    # -- errors, as bot.runtime.errors.answer_error ----------------------------------------------

    async def _error(self, exchange: Exchange, error: Exception) -> None:
        interaction = exchange.interaction
        language = raw.language_of(interaction)
        if interaction.get("type") == raw.AUTOCOMPLETE:
            log.error("Suggesting for interaction %s failed", _id(interaction), exc_info=error)
            if not exchange.responded:
                exchange.respond(replies.suggestions([]))
            return
        if isinstance(error, MalformedOptions | InvalidRequest):
            log.info("Refused the input of interaction %s: %s", _id(interaction), error.problems)
            message = problems_message(error.problems, language)
        elif isinstance(error, HubFailure):
            log.info("Hub lookup failed for interaction %s: %s", _id(interaction), error)
            message = hub_failure_message(error, language)
        elif isinstance(error, UnreadableState | UnreadableCommand):
            log.info("Refused a control of interaction %s: %s", _id(interaction), error)
            message = text(language, "component.bad_custom_id")
        else:
            log.error("Answering interaction %s failed", _id(interaction), exc_info=error)
            message = text(language, "reply.apology")
        await self._reply_ephemeral(exchange, message)

    async def _reply_ephemeral(self, exchange: Exchange, message: str) -> None:
        """As :func:`bot.runtime.replies.reply_ephemeral`: a public "thinking" reply goes first."""
        if exchange.thinking and not exchange.answered:
            await exchange.delete_original()
            await exchange.followup(replies.followup_text(message))
        elif exchange.responded:
            await exchange.followup(replies.followup_text(message))
        else:
            exchange.respond(replies.response(replies.CHANNEL_MESSAGE, replies.ephemeral_text(message)))


def _files(request: Any, message: Any, language: Any) -> dict[str, bytes]:
    """Compare's chart, drawn where it is sent (Pillow is imported on the first Compare)."""
    if message.attachment is None:
        return {}
    from bot.present.chart import compare_png

    return {message.attachment: compare_png(request, language)}
