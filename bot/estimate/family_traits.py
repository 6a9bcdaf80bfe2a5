"""What a family's forward does that its shape does not say, and that the saved bytes depend on.

The traits come from the family's declaration (:mod:`bot.estimate.families`); the calibrated
formulas of :mod:`bot.estimate.saved_activations` and :mod:`bot.estimate.step_peak` read them.
Pure Python; nothing here imports torch.
"""

from __future__ import annotations

from typing import Literal

from bot.estimate.families import Family, family
from bot.estimate.models import Architecture
from bot.estimate.value_type import value_type

MlpActivation = Literal["native", "xielu", "gelu_python"]
NormStyle = Literal["llama", "gemma", "fp32", "layernorm", "cohere", "weightless", "fp32_layernorm"]


@value_type
class FamilyTraits:
    """What the Architecture fields do not say but the saved bytes depend on."""

    norm_style: NormStyle = "llama"
    qk_norm: bool = False
    # Bytes per routed token-expert pair of the routing weight the experts' output is scaled by:
    # Mixtral keeps the fp32 softmax, Qwen3-MoE casts it to the hidden dtype.
    router_weight_bytes: int = 4
    # RoPE cos/sin table pairs: Gemma 3 has one for local and one for global layers.
    rope_tables: int = 1
    # gpt-oss: a learned sink column in each head's softmax, computed in the scores' dtype; its
    # experts' clamped SwiGLU (interleaved gate/up, sigmoid, clamp, up + 1) and top-k-then-softmax router.
    attention_sinks: bool = False
    clamped_swiglu: bool = False
    # gpt-oss keeps cos/sin d/2 wide (it rotates the two halves), the others d wide.
    rope_half_width: bool = False
    # DeepSeek-V3's MoE layer (transformers ``DeepseekV3MoE``, and GLM-4.5's copy of it): a sigmoid
    # router with an fp32 weight and group-limited top-k, the routed experts, and the shared experts on
    # the same input.
    deepseek_moe: bool = False
    # RoPE written as cat(rotated part, passed part) (GLM-4.5, Phi-3): Q and K are new head-major
    # tensors, so SDPA's output comes back head-major and o_proj's input is a contiguous copy (2q).
    rope_cat: bool = False
    # GLM-4.5 rotates half of each head (partial_rotary_factor 0.5): its RoPE tables are d/2 wide.
    partial_rope: bool = False
    # Gemma 2 caps the attention scores (eager: their tanh, 2·a·s, is saved) and the logits (the tanh
    # of the bf16 logits, 2v, is saved) with tanh.
    softcapping: bool = False
    # Llama 4 (transformers ``Llama4TextMoe``): every token goes through every expert, scaled by a
    # sigmoid score that is 0 for the experts it was not routed to; and its eager attention keeps
    # the softmax in the compute dtype (no fp32 copy).
    dense_experts: bool = False
    compute_dtype_softmax: bool = False
    # Llama 4's RoPE table is one complex64 tensor (freqs_cis) in every precision.
    complex_rope: bool = False
    # famact: the refused dense and MoE families (benchmarks/ACCURACY.md, "Activations of the declared
    # families"). Attention and MLP read one normalized input (Cohere, Phi: a parallel block).
    parallel_block: bool = False
    # An MLP activation written out in Python (Apertus' xIELU, Phi's gelu_new) saves more tensors.
    mlp_activation: MlpActivation = "native"
    embedding_norm: bool = False  # nanochat: a norm on the embeddings, outside the layers
    logit_softcapping: bool = False  # the tanh of the capped logits (2v), without Gemma 2's scores
    # Qwen2-MoE: a sigmoid gate (h -> 1) scales the shared expert's output.
    shared_expert_gate: bool = False
    # Each layer's copies of cos/sin (ERNIE 4.5 fp32, Helium the compute dtype); ERNIE's fp32 router.
    rope_per_layer: Literal["none", "fp32", "compute"] = "none"
    fp32_router: bool = False
    # Under autocast: the shared expert's linears that each cast the fp32 input (gate and up: 2).
    shared_expert_casts: int = 0
    # How peft 0.21's "all-linear" sees the MoE layer (families.Experts): the v4 expert names
    # converted onto the 3-D experts and the router's weight, or a router that is an nn.Linear.
    peft_converted: bool = False
    linear_router: bool = False
    # famact, this round (families.Family's fields of the same names): DeepSeek-V2's softmax router
    # in DeepSeek's MoE layer, Hunyuan's fp32 router input, Seed-OSS' residual dropout masks, the
    # rotated share of a head, QK-norm after RoPE.
    softmax_deepseek_router: bool = False
    fp32_router_input: bool = False
    residual_dropout_masks: int = 0
    rotary_fraction: float = 1.0
    qk_norm_after_rope: bool = False
    norms_share_input: bool = False
    norms_of_outputs: int = 0
    sink_scaling: bool = False
    # act: Gemma 3n's layers (families.PerLayer: AltUp, LAuReL, per-layer inputs, K/V sharing).
    per_layer_parts: bool = False
    # act: DeepSeek-V4's layers (families.CompressedAttention: hyper-connections, compressors, sinks).
    compressed_layers: bool = False


