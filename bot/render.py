"""Turn an :class:`~bot.estimator.Estimate` into plain data: a Discord embed dict and terminal text.

Nothing here talks to Discord; the cog wraps the dict with ``discord.Embed.from_dict`` and the CLI
prints :func:`embed_to_text`, so both show the same content.
"""

from __future__ import annotations

import math
from typing import Any, TypedDict

from bot.estimator import (
    DEFAULT_LORA_RANK,
    SINGLE_GPU_GB,
    AdapterHint,
    Estimate,
    EstimateRequest,
    Optimizer,
)

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
    """The inputs as a ``/vram`` line someone can copy and edit: only what differs from the defaults."""
    words = ["/vram"]
    if request.params is not None:
        words.append(f"params:{request.params:g}")
    if request.model is not None:
        words.append(f"model:{request.model.key}")
    words.append(f"optimizer:{request.optimizer.value}")
    optional: list[tuple[str, object, object]] = [
        ("activations", request.activations, None),
        ("bytes_per_param", request.bytes_per_param, None),
        ("gpu", request.gpu.value if request.gpu else None, None),
        ("gpus", request.gpus, 1),
        ("lora_rank", request.lora_rank, DEFAULT_LORA_RANK),
        ("batch_size", request.batch_size, None),
        ("seq_len", request.seq_len, None),
        ("checkpointing", request.checkpointing, False),
        ("flash_attention", request.flash_attention, True),
    ]
    for name, value, default in optional:
        if value != default and value is not None:
            text = f"{value:g}" if isinstance(value, float) else str(value)
            words.append(f"{name}:{text}")
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


def verdict_title(estimate: Estimate) -> str:
    verdict = estimate.single_gpu
    # Unless a card was picked, keep the plain "80 GB GPU" of the original calculator.
    return f"Single {verdict.gpu.display_name}" if verdict.named else f"Single {verdict.capacity_gb:g} GB GPU"


def _cluster(estimate: Estimate) -> tuple[str, str] | None:
    cluster = estimate.cluster
    if cluster is None:
        return None
    card = estimate.single_gpu.gpu.display_name
    lines = [
        f"{'✅' if row.fits else '❌'} {row.strategy}: {format_gb(row.gb)} per GPU" for row in cluster.rows
    ]
    best = cluster.smallest_fitting
    if best is None:
        needed = estimate.single_gpu.sharded_gpus
        lines.append(
            "No strategy fits on this many cards"
            + (f"; ZeRO-3 needs {needed} of them." if needed else "; the activations alone fill a card.")
        )
    else:
        lines.append(f"**{best}** is the smallest strategy that fits.")
    lines.append("(Rajbhandari et al. 2020; activations are added to every GPU.)")
    return f"On {cluster.gpus} × {card}", "\n".join(lines)


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
    return f"one {hint.smallest_card_gb:g} GB card"


def _adapters(lora: AdapterHint, params_billion: float) -> str:
    if lora.rank is None:
        return "budgeted at 1 % of the parameters"
    share = lora.adapter_params_billion / params_billion * 100
    return (
        f"rank {lora.rank} on every attention and MLP linear layer: "
        f"{format_count(lora.adapter_params_billion * 1e9)} adapter parameters, {share:.2g} % of the model"
    )


def format_count(count: float) -> str:
    """A parameter count as 41.9M or 8.03B."""
    if count >= 1e9:
        return f"{count / 1e9:,.3g}B"
    if count >= 1e6:
        return f"{count / 1e6:,.3g}M"
    return f"{count:,.0f}"


def _lora(estimate: Estimate) -> str:
    lora, qlora = estimate.lora, estimate.qlora
    return (
        f"💡 **LoRA** freezes the base weights, so gradients and optimizer state cover only the adapters "
        f"({_adapters(lora, estimate.params_billion)}): {format_gb(lora.base_gb)} frozen 16-bit base + "
        f"{format_gb(lora.adapters_gb)} adapters + {format_gb(lora.activations_gb)} activations = "
        f"**{format_gb(lora.total_gb)}**, fits {_card(lora)}.\n"
        f"**QLoRA** (4-bit NF4 base, ~{qlora.base_bytes_per_param:g} B/param): "
        f"**{format_gb(qlora.total_gb)}**, fits {_card(qlora)}."
    )


