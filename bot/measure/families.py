"""Small Hugging Face configs, one per preset family, for measuring a real training step on CPU.

Pure Python: each family is a ``config.json``-like dict (``model_type`` plus the fields its
``transformers`` config class takes) at shapes small enough for two CPU cores, with hidden size,
MLP width, K/V width and vocabulary all different so that the s·b·h, s·b·f, s·b·kv and s·b·v terms
can be told apart. ``architecture`` reads such a dict as the bot reads a Hub config.json, so the
benchmark compares measured bytes with the estimate /vram gives.
"""

from __future__ import annotations

from typing import Any

from bot.estimate.families import FAMILIES as DECLARED
from bot.estimate.families import Family
from bot.estimate.hub import architecture_from_config
from bot.estimate.models import Architecture

# Shared small shape: h = 256, 8 query heads of 32, 2 K/V heads (GQA 4:1), f = 688, v = 1000.
_BASE: dict[str, Any] = {
    "hidden_size": 256,
    "intermediate_size": 688,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "head_dim": 32,
    "vocab_size": 1000,
    "max_position_embeddings": 4096,
    "tie_word_embeddings": False,
    "use_cache": False,
    "attention_dropout": 0.0,
}


def _with(model_type: str, **fields: Any) -> dict[str, Any]:
    return {"model_type": model_type, **_BASE, **fields}


# Each family: its config dict (what the estimator counts follows from its model_type's declaration).
FAMILIES: dict[str, dict[str, Any]] = {
    # Llama 3-style dense GQA, SiLU-gated MLP, two RMSNorms per layer.
    "llama": _with("llama"),
    # Qwen2: the same with biases on Q, K and V.
    "qwen2": _with("qwen2"),
    # Qwen3: per-head RMSNorm on Q and K (QK-norm), no QKV bias.
    "qwen3": _with("qwen3"),
    # Gemma 3 (text): four RMSNorms per layer (pre/post attention, pre/post MLP), QK-norm, GELU-tanh
    # gated MLP, embeddings scaled by sqrt(h). The sliding window is wider than the benchmark's
    # sequences, so local and global layers keep the same.
    "gemma3": _with(
        "gemma3_text",
        sliding_window=4096,
        query_pre_attn_scalar=32,
        final_logit_softcapping=None,
        attn_logit_softcapping=None,
    ),
    # Mixtral-style MoE: 4 experts, 2 active per token, no shared expert.
    "mixtral": _with("mixtral", num_local_experts=4, num_experts_per_tok=2),
    # Qwen3-MoE: 4 experts of width moe_intermediate_size, 2 active, QK-norm.
    "qwen3_moe": _with(
        "qwen3_moe",
        num_experts=4,
        num_experts_per_tok=2,
        moe_intermediate_size=344,
        decoder_sparse_step=1,
        mlp_only_layers=[],
        norm_topk_prob=True,
    ),
}

# DeepSeek-V3's MoE layer, which GLM-4.5 runs too: 4 routed experts with 2 active and one shared
# expert, every layer MoE (first_k_dense_replace = 0), one expert group.
_DEEPSEEK_MOE: dict[str, Any] = {
    "n_routed_experts": 4,
    "num_experts_per_tok": 2,
    "n_shared_experts": 1,
    "moe_intermediate_size": 344,
    "first_k_dense_replace": 0,
    "n_group": 1,
    "topk_group": 1,
}

