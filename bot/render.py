"""Turn an :class:`~bot.estimator.Estimate` into plain data: a Discord embed dict and terminal text.

Nothing here talks to Discord; the cog wraps the dict with ``discord.Embed.from_dict`` and the CLI
prints :func:`embed_to_text`, so both show the same content.
"""

from __future__ import annotations

import math
from typing import Any, TypedDict

from bot.estimator import SINGLE_GPU_GB, AdapterHint, Estimate, EstimateRequest, Optimizer

FITS_COLOUR = 0x2ECC71
DOES_NOT_FIT_COLOUR = 0xE74C3C

BAR_CELLS = 20  # cells for one 80 GB card: 4 GB a cell
BAR_MAX_OVERFLOW_CELLS = 20

FOOTER = (
    "First-order estimate: it leaves out temporary buffers, communication overhead and framework "
    "allocations. Confirm it on a real training step before sizing hardware."
)

# Discord's embed limits (https://discord.com/developers/docs/resources/message#embed-object-embed-limits).
EMBED_LIMITS = {
    "title": 256,
    "description": 4096,
    "fields": 25,
    "field.name": 256,
    "field.value": 1024,
    "footer.text": 2048,
    "total": 6000,
}


class EmbedField(TypedDict):
    name: str
    value: str
    inline: bool


def format_number(value: float) -> str:
    """Short, exact-looking numbers: 7, 0.5, 70.6, 405."""
    return f"{value:,.6g}" if abs(value) < 1e6 else f"{value:,.0f}"


def format_gb(value: float) -> str:
    if value == 0:
        return "0 GB"
    if abs(value) < 1:
        return f"{value:.2g} GB"
    return f"{value:,.1f} GB"


def command_line(request: EstimateRequest) -> str:
    """The inputs as a ``/vram`` line someone can copy and edit."""
    words = [f"/vram params:{request.params:g}", f"optimizer:{request.optimizer.value}"]
    if request.activations:
        words.append(f"activations:{request.activations:g}")
    if request.bytes_per_param is not None:
        words.append(f"bytes_per_param:{request.bytes_per_param:g}")
    return " ".join(words)


def usage_bar(total_gb: float, capacity_gb: float = SINGLE_GPU_GB) -> str:
    """A text bar: ``█`` for memory used, ``░`` for free, ``▓`` beyond the card after the ``|``."""
    gb_per_cell = capacity_gb / BAR_CELLS
    used = min(BAR_CELLS, round(total_gb / gb_per_cell))
    bar = "█" * used + "░" * (BAR_CELLS - used)
    if total_gb > capacity_gb:
        over = math.ceil((total_gb - capacity_gb) / gb_per_cell)
        bar += "|" + "▓" * min(over, BAR_MAX_OVERFLOW_CELLS) + ("…" if over > BAR_MAX_OVERFLOW_CELLS else "")
    percent = total_gb / capacity_gb * 100
    return f"`{bar}` {percent:,.0f} % of {capacity_gb:g} GB"


def _breakdown(estimate: Estimate) -> str:
    lines = [
        f"{part.label}: {part.bytes_per_param:g} B/param · {format_gb(part.gb)}" for part in estimate.parts
    ]
    if len(estimate.parts) > 1:
        lines.append(f"**Sum: {estimate.bytes_per_param:g} B/param**")
    return "\n".join(lines)


def _verdict(estimate: Estimate) -> str:
    verdict = estimate.single_gpu
    if verdict.fits:
        return f"✅ Fits, with {format_gb(verdict.headroom_gb)} to spare."
    text = f"❌ Does not fit: {format_gb(verdict.overflow_gb)} over."
    if verdict.sharded_gpus is None:
        return (
            text + f" The activations alone fill a {verdict.capacity_gb:g} GB card, so sharding the model "
            "states cannot help: use activation checkpointing or a smaller batch."
        )
    return (
        text + f" With the model states sharded across data-parallel GPUs (ZeRO-3 / FSDP full shard): "
        f"**{verdict.sharded_gpus} × {verdict.capacity_gb:g} GB GPUs**."
    )


def _card(hint: AdapterHint) -> str:
    if hint.smallest_card_gb is None:
        return "more than one 80 GB card"
    return f"a {hint.smallest_card_gb:g} GB card"