def title(estimate: Estimate) -> str:
    request = estimate.request
    if request.model is not None and request.params is None:
        what = request.model.name
    else:
        what = f"a {format_number(estimate.params_billion)}B model"
    return f"VRAM to fully fine-tune {what} · {estimate.optimizer_title}"


def _preset_line(estimate: Estimate) -> str | None:
    model = estimate.request.model
    if model is None:
        return None
    if estimate.preset_overridden:
        return (
            f"`params` was given, so it wins over the {model.name} preset "
            f"({format_count(model.parameter_count)} parameters)."
        )
    experts = f", {model.experts} experts" if model.experts > 1 else ""
    return (
        f"{model.name}: {model.parameter_count:,} parameters, counted from its architecture "
        f"({model.layers} layers, hidden {model.hidden_size}, {model.attention_heads} heads / "
        f"{model.kv_heads} KV heads, MLP {model.intermediate_size}, vocabulary {model.vocab_size}{experts})."
    )


def _activations_value(estimate: Estimate) -> str:
    found = estimate.activation_estimate
    if found is None:
        return format_gb(estimate.activations_gb)
    return f"≈ {format_gb(estimate.activations_gb)} (estimated)"


def _activation_assumptions(estimate: Estimate) -> str | None:
    found = estimate.activation_estimate
    if found is None:
        return None
    attention = (
        "FlashAttention (no s² term)" if found.flash_attention else "standard attention (with s² term)"
    )
    recompute = "full activation checkpointing" if found.checkpointing else "no checkpointing"
    return (
        f"Estimated for batch {found.batch_size} × {found.seq_len:,} tokens per GPU, 16-bit activations, "
        f"{attention}, {recompute}: {format_gb(found.per_layer_gb)} per layer + "
        f"{format_gb(found.outside_layers_gb)} for embeddings and logits "
        "(Korthikanti et al. 2022). Enter `activations` to use a measured figure instead."
    )


def render_embed(estimate: Estimate) -> dict[str, Any]:
    """The answer as a Discord embed object (the JSON shape Discord documents)."""
    request = estimate.request
    formula = (
        f"M = N × B = {format_number(estimate.params_billion)} × {estimate.bytes_per_param:g} = "
        f"{format_gb(estimate.model_states_gb)}\n"
        f"V = M + A = {format_gb(estimate.model_states_gb)} + {format_gb(estimate.activations_gb)} = "
        f"**{format_gb(estimate.total_gb)}**"
    )
    fields: list[EmbedField] = [
        {"name": "Breakdown per parameter", "value": _breakdown(estimate), "inline": False},
        {"name": "Model states M", "value": format_gb(estimate.model_states_gb), "inline": True},
        {"name": "Activations A", "value": _activations_value(estimate), "inline": True},
        {"name": "Total V", "value": f"**{format_gb(estimate.total_gb)}**", "inline": True},
    ]
    assumptions = _activation_assumptions(estimate)
    if assumptions:
        fields.append({"name": "Activation estimate", "value": assumptions, "inline": False})
    fields.append({"name": verdict_title(estimate), "value": _verdict(estimate), "inline": False})
    cluster = _cluster(estimate)
    if cluster:
        fields.append({"name": cluster[0], "value": cluster[1], "inline": False})
    fields += [
        {"name": "LoRA hint", "value": _lora(estimate), "inline": False},
        {
            "name": "Memory use",
            "value": usage_bar(estimate.total_gb, estimate.single_gpu.capacity_gb),
            "inline": False,
        },
    ]
    description = [f"`{command_line(request)}`"]
    preset = _preset_line(estimate)
    if preset:
        description.append(preset)
    description.append(formula)
    return {
        "title": title(estimate),
        "description": "\n".join(description),
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
