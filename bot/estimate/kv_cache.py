"""What a served model caches per sequence, layer kind by layer kind: the KV cache.

Each kind of layer caches its own way, and each kind is one function of :data:`CACHE_KINDS`:

- ``full``: full attention with grouped-query (or multi-query) K/V heads: a key and a value of
  ``head_dim`` for each of the ``g`` K/V heads, every token (2·g·d values per token and layer);
- ``sliding``: the same, but only the last tokens of the window are kept;
- ``mla``: Multi-head Latent Attention (DeepSeek-V2/V3, Kimi K2) caches the compressed latent of
  ``kv_lora_rank`` and the shared RoPE key of ``qk_rope_head_dim`` per token and layer, not the
  decompressed keys and values (DeepSeek-V2 report, section 2.1.2: "only ... need to be cached");
- ``indexer``: a sparse-attention indexer (DeepSeek-V3.2, GLM-5) caches one key of ``index_head_dim``
  per token in each layer it indexes;
- ``linear_attention``, ``mamba``, ``conv``: Gated DeltaNet (Qwen3-Next, Qwen3.5), Mamba-2
  (Nemotron-H, Granite 4, Falcon-H1, Bamba) and short convolutions (LFM2) keep a fixed state per
  sequence and nothing per token (``Architecture.layer_state_bytes``: the conv state in the model's
  dtype and the recurrent state in fp32, as transformers' cache keeps them, whatever the KV dtype).

Every figure is the one transformers 5.24 holds after a forward pass (``cache_utils``: ``DynamicLayer``
keeps every token, ``DynamicSlidingWindowLayer`` the last ``sliding_window - 1`` tokens, the token in
flight being the window's last; ``DeepseekV3Attention`` updates the cache "while latent KV is still
compressed"), checked to the byte by ``tests/test_serving_accuracy.py`` and, for the fixed states,
``tests/test_hybrid_cache.py``.

Under tensor parallelism each GPU holds its share of the K/V heads; a model with fewer K/V heads than
GPUs holds each head on several GPUs (as Megatron-LM and vLLM replicate them), and MLA's latent is
one "head" that every GPU holds whole, as is an indexer's key. A fixed state is split with its heads
(vLLM shards Mamba's and DeltaNet's heads across the GPUs): each GPU holds its share, rounded up.

Pure Python; nothing here knows Discord or words.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from enum import StrEnum
from typing import Literal

from bot.estimate.models import Architecture
from bot.estimate.value_type import value_type

LayerKind = Literal[
    "full",
    "sliding",
    "mla",
    "mla_nope",
    "indexer",
    "linear_attention",
    "mamba",
    "conv",
    "mamba1",
    "compressed_sparse",
    "heavily_compressed",
]


class KvDtype(StrEnum):
    """The cache's element type: 16-bit, or FP8 (E4M3 with a per-tensor scale, vLLM's ``fp8``)."""

    BF16 = "bf16"
    FP8 = "fp8"

    @property
    def bytes(self) -> int:
        return 1 if self is KvDtype.FP8 else 2


@value_type
class LayerCache:
    """What one kind of layer caches, summed over the model's layers of that kind, on one GPU."""

    kind: LayerKind
    layers: int
    bytes_per_token: int  # one layer's, for one token of one sequence
    token_cap: int | None  # the most tokens a sequence keeps (a sliding window); None: all of them
    bytes_per_sequence: int  # one layer's fixed state per sequence (none for attention)
    replicated: bool  # every GPU holds it whole under tensor parallelism (heads fewer than GPUs)
    # DeepSeek-V4's compressed layers: one entry of bytes_per_entry every ``entry_every`` tokens, the
    # tokens since the last entry waiting in a buffer (pending_bytes_per_token each), and once an
    # entry was made, the overlap state of a compressed-sparse layer (overlap_bytes).
    entry_every: int | None = None
    bytes_per_entry: int = 0
    pending_bytes_per_token: int = 0
    overlap_bytes: int = 0

    def tokens_kept(self, seq_len: int) -> int:
        return seq_len if self.token_cap is None else min(seq_len, self.token_cap)

    def bytes_for(self, seq_len: int) -> int:
        """These layers' cache for one sequence of ``seq_len`` tokens."""
        one = self.tokens_kept(seq_len) * self.bytes_per_token + self.bytes_per_sequence
        if self.entry_every:
            entries, pending = divmod(seq_len, self.entry_every)
            one += entries * self.bytes_per_entry + pending * self.pending_bytes_per_token
            one += self.overlap_bytes if entries else 0
        return self.layers * one


def heads_per_gpu(heads: int, gpus: int) -> int:
    """K/V heads one GPU holds: its share, or one whole head when there are fewer heads than GPUs."""
    return max(1, math.ceil(heads / gpus))


