"""What autograd saves for one training step, as PyTorch keeps it (issue 11).

Calibrated on CPU with PyTorch 2.13 and transformers 5.24 (``benchmarks/accuracy.py``, numbers and
derivation in ``benchmarks/ACCURACY.md``): every term below is a tensor that autograd saves for
backward, found by ``torch.autograd.graph.saved_tensors_hooks`` and counted once per storage. Pure
Python; nothing here imports torch.

Symbols (per token, i.e. to be multiplied by s·b): h hidden size, q = a·d query width, kv = g·d K/V
width, f MLP width (an expert's for MoE), v vocabulary, a query heads, g K/V heads, k active experts,
E experts; s²·b·a terms are written ``a·s`` per token. Bytes per token of one decoder layer:

- RMSNorm as Llama/Qwen/Mistral implement it (``x.float()``, ``rsqrt``, ``weight * x.to(bf16)``),
  16-bit weights: the fp32 copy of its input 4w, the bf16 normalized tensor 2w, the fp32 rsqrt 4 per
  normalized row; under fp32 weights + autocast (``amp``): its fp32 input (the residual stream itself)
  4w and the fp32 normalized 4w. Gemma's RMSNorm computes in fp32 throughout: 8w + 4 per row, and
  keeps ``1 + weight`` in fp32 (4w once per norm, not per token).
- Linear inputs: with 16-bit weights one tensor feeds Q/K/V (and gate/up, and the router), saved once,
  2w; under autocast each linear casts its input to bf16 on its own, 2w per linear.
- Attention, SDPA (the flash kernel: no s² matrix): Q and K after RoPE, V, the output (which is also
  o_proj's input) and the fp32 log-sum-exp: 4q + 4kv + 4a. Eager: Q, K and V expanded to every query
  head, the fp32 softmax and its bf16 copy, the output's contiguous copy: 8q + 6·a·s.
- QK-norm (Qwen3, Gemma 3): a norm over each head's d, on Q (q wide, a rows) and K (kv wide, g rows).
- Gated MLP (SiLU or GELU): gate, up, act(gate), act·up: 8f. No dropout mask is saved at p = 0.
  A plain up/down MLP (StarCoder 2, Arcee's ReLU², Jais 2): the activation's input and down's, 4f.
- Norms other than Llama's: OLMo 2/3 multiply the weight in fp32 (8w + 4, as gpt-oss); torch's
  LayerNorm with bias saves its input and the fp32 mean and rstd (2w + 8; 4w + 8 under autocast).
- MoE (transformers 5 grouped experts): router softmax fp32 4E, its top-k sum 4, top-k and sort
  indices 32k (int64), top-k weights 4k, routing weights (fp32 4k for Mixtral, bf16 2k for
  Qwen3-MoE), the gathered input 2hk, gate_up, act, product 8fk, the experts' output 2hk (+ 4·E bytes
  of offsets); under autocast the experts run in fp32: 4hk + 16fk + 4hk.

Multi-head Latent Attention (DeepSeek-V3/R1, Kimi K2) and DeepSeek-V3's MoE layer (sigmoid router,
routed and shared experts, dense first layers) have their own terms (``_mla_attention_bytes``,
``deepseek_moe_bytes``); MLA's SDPA is FlashAttention-2's path, V padded to the Q/K width.

Full activation checkpointing (non-reentrant, as ``gradient_checkpointing_enable`` runs it) keeps each
layer's input: 2h with 16-bit weights, 4h under autocast; the eager causal mask (b·s² in the compute
dtype) and the RoPE tables are kept once as checkpoint inputs.

Outside the layers: the final norm (as above, and its output 2h for the LM head; under autocast the
LM head's bf16 input copy 2h more), the fp32 log-softmax of the loss 4v, int64 token ids and labels
16 + the final norm's rsqrt 4, and the RoPE cos/sin (1·s·d each, bf16, fp32 under autocast).
"""

from __future__ import annotations

from bot.estimate import hybrid_saved, methods
from bot.estimate.family_traits import FamilyTraits, NormStyle, traits_for
from bot.estimate.hybrid_saved import KERNEL_PATH, HybridPath
from bot.estimate.models import Architecture
from bot.estimate.setup import FULL_FINE_TUNE, AttentionName, PrecisionName, Setup
from bot.estimate.value_type import value_type

AttentionImpl = AttentionName
Precision = PrecisionName


@value_type
class MeasuredActivations:
    """Saved bytes of one step and the transients on top of them, in bytes."""

    batch_size: int
    seq_len: int
    attention: AttentionImpl
    precision: Precision
    checkpointing: bool
    per_layer_bytes: float
    outside_layers_bytes: float
    saved_bytes: float
    # Under checkpointing: one layer's activations rebuilt in backward (its non-checkpointed saved bytes).
    recompute_bytes: float
    # At the loss: in forward the bf16 logits and their fp32 copy; in backward the two fp32 gradients of
    # the logits (of the log-softmax output and of its input), on top of the saved log-softmax.
    loss_forward_bytes: float
    loss_backward_bytes: float
    # Under autocast: the bf16 copies of the linear layers' weights, from forward to backward.
    weight_copy_bytes: float
    # Kept through backward without being saved (``held_bytes``).
    held_bytes: float
    # The torch fallback's Mamba-1 layers: what is still saved at the last one's scan backward
    # (``hybrid_saved.scan_live_bytes``; 0 without such a layer).
    scan_live_bytes: float = 0.0


def norm_bytes(width: int, rows: int, precision: Precision, style: NormStyle) -> int:
    """Bytes per token an RMSNorm saves over ``rows`` slices of ``width`` together (not its output).
    Gemma's and gpt-oss's norms multiply the weight with the fp32 normalized tensor: 8w + 4 always.
    A LayerNorm with weight and bias (``native_layer_norm``: StarCoder 2, Phi, GPT-NeoX) saves its
    input (16-bit; fp32 under autocast, which runs layer_norm in fp32) and the fp32 mean and rstd."""
    if style == "fp32_layernorm":
        # OLMo (``OlmoLayerNorm``): F.layer_norm without weights on the fp32 copy of its input, which
        # it saves with the fp32 mean and rstd, in every setup.
        return 4 * width + 8 * rows
    if style == "weightless":
        # nanochat's RMSNorm without a weight (``x.float() * rsqrt(...)``): the fp32 input copy (under
        # autocast the residual stream itself) and the rsqrt; its output is the next linear's input.
        return 4 * width + 4 * rows
    if style == "cohere":
        # Cohere's own LayerNorm (transformers CohereLayerNorm, Cohere2LayerNorm) computes in fp32 and
        # computes ``x - mean`` twice (for the variance's pow and for the product with rsqrt): both fp32
        # copies, the fp32 normalized tensor the weight multiplies and the rsqrt, in every setup.
        return 12 * width + 4 * rows
    if style == "layernorm":
        return (4 if precision == "amp" else 2) * width + 8 * rows
    if style != "llama" or precision == "amp":
        return 8 * width + 4 * rows
    return 6 * width + 4 * rows


