"""Sending an answer: the renderer's JSON as discord.py's public objects, through discord.py's public
interaction methods only.

The views render plain JSON (:mod:`bot.present`): an embed dict and component rows. Here they become a
``discord.Embed`` (``Embed.from_dict``) and a ``discord.ui.View`` of ``Button`` and ``Select`` items,
which ``InteractionResponse.send_message`` / ``edit_message`` or ``Interaction.edit_original_response``
send as discord.py writes them. Nothing reaches into discord.py's internals, so a discord.py release
can change how it sends, but not break this silently (``tests/test_send.py`` checks that what the
fake Discord receives is the renderer's JSON).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import discord

ACTION_ROW, BUTTON, STRING_SELECT = 1, 2, 3  # Discord's component types (bot.present.controls)


def embed_of(embed: dict[str, Any]) -> discord.Embed:
    """The renderer's embed JSON as discord.py's Embed (which sends it back as the same JSON)."""
    return discord.Embed.from_dict(embed)


def _item(component: dict[str, Any], row: int) -> discord.ui.Item[discord.ui.View]:
    """One button or string select of the renderer's rows, as discord.py's ui item at ``row``."""
    if component["type"] == BUTTON:
        return discord.ui.Button(
            style=discord.ButtonStyle(component["style"]),
            label=component.get("label"),
            custom_id=component.get("custom_id"),
            disabled=component.get("disabled", False),
            row=row,
        )
    if component["type"] == STRING_SELECT:
        return discord.ui.Select(
            custom_id=component["custom_id"],
            placeholder=component.get("placeholder"),
            min_values=component.get("min_values", 1),
            max_values=component.get("max_values", 1),
            options=[
                discord.SelectOption(
                    label=option["label"],
                    value=option["value"],
                    description=option.get("description"),
                    default=option.get("default", False),
                )
                for option in component["options"]
            ],
            row=row,
        )
    raise ValueError(f"no ui item for component type {component['type']}")


def controls_of(components: list[dict[str, Any]]) -> discord.ui.View:
    """The renderer's action rows as a discord.py View (needs the running event loop, as a View does).

    The view is stopped before it is sent: the clicks reach the ``DynamicItem`` classes through their
    custom_ids (:mod:`bot.runtime.controls`), so discord.py keeps nothing of it per message.
    """
    view = discord.ui.View(timeout=None)
    for row, action_row in enumerate(components):
        for component in action_row["components"]:
            view.add_item(_item(component, row))
    view.stop()
    return view


async def send_answer(
    interaction: discord.Interaction,
    embed: dict[str, Any],
    components: list[dict[str, Any]],
    *,
    edit: bool,
    ephemeral: bool = False,
    content: str | None = None,
    files: Sequence[discord.File] = (),
    allowed_mentions: discord.AllowedMentions,
) -> None:
    """Answer ``interaction`` with this embed and these controls, the one way each case allows.

    ``edit``: update the clicked message (``edit_message``); its files become ``files``, so going
    from Compare to Details drops the chart. Otherwise a new message (``send_message``), or, when the
    interaction was deferred, the "thinking" reply filled in (``edit_original_response``).
    """
    answer = embed_of(embed)
    view = controls_of(components)
    if edit:
        await interaction.response.edit_message(
            embed=answer, view=view, attachments=list(files), allowed_mentions=allowed_mentions
        )
    elif interaction.response.is_done():
        await interaction.edit_original_response(
            embed=answer, view=view, attachments=list(files), allowed_mentions=allowed_mentions
        )
    else:
        await interaction.response.send_message(
            content,
            embed=answer,
            view=view,
            files=list(files) if files else discord.utils.MISSING,
            ephemeral=ephemeral,
            allowed_mentions=allowed_mentions,
        )
