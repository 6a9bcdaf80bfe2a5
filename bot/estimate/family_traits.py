"""What a family's forward does that its shape does not say, and that the saved bytes depend on.

The traits are the family's declaration (:class:`bot.estimate.families.Family`): :class:`FamilyTraits`
is that declaration with the few traits that also depend on the architecture resolved, so a new
trait is one field of ``Family``, which the calibrated formulas of :mod:`bot.estimate.saved_activations`
and :mod:`bot.estimate.step_peak` then read as ``traits.<field>``. Pure Python; nothing here imports torch.
"""

from __future__ import annotations

from dataclasses import fields
from functools import cache
from typing import Any

from bot.estimate.families import Family, NormStyle, family
from bot.estimate.models import Architecture
from bot.estimate.value_type import value_type

__all__ = ["FamilyTraits", "NormStyle", "offers_activations", "traits_for"]


@value_type
class FamilyTraits(Family):
    """A family's declaration with what depends on the architecture (or on the declaration's parts)
    resolved: every other trait is the declaration's own field, as declared."""

    # A LayerNorm with weight and bias is torch's native_layer_norm (bot.estimate.saved_activations).
    norm_style: NormStyle = "llama"
    # QK-norm where the family always has it, the config switches it on, or it has no weights (nanochat).
    qk_norm: bool = False
    attention_sinks: bool = False  # gpt-oss: a learned sink column in each head's softmax
    # DeepSeek-V3's MoE layer (transformers ``DeepseekV3MoE``, and GLM-4.5's copy of it): a sigmoid
    # router with an fp32 weight and group-limited top-k, the routed experts, and the shared experts on
    # the same input.
    deepseek_moe: bool = False
    # The declaration's Experts, read as traits: Qwen2-MoE's sigmoid gate (h -> 1) on the shared
    # expert's output; how peft 0.21's "all-linear" sees the MoE layer (the v4 expert names converted
    # onto the 3-D experts and the router's weight, or a router that is an nn.Linear).
    shared_expert_gate: bool = False
    peft_converted: bool = False
    linear_router: bool = False
    softmax_deepseek_router: bool = False  # DeepSeek-V2's softmax router in DeepSeek's MoE layer
    # act: the declaration's sub-declarations, read as traits: Gemma 3n's layers (families.PerLayer:
    # AltUp, LAuReL, per-layer inputs, K/V sharing); DeepSeek-V4's (families.CompressedAttention:
    # hyper-connections, compressors, sinks).
    per_layer_parts: bool = False
    compressed_layers: bool = False


# The declaration's fields that FamilyTraits resolves (above) rather than takes as they stand.
_RESOLVED = frozenset({"norm_style", "qk_norm", "attention_sinks"})


def _as_declared(declared: Family) -> dict[str, Any]:
    """Every field of the declaration that the traits take as it stands."""
    return {f.name: getattr(declared, f.name) for f in fields(Family) if f.name not in _RESOLVED}


@cache
def _traits(
    model_type: str | None, qk_norm: bool, attention_sinks: bool, correction_bias: bool, is_moe: bool
) -> FamilyTraits:
    # A family without a declaration keeps what Llama's layers keep.
    declared = family(model_type) or Family("llama")
    experts = declared.experts
    return FamilyTraits(
        **_as_declared(declared),
        norm_style="layernorm" if declared.norm_parameters == "weight_bias" else declared.norm_style,
        qk_norm=qk_norm or declared.qk_norm is True or declared.weightless_qk_norm,
        attention_sinks=attention_sinks or declared.attention_sinks,
        # The noaux_tc router with its per-expert correction bias: DeepSeek-V3/R1, Kimi K2 (transformers
        # maps kimi_k2 to deepseek_v3) and GLM-4.5, whose MoE layer is DeepSeek-V3's code (measured).
        # MiniMax-M2 has the correction bias but no shared experts: its layer is a routed MoE (measured).
        deepseek_moe=(correction_bias and experts is not None and experts.shared != 0)
        or (is_moe and declared.deepseek_moe_layer != "auto"),
        shared_expert_gate=experts is not None and experts.shared_gate,
        peft_converted=experts is not None and experts.peft_converted,
        linear_router=experts is not None and experts.linear_router,
        softmax_deepseek_router=declared.deepseek_moe_layer == "softmax",
        per_layer_parts=declared.per_layer is not None,
        compressed_layers=declared.compressed_attention is not None,
    )


def traits_for(arch: Architecture) -> FamilyTraits:
    """The traits of the architecture's family (``Architecture.family``: a config's model_type, or
    the one a preset's key names), as its declaration (bot.estimate.families) gives them, so a Hub
    repo gets its family's as the preset of the same shape. Built once per family and shape flags."""
    return _traits(arch.family, arch.qk_norm, arch.attention_sinks, arch.router_correction_bias, arch.is_moe)


def offers_activations(arch: Architecture) -> bool:
    """Whether the calibrated formulas hold for the architecture's family: its declaration says they
    were measured (``Family.activations_measured``, benchmarks/accuracy.py). A family declared for its
    counts only gets no activation estimate (its answers ask for ``activations``), rather than a
    figure off by more than the benchmark's tolerance. A shape of no listed family keeps Llama's."""
    declared = family(arch.family)
    return declared is None or declared.activations_measured