def _norm_constant(width: int, style: NormStyle) -> int:
    """Gemma keeps ``1 + weight`` in fp32 for backward: per norm, independent of the tokens."""
    return 4 * width if style == "gemma" else 0


def layer_saved_bytes(
    arch: Architecture,
    batch_size: int,
    seq_len: int,
    *,
    attention: AttentionImpl = "sdpa",
    precision: Precision = "mixed",
    traits: FamilyTraits | None = None,
    moe_layer: bool | None = None,
) -> float:
    """Saved bytes of one decoder layer without checkpointing: a MoE layer (routed experts of
    ``moe_intermediate_size``, plus the shared experts) or a dense one; by default the model's kind.
    Not a model with per-layer parts (Gemma 3n, Gemma 4): its layers are ``per_layer_parts_layers``'."""
    t = traits or traits_for(arch)
    s, b = seq_len, batch_size
    h, q, kv = arch.hidden_size, arch.q_dim, arch.kv_dim
    a, g, d = arch.attention_heads, arch.kv_heads, arch.attention_head_dim
    k, experts = arch.experts_per_token, arch.experts
    moe = arch.is_moe if moe_layer is None else moe_layer
    f = arch.expert_intermediate_size if moe else arch.intermediate_size
    amp = precision == "amp"
    per_token = 0
    constant = 0
    # Norms: Gemma's four (pre/post attention, pre/post MLP), otherwise the two pre-norms.
    per_token += arch.norms_per_layer * norm_bytes(h, 1, precision, t.norm_style)
    if t.norms_share_input:
        # famact: GPT-NeoX's two LayerNorms read one residual x: its storage is saved once (16-bit, fp32
        # under autocast, which runs layer_norm in fp32 on the fp32 residual).
        per_token -= (4 if amp else 2) * h
    # famact: GLM-4's post-norms normalize o_proj's and down_proj's 16-bit outputs, also under autocast.
    per_token += t.norms_of_outputs * (
        norm_bytes(h, 1, "mixed", t.norm_style) - norm_bytes(h, 1, precision, t.norm_style)
    )
    constant += arch.norms_per_layer * _norm_constant(h, t.norm_style)
    # The normalized inputs of the attention and MLP linears (under autocast each linear casts its
    # own; a fused qkv_proj or gate_up_proj is one linear).
    attention_inputs = (1 if arch.fused_qkv else 3) if amp else 1
    if arch.is_mla:
        attention_inputs = 2 if amp else 1  # q_a_proj (or q_proj) and kv_a_proj_with_mqa
    # amp: gate and up, or the router, or a plain MLP's up alone.
    mlp_inputs = (1 if moe or arch.fused_gate_up or not arch.gated_mlp else 2) if amp else 1
    if moe and t.deepseek_moe:
        mlp_inputs = 0  # the router's and the shared experts' inputs are in deepseek_moe_bytes
    if t.parallel_block and not amp:
        mlp_inputs = 0  # the MLP reads attention's normalized input, the one 16-bit tensor saved
    per_token += 2 * h * (attention_inputs + mlp_inputs)
    if t.qk_norm:
        # Its input is a linear layer's 16-bit output in every setup, so Llama-style QK-norm saves the
        # 16-bit normalized tensor even under autocast; its output is Q/K before RoPE, not saved.
        # Over the whole projection (OLMo 2/3, OLMoE, MiniMax-M2) one rsqrt per token, not per head
        # (measured: benchmarks/ACCURACY.md, "Activations of the declared families").
        q_rows, k_rows = (1, 1) if arch.qk_norm_scope == "projection" else (a, g)
        # famact: after RoPE (Hunyuan V1) under autocast the norm's input is RoPE's fp32 output, and
        # it saves that input and its fp32 normalized tensor, 8w + 4 (measured).
        qk_precision: Precision = "amp" if amp and t.qk_norm_after_rope else "mixed"
        per_token += norm_bytes(q, q_rows, qk_precision, t.norm_style) + norm_bytes(
            kv, k_rows, qk_precision, t.norm_style
        )
        constant += 2 * _norm_constant(d, t.norm_style)
    if arch.is_mla:
        per_token += _mla_attention_bytes(arch, s, attention)
    elif attention == "sdpa":
        # Q, K, V, the output and the LSE: 4q + 4kv + 4a for grouped-query attention.
        per_token += 2 * q + 2 * arch.k_dim + 2 * arch.v_dim + 2 * arch.o_dim + 4 * a
        if t.rope_cat:
            per_token += 2 * arch.o_dim  # o_proj's input, a contiguous copy of the head-major output
        if arch.fused_qkv:
            # V is a view of qkv_proj's output, whose whole storage stays alive with it.
            per_token += 2 * q + 2 * arch.k_dim
    elif t.sink_scaling:
        # famact: Granite SWA's eager attention, Llama's 8q + 6·a·s, and for its sink scale: the
        # logsumexp's input (the scores, 2·a·s; fp32 4·a·s under autocast, which runs logsumexp in
        # fp32) and output (2a; 4a), the fp32 sigmoid 4a and its 16-bit copy 2a, and the unscaled
        # attention output 2q.
        per_token += 8 * q + 6 * a * s + 2 * q + (4 * a * s + 10 * a if amp else 2 * a * s + 8 * a)
    elif t.attention_sinks:
        # gpt-oss: softmax over s + 1 columns in the scores' dtype (bf16; fp32 under autocast, which
        # then casts the probabilities to bf16 for the next matmul), + the int64 argmax of each row.
        softmax = 4 * a * (s + 1) + 2 * a * s if amp else 2 * a * (s + 1)
        per_token += 8 * q + softmax + 8 * a
    elif t.compute_dtype_softmax and not amp:
        per_token += 8 * q + 2 * a * s
    else:
        per_token += 8 * q + 6 * a * s + (2 * a * s if t.softcapping else 0)
    if moe and t.dense_experts:
        per_token += _dense_experts_bytes(arch, precision)
    elif moe and t.clamped_swiglu:
        # gpt-oss experts: top-k indices and sort 40k (int64), softmax over the top k and the routing
        # weights 2k + 2k, the gathered input and the output 2·e·h each, gate_up 2·e·f and five f-wide
        # tensors (sigmoid, clamp, gate·sigmoid, up + 1, product); fp32 under autocast as above.
        e = 4 if amp else 2
        per_token += k * (2 * e * h + 7 * e * f + 44)
        constant += 4 * experts
    elif moe and t.deepseek_moe:
        per_token += deepseek_moe_bytes(arch, precision, t)
        constant += 4 * experts  # the grouped experts' int32 offsets
    elif moe:
        per_token += routed_moe_bytes(arch, precision, t)
        constant += 4 * experts
    else:
        per_token += dense_mlp_bytes(arch) + activation_extra_bytes(arch, precision, t)
    # famact: Seed-OSS' dropouts on the attention's and the MLP's 16-bit outputs keep their masks
    # (F.dropout on CPU: the output is input × mask / (1 − p), the mask in the input's dtype).
    per_token += 2 * h * t.residual_dropout_masks
    if t.rope_per_layer != "none":
        # ERNIE 4.5, Helium (``apply_rotary_pos_emb``): cos[..., : d/2].repeat_interleave(2) and
        # sin's, (1, s, d) copies that the layer's multiplications save, one sequence's, not the
        # batch's: fp32 (ERNIE's tables are fp32) or the tables' compute dtype (Helium; GLM's, of the
        # rotated half of each head).
        table_bytes = 4 if t.rope_per_layer == "fp32" or amp else 2
        constant += 2 * s * rotary_width(arch, t) * table_bytes
    return float(s * b * per_token + constant)