def _lora(estimate: Estimate) -> str:
    lora, qlora = estimate.lora, estimate.qlora
    return (
        f"💡 **LoRA** freezes the base weights, so gradients and optimizer state cover only the adapters "
        f"(budgeted at 1 % of the parameters): {format_gb(lora.base_gb)} frozen 16-bit base + "
        f"{format_gb(lora.adapters_gb)} adapters + {format_gb(lora.activations_gb)} activations = "
        f"**{format_gb(lora.total_gb)}**, fits {_card(lora)}.\n"
        f"**QLoRA** (4-bit NF4 base, ~{qlora.base_bytes_per_param:g} B/param): "
        f"**{format_gb(qlora.total_gb)}**, fits {_card(qlora)}."
    )


def title(estimate: Estimate) -> str:
    size = format_number(estimate.request.params)
    return f"VRAM to fully fine-tune a {size}B model · {estimate.optimizer_title}"


def render_embed(estimate: Estimate) -> dict[str, Any]:
    """The answer as a Discord embed object (the JSON shape Discord documents)."""
    request = estimate.request
    formula = (
        f"M = N × B = {format_number(request.params)} × {estimate.bytes_per_param:g} = "
        f"{format_gb(estimate.model_states_gb)}\n"
        f"V = M + A = {format_gb(estimate.model_states_gb)} + {format_gb(estimate.activations_gb)} = "
        f"**{format_gb(estimate.total_gb)}**"
    )
    fields: list[EmbedField] = [
        {"name": "Breakdown per parameter", "value": _breakdown(estimate), "inline": False},
        {"name": "Model states M", "value": format_gb(estimate.model_states_gb), "inline": True},
        {"name": "Activations A", "value": format_gb(estimate.activations_gb), "inline": True},
        {"name": "Total V", "value": f"**{format_gb(estimate.total_gb)}**", "inline": True},
        {"name": f"Single {SINGLE_GPU_GB:g} GB GPU", "value": _verdict(estimate), "inline": False},
        {"name": "LoRA hint", "value": _lora(estimate), "inline": False},
        {"name": "Memory use", "value": usage_bar(estimate.total_gb), "inline": False},
    ]
    return {
        "title": title(estimate),
        "description": f"`{command_line(request)}`\n{formula}",
        "color": FITS_COLOUR if estimate.single_gpu.fits else DOES_NOT_FIT_COLOUR,
        "fields": fields,
        "footer": {"text": FOOTER},
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
    for key, text in texts.items():
        if len(text) > EMBED_LIMITS[key]:
            problems.append(f"{key} has {len(text)} characters")
    if len(fields) > EMBED_LIMITS["fields"]:
        problems.append(f"{len(fields)} fields")
    for index, field in enumerate(fields):
        for key in ("name", "value"):
            text = field[key]
            if not text.strip():
                problems.append(f"field {index} {key} is empty")
            if len(text) > EMBED_LIMITS[f"field.{key}"]:
                problems.append(f"field {index} {key} has {len(text)} characters")
    total = sum(len(t) for t in texts.values()) + sum(len(f["name"]) + len(f["value"]) for f in fields)
    if total > EMBED_LIMITS["total"]:
        problems.append(f"{total} characters in all")
    return problems


def embed_to_text(embed: dict[str, Any]) -> str:
    """The embed for a terminal: the same words, without Discord's markdown."""

    def plain(text: str) -> str:
        return text.replace("**", "").replace("`", "")

    lines = [plain(embed["title"]), "=" * len(embed["title"]), plain(embed["description"]), ""]
    for field in embed["fields"]:
        name, value = plain(field["name"]), plain(field["value"])
        if "\n" in value or len(name) + len(value) > 78:
            if lines[-1]:
                lines.append("")
            lines += [f"{name}:", *(f"  {line}" for line in value.splitlines()), ""]
        else:
            lines.append(f"{name}: {value}")
    if lines[-1]:
        lines.append("")
    lines.append(plain(embed["footer"]["text"]))
    return "\n".join(lines)


def optimizer_choice_name(optimizer: Optimizer) -> str:
    """How a choice reads in Discord's picker; it starts with the key so typing the key finds it."""
    return f"{optimizer.value} · {optimizer.display_name}, ~{optimizer.bytes_per_param:g} B/param"
