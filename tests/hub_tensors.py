"""Safetensors headers as real repos hold them (tensor name -> dtype, shape), for the fake Hub: a
Mamba-2 in three shards (served under a remote-code family no declaration knows), and Qwen3-32B in
block-wise FP8."""

from __future__ import annotations

from typing import Any

from tests.hub_configs import CONFIGS

Shard = dict[str, tuple[str, list[int]]]

# state-spaces/mamba2-130m's config.json as transformers' Mamba2Config reads it.
MAMBA2_CONFIG: dict[str, Any] = {
    "architectures": ["Mamba2ForCausalLM"],
    "model_type": "mamba2",
    "hidden_size": 768,
    "num_hidden_layers": 24,
    "vocab_size": 50280,
    "state_size": 128,
    "num_heads": 24,
    "head_dim": 64,
    "expand": 2,
    "n_groups": 1,
    "conv_kernel": 4,
    "tie_word_embeddings": True,
}
# The same checkpoint as a repo with its own modeling code and model_type (as trust_remote_code repos
# are, e.g. Hymba's): a family no declaration knows, which the tensors count exactly.
UNDECLARED_CONFIG: dict[str, Any] = {
    **MAMBA2_CONFIG,
    "architectures": ["AcmeSsmForCausalLM"],
    "model_type": "acme_ssm",
    "auto_map": {"AutoModelForCausalLM": "modeling_acme_ssm.AcmeSsmForCausalLM"},
}
# Worked by hand from transformers' Mamba2Mixer (in_proj to 2·1536 + 2·128 + 24, conv1d over
# 1536 + 2·128 channels, out_proj 1536 -> 768, A_log, D and dt_bias a head, a gated RMSNorm of 1536),
# a pre-norm per layer, the embeddings (tied to the head) and norm_f; the accuracy test builds it.
MAMBA2_PARAMS = 128_983_488


def mamba2_shards() -> dict[str, Shard]:
    """transformers' Mamba2ForCausalLM state dict, split over three shards as save_pretrained splits."""
    h, inner, heads, conv = 768, 1536, 24, 1536 + 2 * 128
    shards: dict[str, Shard] = {f"model-0000{i}-of-00003.safetensors": {} for i in (1, 2, 3)}
    names = list(shards)
    shards[names[0]]["backbone.embeddings.weight"] = ("BF16", [50280, h])
    for layer in range(24):
        mixer = f"backbone.layers.{layer}.mixer"
        shards[names[layer // 8]].update(
            {
                f"backbone.layers.{layer}.norm.weight": ("BF16", [h]),
                f"{mixer}.A_log": ("F32", [heads]),
                f"{mixer}.D": ("F32", [heads]),
                f"{mixer}.dt_bias": ("F32", [heads]),
                f"{mixer}.conv1d.weight": ("BF16", [conv, 1, 4]),
                f"{mixer}.conv1d.bias": ("BF16", [conv]),
                f"{mixer}.in_proj.weight": ("BF16", [inner + conv + heads, h]),
                f"{mixer}.norm.weight": ("BF16", [inner]),
                f"{mixer}.out_proj.weight": ("BF16", [h, inner]),
            }
        )
    shards[names[2]]["backbone.norm_f.weight"] = ("BF16", [h])
    return shards


QWEN3_FP8_CONFIG: dict[str, Any] = {
    **CONFIGS["qwen3-32b"],
    "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]},
}
QWEN3_32B_PARAMS = 32_762_123_264  # the preset's published count


def qwen3_fp8_tensors() -> Shard:
    """Qwen/Qwen3-32B-FP8's tensors: every linear weight in F8_E4M3 beside its 128 x 128 block scales."""
    h, hd, f, v = 5120, 128, 25600, 151936
    q, kv = 64 * hd, 8 * hd
    tensors: Shard = {"model.embed_tokens.weight": ("BF16", [v, h])}
    for layer in range(64):
        prefix = f"model.layers.{layer}"
        linears = {
            "self_attn.q_proj": (q, h),
            "self_attn.k_proj": (kv, h),
            "self_attn.v_proj": (kv, h),
            "self_attn.o_proj": (h, q),
            "mlp.gate_proj": (f, h),
            "mlp.up_proj": (f, h),
            "mlp.down_proj": (h, f),
        }
        for name, (out, into) in linears.items():
            tensors[f"{prefix}.{name}.weight"] = ("F8_E4M3", [out, into])
            tensors[f"{prefix}.{name}.weight_scale_inv"] = ("F32", [-(-out // 128), -(-into // 128)])
        for norm, width in (("input_layernorm", h), ("post_attention_layernorm", h)):
            tensors[f"{prefix}.{norm}.weight"] = ("BF16", [width])
        tensors[f"{prefix}.self_attn.q_norm.weight"] = ("BF16", [hd])
        tensors[f"{prefix}.self_attn.k_norm.weight"] = ("BF16", [hd])
    tensors["model.norm.weight"] = ("BF16", [h])
    tensors["lm_head.weight"] = ("BF16", [v, h])
    return tensors
