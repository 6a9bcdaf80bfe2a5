"""A serving estimate's figures as plain JSON for scripts: ``vram-bot estimate --task serve --format json``.

The same schema and version as training's (:mod:`bot.present.figures`), with ``task`` "serve" and the
serving figures; memory in decimal GB, one GPU's unless the name says otherwise.
"""

from __future__ import annotations

from typing import Any

from bot.estimate.serving import GPU_MEMORY_UTILIZATION, PREFILL_CHUNK_TOKENS, ServingEstimate
from bot.present.command_line import command_line
from bot.present.figures import SCHEMA, VERSION


def serving_figures(found: ServingEstimate) -> dict[str, Any]:
    weights = found.weights
    caches = found.caches
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "task": "serve",
        "request": found.request.given(),
        "command_line": command_line(found.request),
        "parameters": {"billion": found.params_billion},
        "weights": {
            "format": weights.format.value,
            "stored": weights.stored,
            "bytes_per_weight": weights.bytes_per_weight,
            "quantized_params": weights.quantized_params,
            "other_params": weights.other_params,
            "total_gb": weights.total_gb,
        },
        "weights_gb": weights.per_gpu_gb,
        "kv_cache": {
            "dtype": found.kv_dtype.value,
            "bytes_per_token": found.kv_bytes_per_token,
            "gb": found.kv_cache_gb,
            "layers": None
            if caches is None
            else [
                {
                    "kind": cache.kind,
                    "layers": cache.layers,
                    "bytes_per_token": cache.bytes_per_token,
                    "token_cap": cache.token_cap,
                    "bytes_per_sequence": cache.bytes_per_sequence,
                    "replicated": cache.replicated,
                }
                for cache in caches
            ],
        },
        "seq_len": found.seq_len,
        "sequences": found.sequences,
        "working_set_gb": found.working_gb,
        "prefill_tokens": found.prefill_tokens,
        "prefill_chunk_tokens": PREFILL_CHUNK_TOKENS,
        "cuda_context_gb": found.context_gb,
        "total_gb": found.total_gb,
        "gpus": found.gpus,
        "card": {"name": found.card.display_name, "memory_gb": found.capacity_gb},
        "fits": found.fits,
        "headroom_gb": found.headroom_gb,
        "gpus_needed": found.gpus_needed,
        "max_sequences": found.max_sequences,
        "max_seq_len": found.max_seq_len,
        "engine": {
            "gpu_memory_utilization": GPU_MEMORY_UTILIZATION,
            "cache_gb": found.engine_cache_gb,
            "sequences": found.engine_sequences,
        },
        "beyond_context": found.beyond_context,
    }