def altup_norm_bytes(width: int, rows: int, *, scaled: bool = True) -> int:
    """One ``Gemma3nRMSNorm`` on a 16-bit input, bytes per token: its fp32 copy (``.float()``, which
    ``pow`` saves), ``pow(mean_squared, -0.5)``'s fp32 input and output per row, and, with a weight,
    the fp32 normalized tensor the weight multiplies (v_norm has none): 8w + 8 rows."""
    return (8 if scaled else 4) * width + 8 * rows


def per_layer_parts_layer(
    arch: Architecture,
    precision: Precision,
    attention: AttentionImpl,
    seq_len: int,
    *,
    width: int,
    shares_kv: bool = False,
    sparse: bool = False,
) -> tuple[float, float]:
    """act: one Gemma 3n decoder layer (transformers ``Gemma3nTextDecoderLayer``), (bytes per token,
    bytes per layer); measured tensor by tensor (benchmarks/ACCURACY.md, "Gemma 3n and Kimi Linear").
    h hidden, A AltUp's streams, r LAuReL's rank, p the per-layer input width, f the layer's MLP.

    - Eight h-wide ``Gemma3nRMSNorm`` (four around attention and MLP, LAuReL's, AltUp's router norm in
      ``predict`` and ``correct``, the per-layer input's), q_norm over a heads, k_norm and the weightless
      v_norm over g (``_altup_norm``); with 16-bit weights each scaled norm keeps ``weight.float()``
      (4w a layer). Under autocast the residual streams are fp32: the router norm in ``predict`` and
      input_layernorm read views of the fp32 [A, b, s, h] stacks, whose whole storage they keep (4Ah).
    - AltUp (``Gemma3nTextAltUp``): the router's 16-bit inputs (2h each call) and fp32 tanh (4A each),
      the coefficients' inputs (2A each), ``predict``'s matmul of the stacked streams 2Ah and its
      coefficients 2A², ``correct``'s innovation 2Ah (fp32 under autocast: 4Ah) and coefficients 2A,
      ``scale_corrected_output``'s input 2h (4h); the clamped correction weight 2A² a layer.
    - LAuReL: linear_right's input 2r (linear_left's is attention's normalized input, 2h); the per-layer
      input gate: its input 2h, GELU's input and its product with the per-layer input 2p each, the
      projection's input 2p.
    - The MLP: its input 2h, gate (GELU's input), up, act and product 8f; ``_gaussian_topk`` where the
      layer is sparse: std's input 2f and output 2 (ReLU's output replaces GELU's input).
    - Attention: as Llama's (SDPA: Q, output and LSE 4q + 4a, and K, V 4kv), the K/V-sharing layers
      without K, V and their norms (their source layer's). Under autocast q, k, v, linear_left, gate
      and up each cast their own 16-bit input (2h each).
    """
    h, q, kv, a, g = arch.hidden_size, arch.q_dim, arch.kv_dim, arch.attention_heads, arch.kv_heads
    n, r, p, d = arch.altup_inputs, arch.laurel_rank, arch.per_layer_input_size, arch.attention_head_dim
    amp = precision == "amp"
    kv_part = not shares_kv
    per_token = 8 * altup_norm_bytes(h, 1) + altup_norm_bytes(q, a)
    if kv_part:
        per_token += altup_norm_bytes(kv, g) + altup_norm_bytes(kv, g, scaled=False)
    per_token += 4 * h + 8 * n + 4 * n + 2 * n * h + 2 * n * n + 2 * n * h + 2 * n + 2 * h  # AltUp
    per_token += 2 * h  # attention's normalized input, which linear_left reads too
    per_token += 2 * r + 2 * h + 4 * p + 2 * p  # LAuReL, the per-layer input's gate and projection
    per_token += 2 * h + 8 * width + (2 * width + 2 if sparse else 0)  # the MLP
    if attention == "sdpa":
        per_token += 4 * q + 4 * a + (4 * kv if kv_part else 0)
    else:
        per_token += 8 * q + 6 * a * seq_len
    constant = 2 * n * n
    if amp:
        per_token += 2 * (4 * n * h - 4 * h) + 2 * n * h + 2 * h  # the fp32 stacks, innovation, scale
        per_token += 2 * h * ((3 if kv_part else 1) + 1)  # q (k, v), linear_left and up: own copies
    else:
        constant += 4 * (8 * h + d + (d if kv_part else 0))  # the scaled norms' weight.float()
    return float(per_token), float(constant)


def per_layer_parts_layers(
    arch: Architecture,
    batch_size: int,
    seq_len: int,
    *,
    attention: AttentionImpl,
    precision: Precision,
    setup: Setup = FULL_FINE_TUNE,
) -> list[float]:
    """act: each Gemma 3n layer's saved bytes, in order: its own MLP width, the last
    ``kv_shared_layers`` reusing keys and values, the sparse layers' top-k; under LoRA its own
    layer's terms (lora3: ``methods.per_layer_parts_lora_delta``, not Llama's)."""
    found = []
    for index in range(arch.layers):
        width = arch.intermediate_sizes[index] if arch.intermediate_sizes else arch.intermediate_size
        shares_kv = index >= arch.layers - arch.kv_shared_layers
        per_token, constant = per_layer_parts_layer(
            arch,
            precision,
            attention,
            seq_len,
            width=width,
            shares_kv=shares_kv,
            sparse=index in arch.sparse_mlp_layers,
        )
        if setup.adapters:
            per_token += methods.per_layer_parts_lora_delta(
                arch,
                precision,
                setup.lora_rank,
                setup.lora_targets,
                width=width,
                shares_kv=shares_kv,
                first=index == 0 and not setup.checkpointing,
            )
        found.append(seq_len * batch_size * per_token + constant)
    return found


