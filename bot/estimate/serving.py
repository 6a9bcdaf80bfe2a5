"""Serving a model: its weights, its KV cache and the forward's working set, per GPU (issue 22).

One GPU holds, under tensor parallelism over ``gpus`` cards (Megatron-LM's split, which vLLM and
SGLang run):

- the weights at the chosen precision (:mod:`bot.estimate.weight_formats`), split across the GPUs;
  norms and routers are held whole on every GPU;
- the KV cache of ``batch_size`` sequences of ``seq_len`` tokens, layer kind by layer kind
  (:mod:`bot.estimate.kv_cache`), the K/V heads split across the GPUs;
- the forward's working set: one layer's activations for a prefill chunk of
  :data:`PREFILL_CHUNK_TOKENS` tokens, nothing saved (no backward), and the logits of each
  sequence's last token;
- the CUDA context and libraries' workspaces (``core.CUDA_CONTEXT_GB``).

It then asks how many sequences fit at that context, how long a context fits at that batch, and
what a serving engine that takes ``gpu_memory_utilization`` of the card leaves for the cache.

Pure Python; nothing here knows Discord or words.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

from bot.estimate.core import CUDA_CONTEXT_GB
from bot.estimate.hardware import Gpu
from bot.estimate.kv_cache import KvDtype, LayerCache, cache_bytes, heads_per_gpu, layer_caches
from bot.estimate.models import Architecture
from bot.estimate.request import DEFAULT_SEQ_LEN, EstimateRequest, tensor_parallel_fits
from bot.estimate.value_type import value_type
from bot.estimate.weight_formats import (
    BYTES_PER_WEIGHT,
    UNQUANTIZED_BYTES,
    Scope,
    WeightFormat,
    stored_format,
)

# Tokens one forward step takes at most: vLLM's chunked prefill splits long prompts into chunks of
# max_num_batched_tokens (8,192 by default for its V1 engine's OpenAI server; an assumption, as vLLM
# is not installed here to read it from). A batch of fewer tokens in all is one chunk.
PREFILL_CHUNK_TOKENS = 8192
# The share of the card vLLM's engine takes for itself by default (--gpu-memory-utilization 0.9): the
# weights, the working set and the context come out of it, and the rest is the KV cache's.
GPU_MEMORY_UTILIZATION = 0.9
# The last token's logits in 16 bits, and the fp32 copy sampling computes from.
LOGIT_BYTES = 2 + 4
ACTIVATION_BYTES = 2  # bf16 activations
# The searches' bounds: the options' own maxima (batch_size, seq_len).
MAX_SEQUENCES = 65_536
MAX_SEQ_LEN = 1_048_576
# The tensor-parallel degrees "how many GPUs would it take" tries: powers of two, as the heads split
# (eight cards is one node; beyond it engines add pipeline stages, which this does not model).
TP_DEGREES = (1, 2, 4, 8, 16, 32, 64)

SeqLenSource = Literal["given", "context", "default"]


@value_type
class ServedWeights:
    """The weights as served: their format and what it packs, and their GB in all and per GPU."""

    format: WeightFormat  # the format counted (``stored`` resolved to the checkpoint's)
    stored: bool  # the user asked for the checkpoint's own format
    scope: Scope
    bytes_per_weight: float  # a packed weight's bytes, scales included
    quantized_params: int  # the parameters the format packs (every one without an architecture)
    other_params: int  # kept in bf16: embeddings, LM head, norms, routers, biases, towers
    replicated_params: int  # of those, held whole on every GPU (norms, routers)
    total_gb: float
    per_gpu_gb: float


@value_type
class ServingEstimate:
    """Everything a serving answer shows: one GPU's memory by part, and what fits."""

    request: EstimateRequest
    params_billion: float
    weights: ServedWeights
    kv_dtype: KvDtype
    seq_len: int
    seq_len_source: SeqLenSource
    sequences: int  # batch_size: concurrent sequences
    caches: tuple[LayerCache, ...] | None  # None: no architecture to read the layers from
    kv_bytes_per_token: int | None  # one token of one sequence, every layer, one GPU (no window cap)
    kv_cache_gb: float  # every sequence's, one GPU
    prefill_tokens: int
    working_gb: float
    context_gb: float
    total_gb: float  # one GPU
    capacity_gb: float
    fits: bool
    max_sequences: int | None  # at seq_len; None: no cache known, or not even one fits
    max_seq_len: int | None  # at batch_size; None as above
    engine_cache_gb: float  # what GPU_MEMORY_UTILIZATION of the card leaves for the cache
    engine_sequences: int | None  # sequences of seq_len that cache holds
    beyond_context: int | None  # the model's context when seq_len goes beyond it
    # The fewest tensor-parallel GPUs of TP_DEGREES it fits (1 when it fits one); None: none of them.
    gpus_needed: int | None

    @property
    def gpus(self) -> int:
        return self.request.gpus

    @property
    def card(self) -> Gpu:
        return self.request.card

    @property
    def headroom_gb(self) -> float:
        return self.capacity_gb - self.total_gb


