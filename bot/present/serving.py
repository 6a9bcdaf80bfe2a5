"""The serving answer (``task:serve``): the glance, Details and Compare, as Discord embed JSON.

The same shape as training's answer: the verdict and the figure per GPU in the title, the copyable
``/vram …`` line first (controls of a request too long for their custom_id read it back), then the
parts by colour and a bar of one card. Details has the bytes per token of each layer kind and what a
serving engine that takes ``gpu_memory_utilization`` of the card leaves for the cache; Compare puts
the weight precisions side by side. Words come from the catalogue's ``serve.*`` keys.
"""

from __future__ import annotations

import math
from typing import Any

from bot.estimate.kv_cache import LayerCache, LayerKind, cached_head_dim
from bot.estimate.serving import (
    GPU_MEMORY_UTILIZATION,
    MAX_SEQ_LEN,
    MAX_SEQUENCES,
    PREFILL_CHUNK_TOKENS,
    TP_DEGREES,
    ServingEstimate,
    compare_weights,
)
from bot.estimate.weight_formats import UNQUANTIZED_BYTES
from bot.present.answer import BAR_CELLS, FREE_SQUARE, NBSP, multiple
from bot.present.command_line import command_line
from bot.present.i18n import DEFAULT_LANGUAGE, Language
from bot.present.phrases import DOES_NOT_FIT_COLOUR, FITS_COLOUR, NEUTRAL_COLOUR, short_card_name
from bot.present.words import Words

# One colour per part, in the breakdown (the bar's legend) and the bar.
SERVING_SQUARES = {"weights": "🟦", "kv_cache": "🟧", "working": "🟪", "context": "🟫"}
_PART_KEYS = {
    "weights": "serve.part_weights",
    "kv_cache": "serve.part_kv_cache",
    "working": "serve.part_working",
    "context": "serve.part_context",
}


def _subject(found: ServingEstimate, w: Words) -> str:
    request = found.request
    if request.model is not None and request.params is None:
        return request.model.name
    return w("serve.size", size=w.short(found.params_billion))


def _format_name(found: ServingEstimate, w: Words) -> str:
    """ "fp8", or for the checkpoint's own format "stored (fp8)"."""
    weights = found.weights
    if weights.stored:
        return w("serve.stored_format", format=weights.format.value)
    return weights.format.value


def colour(found: ServingEstimate) -> int:
    return FITS_COLOUR if found.fits else DOES_NOT_FIT_COLOUR


def title(found: ServingEstimate, w: Words) -> str:
    values = {
        "subject": _subject(found, w),
        "weights": _format_name(found, w),
        "gb": w.gb(found.total_gb),
        "card": short_card_name(found.card),
        "gpus": w.plain(found.gpus),
    }
    if found.fits:
        return w("serve.title_fits" if found.gpus == 1 else "serve.title_fits_tp", **values)
    if found.gpus_needed is None:
        return w("serve.title_none", **values, most=w.plain(TP_DEGREES[-1]))
    key = "serve.title_needs" if found.gpus == 1 else "serve.title_needs_tp"
    return w(key, **values, needed=w.plain(found.gpus_needed))


def part_sizes(found: ServingEstimate) -> list[tuple[str, float]]:
    """One GPU's memory by the bar's colours."""
    return [
        ("weights", found.weights.per_gpu_gb),
        ("kv_cache", found.kv_cache_gb),
        ("working", found.working_gb),
        ("context", found.context_gb),
    ]


def _cells(parts: list[tuple[str, float]], cells: int, gb_per_cell: float) -> str:
    """``cells`` squares split between the parts by largest remainder (as the training bar's)."""
    exact = [gb / gb_per_cell for _, gb in parts]
    counts = [math.floor(share) for share in exact]
    order = sorted(range(len(parts)), key=lambda i: counts[i] - exact[i])
    for index in range(max(0, cells - sum(counts))):
        counts[order[index % len(order)]] += 1
    return "".join(SERVING_SQUARES[kind] * count for (kind, _), count in zip(parts, counts, strict=True))


