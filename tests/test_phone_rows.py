"""The product's phone-row counter (bot/present/phone.py) counts as the plain rules count, one glyph
and one break test at a time (tests/phone_reference.py, the counter as first written): for any line
in any font and width, and for every line of the answers the bot renders. The product's counter
takes shortcuts for speed (issue 24): table look-ups and one regular expression instead of a step per
character, and one count for lines that differ only in characters that lay out alike (the figures);
none of them may change a single row.
"""

from __future__ import annotations

from hypothesis import strategies as st

from bot.estimate.request import EstimateRequest
from bot.present.custom_ids import COMPARE, DETAILS, ESTIMATE
from bot.present.i18n import Language
from bot.present.phone import FONT_PX, PHONE_TEXT_PX, embed_rows, wrapped
from bot.present.views import render_message
from tests import phone_reference
from tests.property_runs import property_test
from tests.strategies import requests

# What the answers are made of, and what the rules treat apart: spaces and no-break spaces, hyphens
# and dashes beside letters and figures, emoji with their joiners and selectors, wide letters,
# markdown's bold and code, figures, kerned pairs ("AV", "Te"), letters the fonts do not measure.
PIECES = [
    *"aeilmnrstAVTWYé ß0123456789.,:;+=×≈·→()%",
    " ",
    "  ",
    "\u00a0",
    "-",
    "–",
    "—",
    "\ufe0f",
    "\u200d",
    "🟦",
    "⬛",
    "✅",
    "💡",
    "漢",
    "０",
    "\ud83d",  # a lone surrogate, as a crafted payload's JSON may carry in a model name
    "**",
    "`",
    "`/vram params:7`",
    "GB",
    "AV",
    "Te",
]
lines = st.lists(st.sampled_from(PIECES), max_size=60).map("".join)
fonts = st.sampled_from(sorted(FONT_PX))
widths = st.sampled_from([PHONE_TEXT_PX, 120.0, 31.0, 7.5])


@property_test(300, lines, fonts, widths)
def test_a_line_takes_the_rows_the_plain_rules_give(line: str, font: str, width: float) -> None:
    assert wrapped(line, font, width) == phone_reference.wrapped(line, font, width), repr(line)


@property_test(50, requests())
def test_every_answer_takes_the_rows_the_plain_rules_give(request: EstimateRequest) -> None:
    for view in (ESTIMATE, DETAILS, COMPARE):
        for language in Language:
            embed = render_message(request, view, language).embed
            assert embed_rows(embed) == phone_reference.embed_rows(embed), (view, language.value)


# A text's lines as str.splitlines cuts them: the counter splits the shaped UTF-8 at "\n" and "\r"
# first, then at the rarer separators a user's model name may bring; blank lines (a no-break space
# alone too) take no row.
texts = st.lists(
    st.sampled_from([*PIECES, "\n", "\r", "\r\n", "\u2028", "\x85", "\x0b", "\x1c"]), max_size=80
).map("".join)


@property_test(200, texts, texts)
def test_a_text_of_many_lines_takes_the_rows_the_plain_rules_give(title: str, description: str) -> None:
    embed = {"title": title, "description": description, "footer": {"text": description}}
    assert embed_rows(embed) == phone_reference.embed_rows(embed), (title, description)


def test_every_line_separator_and_blank_line_counts_as_the_plain_rules_count() -> None:
    for separator in ["\n", "\r", "\r\n", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]:
        for text in (f"a{separator}a", f"🟦 a{separator}\u00a0{separator}{'m ' * 40}"):
            embed = {"title": text, "description": text}
            assert embed_rows(embed) == phone_reference.embed_rows(embed), repr(text)