def cached_head_dim(model: Architecture, kind: LayerKind) -> int:
    """The width of each cached key and value of an attention layer of ``kind``: Gemma 4's full layers
    have one of their own (decl)."""
    return model.full_head_dim if kind == "full" else model.attention_head_dim


def _attention(model: Architecture, layers: int, dtype: KvDtype, gpus: int, kind: LayerKind) -> LayerCache:
    # A key and a value of head_dim for each K/V head (transformers' key/value states of shape
    # [batch, kv_heads, tokens, head_dim]).
    # Gemma 4's full layers: their own K/V heads and head width (decl; keys and values apart also
    # where K = V: Gemma4TextAttention caches the value-normed copy beside the keys).
    kv_heads = model.full_kv_heads if kind == "full" else model.kv_heads
    head_dim = cached_head_dim(model, kind)
    heads = heads_per_gpu(kv_heads, gpus)
    window = model.sliding_window if kind == "sliding" else None
    return LayerCache(
        kind=kind,
        layers=layers,
        bytes_per_token=2 * heads * head_dim * dtype.bytes,
        # DynamicSlidingWindowLayer.update: "Only cache the last `self.sliding_window - 1` tokens".
        token_cap=window - 1 if window is not None else None,
        bytes_per_sequence=0,
        replicated=kv_heads < gpus,
    )


def _full(model: Architecture, layers: int, dtype: KvDtype, gpus: int) -> LayerCache:
    return _attention(model, layers, dtype, gpus, "full")


def _sliding(model: Architecture, layers: int, dtype: KvDtype, gpus: int) -> LayerCache:
    return _attention(model, layers, dtype, gpus, "sliding")


def _mla(model: Architecture, layers: int, dtype: KvDtype, gpus: int) -> LayerCache:
    # kv_a_proj_with_mqa's output: the latent (kv_lora_rank) and the RoPE key (qk_rope_head_dim),
    # one "head" for all heads.
    width = (model.kv_lora_rank or 0) + (model.qk_rope_head_dim or 0)
    return _shared_by_heads("mla", layers, width, dtype, gpus)


def _mla_nope(model: Architecture, layers: int, dtype: KvDtype, gpus: int) -> LayerCache:
    # decl: Mistral Large 4's MLA layers without RoPE cache the latent alone (their rope key is 0 wide).
    return _shared_by_heads("mla_nope", layers, model.kv_lora_rank or 0, dtype, gpus)


def _indexer(model: Architecture, layers: int, dtype: KvDtype, gpus: int) -> LayerCache:
    # The indexer's key cache: one index_head_dim-wide key per token (DeepSeek-V3.2's Indexer),
    # shared by its heads.
    return _shared_by_heads("indexer", layers, model.index_head_dim or 0, dtype, gpus)


def _shared_by_heads(kind: LayerKind, layers: int, width: int, dtype: KvDtype, gpus: int) -> LayerCache:
    """One ``width``-wide entry per token that every head reads (MLA's latent, the indexer's key): not
    split by heads, so under tensor parallelism every GPU holds it whole."""
    return LayerCache(
        kind=kind,
        layers=layers,
        bytes_per_token=width * dtype.bytes,
        token_cap=None,
        bytes_per_sequence=0,
        replicated=gpus > 1,
    )


StateKind = Literal["linear_attention", "mamba", "conv", "mamba1"]  # the mixers of bot.estimate.families


def _fixed_state(kind: StateKind) -> Callable[[Architecture, int, KvDtype, int], LayerCache]:
    def state(model: Architecture, layers: int, dtype: KvDtype, gpus: int) -> LayerCache:
        whole = model.layer_state_bytes(kind)  # in the model's own dtypes, not the KV cache's
        return LayerCache(
            kind=kind,
            layers=layers,
            bytes_per_token=0,
            token_cap=None,
            bytes_per_sequence=math.ceil(whole / gpus),
            replicated=False,
        )

    return state


# One function per layer kind: (model, its layers of that kind, dtype, GPUs) -> what they cache.
CACHE_KINDS: dict[LayerKind, Callable[[Architecture, int, KvDtype, int], LayerCache]] = {
    "full": _full,
    "sliding": _sliding,
    "mla": _mla,
    "mla_nope": _mla_nope,
    "indexer": _indexer,
    "linear_attention": _fixed_state("linear_attention"),
    "mamba": _fixed_state("mamba"),
    "conv": _fixed_state("conv"),
    "mamba1": _fixed_state("mamba1"),  # Mamba-1 (Mamba, Falcon-Mamba, Jamba): x's conv and inner × state
}