def bar(found: ServingEstimate, w: Words) -> str:
    parts = part_sizes(found)
    capacity, total = found.capacity_gb, found.total_gb
    if total <= capacity:
        used = round(total / capacity * BAR_CELLS)
        cells = _cells(parts, used, capacity / BAR_CELLS) if used else ""
        caption = w("bar.share", percent=format(total / capacity * 100, ".0f"), capacity=w.num(capacity))
        return f"{cells}{FREE_SQUARE * (BAR_CELLS - used)} {caption.replace(' ', NBSP)}"
    cells = _cells(parts, BAR_CELLS, total / BAR_CELLS)
    caption = w("bar.multiple", multiple=multiple(total / capacity, w), capacity=w.num(capacity))
    return f"{cells} {caption.replace(' ', NBSP)}"


def _breakdown(found: ServingEstimate, w: Words) -> str:
    items = []
    for kind, gb in part_sizes(found):
        if found.caches is None and kind in ("kv_cache", "working"):
            continue  # not counted without the model's layers (the line above says so)
        named = w(_PART_KEYS[kind], gb=w.short_gb(gb, NBSP))
        items.append(f"{SERVING_SQUARES[kind]}{NBSP}{named}")
    return " ".join(items)


def _kib(value: float, w: Words) -> str:
    """Bytes per token as KiB (a token's cache is a few hundred KiB at most), or bytes below one."""
    if value >= 1024:
        return w("serve.kib", n=w.num(value / 1024, ",.4g"))
    return w("serve.bytes", n=w.plain(value))


def _fits_line(found: ServingEstimate, w: Words) -> str:
    """How many sequences fit at this context, and how long a context fits at this batch."""
    if found.max_sequences is None or found.max_seq_len is None:
        return w("serve.fits_none", seq_len=w.plain(found.seq_len))
    most_sequences = w.plain(found.max_sequences)
    if found.max_sequences >= MAX_SEQUENCES:
        most_sequences = w("serve.at_least", n=most_sequences)
    longest = w.plain(found.max_seq_len)
    context = found.request.model.context_length if found.request.model is not None else None
    if found.max_seq_len == context:
        longest = w("serve.whole_context", n=longest)
    elif found.max_seq_len >= MAX_SEQ_LEN:
        longest = w("serve.at_least", n=longest)
    return w(
        "serve.fits_line",
        sequences=most_sequences,
        seq_len=w.plain(found.seq_len),
        batch=w.plain(found.sequences),
        longest=longest,
    )


def _warnings(found: ServingEstimate, w: Words) -> list[str]:
    lines = []
    if found.beyond_context is not None:
        lines.append(w("serve.beyond_context", context=w.plain(found.beyond_context)))
    if found.seq_len_source == "context":
        lines.append(w("serve.context_default", seq_len=w.plain(found.seq_len)))
    return lines


def render_serving_embed(found: ServingEstimate, language: Language = DEFAULT_LANGUAGE) -> dict[str, Any]:
    """The serving answer at a glance."""
    w = Words(language)
    lines = [f"`{command_line(found.request)}`"]
    if found.caches is None:
        lines.append(w("serve.no_cache"))
    else:
        per_token = found.kv_bytes_per_token or 0
        lines.append(
            w(
                "serve.workload",
                sequences=w.plain(found.sequences),
                seq_len=w.plain(found.seq_len),
                dtype=found.kv_dtype.value,
                per_token=_kib(per_token, w),
            )
        )
    lines.append(_breakdown(found, w))
    lines += _warnings(found, w)
    if found.caches is not None:
        lines.append(_fits_line(found, w))
    lines.append(bar(found, w))
    return {
        "title": title(found, w),
        "description": "\n".join(lines),
        "color": colour(found),
        "footer": {"text": w("serve.footer")},
    }


# --- Details -----------------------------------------------------------------------------------------


