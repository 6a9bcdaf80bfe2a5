"""Sending an answer's prebuilt JSON (embed dict and component list) with no discord.py object round trip.

Two costs of discord.py's own sending are avoided, and what goes on the wire stays the same bytes.

The views render plain JSON (:mod:`bot.present`). Handing that to discord.py as
``discord.Embed.from_dict(...)`` only for discord.py to call ``to_dict()`` on it again costs some
15 µs per answer and rebuilds what we already have. discord.py's ``InteractionResponse.send_message``
and ``edit_message`` read an embed only through its public ``to_dict()`` and a view only through
``to_components()``, ``has_components_v2()``, ``is_finished()`` and ``is_dispatchable()``, so a
:class:`PrebuiltEmbed` whose ``to_dict()`` returns the prebuilt dict, and a stopped, item-less
:class:`PrebuiltControls` whose ``to_components()`` returns the prebuilt list, send exactly the same
bytes as the round trip (``tests/test_send.py`` compares the two paths).

And :func:`respond` posts the interaction's answer as discord.py's ``send_message`` and
``edit_message`` do (the same JSON or multipart body, through the same webhook adapter with its
retries on 429 and 5xx), but without ``?with_response=1``. With it, Discord echoes the message back
and discord.py parses the echo into an ``InteractionMessage`` (embed, components, author): some
0.3 million instructions per answer, about a quarter of everything the bot does for a ``/ping``
(callgrind, ``benchmarks/interactions.py``), for an object nothing here reads. Without it Discord
answers 204 No Content (``interactions/receiving-and-responding#create-interaction-response``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, cast

import discord
from discord.http import Route
from discord.webhook.async_ import async_context, interaction_message_response_params

# The order in which discord.py's ``Embed.to_dict()`` writes the keys it keeps as they were given
# (its ``__slots__`` order: footer … fields, then flags), before the ones it writes afterwards.
_RAW_KEYS = ("footer", "image", "thumbnail", "video", "provider", "author", "fields")
_TEXT_KEYS = ("type", "description", "url", "title")


def wire_embed(embed: dict[str, Any]) -> dict[str, Any]:
    """``embed`` as ``discord.Embed.from_dict(embed).to_dict()`` writes it, without building the Embed.

    The same keys in the same order, so the JSON on the wire is byte-identical: ``flags`` always (0
    by default), ``color`` only when non-zero, the text keys only when non-empty. A timestamp, which
    discord.py reformats and none of our views has, takes discord.py's own path.
    """
    if "timestamp" in embed:
        return discord.Embed.from_dict(embed).to_dict()  # type: ignore[return-value]
    wire: dict[str, Any] = {key: embed[key] for key in _RAW_KEYS if key in embed}
    wire["flags"] = embed.get("flags", 0)
    if embed.get("color"):
        wire["color"] = embed["color"]
    for key in _TEXT_KEYS:
        value = embed.get(key)
        if value:
            wire[key] = str(value)
    return wire


class PrebuiltEmbed(discord.Embed):
    """An embed whose ``to_dict()`` is the prebuilt wire dict (see :func:`wire_embed`).

    The title and description are set as well, so that code reading them (or ``len()``) sees the
    answer; everything else discord.py sends comes from the dict.
    """

    __slots__ = ("_wire",)

    def __init__(self, wire: dict[str, Any]) -> None:
        super().__init__(title=wire.get("title"), description=wire.get("description"))
        self._wire = wire

    def to_dict(self) -> Any:  # discord.py's EmbedData TypedDict; ours is the same JSON
        return self._wire


class PrebuiltControls(discord.ui.View):
    """Prebuilt component JSON as a message's controls: no items, stopped at once.

    Clicks reach the ``DynamicItem`` classes through their custom_id, so this view never listens and
    discord.py stores nothing of it per message.
    """

    def __init__(self, components: list[dict[str, Any]]) -> None:
        super().__init__(timeout=None)
        self._components = components
        self.stop()

    def to_components(self) -> list[dict[str, Any]]:
        return self._components


# Discord's message flag for "only the user who interacted sees it", as discord.py writes it.
EPHEMERAL_FLAG = discord.MessageFlags(ephemeral=True).value


CALLBACK_PATH = "/interactions/{webhook_id}/{webhook_token}/callback"
# What urllib's quote(safe="") leaves as it is: RFC 3986's unreserved characters.
_UNRESERVED = re.compile(r"[A-Za-z0-9._~-]*")


def callback_route(interaction_id: int, token: str) -> Route:
    """discord.py's Route to answer an interaction, the one ``Route("POST", CALLBACK_PATH,
    webhook_id=…, webhook_token=…)`` builds (``tests/test_send.py`` compares every attribute).

    Built directly when the token needs no quoting, as Discord's tokens do not: discord.py quotes
    every text parameter with urllib's pure-Python quote(), some 18,000 instructions per answer.
    """
    if not _UNRESERVED.fullmatch(token):
        return Route("POST", CALLBACK_PATH, webhook_id=interaction_id, webhook_token=token)
    route = Route.__new__(Route)
    route.path, route.method, route.metadata = CALLBACK_PATH, "POST", None
    route.url = f"{Route.BASE}/interactions/{interaction_id}/{token}/callback"
    route.channel_id = route.guild_id = None
    route.webhook_id, route.webhook_token = interaction_id, token
    return route


# By whether the answer updates the clicked message: UPDATE_MESSAGE edits it; CHANNEL_MESSAGE_WITH_SOURCE
# answers with a new one. With its JSON value, which every answer writes.
_RESPONSE_TYPES = {
    update: (kind, kind.value)
    for update, kind in (
        (True, discord.InteractionResponseType.message_update),
        (False, discord.InteractionResponseType.channel_message),
    )
}


def _response_type(update: bool) -> discord.InteractionResponseType:
    return _RESPONSE_TYPES[update][0]


def callback_body(
    embed: dict[str, Any],
    components: list[dict[str, Any]],
    *,
    update: bool,
    ephemeral: bool = False,
    content: str | None = None,
    allowed_mentions: dict[str, Any],
) -> dict[str, Any]:
    """The JSON body of an answer without files: the same object discord.py's
    ``interaction_message_response_params`` writes for ``send_message`` / ``edit_message`` with this
    embed and these components (``tests/test_send.py`` compares them), built without its Embed, View
    and MessageFlags objects."""
    data: dict[str, Any] = {"tts": False, "embeds": [wire_embed(embed)]}
    if content is not None:
        data["content"] = content
    data["components"] = components
    if ephemeral:
        data["flags"] = EPHEMERAL_FLAG
    data["allowed_mentions"] = allowed_mentions
    if update:
        data["attachments"] = []  # a message update without files drops the message's files
    return {"type": _RESPONSE_TYPES[update][1], "data": data}


async def respond(
    interaction: discord.Interaction,
    embed: dict[str, Any],
    components: list[dict[str, Any]],
    *,
    update: bool,
    ephemeral: bool = False,
    content: str | None = None,
    files: Sequence[discord.File] = (),
    allowed_mentions: discord.AllowedMentions,
) -> None:
    """Answer ``interaction`` with a new message (``update=False``) or by editing the clicked one.

    The body is what discord.py's ``send_message`` / ``edit_message`` would send; only the echo is
    not asked for. Afterwards ``interaction.response`` reports the answer as discord.py's own methods
    leave it (``is_done()``, ``type``), so follow-ups and the error handler behave as after them.
    """
    response = interaction.response
    if response.is_done():
        raise discord.InteractionResponded(interaction)
    kind = _response_type(update)
    previous = interaction.client.allowed_mentions
    route = callback_route(interaction.id, interaction.token)
    http = interaction.client.http
    request = async_context.get().request
    session = interaction._session  # discord.py's session for interaction webhooks
    if not files:
        # The bot's own default is NO_PINGS, which merges into itself.
        if previous is None or previous is allowed_mentions:
            merged = allowed_mentions
        else:
            merged = previous.merge(allowed_mentions)
        mentions = cast(dict[str, Any], merged.to_dict())
        body = callback_body(
            embed, components, update=update, ephemeral=ephemeral, content=content, allowed_mentions=mentions
        )
        await request(route, session=session, proxy=http.proxy, proxy_auth=http.proxy_auth, payload=body)
    else:  # multipart, as discord.py builds it
        params = interaction_message_response_params(
            type=kind.value,
            content=discord.utils.MISSING if content is None else content,
            embed=PrebuiltEmbed(wire_embed(embed)),
            view=PrebuiltControls(components),
            # A message update replaces the message's attachments with these.
            attachments=list(files) if update else discord.utils.MISSING,
            files=discord.utils.MISSING if update else list(files),
            flags=discord.MessageFlags(ephemeral=True) if ephemeral else discord.utils.MISSING,
            previous_allowed_mentions=previous,
            allowed_mentions=allowed_mentions,
        )
        with params:  # closes the files once sent, as discord.py does
            await request(
                route,
                session=session,
                proxy=http.proxy,
                proxy_auth=http.proxy_auth,
                multipart=params.multipart,
                files=params.files,
            )
    # What discord.py's send_message / edit_message record once the answer is sent.
    response._response_type = kind
