"""An embed for a terminal: the offline preview prints what Discord would show."""

from __future__ import annotations

from typing import Any


def embed_to_text(embed: dict[str, Any]) -> str:
    """The embed for a terminal: the same words, without Discord's markdown."""

    def plain(value: str) -> str:
        # No-break spaces keep a phone from wrapping inside a figure; a terminal needs plain ones.
        return value.replace("**", "").replace("`", "").replace("\u00a0", " ")

    lines = [plain(embed["title"]), "=" * len(embed["title"]), plain(embed["description"]), ""]
    for field in embed.get("fields", []):
        name, value = plain(field["name"]), plain(field["value"])
        if "\n" in value or len(name) + len(value) > 78:
            if lines[-1]:
                lines.append("")
            lines += [f"{name}:", *(f"  {line}" for line in value.splitlines()), ""]
        else:
            lines.append(f"{name}: {value}")
    if "image" in embed:  # Compare's chart: the terminal names it (``--chart`` writes it)
        if lines[-1]:
            lines.append("")
        lines.append(f"[{embed['image']['url'].removeprefix('attachment://')}]")
    footer = embed.get("footer")  # a glance short of phone rows leaves its footer to Details
    if footer:
        if lines[-1]:
            lines.append("")
        lines.append(plain(footer["text"]))
    return "\n".join(lines)