def _weights_text(found: ServingEstimate, w: Words) -> str:
    weights = found.weights
    values = {
        "format": _format_name(found, w),
        "bytes": w.num(weights.bytes_per_weight, ".4g"),
        "packed": w.count(weights.quantized_params),
        "other": w.count(weights.other_params),
        "other_bytes": w.num(UNQUANTIZED_BYTES),
        "gb": w.gb(weights.total_gb),
    }
    if weights.other_params == 0:
        text = w("serve.weights_all", **values)
    else:
        scope = "serve.scope_experts" if weights.scope == "experts" else "serve.scope_linears"
        text = w("serve.weights_split", **values, scope=w(scope))
    if weights.stored and getattr(found.request.model, "tensors", True) is None:  # a preset's
        text += " " + w("serve.stored_unknown")
    if found.gpus > 1:
        text += " " + w(
            "serve.weights_tp",
            gpus=w.plain(found.gpus),
            per_gpu=w.gb(weights.per_gpu_gb),
            replicated=w.count(weights.replicated_params),
        )
    return text


_KIND_KEYS: dict[LayerKind, str] = {
    "full": "serve.kind_full",
    "sliding": "serve.kind_sliding",
    "mla": "serve.kind_mla",
    "mla_nope": "serve.kind_mla_nope",
    "indexer": "serve.kind_indexer",
    "linear_attention": "serve.kind_linear_attention",
    "mamba": "serve.kind_mamba",
    "conv": "serve.kind_conv",
    "mamba1": "frontier.serve_kind_mamba1",
    "compressed_sparse": "frontier.serve_kind_compressed_sparse",
    "heavily_compressed": "frontier.serve_kind_heavily_compressed",
}


_REPLICATED_KEYS = {
    "mla": "serve.replicated_mla",
    "mla_nope": "serve.replicated_mla",
    "indexer": "serve.replicated_indexer",
    "compressed_sparse": "frontier.replicated_shared_kv",
    "heavily_compressed": "frontier.replicated_shared_kv",
}


def _state_size(value: int, w: Words) -> str:
    """A fixed state per sequence and layer: MiB from one MiB on (Mamba-2's run to several)."""
    if value >= 1024 * 1024:
        return w("serve.mib", n=w.num(value / 1024 / 1024, ",.4g"))
    return _kib(value, w)


def _layer_line(found: ServingEstimate, cache: LayerCache, w: Words) -> str:
    model = found.request.architecture
    values: dict[str, object] = {
        "layers": w.plain(cache.layers),
        "per_token": w.plain(cache.bytes_per_token),
        "dtype_bytes": w.plain(found.kv_dtype.bytes),
        "gb": w.gb(cache.bytes_for(found.seq_len) * found.sequences / 1e9),
    }
    if cache.bytes_per_sequence:  # a fixed state per sequence: linear attention, Mamba, short conv
        values["state"] = _state_size(cache.bytes_per_sequence, w)
    elif model is not None and cache.kind in ("mla", "mla_nope"):
        values |= {"latent": w.plain(model.kv_lora_rank or 0), "rope": w.plain(model.qk_rope_head_dim or 0)}
    elif model is not None and cache.kind == "indexer":
        values["dim"] = w.plain(model.index_head_dim or 0)
    elif model is not None and cache.entry_every:  # DeepSeek-V4's compressed layers
        values |= {
            "window": w.plain(model.sliding_window or 0),
            "kept": w.plain(cache.tokens_kept(found.seq_len)),
            "every": w.plain(cache.entry_every),
            "entry": w.plain(cache.bytes_per_entry),
        }
    elif model is not None:
        head_dim = cached_head_dim(model, cache.kind)
        heads = cache.bytes_per_token // (2 * head_dim * found.kv_dtype.bytes)
        values |= {"heads": w.plain(heads), "head_dim": w.plain(head_dim)}
        if cache.token_cap is not None:
            values["window"] = w.plain(model.sliding_window or 0)
            values["kept"] = w.plain(cache.tokens_kept(found.seq_len))
    line = w(_KIND_KEYS[cache.kind], **values)
    if cache.replicated:
        line += " " + w(_REPLICATED_KEYS.get(cache.kind, "serve.replicated_heads"))
    return f"• {line}"


