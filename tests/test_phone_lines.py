"""The phone-line counter agrees with ../shared/tools/discord-preview/ (issue 22, point 3).

``phone_calibration.json`` holds training and serving views (glance, Details, Compare) in English
and German as the bot rendered them on main ad1666b, each with the ``phone.embed_lines`` that the
preview's shoot.sh measured for it at 360 px. The old counter (40 columns a line, every character
one column) gave 12–14 where the preview draws 14–16 for the German serving glances.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.phone_lines import phone_lines, wrapped

SAMPLES: list[dict[str, Any]] = json.loads(
    Path(__file__).with_name("phone_calibration.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("sample", SAMPLES, ids=[str(s["view"]) for s in SAMPLES])
def test_the_counter_counts_the_previews_phone_lines(sample: dict[str, Any]) -> None:
    assert phone_lines(sample["embed"]) == sample["preview_phone_lines"]


def test_lines_break_where_chromium_breaks_them() -> None:
    nbsp = "\u00a0"
    assert wrapped("x" * 30) == 1
    assert wrapped("x" * 40) == 2  # a word wider than the row breaks inside it
    assert wrapped(" ".join(["abcd"] * 7)) == 1
    assert wrapped(" ".join(["abcd"] * 9)) == 2  # words kept whole
    assert wrapped("🟦" * 15) == 1
    assert wrapped("🟦" * 16) == 2
    glued = f"{'word ' * 6}🟪{nbsp}activations"
    assert wrapped(glued) == 2  # no break beside a no-break space: the emoji moves with its word
    assert wrapped("M" * 18, "title") == 2
    assert wrapped("M" * 18) == 1
    assert wrapped("**" + "m" * 19 + "**") == 2
    assert wrapped("m" * 19) == 1
    assert phone_lines({"title": "a", "description": "b\n\nc", "footer": {"text": "d"}}) == 4
