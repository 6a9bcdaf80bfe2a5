"""Gemma 4 and Mistral Large 4 (issue 20, points 2 and 5): their configs counted and cached as built.

Each case is a small config of the family with the parts its default config leaves off: Gemma 4's
global layers of their own head width and K/V heads, K = V, layers sharing keys and values with a
double-wide MLP, the MoE block beside the MLP, no per-layer inputs, the layer pattern of its class
(read from ``global_head_dim`` or from the ``per_layer_config`` transformers writes); Mistral Large 4's
layers without RoPE, layers sharing an earlier layer's latent, the indexer's layers by list, pattern or
frequency. The count of the bot's Hub reader equals the meta-device build (its parameters and the
persistent buffers a checkpoint holds: Gemma 4's layer_scalar), and the KV cache the
serving estimate gives equals the cache a bf16 CPU forward of transformers 5.24 returns, to the byte.
Needs torch and transformers; skipped without them.
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.estimate.hub import architecture_from_config
from bot.estimate.kv_cache import KvDtype, cache_bytes, layer_caches
from bot.measure.cache import cache_bytes as cache_held
from tests.checkpoint_count import checkpoint_count

pytestmark = [pytest.mark.accuracy, pytest.mark.usefixtures("quiet_transformers")]

BATCH, SEQ_LEN = 2, 20  # longer than Gemma 4's window below
_GEMMA4 = {
    "vocab_size": 512,
    "hidden_size": 64,
    "intermediate_size": 96,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "hidden_size_per_layer_input": 8,
    "vocab_size_per_layer_input": 128,
    "sliding_window": 8,
    "pad_token_id": 0,
}
_SHARING = {
    "num_hidden_layers": 8,
    "layer_types": (["sliding_attention"] * 3 + ["full_attention"]) * 2,
    "attention_k_eq_v": True,
    "num_global_key_value_heads": 1,
    "global_head_dim": 32,
    "num_kv_shared_layers": 3,
    "use_double_wide_mlp": True,
}
_MISTRAL_LARGE4 = {
    "vocab_size": 512,
    "hidden_size": 64,
    "intermediate_size": 96,
    "moe_intermediate_size": 32,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "kv_lora_rank": 16,
    "qk_rope_head_dim": 8,
    "qk_nope_head_dim": 8,
    "v_head_dim": 16,
    "n_routed_experts": 4,
    "num_experts_per_tok": 2,
    "index_n_heads": 2,
    "index_head_dim": 16,
    "index_topk": 4,
    "pad_token_id": 0,
}
_PIXTRAL = {
    "model_type": "pixtral",
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "head_dim": 16,
    "patch_size": 14,
    "image_size": 56,
}
# The fields MistralLarge4TextConfig reads only to derive its lists (not kept as attributes).
_DERIVING = ("no_rope_layer_interval", "index_topk_pattern", "index_topk_freq", "index_skip_topk_offset")

# name: (model_type, fields, fields left out of the config.json as written by transformers)
CASES: dict[str, tuple[str, dict[str, Any], tuple[str, ...]]] = {
    "gemma4 global head width": ("gemma4_text", {"num_hidden_layers": 6}, ()),
    "gemma4 K=V, shared K/V, double-wide, from global_head_dim": (
        "gemma4_text",
        _SHARING,
        ("per_layer_config",),
    ),
    "gemma4 K=V, shared K/V, double-wide, from per_layer_config": ("gemma4_text", _SHARING, ()),
    "gemma4 MoE block, no per-layer inputs, biases": (
        "gemma4_text",
        {
            "num_hidden_layers": 6,
            "enable_moe_block": True,
            "num_experts": 4,
            "top_k_experts": 2,
            "moe_intermediate_size": 32,
            "attention_bias": True,
            "hidden_size_per_layer_input": 0,
        },
        ("per_layer_config",),
    ),
    "gemma4 its class's pattern, the last layer full": (
        "gemma4_text",
        {"num_hidden_layers": 7, "global_head_dim": 24},
        ("per_layer_config", "layer_types"),
    ),
    "mistral large 4 default lists": ("mistral_large4", {"num_hidden_layers": 6}, ()),
    "mistral large 4 shared latents, NoPE, listed indexer": (
        "mistral_large4",
        {
            "num_hidden_layers": 6,
            "kv_source_layers": [0, 0, 2, 2, 2, 5],
            "no_rope_layers": [1, 1, 0, 0, 0, 1],
            "indexer_types": ["full", "shared", "full", "full", "shared", "shared"],
            "mlp_layer_types": ["dense", "sparse", "dense", "sparse", "sparse", "sparse"],
            "n_shared_experts": 2,
            "attention_bias": True,
        },
        (),
    ),
    "mistral large 4 derived: NoPE interval, indexer pattern, dense layers": (
        "mistral_large4",
        {
            "num_hidden_layers": 7,
            "no_rope_layer_interval": 3,
            "index_topk_pattern": "FSFSSFF",
            "first_k_dense_replace": 2,
        },
        ("no_rope_layers", "indexer_types", "mlp_layer_types"),
    ),
    "mistral large 4 derived: indexer frequency and offset": (
        "mistral_large4",
        {"num_hidden_layers": 7, "index_topk_freq": 3, "index_skip_topk_offset": 1},
        ("indexer_types", "no_rope_layers"),
    ),
}


def _config(model_type: str, fields: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    """The config transformers builds, the auto class that builds it, and the fields it derives from."""
    import transformers

    if model_type == "gemma4_text":
        config = transformers.AutoConfig.for_model(model_type, **{**_GEMMA4, **fields})
        return config, transformers.AutoModelForCausalLM, {}
    text = {**_MISTRAL_LARGE4, **fields}
    deriving = {k: text.pop(k) for k in _DERIVING if k in text}
    text_config = transformers.MistralLarge4TextConfig(**text, **deriving).to_dict()
    config = transformers.AutoConfig.for_model(model_type, text_config=text_config, vision_config=_PIXTRAL)
    return config, transformers.AutoModelForImageTextToText, deriving


def _written(
    config: Any, fields: dict[str, Any], left_out: tuple[str, ...], deriving: dict[str, Any]
) -> dict[str, Any]:
    """The config.json a repo holds: transformers' own, less ``left_out``, with the fields its class
    reads only to derive others (Gemma 4's global_head_dim, Mistral Large 4's patterns) as given."""
    written: dict[str, Any] = config.to_dict()
    text = written.get("text_config", written)
    for name in left_out:
        text.pop(name, None)
    text.update({k: v for k, v in fields.items() if k in ("global_head_dim", "num_global_key_value_heads")})
    text.update(deriving)
    return written


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_count_and_the_cache_are_what_transformers_builds_and_keeps(case: str) -> None:
    import torch

    model_type, fields, left_out = CASES[case]
    config, auto, deriving = _config(model_type, fields)
    with torch.device("meta"):
        meta = auto.from_config(config)
    held = checkpoint_count(meta)
    architecture = architecture_from_config("decl/case", _written(config, fields, left_out, deriving))
    assert architecture.total_params == held, case

    torch.manual_seed(0)
    model = auto.from_config(config, dtype=torch.bfloat16, attn_implementation="sdpa").eval()
    ids = torch.randint(1, 120, (BATCH, SEQ_LEN))  # within Gemma 4's per-layer vocabulary
    with torch.no_grad():
        cached = cache_held(model(input_ids=ids, use_cache=True).past_key_values)
    assert cache_bytes(layer_caches(architecture, KvDtype.BF16), SEQ_LEN, BATCH) == cached, case


# --- the classic causal LMs (issue 20, point 2): counts only ----------------------------------------
_SMALL_GPT = {"vocab_size": 500, "n_embd": 64, "n_layer": 2, "n_head": 4}
_SMALL_FALCON = {"vocab_size": 500, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4}
CLASSIC: dict[str, tuple[str, dict[str, Any]]] = {
    "gpt2, n_inner and n_positions of its own": ("gpt2", {**_SMALL_GPT, "n_inner": 100, "n_positions": 96}),
    "gpt2 untied, 4h": ("gpt2", {**_SMALL_GPT, "tie_word_embeddings": False}),
    "gpt-j, 4h": ("gptj", {**_SMALL_GPT, "rotary_dim": 8}),
    "codegen, tied": ("codegen", {**_SMALL_GPT, "rotary_dim": 8, "n_inner": 96, "tie_word_embeddings": True}),
    "gpt-neo, 4h": (
        "gpt_neo",
        {
            "vocab_size": 500,
            "hidden_size": 64,
            "num_layers": 2,
            "num_heads": 4,
            "attention_types": [[["global", "local"], 1]],
        },
    ),
    "opt without biases": (
        "opt",
        {
            "vocab_size": 500,
            "hidden_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "ffn_dim": 100,
            "enable_bias": False,
        },
    ),
    "gpt-bigcode, multi-query": ("gpt_bigcode", {**_SMALL_GPT, "n_inner": 100}),
    "gpt-bigcode, multi-head": ("gpt_bigcode", {**_SMALL_GPT, "multi_query": False}),
    "falcon 40B's layout: new decoder architecture, 2 K/V heads": (
        "falcon",
        {**_SMALL_FALCON, "new_decoder_architecture": True, "num_kv_heads": 2},
    ),
    "falcon, new architecture with one norm in parallel": (
        "falcon",
        {**_SMALL_FALCON, "new_decoder_architecture": True, "num_kv_heads": 2, "num_ln_in_parallel_attn": 1},
    ),
    "falcon, multi-head, sequential, biases, ALiBi": (
        "falcon",
        {**_SMALL_FALCON, "multi_query": False, "parallel_attn": False, "bias": True, "alibi": True},
    ),
    "bloom untied": (
        "bloom",
        {"vocab_size": 500, "hidden_size": 64, "n_layer": 2, "n_head": 4, "tie_word_embeddings": False},
    ),
}
# What the declarations do not model is refused by name, never counted otherwise.
REFUSED = {
    "gpt2 with cross-attention": ("gpt2", {**_SMALL_GPT, "add_cross_attention": True}, "add_cross_attention"),
    "opt with projections around its layers": (
        "opt",
        {
            "vocab_size": 500,
            "hidden_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "word_embed_proj_dim": 32,
        },
        "word_embed_proj_dim",
    ),
}


@pytest.mark.parametrize("case", sorted(CLASSIC))
def test_a_classic_causal_lm_counts_what_transformers_builds(case: str) -> None:
    import torch
    import transformers

    model_type, fields = CLASSIC[case]
    config = transformers.AutoConfig.for_model(model_type, **fields)
    with torch.device("meta"):
        meta = transformers.AutoModelForCausalLM.from_config(config)
    held = checkpoint_count(meta)
    assert architecture_from_config("decl/classic", config.to_dict()).parameter_count == held, case


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_a_classic_declaration_does_not_model_is_refused_by_name(case: str) -> None:
    import transformers

    from bot.estimate.hub import ConfigProblem

    model_type, fields, named = REFUSED[case]
    config = transformers.AutoConfig.for_model(model_type, **fields).to_dict()
    with pytest.raises(ConfigProblem, match=named) as refused:
        architecture_from_config("decl/classic", config)
    assert refused.value.kind == "undeclared_family"