# --- weights -----------------------------------------------------------------------------------------


def _packed_params(model: Architecture, scope: Scope) -> int:
    """The parameters of the blocks' linear layers (or only the routed experts')."""
    return sum(
        d_in * d_out * copies
        for name, d_in, d_out, copies in model.linear_layers()
        if scope == "linears" or name.startswith("experts.")
    )


def served_weights(request: EstimateRequest) -> ServedWeights:
    stored = request.weights is WeightFormat.STORED
    if stored:
        tensors = getattr(request.model, "tensors", None)
        chosen, scope = stored_format(tensors.packing if tensors is not None else None)
    else:
        chosen, scope = request.weights, "linears"
    total = round(request.params_billion * 1e9)
    model = request.architecture if request.params is None else None
    if model is None:  # no layers to tell apart: every parameter in the format
        quantized, replicated = total, 0
    else:
        quantized = min(total, _packed_params(model, scope))
        embeddings = model.vocab_size * model.hidden_size * (1 if model.tied_embeddings else 2)
        linears = _packed_params(model, "linears")
        # What is neither a linear layer, the embeddings nor a tower: norms, routers, biases.
        replicated = max(0, model.parameter_count - linears - embeddings)
    other = total - quantized
    bytes_per_weight = BYTES_PER_WEIGHT[chosen]
    gpus = request.gpus
    total_bytes = quantized * bytes_per_weight + other * UNQUANTIZED_BYTES
    split = total_bytes - replicated * UNQUANTIZED_BYTES
    return ServedWeights(
        format=chosen,
        stored=stored,
        scope=scope,
        bytes_per_weight=bytes_per_weight,
        quantized_params=quantized,
        other_params=other,
        replicated_params=replicated,
        total_gb=total_bytes / 1e9,
        per_gpu_gb=(split / gpus + replicated * UNQUANTIZED_BYTES) / 1e9,
    )


# --- the forward's working set -----------------------------------------------------------------------


def working_set_bytes(model: Architecture, tokens: int, sequences: int, gpus: int = 1) -> int:
    """One GPU's activations while one layer runs a chunk of ``tokens`` (nothing saved, no backward)
    in a fused-attention serving engine, with the last token's logits of ``sequences`` sequences.

    As vLLM's decoder layers hold them (its Llama, DeepSeek-V2 and fused-MoE code; SGLang's are the
    same shapes): the hidden states and the residual on every GPU (fused add + RMSNorm writes in
    place), then the larger of the layer's halves, split across the GPUs:

    - attention: the fused ``qkv_proj`` output (q, k and v; rotary embedding in place), the
      attention output (flash/paged attention: no score matrix) and ``o_proj``'s output;
    - MLA while prefilling (vLLM's compute-friendly path, ``mla/common.py``): q, the compressed
      latent and RoPE key, ``kv_b_proj``'s decompressed keys and values, the keys with their RoPE
      part joined, and the attention output; decoding absorbs and holds less;
    - a dense MLP: ``gate_up_proj``'s 2f, the activation's f, and the down projection's h;
    - a mixture of experts (``fused_experts``): for each of the tokens' k experts one workspace of
      max(2f, h) (gate-up, then down, sharing memory), the activation's f, the router logits and the
      output; shared experts run before the routed ones and their output waits.
    """
    h = model.hidden_size
    heads = model.attention_heads // gpus
    if model.is_mla:
        q = heads * model.qk_head_dim
        latent = (model.kv_lora_rank or 0) + (model.qk_rope_head_dim or 0)
        q_in = (model.q_lora_rank or 0) + latent  # q_a_proj's and kv_a_proj's outputs
        decompressed = heads * ((model.qk_nope_head_dim or 0) + (model.v_head_dim or 0))
        attention = q_in + q + decompressed + q + heads * (model.v_head_dim or 0)
    else:
        q = heads * model.attention_head_dim
        kv = heads_per_gpu(model.kv_heads, gpus) * model.attention_head_dim
        attention = max(q + 2 * kv + q, q + h)  # qkv and the output; then the output and o_proj's
    if model.is_moe:
        f = model.expert_intermediate_size // gpus
        routed = model.experts_per_token * (max(2 * f, h) + f) + model.experts + h
        shared = model.shared_intermediate_size // gpus
        mlp = max(3 * shared, h + routed) if shared else routed
    else:
        f = model.intermediate_size // gpus
        mlp = max(3 * f, f + h)
    layer = tokens * (2 * h + max(attention, mlp)) * ACTIVATION_BYTES
    return layer + sequences * model.vocab_size * LOGIT_BYTES


def prefill_tokens(seq_len: int, sequences: int) -> int:
    return min(PREFILL_CHUNK_TOKENS, seq_len * sequences)


# --- what fits ---------------------------------------------------------------------------------------


def _largest(fits: Callable[[int], bool], top: int) -> int | None:
    """The largest n ≤ top with fits(n), for a need that grows with n; None when not even 1 fits."""
    if not fits(1):
        return None
    low, high = 1, top
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(middle) else (low, middle - 1)
    return low