def per_layer_parts_outside(
    arch: Architecture, precision: Precision, *, end: bool = True
) -> tuple[float, float]:
    """act: Gemma 3n outside its layers (transformers ``Gemma3nTextModel.forward``), (bytes per token,
    constant), without the loss, the LM head's input and the capped logits (``outside_saved_bytes``).
    Before the layers: the token ids twice (the per-layer table clamps its own), the per-layer inputs
    [b, s, L, p] (16-bit; fp32 under autocast) with their projection's input 2h and norm over L rows
    of p, and AltUp's A - 1 streams rescaled to the embeddings' magnitude (pow's input, the product
    before the division and two values a row: 4h + 4 each; under autocast the fp32 embeddings 4h,
    and each stream's projection its own 16-bit input and fp32 output, 10h + 8). After them
    (``end``): the final stack 2Ah (4Ah), the streams rescaled to the first one's, the final norm."""
    h, n, p, layers = arch.hidden_size, arch.altup_inputs, arch.per_layer_input_size, arch.layers
    streams = n - 1
    if precision == "amp":
        before = 6 * h + 4 * layers * p + 8 + streams * (10 * h + 8)
        after = 4 * n * h + 8 + streams * (10 * h + 8)
        constant = 0.0
    else:
        before = 2 * h + 2 * layers * p + 4 + streams * (4 * h + 4)
        after = 2 * n * h + 4 + streams * (4 * h + 4)
        constant = 4.0 * (h + p)  # the two norms' weight.float()
    before += altup_norm_bytes(layers * p, layers) + 16
    if not end:
        return float(before), constant
    return float(before + after + altup_norm_bytes(h, 1)), constant


def hyper_connection_bytes(arch: Architecture, precision: Precision = "mixed") -> float:
    """act: one DeepSeek-V4 hyper-connection (transformers ``DeepseekV4HyperConnection``), bytes per
    token, N streams: the flattened streams' fp32 copy and rsqrt (its weightless norm) and the normalized
    fp32 input of its linear (8Nh + 4); the linear's fp32 output (viewed by pre, post and comb:
    4(2 + N)N) and the two sigmoids (8N); the softmax of comb (4N²) and each Sinkhorn quotient's
    dividend and sum (4N² + 4N, 2I - 1 of them); the streams it collapses and pre (2Nh + 4N); and where
    its block's output is mixed back: that output, post and comb in 16 bits (2h + 2N + 2N²). Under
    autocast the streams are fp32 (the norm keeps them, 4Nh), the linear casts its input to 16 bits (2Nh)
    and its output is 16-bit (2(2 + N)N); mixing back, post stays fp32 (4N) and the matmul with comb
    casts the streams (2Nh); this is the attention's (its 16-bit output 2h; the MLP's fp32 output 4h
    is ``compressed_layer_bytes``')."""
    h, n, iters = arch.hidden_size, arch.residual_streams, arch.sinkhorn_iterations
    sinkhorn = 4 * n * n + (2 * iters - 1) * (4 * n * n + 4 * n)
    if precision == "amp":
        weights = 6 * n * h + 4 + 2 * (2 + n) * n + 8 * n + sinkhorn + 4 * n
        return float(weights + 2 * h + 4 * n + 2 * n * h + 2 * n * n)
    weights = 8 * n * h + 4 + 4 * (2 + n) * n + 8 * n + sinkhorn
    return float(weights + 2 * n * h + 4 * n + 2 * h + 2 * n + 2 * n * n)


def compressed_layer_bytes(
    arch: Architecture, seq_len: int, kind: str, batch_size: int = 2, precision: Precision = "mixed"
) -> tuple[float, float]:
    """act: one DeepSeek-V4 decoder layer (transformers ``DeepseekV4DecoderLayer``) of ``kind``
    ("sliding", "sparse", "heavy"), (bytes per token, bytes per layer and sequence); measured tensor by
    tensor (benchmarks/ACCURACY.md, "DeepSeek-V4"). transformers 5.24 runs its sink attention eager only,
    so this is eager's whatever the attention asked. a heads of d, q = a·d, T compressed entries (s //
    rate), L = s + T keys, rd = d / 8 RoPE's width (DeepseekV4Config's partial_rotary_factor).

    - Two hyper-connections (``hyper_connection_bytes``); the fp32-weight RMSNorms around attention and
      MLP, on the q latent and on the K=V head (8w + 4 each); q_a's (and kv_proj's) input 2h, q_b's
      2r_q, the grouped o_a's 2q and o_b's 2·g·r_o; the weightless q_b_norm on the 16-bit Q (6q + 6a).
    - Eager attention with sinks over L keys: Q 2q, K and V repeated to every head (2·a·d·L / s each; one
      sequence's repeat is a view of its one K=V head, 2·d·L a sequence for both), the max's int64
      indices 8a, the fp32 softmax over L + 1 columns and its 16-bit copy without the sink.
    - RoPE: every rotation keeps its own repeat_interleave'd cos and sin of one sequence (2·s·rd each):
      Q, K=V and the output, and the CSA's indexer queries.
    - MoE (``DeepseekV4SparseMoeBlock``): the router's input 2h, sqrt(softplus) 4E, indices and the
      renormalised weights 10k + 2; per routed token-expert pair the gathered input, gate_up kept whole by
      its clamps, the clamped gate and up, SiLU's output, the product, the output and its weight and
      three int64 indices (4h + 12f + 26); the shared clamped MLP 12·f_s. Under autocast the grouped
      experts run in fp32 (8h + 24f + 26 a pair), kv_proj and the shared MLP's gate and up cast their
      own inputs (6h), the MLP's output mixed back is fp32 (2h more) and the RoPE tables are fp32; so do
      the compressors' kv and gate (4h each), and the indexer's scores are 16-bit.
    - HCA: the compressor's fp32 softmax, its 16-bit copy and the windows' kv (8d a compressed token), the
      compressed entries' norm (8d + 4) and RoPE tables; CSA: its compressor over overlapping windows of
      2·rate (16·d·rate per entry) and the lightning indexer's own (16·d_I·rate), their norms and tables,
      and the indexer's scores, which transformers keeps with gradients: the fp32 q (4·H_I·d_I), the
      compressed keys broadcast over every query (4·d_I·T a token; one sequence's multiply as one
      matrix, 4·d_I·T a sequence) and the ReLU (4·H_I·T).
    """
    h, a, d, q = arch.hidden_size, arch.attention_heads, arch.attention_head_dim, arch.q_dim
    r_q, g, r_o = arch.q_lora_rank or 0, arch.output_groups or 1, arch.output_group_rank or 0
    experts, k, f, f_s = (
        arch.experts,
        arch.experts_per_token,
        arch.expert_intermediate_size,
        arch.shared_intermediate_size,
    )
    s, rd = seq_len, arch.attention_head_dim // 8
    rate = {"sparse": arch.compress_rate_sparse, "heavy": arch.compress_rate_heavy}.get(kind) or 0
    entries = s // rate if rate else 0
    keys = s + entries
    amp = precision == "amp"
    per_token = 2 * hyper_connection_bytes(arch, precision) + (2 * h if amp else 0)
    per_token += 2 * (8 * h + 4) + (8 * r_q + 4) + (8 * d + 4)
    per_token += 2 * h + 2 * r_q + 2 * q + 2 * g * r_o + 6 * q + 6 * a
    repeated = 4 * a * d * keys / s if batch_size > 1 else 2 * d * keys / s
    per_token += 2 * q + repeated + 8 * a + 4 * a * (keys + 1) + 2 * a * keys
    pair = 8 * h + 24 * f + 26 if amp else 4 * h + 12 * f + 26
    per_token += 2 * h + 4 * experts + 10 * k + 2 + k * pair + 12 * f_s + (6 * h if amp else 0)
    table = 4 if amp else 2
    per_sequence = 3 * 2 * table * s * rd  # RoPE's tables: Q, K=V and the output
    if kind == "heavy":
        per_token += 8 * d * entries * rate / s + (8 * d + 4 + 4 * rd) * entries / s
        per_token += 4 * h if amp else 0  # under autocast its kv and gate cast their own inputs
    elif kind == "sparse":
        heads, dim = arch.index_heads or 0, arch.index_head_dim or 0
        per_token += (16 * d * rate + 8 * d + 4 + 16 * dim * rate + 8 * dim + 4 + 8 * rd) * entries / s
        score = 2 if amp else 4  # under autocast the scores' matmul runs in 16 bits
        broadcast = score * dim * entries if batch_size > 1 else score * dim * entries / s
        per_token += score * heads * dim + broadcast + score * heads * entries
        per_token += 8 * h if amp else 0  # the two compressors' kv and gate cast their own inputs
        per_sequence += 2 * table * s * rd  # the indexer's queries
    return float(per_token), float(per_sequence)