def _cache_text(found: ServingEstimate, w: Words) -> str:
    if found.caches is None:
        return w("serve.no_cache")
    lines = [_layer_line(found, cache, w) for cache in found.caches]
    lines.append(
        w(
            "serve.cache_total",
            per_token=_kib(found.kv_bytes_per_token or 0, w),
            sequences=w.plain(found.sequences),
            seq_len=w.plain(found.seq_len),
            gb=w.gb(found.kv_cache_gb),
        )
    )
    lines.append(w("serve.cache_source"))
    return "\n".join(lines)


def _working_text(found: ServingEstimate, w: Words) -> str:
    if found.caches is None:
        return w("serve.no_working", context=w.gb(found.context_gb))
    return w(
        "serve.working",
        tokens=w.plain(found.prefill_tokens),
        chunk=w.plain(PREFILL_CHUNK_TOKENS),
        sequences=w.plain(found.sequences),
        gb=w.gb(found.working_gb),
        context=w.gb(found.context_gb),
    )


def _engine_text(found: ServingEstimate, w: Words) -> str:
    budget = GPU_MEMORY_UTILIZATION * found.capacity_gb
    values = {
        "share": w.num(GPU_MEMORY_UTILIZATION),
        "capacity": w.num(found.capacity_gb),
        "budget": w.gb(budget),
        "room": w.gb(found.engine_cache_gb),
        "seq_len": w.plain(found.seq_len),
    }
    if found.engine_sequences is None:
        return w("serve.engine_none", **values)
    return w("serve.engine", **values, sequences=w.plain(found.engine_sequences))


def render_serving_details(found: ServingEstimate, language: Language = DEFAULT_LANGUAGE) -> dict[str, Any]:
    w = Words(language)
    fields = [
        {"name": w("serve.weights_name"), "value": _weights_text(found, w), "inline": False},
        {"name": w("serve.cache_name"), "value": _cache_text(found, w), "inline": False},
        {"name": w("serve.working_name"), "value": _working_text(found, w), "inline": False},
    ]
    if found.caches is not None:
        fields.append({"name": w("serve.fits_name"), "value": _fits_line(found, w), "inline": False})
        fields.append({"name": w("serve.engine_name"), "value": _engine_text(found, w), "inline": False})
    verdict = title(found, w)
    if found.gpus > 1 or (found.gpus_needed or 1) > 1:  # the glance's "needs 4 × H100" says how only here
        verdict += "\n" + w("serve.verdict_tp")
    fields.append({"name": w("serve.verdict_name"), "value": verdict, "inline": False})
    return {
        "title": w("serve.details_title", subject=_subject(found, w)),
        "description": f"`{command_line(found.request)}`",
        "color": colour(found),
        "fields": fields,
        "footer": {"text": w("serve.details_footer")},
    }


# --- Compare -----------------------------------------------------------------------------------------


def _compare_row(row: ServingEstimate, w: Words) -> str:
    sequences = row.max_sequences
    return w(
        "serve.compare_row",
        mark="✅" if row.fits else "❌",
        format=_format_name(row, w),
        bytes=w.num(row.weights.bytes_per_weight, ".3g"),
        weights=w.gb(row.weights.per_gpu_gb),
        total=w.gb(row.total_gb),
        sequences=w.plain(sequences) if sequences is not None else "0",
    )


def render_serving_compare(found: ServingEstimate, language: Language = DEFAULT_LANGUAGE) -> dict[str, Any]:
    """The weight precisions side by side, at the request's KV cache, context, batch and GPUs."""
    w = Words(language)
    lines = [f"`{command_line(found.request)}`"]
    lines.append(
        w(
            "serve.compare_intro",
            dtype=found.kv_dtype.value,
            gpus=w.plain(found.gpus),
            card=short_card_name(found.card),
            seq_len=w.plain(found.seq_len),
        )
    )
    lines += [_compare_row(row, w) for row in compare_weights(found.request)]
    return {
        "title": w("serve.compare_title", subject=_subject(found, w)),
        "description": "\n".join(lines),
        "color": NEUTRAL_COLOUR,
        "footer": {"text": w("serve.footer")},
    }
