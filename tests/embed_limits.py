"""Discord's embed limits, checked on the JSON the renderers produce (only the tests need this)."""

from __future__ import annotations

from typing import Any

# https://discord.com/developers/docs/resources/message#embed-object-embed-limits
EMBED_LIMITS = {
    "title": 256,
    "description": 4096,
    "fields": 25,
    "field.name": 256,
    "field.value": 1024,
    "footer.text": 2048,
    "total": 6000,
}


def embed_limit_problems(embed: dict[str, Any]) -> list[str]:
    """Every way ``embed`` breaks Discord's embed limits; empty when it is within them."""
    problems: list[str] = []
    fields = embed.get("fields", [])
    texts = {
        "title": embed.get("title", ""),
        "description": embed.get("description", ""),
        "footer.text": embed.get("footer", {}).get("text", ""),
    }
    for key, value in texts.items():
        if len(value) > EMBED_LIMITS[key]:
            problems.append(f"{key} has {len(value)} characters")
    if len(fields) > EMBED_LIMITS["fields"]:
        problems.append(f"{len(fields)} fields")
    for index, field in enumerate(fields):
        for key in ("name", "value"):
            value = field[key]
            if not value.strip():
                problems.append(f"field {index} {key} is empty")
            if len(value) > EMBED_LIMITS[f"field.{key}"]:
                problems.append(f"field {index} {key} has {len(value)} characters")
    total = sum(len(t) for t in texts.values()) + sum(len(f["name"]) + len(f["value"]) for f in fields)
    if total > EMBED_LIMITS["total"]:
        problems.append(f"{total} characters in all")
    return problems
