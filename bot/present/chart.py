"""Compare's chart: one stacked bar per method (each optimizer, then LoRA and QLoRA), as PNG bytes.

Drawn with Pillow rather than matplotlib: the benchmark (``benchmarks/chart.py``) measured matplotlib's
Agg backend at tens of milliseconds of CPU per chart (and half a second to import), Pillow at a few;
the chart is a handful of rectangles and labels, which Pillow draws directly. Pillow is imported
inside :func:`compare_png` only, so the default answer (and every process that never shows Compare)
never loads it.

The bars run across, one under the other, each with its name above it and its total at its end: on a
phone the picture is some 300 px wide, and horizontal bars keep every label horizontal and readable
there. The picture is drawn 600 px wide with large type for the same reason. The colours are those
of the answer's emoji squares (🟦 🟩 🟨 🟪), so the two views read alike.
"""

from __future__ import annotations

import struct
import zlib
from functools import lru_cache
from typing import TYPE_CHECKING

from bot.estimate.core import AdapterHint, Estimate, compare_methods, estimate
from bot.estimate.request import EstimateRequest
from bot.estimate.value_type import value_type
from bot.present.answer import part_sizes
from bot.present.i18n import Language
from bot.present.phrases import short_card_name, short_method_name
from bot.present.words import Words

if TYPE_CHECKING:  # Pillow's types only: the module itself is imported where a chart is drawn
    from PIL import Image, ImageDraw, ImageFont

# 600 px wide with type of 30 to 34 px: a phone shows the picture some 300 px wide, so the type reads
# at 15 to 17 px there (at 800 px wide and 26 px it was 8 px, too small: seen in the screenshots).
WIDTH = 600
MARGIN = 24
ROW_HEIGHT = 100  # the name (34 px type) and the bar (40 px) of one method, with a gap
BAR_HEIGHT = 40
LEGEND_ROW = 44  # one row of the legend; German's longer words take two
AXIS_HEIGHT = 56  # the card's line runs through every row and is named below the last
# Discord's dark embed background and text colours, so the picture sits in the embed unboxed.
BACKGROUND = (43, 45, 49)
TEXT = (219, 222, 225)
CAPACITY = (242, 63, 67)
# The emoji squares' colours (Twemoji, which Discord draws): 🟦 🟩 🟨 🟪.
COLOURS: dict[str, tuple[int, int, int]] = {
    "weights": (85, 172, 238),
    "gradients": (120, 177, 89),
    "optimizer": (253, 203, 88),
    "activations": (170, 142, 214),
}
LEGEND_KEYS = {
    "weights": "chart.weights",
    "gradients": "chart.gradients",
    "optimizer": "chart.optimizer",
    "activations": "chart.activations",
}
ADAPTER_KEYS = {"LoRA": "compare.lora", "QLoRA": "compare.qlora"}


@value_type
class Bar:
    name: str
    parts: list[tuple[str, float]]  # (kind, GB), in the legend's order

    @property
    def total(self) -> float:
        return sum(gb for _, gb in self.parts)


def _adapter_parts(hint: AdapterHint, chosen: Estimate) -> list[tuple[str, float]]:
    """LoRA's memory by kind: the frozen base and the adapters' own weights are weights; gradients
    and optimizer state exist for the adapters only, split as the optimizer splits its bytes."""
    by_kind: dict[str, float] = {"weights": hint.base_gb, "gradients": 0.0, "optimizer": 0.0}
    for part in chosen.parts:
        by_kind[part.kind] += hint.adapter_params_billion * part.bytes_per_param
    by_kind["activations"] = hint.activations_gb
    return list(by_kind.items())


def bars(chosen: Estimate, w: Words) -> list[Bar]:
    rows = [
        Bar(
            w("compare.row_name", method=short_method_name(row, w), bytes=w.num(row.bytes_per_param)),
            part_sizes(row),
        )
        for row in compare_methods(chosen.request)
    ]
    for hint in (chosen.lora, chosen.qlora):
        name = w(
            "compare.adapter_name",
            method=w(ADAPTER_KEYS[hint.method]),
            optimizer=short_method_name(chosen, w),
        )
        rows.append(Bar(name, _adapter_parts(hint, chosen)))
    return rows


