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
The 5as²b term is the attention matrix (scores, softmax, dropout); FlashAttention never stores it
(Dao et al. 2022), so it is left out by default. Full activation checkpointing keeps only each
layer's input, 2sbh (the paper's section 4.3), and recomputes the rest in the backward pass.
Outside the layers (section 4.3): embedding dropout sbh, final norm 2sbh, the LM head's input 2sbh,
and the 32-bit logits of the loss 4sbv.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.estimate.models import Architecture


@dataclass(frozen=True, slots=True)
class ActivationEstimate:
    batch_size: int
    seq_len: int
    flash_attention: bool
    checkpointing: bool
    per_layer_gb: float
    outside_layers_gb: float
    total_gb: float


def layer_bytes(
    arch: Architecture, batch_size: int, seq_len: int, *, flash_attention: bool, gated_mlp: bool = True
) -> float:
    s, b, h, a = seq_len, batch_size, arch.hidden_size, arch.attention_heads
    sb = s * b
    attention = 2 * sb * h + 2 * sb * arch.q_dim + 4 * sb * arch.kv_dim + 2 * sb * arch.q_dim + sb * h
    if not flash_attention:
        attention += 5 * a * s * s * b
    stored_mlp_tensors = 4 if gated_mlp else 2
    # A mixture of experts runs each token through experts_per_token MLPs, so stores that many.
    mlp = 3 * sb * h + stored_mlp_tensors * 2 * sb * arch.intermediate_size * arch.experts_per_token
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
        per_layer = float(2 * sb * h)
    else:
        per_layer = layer_bytes(arch, batch_size, seq_len, flash_attention=flash_attention)
    outside = float(sb * h + 2 * sb * h + 2 * sb * h + 4 * sb * arch.vocab_size)
    return ActivationEstimate(
        batch_size=batch_size,
        seq_len=seq_len,
        flash_attention=flash_attention,
        checkpointing=checkpointing,
        per_layer_gb=per_layer / 1e9,
        outside_layers_gb=outside / 1e9,
        total_gb=(arch.layers * per_layer + outside) / 1e9,
    )