def _seq_len(request: EstimateRequest) -> tuple[int, SeqLenSource]:
    """The context per sequence: given, else the model's own (vLLM's max_model_len defaults to it)."""
    if request.seq_len is not None:
        return request.seq_len, "given"
    context = request.model.context_length if request.model is not None else None
    return (context, "context") if context is not None else (DEFAULT_SEQ_LEN, "default")


def _fewest_gpus(request: EstimateRequest) -> int | None:
    """The fewest tensor-parallel GPUs (of :data:`TP_DEGREES`) whose share of the request fits a card."""
    model = request.architecture
    for gpus in TP_DEGREES:
        if model is not None and not tensor_parallel_fits(model, gpus):
            continue
        if _per_gpu_gb(request.model_copy(update={"gpus": gpus})) <= request.card.memory_gb:
            return gpus
    return None


def _per_gpu_gb(request: EstimateRequest) -> float:
    """One GPU's total at the request's context and batch."""
    seq_len, _ = _seq_len(request)
    sequences = request.batch_size or 1
    total = served_weights(request).per_gpu_gb + CUDA_CONTEXT_GB
    model = request.architecture
    if model is not None:
        caches = layer_caches(model, request.kv_cache, request.gpus)
        total += cache_bytes(caches, seq_len, sequences) / 1e9
        total += working_set_bytes(model, prefill_tokens(seq_len, sequences), sequences, request.gpus) / 1e9
    return total


def serving_estimate(request: EstimateRequest) -> ServingEstimate:
    """The memory one GPU holds to serve ``request``'s model, and what fits on it."""
    weights = served_weights(request)
    seq_len, source = _seq_len(request)
    sequences = request.batch_size or 1
    gpus = request.gpus
    capacity = request.card.memory_gb
    model = request.architecture
    caches = layer_caches(model, request.kv_cache, gpus) if model is not None else None
    fixed_gb = weights.per_gpu_gb + CUDA_CONTEXT_GB

    def need_gb(length: int, count: int) -> tuple[float, float]:
        """The cache's and the working set's GB on one GPU."""
        if model is None or caches is None:
            return 0.0, 0.0
        kv = cache_bytes(caches, length, count)
        return kv / 1e9, working_set_bytes(model, prefill_tokens(length, count), count, gpus) / 1e9

    kv_gb, working_gb = need_gb(seq_len, sequences)
    total = fixed_gb + kv_gb + working_gb

    def fits(length: int, count: int) -> bool:
        return fixed_gb + sum(need_gb(length, count)) <= capacity

    max_sequences = max_seq_len = engine_sequences = None
    engine_room = GPU_MEMORY_UTILIZATION * capacity - fixed_gb - working_gb
    if caches is not None:
        max_sequences = _largest(lambda count: fits(seq_len, count), MAX_SEQUENCES)
        # No longer than the model's own context: a longer one fits no purpose (a longer seq_len
        # asked for is still estimated, and warned about).
        longest = (request.model.context_length if request.model is not None else None) or MAX_SEQ_LEN
        max_seq_len = _largest(lambda length: fits(length, sequences), min(longest, MAX_SEQ_LEN))
        per_sequence = cache_bytes(caches, seq_len) / 1e9
        engine_sequences = math.floor(engine_room / per_sequence) if per_sequence > 0 else None
        if engine_sequences is not None and engine_sequences < 1:
            engine_sequences = None
    context = request.model.context_length if request.model is not None else None
    return ServingEstimate(
        request=request,
        params_billion=request.params_billion,
        weights=weights,
        kv_dtype=request.kv_cache,
        seq_len=seq_len,
        seq_len_source=source,
        sequences=sequences,
        caches=caches,
        kv_bytes_per_token=sum(c.layers * c.bytes_per_token for c in caches) if caches is not None else None,
        kv_cache_gb=kv_gb,
        prefill_tokens=prefill_tokens(seq_len, sequences),
        working_gb=working_gb,
        context_gb=CUDA_CONTEXT_GB,
        total_gb=total,
        capacity_gb=capacity,
        fits=total <= capacity,
        max_sequences=max_sequences,
        max_seq_len=max_seq_len,
        engine_cache_gb=max(0.0, engine_room),
        engine_sequences=engine_sequences,
        beyond_context=context if context is not None and seq_len > context else None,
        gpus_needed=1 if total <= capacity and gpus == 1 else _fewest_gpus(request),
    )


def compare_weights(request: EstimateRequest) -> tuple[ServingEstimate, ...]:
    """The same request with the weights in every format (the checkpoint's own first, when asked)."""
    formats: list[WeightFormat] = [f for f in WeightFormat if f is not WeightFormat.STORED]
    if request.weights is WeightFormat.STORED:
        formats.insert(0, WeightFormat.STORED)
    return tuple(serving_estimate(request.model_copy(update={"weights": f})) for f in formats)
