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

It runs on nearly every answer (bot.present.answer's room loop), so each line is measured in a few
passes of C rather than a Python step per character: the advances by table look-up (kerning pairs
pre-scaled to px), the break opportunities by one regular expression over the line's character
classes, and each run's width summed left to right as the rules sum it, so every count, down to the
last bit of each width, is the one the rules give one character at a time (tests/phone_reference.py
is that plain form, and tests/test_phone_rows.py holds the two equal).
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import cache, lru_cache, reduce
from itertools import repeat
from operator import add
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
# Characters remembered beyond the measured ones (a user's model name may bring any): enough for every
# script an answer quotes, bounded so that no input grows the tables without end.
_REMEMBERED = 4096


@cache
def widths() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(WIDTHS_FILE.read_text(encoding="utf-8"))
    return loaded


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in "WF"


class _Advances(dict[str, float]):
    """One font's advance of each character in px: as measured, none for a zero-width character, and
    for one not measured an "n" (an emoji's width when East Asian Wide), kept once asked."""

    def __init__(self, measured: dict[str, float]) -> None:
        super().__init__(measured)
        self.update(dict.fromkeys(ZERO_WIDTH, 0.0))
        self.unmeasured = (measured["n"], measured["🟦"])

    def __missing__(self, char: str) -> float:
        advance = self.unmeasured[_wide(char)]
        if len(self) < _REMEMBERED:
            self[char] = advance
        return advance


# A character's class where lines may break (UAX #14's cases that our answers meet): a space, a
# no-break space, a zero-width joiner or variation selector, an em dash, a hyphen or en dash, an East
# Asian Wide letter or other character (emoji), a letter, a digit, anything else.
SPACE, NBSP, JOINER, EM_DASH, HYPHEN, WIDE_LETTER, WIDE, LETTER, DIGIT, OTHER = "snzmhWwado"


class _Classes(dict[int, str]):
    """Each character's class by code point, for ``str.translate``; worked out once asked."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        if char == " ":
            kind = SPACE
        elif char == NO_BREAK:
            kind = NBSP
        elif char in ZERO_WIDTH:
            kind = JOINER
        elif char == "—":
            kind = EM_DASH
        elif char in "-–":
            kind = HYPHEN
        elif _wide(char):
            kind = WIDE_LETTER if char.isalpha() else WIDE
        else:
            kind = LETTER if char.isalpha() else DIGIT if char.isdigit() else OTHER
        if len(self) < _REMEMBERED:
            self[code] = kind
        return kind


_CLASSES = _Classes()
# Where a line may break, between two characters: never before a space, a no-break space or a
# zero-width character, nor after a no-break space; else after a space, on either side of a wide
# character or an em dash, and after a hyphen or dash that follows a letter, unless a digit follows.
_BREAK = re.compile(
    r"(?<=[smWw])(?=[^snz])"  # after a space, a wide character or an em dash
    r"|(?<=[^n])(?=[mWw])"  # before a wide character or an em dash
    r"|(?<=[aW]h)(?=[^snzd])"  # after a letter's hyphen or dash
)


@cache
def _faces() -> dict[str, tuple[_Advances, dict[str, float]]]:
    """Each face's advances and its kerning pairs in px (by the pair of characters)."""
    measured = widths()
    faces = {}
    for face, px in FONT_PX.items():
        pairs = measured["kerning_em"]["regular" if face in ("body", "footer") else "bold"]
        faces[face] = (_Advances(measured[face]), {pair: em * px for pair, em in pairs.items()})
    return faces


@cache
def _code() -> _Advances:
    return _Advances(widths()["code"])


def _advances(line: str, font: str) -> tuple[str, list[float]]:
    """The characters of one line as drawn (markdown marks take none) and each one's advance."""
    shown: list[str] = []
    advances: list[float] = []
    bold = False
    for part in INLINE.split(line):
        if not part:
            continue
        if part == "**":
            bold = not bold
        elif part[0] == "`" and part[-1] == "`" and len(part) > 1:
            inner = part[1:-1]
            if inner:  # "``" draws nothing
                code = list(map(_code().__getitem__, inner))
                # The padding rides on the span's first and last characters (one character: both).
                code[0] += CODE_PADDING_PX / 2
                code[-1] += CODE_PADDING_PX / 2
                shown.append(inner)
                advances += code
        else:
            table, kerning = _faces()["bold" if bold and font == "body" else font]
            plain = list(map(table.__getitem__, part))
            advances.append(plain[0])
            # Kerning by the pair each character makes with the one before it, within the part.
            advances += map(add, plain[1:], map(kerning.get, map(add, part, part[1:]), repeat(0.0)))
            shown.append(part)
    return "".join(shown), advances


@cache
def _shapes() -> bytes:
    """For ``bytes.translate`` of a line's UTF-8: each ASCII character that lays out as another does,
    to that one. Two characters lay out alike when they have the same class where lines break and the
    same advance in every font, and make no kerning pair (nor mark markdown, nor space a line): the
    figures 0-9 above all, which Noto Sans and DejaVu Sans Mono draw tabular. A line's rows follow
    from its shape, so the lines of answers that differ in their figures alone ("10.123 × 12 = 121.5
    GB" and "10.124 × 12 = 121.5 GB") are counted once.

    ASCII only, as a table of 256 bytes: ``str.translate`` with a table by code point looks up every
    character of a text that is not ASCII (an answer's emoji make it so) and raises a KeyError for
    each one it leaves as it is: some 570 instructions a character, a quarter of ``/vram``'s own work
    (callgrind; benchmarks/README.md), where encoding, ``bytes.translate`` and decoding take some 55.
    The characters beyond ASCII that lay out alike (× as +, the squares' emoji) are counted apart,
    which only counts a few lines more often."""
    measured = widths()
    kerned = {char for pairs in measured["kerning_em"].values() for pair in pairs for char in pair}
    tables = [table for table, _ in _faces().values()] + [_code()]
    first: dict[tuple[object, ...], str] = {}
    shapes = bytearray(range(256))
    for char in sorted(set(measured["body"]).union(*(measured[face] for face in FONT_PX), measured["code"])):
        if char in kerned or char in "`*" or char.isspace() or len(f"a{char}a".splitlines()) > 1:
            continue
        alike = first.setdefault((char.translate(_CLASSES), *(table[char] for table in tables)), char)
        if alike != char and char.isascii() and alike.isascii():
            shapes[ord(char)] = ord(alike)
    return bytes(shapes)


def _shape(text: str) -> bytes:
    """``text``'s UTF-8 with each ASCII character that lays out as another turned into that one
    (_shapes). UTF-8's bytes of any other character are never ASCII, so they pass through as they
    were; a lone surrogate (a crafted model name) too. Kept as bytes: the cache's key (_rows) hashes
    a third of a text with emoji (which make a str four bytes a character), and is decoded only when
    the cache does not know it."""
    return text.encode("utf-8", "surrogatepass").translate(_shapes())


def wrapped(line: str, font: str = "body", width: float = PHONE_TEXT_PX) -> int:
    """Rows one line of text takes at ``width`` px in ``font``."""
    return _wrapped(_shape(line).decode("utf-8", "surrogatepass"), font, width)


@lru_cache(maxsize=4096)  # an answer's lines recur: its rooms, the footers, the captions, their shapes
def _rows(shaped: bytes, font: str, width: float) -> int:
    """Rows of one line of a text as ``bytes.splitlines`` cut it (_shape's bytes): the lines that
    ``str.splitlines`` finds in it (also at the rarer separators, \u2028 or \x85), blank ones none."""
    return sum(
        [
            _wrapped(line, font, width)
            for line in shaped.decode("utf-8", "surrogatepass").splitlines()
            if line.strip()
        ]
    )


def _wrapped(line: str, font: str, width: float) -> int:
    shown, advances = _advances(line, font)
    if sum(advances) <= width:
        return 1  # most lines: no break to look for
    classes = shown.translate(_CLASSES)
    rows, used = 1, 0.0
    start = 0
    for end in [*(found.start() for found in _BREAK.finditer(classes)), len(shown)]:
        # One unbreakable run: its width, then that of the spaces after it, which hang at a row's end.
        run = classes[start:end]
        solid = start + len(run.rstrip(SPACE))
        if SPACE in classes[start:solid]:  # a space inside the run (before a no-break space, or leading)
            unit = space = 0.0
            for kind, advance in zip(run, advances[start:end]):  # noqa: B905 (the same length)
                if kind == SPACE:
                    space += advance
                else:
                    unit += advance + space
                    space = 0.0
        else:  # summed left to right from 0.0, as the one-at-a-time rule sums it
            unit = reduce(add, advances[start:solid], 0.0)
            space = reduce(add, advances[solid:end], 0.0)
        start = end
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
    rows = 0
    for text, font in parts:
        if text:
            # Each line counted in C: the cache answers most lines (their shapes recur), and a Python
            # step per line cost as much again.
            rows += sum(map(_rows, _shape(text).splitlines(), repeat(font), repeat(width)))
    return rows