# A family without a declaration keeps what Llama's layers keep.
_LLAMA_LIKE = Family("llama")


def traits_for(arch: Architecture) -> FamilyTraits:
    """The traits of the architecture's family (``Architecture.family``: a config's model_type, or
    the one a preset's key names), as its declaration (bot.estimate.families) gives them, so a Hub
    repo gets its family's as the preset of the same shape."""
    declared = family(arch.family) or _LLAMA_LIKE
    return FamilyTraits(
        # A LayerNorm with weight and bias is torch's native_layer_norm (bot.estimate.saved_activations).
        norm_style="layernorm" if declared.norm_parameters == "weight_bias" else declared.norm_style,
        qk_norm=arch.qk_norm or declared.qk_norm is True or declared.weightless_qk_norm,
        router_weight_bytes=declared.router_weight_bytes,
        rope_tables=declared.rope_tables,
        attention_sinks=arch.attention_sinks or declared.attention_sinks,
        clamped_swiglu=declared.clamped_swiglu,
        rope_half_width=declared.rope_half_width,
        # The noaux_tc router with its per-expert correction bias: DeepSeek-V3/R1, Kimi K2 (transformers
        # maps kimi_k2 to deepseek_v3) and GLM-4.5, whose MoE layer is DeepSeek-V3's code (measured).
        # MiniMax-M2 has the correction bias but no shared experts: its layer is a routed MoE (measured).
        deepseek_moe=(
            arch.router_correction_bias and declared.experts is not None and declared.experts.shared != 0
        )
        or (arch.is_moe and declared.deepseek_moe_layer != "auto"),
        rope_cat=declared.rope_cat,
        partial_rope=declared.partial_rope,
        softcapping=declared.softcapping,
        dense_experts=declared.dense_experts,
        compute_dtype_softmax=declared.compute_dtype_softmax,
        complex_rope=declared.complex_rope,
        parallel_block=declared.parallel_block,
        mlp_activation=declared.mlp_activation,
        embedding_norm=declared.embedding_norm,
        logit_softcapping=declared.logit_softcapping,
        shared_expert_gate=declared.experts is not None and declared.experts.shared_gate,
        rope_per_layer=declared.rope_per_layer,
        fp32_router=declared.fp32_router,
        shared_expert_casts=declared.shared_expert_casts,
        peft_converted=declared.experts is not None and declared.experts.peft_converted,
        linear_router=declared.experts is not None and declared.experts.linear_router,
        softmax_deepseek_router=declared.deepseek_moe_layer == "softmax",
        fp32_router_input=declared.fp32_router_input,
        residual_dropout_masks=declared.residual_dropout_masks,
        rotary_fraction=declared.rotary_fraction,
        qk_norm_after_rope=declared.qk_norm_after_rope,
        norms_share_input=declared.norms_share_input,
        norms_of_outputs=declared.norms_of_outputs,
        sink_scaling=declared.sink_scaling,
        per_layer_parts=declared.per_layer is not None,
        compressed_layers=declared.compressed_attention is not None,
    )


def offers_activations(arch: Architecture) -> bool:
    """Whether the calibrated formulas hold for the architecture's family: its declaration says they
    were measured (``Family.activations_measured``, benchmarks/accuracy.py). A family declared for its
    counts only gets no activation estimate (its answers ask for ``activations``), rather than a
    figure off by more than the benchmark's tolerance. A shape of no listed family keeps Llama's."""
    declared = family(arch.family)
    return declared is None or declared.activations_measured