def compressed_layers_bytes(
    arch: Architecture, batch_size: int, seq_len: int, precision: Precision = "mixed"
) -> list[float]:
    """act: each DeepSeek-V4 layer's saved bytes, in order (``Architecture.compressed_kinds``)."""
    found = []
    for kind in arch.compressed_kinds:
        per_token, per_sequence = compressed_layer_bytes(arch, seq_len, kind, batch_size, precision)
        found.append(batch_size * seq_len * per_token + per_sequence + 4 * arch.experts)
    return found


def activation_extra_bytes(arch: Architecture, precision: Precision, traits: FamilyTraits) -> int:
    """What an MLP activation written out in Python saves beyond its input, per token (transformers
    5.24 ``activations.py``; measured: benchmarks/ACCURACY.md, "Activations of the declared families").

    - xIELU (Apertus, ``XIELUActivation._xielu_python``): ``alpha_p * x`` (fp32 under autocast: the
      learned fp32 alpha_p promotes it), ``expm1(min(x, eps))``, ``expm1(...) - x`` in the MLP's
      16-bit dtype, and the bool mask of ``where(x > 0, ...)``: 7f, 9f under autocast.
    - gelu_new (Phi, ``NewGELUActivation``): ``tanh(...)``, ``0.5 * x`` and ``1 + tanh(...)``, 6f in
      every setup (the up projection's 16-bit output runs it under autocast too).
    """
    f = arch.intermediate_size
    if traits.mlp_activation == "xielu":
        return (9 if precision == "amp" else 7) * f
    if traits.mlp_activation == "gelu_python":
        return 6 * f
    return 0


def dense_mlp_bytes(arch: Architecture) -> int:
    """A dense MLP's saved bytes per token: gated, gate, up, act(gate) and act·up, 8f; plain (up,
    act, down: StarCoder 2, Arcee), the activation's input and down's input, 4f (measured:
    benchmarks/ACCURACY.md, "Activations of the declared families")."""
    return (8 if arch.gated_mlp else 4) * arch.intermediate_size


def routed_moe_bytes(arch: Architecture, precision: Precision, traits: FamilyTraits) -> int:
    """A softmax-routed MoE layer (Mixtral, Qwen3-MoE, Llama 4, GLM-4.5), bytes per token without the
    post-attention norm and the router's input. Under autocast the grouped experts run in fp32
    (``torch._grouped_mm`` is not on autocast's list on CPU): the gathered input, gate_up, act,
    product and output are 4-byte tensors. The routing weights keep their dtype (Mixtral fp32,
    Qwen3-MoE the router's 16-bit output)."""
    h, f, k, experts = arch.hidden_size, arch.expert_intermediate_size, arch.experts_per_token, arch.experts
    e = 4 if precision == "amp" else 2
    per_token = 4 * experts + 4 + k * (2 * e * h + 4 * e * f + 36 + traits.router_weight_bytes)
    if traits.shared_expert_gate:
        # Qwen2-MoE (``Qwen2MoeSparseMoeBlock``): sigmoid(shared_expert_gate(x)) * shared_expert(x)
        # saves the sigmoid (16-bit, 2) and the shared expert's output 2h; under autocast the gate
        # casts the fp32 input for itself, 2h.
        per_token += 2 + 2 * h + (2 * h if precision == "amp" else 0)
    if precision == "amp":
        per_token += 2 * h * traits.shared_expert_casts  # the shared expert's own bf16 input copies
    if traits.fp32_router_input:
        # famact: Hunyuan MoE's fp32 gate (HunYuanMoEV1Gate) on hidden_states.float(): that fp32 copy
        # 4h with 16-bit weights; under autocast the gate's logits, and so the routing weights cast
        # to their dtype, are bf16 (2k, not the fp32 4k counted above).
        if precision == "amp":
            per_token -= k * (traits.router_weight_bytes - 2)
        else:
            per_token += 4 * h
    # The shared experts are a dense gated MLP on the same input: gate, up, act, product.
    return per_token + 8 * arch.shared_intermediate_size


def _dense_experts_bytes(arch: Architecture, precision: Precision) -> int:
    """Llama 4's MoE layer (transformers ``Llama4TextMoe``), bytes per token without the
    post-attention norm and the router's input (measured: benchmarks/ACCURACY.md section 4). The
    router's top-k indices 8k (int64) and its fp32 sigmoid 4E; then every token is repeated for every
    expert and scaled by its score (2E, 0 where not routed): per expert the repeated input 2h (fp32
    4h under autocast) and the scaled input 2h (under autocast its bf16 copy for ``bmm``, which is on
    autocast's list), gate_up 4f, act 2f and the product 2f. The shared expert is a dense gated MLP
    on the same input (under autocast gate and up each keep their own bf16 copy of it, 2h each). So
    the experts keep E, not k, times a token's tensors."""
    h, f, k, experts = arch.hidden_size, arch.expert_intermediate_size, arch.experts_per_token, arch.experts
    amp = precision == "amp"
    per_expert = (4 * h if amp else 2 * h) + 2 * h + 8 * f + 4 + 2
    shared = 8 * arch.shared_intermediate_size + (4 * h if amp and arch.shared_experts else 0)
    return experts * per_expert + 8 * k + shared