# Index of each colour in the picture's palette.
_PALETTE = [BACKGROUND, TEXT, CAPACITY, *COLOURS.values()]
_BACKGROUND, _TEXT, _CAPACITY = 0, 1, 2
_INDEX = {kind: 3 + number for number, kind in enumerate(COLOURS)}
BIG, SMALL = 34, 30  # type sizes in px: names and totals; legend and card


@lru_cache(maxsize=2)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's own scalable font (no system font needed), loaded once: loading it costs as much as
    drawing a chart."""
    from PIL import ImageFont

    return ImageFont.load_default(size=size)


@lru_cache(maxsize=1024)
def _text_mask(text: str, size: int) -> Image.Image:
    """A text as a one-bit mask, kept: rendering type is most of a chart's cost, and the names, the
    legend and the card's label are the same in every chart of a language."""
    from PIL import Image, ImageDraw

    font = _font(size)
    _, _, right, bottom = font.getbbox(text)
    mask = Image.new("1", (max(1, int(right)), max(1, int(bottom))))
    ImageDraw.Draw(mask).text((0, 0), text, font=font, fill=1)
    return mask


def _label(
    image: Image.Image, draw: ImageDraw.ImageDraw, at: tuple[float, float], text: str, size: int, colour: int
) -> None:
    """``text`` at ``at`` on a patch of background, so a line under it never crosses the letters
    (``draw``: the chart's one ``ImageDraw`` on ``image``)."""
    mask = _text_mask(text, size)
    x, y = round(at[0]), round(at[1])
    draw.rectangle((x - 4, y, x + mask.width + 4, y + mask.height + 2), fill=_BACKGROUND)
    image.paste(colour, (x, y), mask)


# The card's dashed line: dashes of 8 px every 14, 3 px wide, drawn at x = _DASH_X of its mask.
_DASH_X = 3


@lru_cache(maxsize=64)
def _dashes(length: int) -> Image.Image:
    """The card's dashed line over ``length`` px as a one-bit mask, kept per length (a chart's height
    follows its number of bars): drawn dash by dash it was some 60 Pillow calls a chart."""
    from PIL import Image, ImageDraw

    mask = Image.new("1", (2 * _DASH_X + 1, length + 1))
    draw = ImageDraw.Draw(mask)
    for y in range(0, length, 14):
        draw.line((_DASH_X, y, _DASH_X, min(y + 8, length)), fill=1, width=3)
    return mask


