"""Activation memory of a training step from batch size and sequence length, for a preset.

Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
section 4.1: one transformer layer with 16-bit activations and no tensor parallelism stores

    s·b·h·(34 + 5·a·s/h) bytes = attention 11sbh + 5as²b, MLP 19sbh, two layer norms 4sbh

for sequence length s, micro-batch b, hidden size h and a attention heads. We keep every term and
adapt three of them to the preset's shapes, so a GPT-3-style layer gives exactly the paper's figure:
- attention: 2sbh input to Q/K/V, 2sb·q for Q, 4sb·kv for K and V (grouped-query K/V is smaller),
  2sb·q input to the output projection, sbh dropout mask: 11sbh when q = kv = h;
- MLP of width f: 2sbh input and sbh dropout mask, plus 2sbf for each stored f-wide tensor: two for
  a GELU MLP (4sbf = 16sbh at f = 4h, so 19sbh), four for a gated one (gate, up, their activation
  and their product);
- 2sbh for each norm's input (two in the paper; Gemma 2 has four).
For the 2025-26 shapes the same terms take the real widths:
- attention: 2sb each for Q (q), K (k) and V (v) and for the output projection's input (heads × v
  width), so grouped-query K/V and an explicit head_dim count as they are; Multi-head Latent
  Attention (DeepSeek-V2 paper, section 2.1) stores Q and K at heads × (nope + rope), V at heads ×
  v_head_dim, and the two latent vectors (q_lora_rank, kv_lora_rank) as the inputs of q_b and kv_b;
- a mixture-of-experts layer runs each token through experts_per_token experts of
  moe_intermediate_size plus the shared experts (Fedus et al. 2022, "Switch Transformers",
  section 2), so its f is moe_intermediate_size × experts_per_token + the shared width; dense layers
  (first_k_dense_replace, or the non-MoE layers of interleave_moe_layer_step) keep intermediate_size.
The per-layer figure reported is the mean over the layers; the total sums each layer's own.
The 5as²b term is the attention matrix (scores, softmax, dropout); FlashAttention never stores it
(Dao et al. 2022), so it is left out by default. Full activation checkpointing keeps only each
layer's input, 2sbh (the paper's section 4.3), and recomputes the rest in the backward pass.
Outside the layers (section 4.3): embedding dropout sbh, final norm 2sbh, the LM head's input 2sbh,
and the 32-bit logits of the loss 4sbv.
"""

from __future__ import annotations

from bot.estimate.models import Architecture
from bot.estimate.value_type import value_type


@value_type
class ActivationEstimate:
    batch_size: int
    seq_len: int
    flash_attention: bool
    checkpointing: bool
    per_layer_gb: float
    outside_layers_gb: float
    total_gb: float


def mlp_width(arch: Architecture, *, moe_layer: bool) -> int:
    """Width f of the stored MLP tensors for one token: the dense width, or the chosen experts'
    (moe_intermediate_size × experts_per_token) plus the shared experts' width."""
    if not moe_layer:
        return arch.intermediate_size
    return arch.expert_intermediate_size * arch.experts_per_token + arch.shared_intermediate_size


def layer_bytes(
    arch: Architecture,
    batch_size: int,
    seq_len: int,
    *,
    flash_attention: bool,
    gated_mlp: bool = True,
    moe_layer: bool | None = None,
) -> float:
    """One layer's stored activations; moe_layer defaults to whether the model has experts."""
    s, b, h, a = seq_len, batch_size, arch.hidden_size, arch.attention_heads
    sb = s * b
    # Input to Q/K/V, Q, K, V, the output projection's input, and the dropout mask (11sbh for GPT-3).
    attention = 2 * sb * h + 2 * sb * (arch.q_dim + arch.k_dim + arch.v_dim + arch.o_dim) + sb * h
    if arch.is_mla:
        # MLA's latent vectors are the inputs of q_b_proj and kv_b_proj (DeepSeek-V2, eq. 9 and 12).
        attention += 2 * sb * ((arch.q_lora_rank or 0) + (arch.kv_lora_rank or 0))
    if not flash_attention:
        attention += 5 * a * s * s * b
    stored_mlp_tensors = 4 if gated_mlp else 2
    moe = arch.is_moe if moe_layer is None else moe_layer
    # A mixture of experts runs each token through experts_per_token MLPs, so stores that many.
    mlp = 3 * sb * h + stored_mlp_tensors * 2 * sb * mlp_width(arch, moe_layer=moe)
    norms = arch.norms_per_layer * 2 * sb * h
    return float(attention + mlp + norms)


def estimate_activations(
    arch: Architecture,
    batch_size: int,
    seq_len: int,
    *,
    flash_attention: bool = True,
    checkpointing: bool = False,
) -> ActivationEstimate:
    sb, h = seq_len * batch_size, arch.hidden_size
    if checkpointing:
        in_layers = float(arch.layers * 2 * sb * h)
    else:
        in_layers = sum(
            count * layer_bytes(arch, batch_size, seq_len, flash_attention=flash_attention, moe_layer=moe)
            for count, moe in ((arch.dense_layers, False), (arch.moe_layers, True))
            if count
        )
    per_layer = in_layers / arch.layers
    outside = float(sb * h + 2 * sb * h + 2 * sb * h + 4 * sb * arch.vocab_size)
    return ActivationEstimate(
        batch_size=batch_size,
        seq_len=seq_len,
        flash_attention=flash_attention,
        checkpointing=checkpointing,
        per_layer_gb=per_layer / 1e9,
        outside_layers_gb=outside / 1e9,
        total_gb=(in_layers + outside) / 1e9,
    )
