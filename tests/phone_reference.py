"""The phone-row counter as it was first written (bot/present/phone.py at ca20d63): one glyph and one
break test at a time, in the plainest form of the rules the product's counter follows. The product's
counter is the same rules in fewer passes (issue 24: it ran on nearly every answer); this one is the
oracle that tests/test_phone_rows.py holds it to, line by line and answer by answer.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Any

from bot.present.phone import CODE_PADDING_PX, FONT_PX, INLINE, NO_BREAK, PHONE_TEXT_PX, ZERO_WIDTH, widths


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in "WF"


@lru_cache(maxsize=4096)
def _advance(char: str, font: str) -> float:
    if char in ZERO_WIDTH:
        return 0.0
    table: dict[str, float] = widths()[font]
    if char in table:
        return table[char]
    return table["🟦"] if _wide(char) else table["n"]


def _glyphs(text: str, font: str) -> list[tuple[str, float]]:
    """Each character of one line of ``text`` with its advance; markdown marks take none."""
    out: list[tuple[str, float]] = []
    bold = False
    for part in INLINE.split(text):
        if part == "**":
            bold = not bold
        elif part.startswith("`") and part.endswith("`") and len(part) > 1:
            chars = [(c, _advance(c, "code")) for c in part[1:-1]]
            if chars:  # the padding rides on the span's first and last characters
                chars[0] = (chars[0][0], chars[0][1] + CODE_PADDING_PX / 2)
                chars[-1] = (chars[-1][0], chars[-1][1] + CODE_PADDING_PX / 2)
            out += chars
        else:
            face = "bold" if bold and font == "body" else font
            pairs = widths()["kerning_em"]["regular" if face in ("body", "footer") else "bold"]
            px = FONT_PX[face]
            previous = ""
            for char in part:
                kerning = pairs.get(previous + char, 0.0) * px if previous else 0.0
                out.append((char, _advance(char, face) + kerning))
                previous = char
    return out


def _breaks_between(before: str, after: str, earlier: str) -> bool:
    """Whether a line may break between two characters (UAX #14's cases that our answers meet)."""
    if after in ZERO_WIDTH or NO_BREAK in (before, after) or after == " ":
        return False
    if before == " ":
        return True
    if _wide(before) or _wide(after) or "—" in (before, after):
        return True  # emoji break like ideographs, an em dash on either side
    return before in "-–" and earlier.isalpha() and not after.isdigit()


def _units(glyphs: list[tuple[str, float]]) -> list[tuple[float, float]]:
    """The line's unbreakable runs: (width, width of the spaces after it, which hang at a line's end)."""
    units: list[tuple[float, float]] = []
    width = space = 0.0
    for index, (char, advance) in enumerate(glyphs):
        if index and _breaks_between(glyphs[index - 1][0], char, glyphs[index - 2][0] if index > 1 else ""):
            units.append((width, space))
            width = space = 0.0
        if char == " ":
            space += advance
        else:
            width += advance + space  # a space inside a run (before a no-break space) is part of it
            space = 0.0
    units.append((width, space))
    return units


def wrapped(line: str, font: str = "body", width: float = PHONE_TEXT_PX) -> int:
    """Rows one line of text takes at ``width`` px in ``font``."""
    glyphs = _glyphs(line, font)
    if sum(advance for _, advance in glyphs) <= width:
        return 1  # most lines: no break to look for
    rows, used = 1, 0.0
    for unit, space in _units(glyphs):
        if used and used + unit > width:
            rows, used = rows + 1, 0.0
        used += unit
        while used > width:  # a run wider than the row breaks inside
            rows, used = rows + 1, used - width
        used += space
    return rows


def embed_rows(embed: dict[str, Any], width: float = PHONE_TEXT_PX) -> int:
    """The embed's rows of text on a phone: title, description, every field's name and value, footer."""
    parts: list[tuple[str, str]] = [(embed.get("title", ""), "title"), (embed.get("description", ""), "body")]
    for field in embed.get("fields", []):
        parts += [(field["name"], "bold"), (field["value"], "body")]
    parts.append((embed.get("footer", {}).get("text", ""), "footer"))
    return sum(
        wrapped(line, font, width)
        for text, font in parts
        if text
        for line in text.splitlines()
        if line.strip()
    )