def _mla_attention_bytes(arch: Architecture, seq_len: int, attention: AttentionImpl) -> int:
    """Multi-head Latent Attention (transformers ``DeepseekV3Attention``), bytes per token, in every
    precision setup (measured: benchmarks/ACCURACY.md section 4); the input norm and the normalized
    input of q_a_proj / kv_a_proj are counted with the other families' norms and linear inputs.

    - The latent norms, q_a_layernorm (r_q) and kv_a_layernorm (r_kv): each normalizes a linear
      layer's 16-bit output, so it saves a Llama-style 16-bit norm (6r + 4) in every setup, and its
      output is q_b_proj's / kv_b_proj's input (2r; under autocast the fp32 output's bf16 copy).
    - The decoupled RoPE part is rotated in place of the split: its multiplications save only the
      cos/sin tables (outside the layers); Q = cat(q_nope, q_rope) and K (``expand_kv``'s new tensor)
      are new 2·a·d_qk tensors (under autocast Q is fp32, and SDPA / the matmul save its bf16 copy).
    - sdpa (``bot.measure``'s stand-in for FlashAttention-2, which transformers feeds V padded to
      d_qk and whose output it crops): Q, K, the padded V and the padded output 2·a·d_qk each, the
      fp32 log-sum-exp 4a, and the cropped output's contiguous copy, o_proj's input, 2·a·d_v.
    - eager: Q and K 2·a·d_qk each, V's contiguous copy and the output 2·a·d_v each, the fp32 softmax
      and its bf16 copy 6·a·s.
    """
    a, d_qk, d_v = arch.attention_heads, arch.qk_head_dim, arch.v_head_dim or arch.qk_head_dim
    per_token = norm_bytes(arch.kv_lora_rank or 0, 1, "mixed", "llama") + 2 * (arch.kv_lora_rank or 0)
    if arch.q_lora_rank is not None:
        per_token += norm_bytes(arch.q_lora_rank, 1, "mixed", "llama") + 2 * arch.q_lora_rank
    if attention == "sdpa":
        return per_token + 8 * a * d_qk + 2 * a * d_v + 4 * a
    return per_token + 4 * a * d_qk + 4 * a * d_v + 6 * a * seq_len


def deepseek_moe_bytes(arch: Architecture, precision: Precision, traits: FamilyTraits | None = None) -> int:
    """DeepSeek-V3's MoE layer (transformers ``DeepseekV3MoE``), bytes per token without the
    post-attention norm (measured: benchmarks/ACCURACY.md section 4).

    - Router (``DeepseekV3TopkRouter``): with 16-bit weights an fp32 copy of its input 4h (its weight
      is kept in fp32) and the fp32 sigmoid 4E; under autocast F.linear casts both to bf16, so the
      input's copy is 2h and the sigmoid 2E. The top-k sum (+ 1e-20) that normalizes the weights
      (norm_topk_prob), 4 (2 under autocast). The group-limited selection (top-2 per group, top
      groups, the mask) saves tensors too, but the nodes holding them reach the loss only through
      integer indices, so they are freed within the forward pass: not counted.
    - Per routed token-expert pair: the top-k index 8, the normalized weight's copy (in-place
      division) 4 (2), the expert index, sort and scatter indices 8 each (int64), the routing weight
      4 (2); the gathered input, gate_up, act, product and output, 2h + 4f + 2f + 2f + 2h, or fp32
      under autocast (``_grouped_mm`` is not on CPU autocast's list): 4h + 8f + 4f + 4f + 4h.
    - The shared experts, one gated MLP of shared_experts × f on the same input: its input 2h (one
      16-bit tensor; under autocast gate's and up's bf16 copies, 4h), gate, up, act, product 8·f_s.
    """
    h, f, k, experts = arch.hidden_size, arch.expert_intermediate_size, arch.experts_per_token, arch.experts
    f_s = arch.shared_intermediate_size
    if precision == "amp":
        router, pair, shared_input = 2 * h + 2 * experts + 2, 8 * h + 16 * f + 36, 4 * h
    else:
        router, pair, shared_input = 4 * h + 4 * experts + 4, 4 * h + 8 * f + 40, 2 * h
    if traits is not None and traits.fp32_router:
        # ERNIE 4.5 (``Ernie4_5_MoeTopKRouter``): autocast off, softmax router on the fp32 input;
        # its top-k sum and the clamp of it (4 + 4), the gathered fp32 weights 4 a pair.
        router = 4 * h + 4 * experts + 8
        if precision == "amp":
            pair += 4  # the gathered weights and the routing weights stay fp32 (4 + 4, not 2 + 2)
    if traits is not None and traits.softmax_deepseek_router:
        # famact: DeepSeek-V2 (``DeepseekV2TopkRouter``): an fp32 softmax (4E in every setup) and no
        # renormalisation of the top-k weights (norm_topk_prob off): no top-k sum, no normalized copy,
        # and the routing weights stay fp32 (4 a pair under autocast too).
        router = (4 * h if precision != "amp" else 2 * h) + 4 * experts
        pair = (4 * h + 8 * f + 36) if precision != "amp" else (8 * h + 16 * f + 36)
    shared = shared_input + 8 * f_s if f_s else 0
    return router + k * pair + shared