# --- frontier, round 4 (issue 20, point 3): DeepSeek-V4's compressed layers ---------------------------
# Every layer keeps its window's last sliding_window - 1 tokens of one K=V head (a sliding layer in a
# DynamicSlidingWindowLayer: keys and values as two tensors; a compressed layer's DeepseekV4HCACache:
# one tensor for both). A compressed layer adds one head_dim-wide entry every rate tokens (a
# compressed-sparse layer also its indexer's, index_head_dim wide), keeps the tokens since the last
# entry in a buffer (their kv and gate projections, 2 × head_dim each in a compressed-sparse layer and
# its indexer's 2 × index_head_dim, head_dim each in a heavily-compressed one) and, in a compressed-
# sparse layer, the last window's first series (kv in the model's dtype, the gate with its fp32
# position bias added) for the next entry's overlap (DeepseekV4CSACache.update_overlap_state). The
# window and the entries are the KV cache's dtype; the buffers and the overlap the model's (bf16).
_MODEL_BYTES = 2
_FP32 = 4


def _compressed(model: Architecture, layers: int, dtype: KvDtype, kind: LayerKind, gpus: int) -> LayerCache:
    d, window = model.attention_head_dim, model.sliding_window or 1
    sparse = kind == "compressed_sparse"
    index = (model.index_head_dim or 0) if sparse else 0
    rate = (model.compress_rate_sparse if sparse else model.compress_rate_heavy) or 1
    series = 2 if sparse else 1  # a compressed-sparse layer's two overlapping series
    return LayerCache(
        kind=kind,
        layers=layers,
        bytes_per_token=d * dtype.bytes,
        token_cap=window - 1,
        bytes_per_sequence=0,
        replicated=gpus > 1,  # one head: every GPU holds it whole
        entry_every=rate,
        bytes_per_entry=(d + index) * dtype.bytes,
        pending_bytes_per_token=2 * series * (d + index) * _MODEL_BYTES,
        overlap_bytes=rate * (d + index) * (_MODEL_BYTES + _FP32) if sparse else 0,
    )


def _compressed_sparse(model: Architecture, layers: int, dtype: KvDtype, gpus: int) -> LayerCache:
    return _compressed(model, layers, dtype, "compressed_sparse", gpus)


def _heavily_compressed(model: Architecture, layers: int, dtype: KvDtype, gpus: int) -> LayerCache:
    return _compressed(model, layers, dtype, "heavily_compressed", gpus)


CACHE_KINDS["compressed_sparse"] = _compressed_sparse
CACHE_KINDS["heavily_compressed"] = _heavily_compressed


def _compressed_layer_kinds(model: Architecture) -> list[tuple[LayerKind, int]]:
    compressed = model.compressed_sparse_layers + model.heavily_compressed_layers
    return [
        ("sliding", model.layers - compressed),
        ("compressed_sparse", model.compressed_sparse_layers),
        ("heavily_compressed", model.heavily_compressed_layers),
    ]


def layer_kinds(model: Architecture) -> tuple[tuple[LayerKind, int], ...]:
    """The model's layers by the kind of cache they keep, with how many of each (kinds with none
    left out). Attention layers are MLA's, or ``sliding_window_layers`` sliding and the rest full;
    the indexed layers add their indexer's keys; the hybrid mixers (the family's ``layer_kinds``)
    their fixed states (Falcon-H1's parallel attention and Mamba-2 layers: both)."""
    attention = model.attention_layers
    mixers = model.mixer_counts
    if model.output_groups is not None:  # DeepSeek-V4
        return tuple((kind, count) for kind, count in _compressed_layer_kinds(model) if count)
    if model.is_mla:
        # Mistral Large 4's layers sharing an earlier layer's latent cache none of their own (decl).
        own_nope = model.nope_layers - model.kv_shared_nope_layers
        kinds: list[tuple[LayerKind, int]] = [
            ("mla", attention - model.kv_shared_layers - own_nope),
            ("mla_nope", own_nope),
        ]
    else:
        # Gemma 3n's layers that reuse earlier keys and values keep no cache of their own.
        # Zamba2's hybrid layers each cache their shared block's keys and values (decl2).
        full = model.kv_cached_full_layers + model.shared_block_layers
        kinds = [("sliding", model.kv_cached_sliding_layers), ("full", full)]
    kinds += [
        ("indexer", model.indexed_layers),
        ("linear_attention", mixers.get("linear_attention", 0)),
        ("mamba", model.mamba_layers),
        ("conv", mixers.get("conv", 0)),
        ("mamba1", mixers.get("mamba1", 0)),
    ]
    return tuple((kind, count) for kind, count in kinds if count)


def layer_caches(model: Architecture, dtype: KvDtype = KvDtype.BF16, gpus: int = 1) -> tuple[LayerCache, ...]:
    """What each kind of layer of ``model`` caches on one of ``gpus`` tensor-parallel GPUs."""
    return tuple(CACHE_KINDS[kind](model, count, dtype, gpus) for kind, count in layer_kinds(model))


def cache_bytes(caches: tuple[LayerCache, ...], seq_len: int, sequences: int = 1) -> int:
    """The cache of ``sequences`` sequences of ``seq_len`` tokens each."""
    return sequences * sum(cache.bytes_for(seq_len) for cache in caches)
