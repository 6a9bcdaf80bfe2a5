"""Sending an answer's prebuilt JSON (embed dict and component list) with no discord.py object round trip.

The views render plain JSON (:mod:`bot.present`). Handing that to discord.py as
``discord.Embed.from_dict(...)`` only for discord.py to call ``to_dict()`` on it again costs some
15 µs per answer and rebuilds what we already have. discord.py's ``InteractionResponse.send_message``
and ``edit_message`` read an embed only through its public ``to_dict()`` and a view only through
``to_components()``, ``has_components_v2()``, ``is_finished()`` and ``is_dispatchable()``, so a
:class:`PrebuiltEmbed` whose ``to_dict()`` returns the prebuilt dict, and a stopped, item-less
:class:`PrebuiltControls` whose ``to_components()`` returns the prebuilt list, send exactly the same
bytes as the round trip (``tests/test_send.py`` compares the two paths).
"""

from __future__ import annotations

from typing import Any

import discord

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
