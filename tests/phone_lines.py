"""The tests' view of a phone: the product's row counter (bot/present/phone.py, calibrated on the
preview tool by tests/test_phone_lines.py), Discord's character count, and the views known to be over."""

from __future__ import annotations

from typing import Any

from bot.present.phone import embed_rows, wrapped

__all__ = ["assert_phone_lines_within", "embed_characters", "phone_lines", "wrapped"]


phone_lines = embed_rows  # the tests' name for it


def embed_characters(embed: dict[str, Any]) -> int:
    """The characters Discord counts against an embed's limit: title, description, fields, footer."""
    total = len(embed.get("title", "")) + len(embed.get("description", ""))
    total += sum(len(f["name"]) + len(f["value"]) for f in embed.get("fields", []))
    return total + len(embed.get("footer", {}).get("text", ""))


# Training answers over their limit on the preview's phone even after the answer gives rows back
# (bot.present.answer.ROOMS): none now (German's three-row advice where every card overflows has
# the last room's terse advice, two rows). A test holding one asserts that it is still over, so
# that a fix fails it until its entry goes (as accuracy_serve's KNOWN_GAPS do).
KNOWN_OVER: frozenset[str] = frozenset()


def assert_phone_lines_within(embed: dict[str, Any], allowed: int, label: str) -> None:
    lines = phone_lines(embed)
    if label in KNOWN_OVER:
        assert lines > allowed, f"{label} fits a phone now ({lines} lines): drop it from KNOWN_OVER"
    else:
        assert lines <= allowed, f"{label}: {lines} phone lines, more than {allowed}"