def outside_saved_bytes(
    arch: Architecture,
    batch_size: int,
    seq_len: int,
    *,
    attention: AttentionImpl = "sdpa",
    precision: Precision = "mixed",
    checkpointing: bool = False,
    traits: FamilyTraits | None = None,
) -> float:
    """Saved bytes outside the decoder layers: final norm, LM head input, loss, ids, RoPE tables."""
    t = traits or traits_for(arch)
    s, b, h, v = seq_len, batch_size, arch.hidden_size, arch.vocab_size
    # The final norm and the LM head's 16-bit input (its output, or autocast's copy of it).
    per_token = norm_bytes(h, 1, precision, t.norm_style) + 2 * h
    per_token += 4 * v + 16  # fp32 log-softmax; int64 ids (embedding) and shifted labels (loss)
    constant = 0
    if t.per_layer_parts:
        # act: Gemma 3n's own norms, streams and per-layer inputs (per_layer_parts_outside); its
        # final_logit_softcapping (30 by default) keeps the tanh of the 16-bit logits (2v).
        parts, fixed = per_layer_parts_outside(arch, precision)
        per_token += int(parts) - norm_bytes(h, 1, precision, t.norm_style) + 2 * v - 8  # ids: in parts
        constant += int(fixed)
    if t.compressed_layers:
        # act: DeepSeek-V4's final collapse of its N streams (``DeepseekV4HyperHead``): the flattened
        # streams' fp32 copy and rsqrt, the normalized fp32 input of hc_fn, its output and sigmoid, the
        # streams and pre (10Nh + 12N + 4); its final norm keeps its fp32 weight (8h + 4).
        # Under autocast the streams are fp32 (the norm keeps them), hc_fn's input a 16-bit copy and its
        # output 16-bit: 6Nh + 10N + 4.
        n = arch.residual_streams
        head = 6 * n * h + 10 * n + 4 if precision == "amp" else 10 * n * h + 12 * n + 4
        per_token += head + (8 * h + 4) - norm_bytes(h, 1, precision, t.norm_style)
    if t.embedding_norm:
        per_token += norm_bytes(h, 1, precision, t.norm_style)  # nanochat: the embeddings' norm
    if t.logit_softcapping:
        per_token += 2 * v  # nanochat: tanh of logits / cap (a Python float), in the logits' 16 bits
    if t.softcapping:
        per_token += 2 * v  # the tanh of the capped logits, in the logits' 16-bit dtype
        constant += 4 if precision == "amp" else 2  # and the cap, a 0-dim tensor in the weights' dtype
    # RoPE's cos/sin are saved by the first layer's multiplications; under checkpointing they are
    # checkpoint inputs instead (held, not saved: ``held_bytes``).
    rope = 0 if checkpointing else rope_bytes(arch, seq_len, precision=precision, traits=t)
    if t.rope_per_layer != "none" or t.compressed_layers:
        rope = 0  # ERNIE 4.5, Helium, DeepSeek-V4: the layers save their own copies of the tables
    # + 4: the loss's fp32 total weight (nll_loss saves it).
    return float(s * b * per_token + rope + _norm_constant(h, t.norm_style) + 4 + constant)


def rope_bytes(
    arch: Architecture, seq_len: int, *, precision: Precision = "mixed", traits: FamilyTraits | None = None
) -> float:
    """RoPE's cos and sin tables for one sequence (shared by the batch and by every layer)."""
    t = traits or traits_for(arch)
    # Llama 4 keeps one complex64 table (freqs_cis) in every precision: d/2 complex values of 8 bytes.
    compute_bytes = 2 if t.complex_rope else 4 if precision == "amp" or t.rope_per_layer == "fp32" else 2
    return float(2 * t.rope_tables * seq_len * rotary_width(arch, t) * compute_bytes)


def rotary_width(arch: Architecture, traits: FamilyTraits) -> int:
    """The width of RoPE's cos/sin tables: the rotated part of each head (MLA's decoupled RoPE
    part; half for gpt-oss' and GLM's; StableLM's and GPT-NeoX's quarter)."""
    # MLA rotates only the decoupled qk_rope_head_dim part (DeepSeek-V3's config sets head_dim to it).
    full = arch.qk_rope_head_dim if arch.qk_rope_head_dim is not None else arch.attention_head_dim
    if traits.rope_half_width or traits.partial_rope:
        return full // 2
    return int(full * traits.rotary_fraction)


def held_bytes(
    arch: Architecture,
    batch_size: int,
    seq_len: int,
    *,
    attention: AttentionImpl = "sdpa",
    precision: Precision = "mixed",
    checkpointing: bool = False,
    traits: FamilyTraits | None = None,
) -> float:
    """Tensors kept alive through backward without being saved: under checkpointing, the inputs every
    checkpointed layer shares (RoPE tables, and eager attention's causal mask, b·s² in the compute
    dtype)."""
    if not checkpointing:
        return 0.0
    compute_bytes = 4 if precision == "amp" else 2
    mask = compute_bytes * batch_size * seq_len * seq_len if attention == "eager" else 0
    return rope_bytes(arch, seq_len, precision=precision, traits=traits) + mask


def first_layer_is_moe(arch: Architecture) -> bool:
    return arch.is_moe and arch.first_k_dense_replace == 0 and arch.interleave_moe_layer_step == 1