@lru_cache(maxsize=256)
def compare_png(request: EstimateRequest, language: Language) -> bytes:
    """The chart for ``request`` in ``language``, as PNG bytes.

    Cached by request and language (the request is a frozen, hashable model): a chart depends on
    nothing else, and people click Compare on the same answer again and again. 256 charts of about
    10 kB each keep the cache under 3 MB.
    """
    from PIL import Image, ImageDraw  # only when Compare is shown: see the module's doc

    w = Words(language)
    chosen = estimate(request)
    rows = bars(chosen, w)
    capacity = chosen.single_gpu.capacity_gb

    # The legend, in the order the bars stack, wrapped onto a second row where the words are long.
    legend: list[tuple[int, int, str, str]] = []  # x, y, kind, label
    x, y = MARGIN, 12
    for kind in COLOURS:
        label = w(LEGEND_KEYS[kind])
        item = 38 + _text_mask(label, SMALL).width
        if x + item > WIDTH - MARGIN:
            x, y = MARGIN, y + LEGEND_ROW
        legend.append((x, y, kind, label))
        x += item + 24
    legend_height = y + LEGEND_ROW + 8

    height = legend_height + ROW_HEIGHT * len(rows) + AXIS_HEIGHT
    # A palette image: the chart has seven colours, and a palette PNG (half a byte a pixel) encodes
    # several times quicker than RGB (benchmarks/chart.py). Its text is not antialiased, which
    # Discord's scaling of the picture down to the embed's width smooths over.
    image = Image.new("P", (WIDTH, height), _BACKGROUND)
    image.putpalette([channel for colour in _PALETTE for channel in colour])
    draw = ImageDraw.Draw(image)
    for x, y, kind, label in legend:
        draw.rectangle((x, y + 4, x + 28, y + 32), fill=_INDEX[kind])
        _label(image, draw, (x + 38, y), label, SMALL, _TEXT)

    # The scale leaves room after the longest bar for its total.
    longest = max([bar.total for bar in rows] + [capacity])
    total_room = max(_text_mask(w.gb(bar.total), BIG).width for bar in rows) + 16
    scale = (WIDTH - 2 * MARGIN - total_room) / longest if longest > 0 else 0.0
    bottom = legend_height + ROW_HEIGHT * len(rows)

    # The bars first, then the card's capacity as a dashed line over them, then the words, each on a
    # patch of background, so that the line shows through the bars but never through a label.
    top = legend_height
    ends = []
    for bar in rows:
        y0, y1 = top + 46, top + 46 + BAR_HEIGHT
        left = float(MARGIN)
        for kind, gb in bar.parts:
            if gb <= 0:
                continue
            end = left + gb * scale
            draw.rectangle((round(left), y0, max(round(left), round(end) - 1), y1), fill=_INDEX[kind])
            left = end
        ends.append(left)
        top += ROW_HEIGHT
    line_x = round(MARGIN + capacity * scale)
    dashes = _dashes(bottom - legend_height)
    image.paste(_CAPACITY, (line_x - _DASH_X, legend_height), dashes)
    label = w("chart.capacity", card=short_card_name(chosen.single_gpu.gpu))
    label_width = _text_mask(label, SMALL).width
    label_x = min(max(MARGIN, line_x - label_width / 2), WIDTH - MARGIN - label_width)
    _label(image, draw, (label_x, bottom + 10), label, SMALL, _CAPACITY)

    top = legend_height
    for bar, end in zip(rows, ends, strict=True):
        _label(image, draw, (MARGIN, top), bar.name, BIG, _TEXT)
        # Each bar's total at its end, red when it does not fit the card.
        colour = _TEXT if bar.total <= capacity else _CAPACITY
        _label(image, draw, (end + 10, top + 46), w.gb(bar.total), BIG, colour)
        top += ROW_HEIGHT

    return _png(image)


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    """One PNG chunk: length, type, data, and the CRC-32 of type and data (PNG spec, section 5.3)."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))


def _png(image: Image.Image) -> bytes:
    """``image``, a palette picture of at most 16 colours, as a 4-bit palette PNG, written here
    rather than by Pillow's ``save``: Pillow tries four PNG filters on every row before deflating it,
    which was 10 M of the chart's 20 M instructions (benchmarks/README.md); on flat colour the
    unfiltered rows deflate as small (about 9 kB either way), so every row is written unfiltered."""
    width, height = image.size
    row_bytes = (width + 1) // 2  # two pixels a byte, each row padded to a whole byte
    # Each row starts with its filter type, 0 for none (PNG spec, section 7.3). Pillow's raw encoder
    # pads each row to the stride given with zero bytes (RawEncode.c), so the rows with one zero byte
    # after each are, shifted by one byte, the rows with a zero byte before each: a tenth of the
    # chart's instructions less than joining some thousand rows in a Python loop.
    padded = image.tobytes("raw", ("P;4", row_bytes + 1))
    # Deflate level 2: as quick as level 1 on this picture and a tenth smaller. The zero byte and the
    # rows go in one after the other, the rows as a view: no copy of the picture's 300 kB to make.
    deflate = zlib.compressobj(2)
    idat = deflate.compress(b"\0") + deflate.compress(memoryview(padded)[:-1]) + deflate.flush()
    header = struct.pack(">IIBBBBB", width, height, 4, 3, 0, 0, 0)  # 4-bit, palette, no interlace
    return b"".join(
        (
            b"\x89PNG\r\n\x1a\n",
            _png_chunk(b"IHDR", header),
            _png_chunk(b"PLTE", bytes(channel for colour in _PALETTE for channel in colour)),
            _png_chunk(b"IDAT", idat),
            _png_chunk(b"IEND", b""),
        )
    )
