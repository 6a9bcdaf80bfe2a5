"""Compare's chart: a PNG per request and language, cached, and never loaded for the default answer."""

from __future__ import annotations

import struct

from bot.estimate.core import compare_methods, estimate
from bot.estimate.optimizers import Optimizer, Precision
from bot.estimate.request import parse_request
from bot.present.chart import WIDTH, bars, compare_png
from bot.present.custom_ids import COMPARE
from bot.present.i18n import Language
from bot.present.views import render_message
from bot.present.words import Words
from tests.fresh_python import FreshSteps


def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk comes first
    return width, height


def test_the_chart_is_a_png_per_request_and_language_and_is_cached() -> None:
    request = parse_request(params=7, activations=20)
    english = compare_png(request, Language.EN)
    assert png_size(english)[0] == WIDTH
    assert compare_png(request, Language.EN) is english  # from the cache
    assert compare_png(parse_request(params=7, activations=20), Language.EN) is english  # equal requests
    assert compare_png(request, Language.DE) != english  # German labels and numbers
    assert compare_png(parse_request(params=8, activations=20), Language.EN) != english


def test_the_bars_are_every_optimizer_then_lora_and_qlora_with_the_parts_stacked() -> None:
    chosen = estimate(parse_request(params=7, activations=20))
    rows = bars(chosen, Words(Language.DE))
    assert [bar.name for bar in rows] == [
        "Adam · 16 B/Param.",
        "8-Bit-Adam · 12 B/Param.",
        "SGD · 8 B/Param.",
        # The 2026 optimizers: paged 8-bit AdamW counts what stays on the card (its moments page out).
        "Gepagter 8-Bit-AdamW · 8 B/Param.",
        "Adafactor · 8,01 B/Param.",
        "Lion · 12 B/Param.",
        "Muon · 12,52 B/Param.",
        "LoRA · Adam",
        "QLoRA · Adam",
    ]
    assert [round(bar.total, 6) for bar in rows] == [
        132,
        104,
        76,
        76,
        76.07,
        104,
        107.64,
        round(chosen.lora.total_gb, 6),
        round(chosen.qlora.total_gb, 6),
    ]
    assert [kind for kind, _ in rows[0].parts] == ["weights", "gradients", "optimizer", "activations"]
    lora = dict(rows[7].parts)
    assert lora["gradients"] < 1  # only the adapters have gradients and optimizer state
    assert lora["weights"] > 14  # the frozen 16-bit base and the adapters' own weights


def test_a_custom_b_and_a_huge_model_still_draw() -> None:
    for request in (
        parse_request(params=7, bytes_per_param=10),
        parse_request(params=100_000, activations=1_000_000, gpu="t4"),
        parse_request(params=1e-9, bytes_per_param=1e-9),
    ):
        assert png_size(compare_png(request, Language.EN))[0] == WIDTH


def test_the_default_answer_never_loads_the_plotting_library(fresh_steps: FreshSteps) -> None:
    # A fresh interpreter's `vram-bot estimate 7 --optimizer sgd` and `estimate 7 --view compare --json`.
    assert fresh_steps.step("estimate").loaded_of("PIL") == []


def test_the_png_is_a_valid_four_bit_palette_picture_of_unfiltered_rows() -> None:
    # The chart writes its own PNG (Pillow's save filters every row, half the chart's instructions):
    # Pillow must read it back with its checksums, and every row must be marked unfiltered.
    import io
    import zlib

    from PIL import Image

    from bot.present.chart import COLOURS

    data = compare_png(parse_request(params=13, activations=4), Language.DE)
    Image.open(io.BytesIO(data)).verify()  # chunk CRCs and structure
    picture = Image.open(io.BytesIO(data))
    assert (picture.mode, data[24], data[25]) == ("P", 4, 3)  # 4 bits a pixel, palette colour type
    width, height = png_size(data)
    idat = data.index(b"IDAT")
    (length,) = struct.unpack(">I", data[idat - 4 : idat])
    rows = zlib.decompress(data[idat + 4 : idat + 4 + length])
    row_bytes = 1 + (width + 1) // 2
    assert len(rows) == row_bytes * height
    assert {rows[start] for start in range(0, len(rows), row_bytes)} == {0}
    shown = {colour for _, colour in picture.convert("RGB").getcolors(maxcolors=16) or []}
    assert set(COLOURS.values()) <= shown


def test_one_compare_estimates_each_request_once() -> None:
    """Compare's text and its chart both list every optimizer (each row a full estimate), and the
    chosen optimizer's row and setup are the answer's own request: kept, each is estimated once."""
    for cached in (estimate, compare_methods, compare_png):
        cached.cache_clear()
    request = parse_request(params=7.25, activations=20, optimizer="adam8bit")
    render_message(request, COMPARE, Language.EN)
    compare_png(request, Language.EN)
    # The request itself, the six other optimizers and the two other training setups.
    assert estimate.cache_info().misses == 1 + (len(Optimizer) - 1) + (len(Precision) - 1)