# Families whose estimator inputs need more than the fields above (MLA, shared experts, sinks):
# measured and reported, compared with the estimate only where the estimate has a meaning.
EXTRA_FAMILIES: dict[str, dict[str, Any]] = {
    # DeepSeek-V3: multi-head latent attention (low-rank Q and KV, decoupled RoPE) and its MoE above.
    "deepseek_v3": _with(
        "deepseek_v3",
        num_key_value_heads=8,
        q_lora_rank=96,
        kv_lora_rank=64,
        qk_rope_head_dim=16,
        head_dim=16,  # RoPE's width: DeepSeek-V3's config sets head_dim to qk_rope_head_dim
        qk_nope_head_dim=32,
        v_head_dim=32,
        **_DEEPSEEK_MOE,
    ),
    # Llama 4 (text): 4 experts, 1 active, and the shared expert, on every layer; transformers runs
    # every token through every expert. Without Scout's weightless QK-norm (Maverick has none), whose
    # layers the estimate leaves out (benchmarks/ACCURACY.md, section 4).
    "llama4": _with(
        "llama4_text",
        intermediate_size=344,  # Llama 4's name for an expert's width
        intermediate_size_mlp=688,  # and for the dense layers' (none here)
        num_local_experts=4,
        num_experts_per_tok=1,
        interleave_moe_layer_step=1,
        use_qk_norm=False,
        attention_chunk_size=8192,
    ),
    # GLM-4.5: DeepSeek-V3's MoE above (sigmoid router with correction bias) under GQA attention with
    # QK-norm, biases on Q, K and V, and RoPE on half of each head (the dense first layers are checked
    # on their own: tests/test_measure.py).
    "glm4_moe": _with(
        "glm4_moe",
        **_DEEPSEEK_MOE,
        attention_bias=True,
        use_qk_norm=True,
        partial_rotary_factor=0.5,
    ),
    # Phi-3 (and Phi-4): Llama's layer with qkv_proj and gate_up_proj fused, and RoPE written as a
    # concatenation of the rotated and passed parts of each head.
    "phi3": _with("phi3", pad_token_id=0, bos_token_id=1, eos_token_id=2),
    # Gemma 2: Gemma's four norms and GELU-tanh MLP, with attention scores and logits capped by tanh
    # (transformers runs it with eager attention only: SDPA cannot cap the scores).
    "gemma2": _with(
        "gemma2",
        sliding_window=4096,
        query_pre_attn_scalar=32,
        attn_logit_softcapping=50.0,
        final_logit_softcapping=30.0,
    ),
    # gpt-oss: attention sinks, biases everywhere, 4 experts with 2 active, clamped SwiGLU.
    "gpt_oss": _with(
        "gpt_oss",
        num_local_experts=4,
        num_experts_per_tok=2,
        intermediate_size=688,
        sliding_window=4096,
    ),
}

# Every other declared family (bot.estimate.families; issue 20), at the same small shape: MoE
# families with 4 experts of 344, 2 active and one shared expert where they have shared experts,
# MLA families with DeepSeek-V3's small latent widths above. Whether the estimate offers their
# activations is their declaration's ``activations_measured``; the benchmark reports them all.
_SMALL_EXPERTS: dict[str, Any] = {
    **_DEEPSEEK_MOE,
    "num_experts": 4,
    "num_local_experts": 4,
    "moe_num_experts": 4,
    "moe_k": 2,
    "moe_num_shared_experts": 1,
    "num_shared_experts": 1,
    "shared_expert_intermediate_size": 344,
    "shared_intermediate_size": 344,
}
_SMALL_MLA: dict[str, Any] = {
    key: EXTRA_FAMILIES["deepseek_v3"][key]
    for key in ("num_key_value_heads", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "head_dim")
} | {"qk_nope_head_dim": 32, "v_head_dim": 32}


# Where a family's config class does not read the shared shape's field: GPT-NeoX has no grouped
# K/V heads (GPTNeoXConfig takes no num_key_value_heads; its query_key_value is 3h wide).
_SHAPE_OVERRIDES: dict[str, dict[str, Any]] = {"gpt_neox": {"num_key_value_heads": 8}}


def _declared(declared: Family) -> dict[str, Any]:
    fields: dict[str, Any] = {"sliding_window": 4096, "pad_token_id": 0}
    fields |= _SHAPE_OVERRIDES.get(declared.model_type, {})
    if declared.experts is not None:
        fields |= _SMALL_EXPERTS
    if declared.mla:
        fields |= _SMALL_MLA
    return _with(declared.model_type, **fields)


_MEASURED_ABOVE = {"llama", "qwen2", "qwen3", "gemma3_text", "mixtral", "qwen3_moe"} | {
    str(config["model_type"]) for config in EXTRA_FAMILIES.values()
}
DECLARED_FAMILIES: dict[str, dict[str, Any]] = {
    f.model_type: _declared(f) for f in DECLARED if f.model_type not in _MEASURED_ABOVE
}

ALL_FAMILIES: dict[str, dict[str, Any]] = {**FAMILIES, **EXTRA_FAMILIES, **DECLARED_FAMILIES}
# The extra families whose calibrated formulas exist (bot.estimate.saved_activations and step_peak).
CALIBRATED_EXTRA = ("deepseek_v3", "gpt_oss", "llama4", "glm4_moe", "gemma2", "phi3")


def architecture(name: str, config: dict[str, Any], layers: int | None = None) -> Architecture:
    """The estimator's view of a config dict, ``layers`` deep: the bot's own reading of it as a Hub
    config.json (bot.estimate.hub, by the family's declaration in bot.estimate.families), so the
    benchmark compares the measurement with exactly what /vram would estimate."""
    depth = int(layers or config.get("num_hidden_layers") or 1)
    read = architecture_from_config(name, {**config, "num_hidden_layers": depth})
    # Named like a preset (keys are plain: [a-z0-9.-]); the family follows its model_type.
    return read.model_copy(
        update={"key": name.replace("_", "-"), "name": name, "hub_id": None, "source": "preset"}
    )
