"""How many lines an embed takes on a phone: its text wrapped at about 40 characters a line.

Discord's phone clients fit some 40 characters of embed text on a line of a 360 px screen. Emoji and
other wide characters take two columns (``unicodedata.east_asian_width`` W or F), and words wrap whole
as the clients wrap them; markdown marks (``**``, backticks) take no room.
"""

from __future__ import annotations

import unicodedata
from typing import Any

PHONE_COLUMNS = 40


def columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wrapped(line: str, width: int = PHONE_COLUMNS) -> int:
    """Rows one line of text takes at ``width`` columns, words wrapped whole (a word longer than a row
    is broken, as the clients break it)."""
    rows, used = 1, 0
    for word in line.split(" "):
        size = columns(word)
        if used and used + 1 + size > width:
            rows, used = rows + 1, 0
        used += size if not used else 1 + size
        while used > width:  # a word wider than the row runs on
            rows, used = rows + 1, used - width
    return rows


def plain(text: str) -> str:
    return text.replace("**", "").replace("`", "")


def phone_lines(embed: dict[str, Any], width: int = PHONE_COLUMNS) -> int:
    """The embed's rows of text on a phone: title, description, every field's name and value, footer."""
    texts = [embed.get("title", ""), embed.get("description", "")]
    for field in embed.get("fields", []):
        texts += [field["name"], field["value"]]
    texts.append(embed.get("footer", {}).get("text", ""))
    return sum(wrapped(line, width) for text in texts if text for line in plain(text).splitlines())


def embed_characters(embed: dict[str, Any]) -> int:
    """The characters Discord counts against an embed's limit: title, description, fields, footer."""
    total = len(embed.get("title", "")) + len(embed.get("description", ""))
    total += sum(len(f["name"]) + len(f["value"]) for f in embed.get("fields", []))
    return total + len(embed.get("footer", {}).get("text", ""))
