"""How many rows an embed takes on a phone, as ../shared/tools/discord-preview/ lays it out at 360 px,
so that an answer can keep to one screen (the limit: MAX_PHONE_ROWS).

The preview draws a phone's embed text 260 px wide (360 px, less the message's 58 px indent and 10 px
margin, the embed's 4 px bar and its 12 + 16 px padding), in Noto Sans: the title 16 px semibold,
description and field values 14 px (bold where ``**``), field names 14 px semibold, the footer 12 px,
inline code in a monospace font at 0.85 em with 0.2 em padding each side, emoji in Noto Color Emoji. Each
character's advance in each of those fonts, and the fonts' kerning pairs (in em), are in
``bot/data/phone_widths.json``, measured once with Chromium's canvas ``measureText`` on the preview's own
fonts (Noto Sans, DejaVu Sans Mono, Noto Color Emoji); a character not in it takes an "n" (an emoji's
width when East Asian Wide). Lines break as Chromium breaks them: after a space (not a no-break space),
after a hyphen or dash that follows a letter, on either side of an emoji, and inside a word wider than
the line (``overflow-wrap: break-word``).

Calibrated against the preview's own ``phone.embed_lines`` (shoot.sh's metrics.json; the counts are held
by tests/test_phone_lines.py): 64 training and serving views (glance, Details, Compare) in English and
German, every one the same count, an image counting no line (the preview draws a placeholder box only
when the attachment is not given). Blank lines take no line of text. No answer uses inline fields, so
fields are counted full width. Discord's own phone clients use another font; the preview is the project's
reference, as GUIDE.md says.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

PHONE_TEXT_PX = 260.0
WIDTHS_FILE = Path(__file__).parents[1] / "data" / "phone_widths.json"
# The answer's limit (issue 12): the verdict and its figures on one phone screen.
MAX_PHONE_ROWS = 14
CODE_PADDING_PX = 2 * 0.2 * 11.9  # .85 em of 14 px, 0.2 em either side
ZERO_WIDTH = {"\ufe0f", "\u200d", "\ufe0e"}
NO_BREAK = "\u00a0"
FONT_PX = {"title": 16, "body": 14, "bold": 14, "footer": 12}
INLINE = re.compile(r"(`[^`\n]+`|\*\*)")


@cache
def _widths() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(WIDTHS_FILE.read_text(encoding="utf-8"))
    return loaded


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in "WF"


@lru_cache(maxsize=4096)
def _advance(char: str, font: str) -> float:
    if char in ZERO_WIDTH:
        return 0.0
    table: dict[str, float] = _widths()[font]
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
            pairs = _widths()["kerning_em"]["regular" if face in ("body", "footer") else "bold"]
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


@lru_cache(maxsize=4096)  # an answer's lines recur: its rooms, the footers, the captions
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
