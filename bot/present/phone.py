"""How many rows a text takes on a phone, so that an answer can keep to a screen.

Discord's phone clients fit some 40 columns of embed text on a row of a 360 px screen; emoji and other
wide characters (``unicodedata.east_asian_width`` W or F) take two columns, words wrap whole (a word
wider than a row runs on), and markdown marks (``**``, backticks) take none. The tests count with
their own counter (tests/phone_lines.py, kept in line with the preview tool), so the answer's budget
is checked from outside, not by itself.
"""

from __future__ import annotations

import unicodedata
from typing import Any

PHONE_COLUMNS = 40
# The answer's limit (issue 12): the verdict and its figures on one phone screen.
MAX_PHONE_ROWS = 14


def _columns(word: str) -> int:
    """Columns of one word: one per character, two for a wide one (none is below U+1100)."""
    if word.isascii():
        return len(word)
    width = unicodedata.east_asian_width
    return len(word) + len([c for c in word if c >= "\u1100" and width(c) in "WF"])


def rows(text: str, width: int = PHONE_COLUMNS) -> int:
    """The rows ``text`` takes, each of its lines wrapped at ``width`` columns."""
    total = 0
    for line in text.replace("**", "").replace("`", "").splitlines():
        count, used = 1, 0
        for word in line.split(" "):
            size = _columns(word)
            if used and used + 1 + size > width:
                count, used = count + 1, 0
            used += size if not used else 1 + size
            while used > width:
                count, used = count + 1, used - width
        total += count
    return total


def embed_rows(embed: dict[str, Any]) -> int:
    """An embed's rows: title, description, every field's name and value, footer."""
    texts = [embed.get("title", ""), embed.get("description", "")]
    for field in embed.get("fields", []):
        texts += [field["name"], field["value"]]
    texts.append(embed.get("footer", {}).get("text", ""))
    return sum(rows(text) for text in texts if text)