def measured_activations(
    arch: Architecture,
    batch_size: int,
    seq_len: int,
    *,
    setup: Setup = FULL_FINE_TUNE,
    traits: FamilyTraits | None = None,
    hybrid_path: HybridPath = KERNEL_PATH,
) -> MeasuredActivations:
    """What one step of ``setup`` saves: the full fine-tune's tensors, or LoRA's (the method's terms,
    :mod:`bot.estimate.methods`); a hybrid model's layers on ``hybrid_path`` (the GPU kernels by
    default, or the torch fallback: :mod:`bot.estimate.hybrid_saved`)."""
    attention, precision, checkpointing = setup.attention, setup.precision, setup.checkpointing
    sb, h, v = seq_len * batch_size, arch.hidden_size, arch.vocab_size
    t = traits or traits_for(arch)

    # hybact: hybrid layers (Gated DeltaNet, Mamba-2, short convolution, the DSA indexer) each have
    # their own figure, on the kernel path a GPU runs or the torch fallback (bot.estimate.hybrid_saved).
    # act: DeepSeek-V4's indexer is its own (compressed_layer_bytes), not DeepSeek-V3.2's.
    hybrid_layers = (
        hybrid_saved.hybrid_layers_saved_bytes(
            arch, batch_size, seq_len, attention=attention, precision=precision, traits=t, path=hybrid_path
        )
        if hybrid_saved.is_modelled_hybrid(arch) and not t.compressed_layers
        else None
    )
    scan_live = 0.0
    if t.compressed_layers:  # act: DeepSeek-V4's layers, each its own
        v4 = compressed_layers_bytes(arch, batch_size, seq_len, precision)
        in_layers, full_layer = sum(v4), v4[0]
    elif t.per_layer_parts:  # act: Gemma 3n's layers differ one from the next
        gemma3n = per_layer_parts_layers(
            arch, batch_size, seq_len, attention=attention, precision=precision, setup=setup
        )
        in_layers, full_layer = sum(gemma3n), gemma3n[0]
    elif hybrid_layers is None:
        # One figure per kind of layer the model has: dense layers (before or between the MoE layers)
        # keep the dense MLP's tensors, MoE layers the experts'.
        layers = {
            moe: layer_saved_bytes(
                arch, batch_size, seq_len, attention=attention, precision=precision, traits=t, moe_layer=moe
            )
            for count, moe in ((arch.dense_layers, False), (arch.moe_layers, True))
            if count
        }
        if setup.adapters:
            for moe in layers:
                per_token, constant = methods.lora_layer_delta(
                    arch, precision, attention, setup.lora_rank, setup.lora_targets, moe=moe
                )
                layers[moe] += sb * per_token + constant
        in_layers = arch.dense_layers * layers.get(False, 0.0) + arch.moe_layers * layers.get(True, 0.0)
        # Under checkpointing the first layer is rebuilt last, for the backward's end.
        full_layer = layers[first_layer_is_moe(arch)]
    else:  # hybact
        if setup.adapters:  # LoRA's terms by each layer's MLP, as for the other families
            for index in range(arch.layers):
                mlp = hybrid_saved.layer_mlp(arch, index)
                mixer = arch.layer_kinds[index] if arch.layer_kinds else "attention"  # lora: its adapters
                per_token, constant = methods.lora_layer_delta(
                    arch,
                    precision,
                    attention,
                    setup.lora_rank,
                    setup.lora_targets,
                    moe=mlp == "moe",
                    mixer=mixer,
                    mlp=mlp != "none",
                    fallback=hybrid_path == "fallback",
                )
                hybrid_layers[index] += sb * per_token + constant
            # lora: the layers ahead of the first adapter save nothing (no gradient reaches them).
            first = methods.first_adapted_layer(
                arch, setup.lora_targets, lambda i: hybrid_saved.layer_mlp(arch, i)
            )
            for index in range(first):
                hybrid_layers[index] = 0.0
        in_layers, full_layer = sum(hybrid_layers), hybrid_layers[0]
        scan_live = hybrid_saved.scan_live_bytes(
            arch, hybrid_layers, batch_size, seq_len, precision=precision, traits=t, path=hybrid_path
        )
    compute_bytes = 4 if precision == "amp" else 2
    if t.compressed_layers:
        compute_bytes *= arch.residual_streams  # act: a checkpointed layer's input is its N streams
    if t.per_layer_parts:
        compute_bytes *= arch.altup_inputs  # act: a checkpointed layer's input is AltUp's stack of A
    if hybrid_layers is not None:  # hybact: Mamba-2 keeps an fp32 residual stream
        compute_bytes = hybrid_saved.checkpointed_input_bytes(arch, precision)
    per_layer = float(compute_bytes * sb * h) if checkpointing else in_layers / arch.layers
    outside = outside_saved_bytes(
        arch,
        batch_size,
        seq_len,
        attention=attention,
        precision=precision,
        checkpointing=checkpointing,
        traits=t,
    )
    if setup.adapters and t.per_layer_parts:  # lora3: Gemma 3n's own outside (its per-layer inputs, streams)
        rank, targets = setup.lora_rank, setup.lora_targets
        before = per_layer_parts_outside(arch, precision, end=False)[0]
        outside += sb * methods.per_layer_parts_outside_lora(
            arch, precision, rank, targets, before, checkpointing
        )
    elif setup.adapters:
        outside += sb * methods.lora_outside_delta(arch, precision, checkpointing)
        outside += methods.lora_outside_constant(arch, checkpointing)
    lm_head = v * h
    weight_copies = 0.0
    if precision == "amp":
        if t.deepseek_moe or t.dense_experts:  # dense layers copy their MLP, MoE layers their experts
            in_layers_copies = sum(
                count * autocast_weight_copy_bytes(arch, moe_layer=moe, traits=t)
                for count, moe in ((arch.dense_layers, False), (arch.moe_layers, True))
            )
        else:
            in_layers_copies = arch.layers * autocast_weight_copy_bytes(arch, traits=t)
        weight_copies = float(2 * lm_head + (0 if checkpointing else in_layers_copies))
    if setup.adapters and not checkpointing:
        weight_copies += methods.adapter_weight_copy_bytes(
            arch, precision, setup.lora_rank, setup.lora_targets
        )
    return MeasuredActivations(
        batch_size=batch_size,
        seq_len=seq_len,
        attention=attention,
        precision=precision,
        checkpointing=checkpointing,
        per_layer_bytes=per_layer,
        outside_layers_bytes=outside,
        saved_bytes=arch.layers * per_layer + outside,
        recompute_bytes=full_layer if checkpointing else 0.0,
        loss_forward_bytes=float(6 * sb * v),
        loss_backward_bytes=float(8 * sb * v),
        weight_copy_bytes=weight_copies,
        held_bytes=held_bytes(
            arch,
            batch_size,
            seq_len,
            attention=attention,
            precision=precision,
            checkpointing=checkpointing,
            traits=t,
        ),
        scan_live_bytes=scan_live,
    )


def autocast_weight_copy_bytes(
    arch: Architecture,
    *,
    moe_layer: bool | None = None,
    traits: FamilyTraits | None = None,
    with_mlp: bool = True,
) -> float:
    """The bf16 copies autocast makes of one layer's linear weights and keeps for backward: every
    linear of a dense layer; for MoE only attention and the router, since the grouped experts are not
    autocast (they run in fp32, see ``layer_saved_bytes``). DeepSeek-V3's MoE layer also copies its
    shared experts' gate, up and down (nn.Linear), and its first_k_dense_replace layers are dense
    (measured: 890,880 B per layer of the benchmark's DeepSeek-V3 = 2 × (attention 180,224 + router
    1,024 + shared experts 264,192)). ``with_mlp=False``: the attention's (and router's) copies alone,
    what is left of a DeepSeek layer's copies once its MLP's backward has run. Llama 4's experts run
    through ``torch.bmm``, which autocast casts: its MoE layer copies every expert and the shared
    expert too, and its dense layers their MLP."""
    t = traits or traits_for(arch)
    attention = sum(d_in * d_out for _, d_in, d_out in arch.attention_linears())
    if t.dense_experts:
        moe = arch.is_moe if moe_layer is None else moe_layer
        if not with_mlp:
            return float(2 * (attention + (arch.hidden_size * arch.experts if moe else 0)))
        if moe:
            experts = arch.experts * sum(i * o for _, i, o in arch.expert_linears())
            shared = sum(i * o for _, i, o in arch.shared_expert_linears())
            return float(2 * (attention + arch.hidden_size * arch.experts + experts + shared))
        return float(2 * (attention + sum(d_in * d_out for _, d_in, d_out in arch.dense_mlp_linears())))
    if t.deepseek_moe:
        moe = arch.is_moe if moe_layer is None else moe_layer
        if moe:
            shared = sum(i * o for _, i, o in arch.shared_expert_linears()) if with_mlp else 0
            return float(2 * (attention + arch.hidden_size * arch.experts + shared))
        dense = sum(d_in * d_out for _, d_in, d_out in arch.dense_mlp_linears()) if with_mlp else 0
        return float(2 * (attention + dense))
    if arch.is_moe:
        return float(2 * (attention + arch.hidden_size * arch.experts))
    return float(2 * (attention + sum(d_in * d_out for _, d_in, d_out in arch.dense_mlp_linears())))
