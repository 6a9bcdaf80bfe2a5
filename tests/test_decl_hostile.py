"""Gemma 4's and Mistral Large 4's per-layer fields from a hostile or broken config.json: refused
with the field named (absurd) or the reason (undeclared_family), never a crash, never a count.
Pure: no torch."""

from __future__ import annotations

from typing import Any

import pytest

from bot.estimate.hub import ConfigProblem, architecture_from_config

_GEMMA4: dict[str, Any] = {
    "model_type": "gemma4_text",
    "hidden_size": 64,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "intermediate_size": 96,
    "vocab_size": 100,
    "hidden_size_per_layer_input": 0,
}
_MISTRAL_LARGE4_TEXT: dict[str, Any] = {
    "hidden_size": 64,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "intermediate_size": 96,
    "vocab_size": 100,
    "moe_intermediate_size": 32,
    "n_routed_experts": 4,
    "kv_lora_rank": 16,
    "qk_rope_head_dim": 8,
    "qk_nope_head_dim": 8,
    "v_head_dim": 16,
    "index_n_heads": 2,
    "index_head_dim": 16,
}
GEMMA4_BROKEN: list[tuple[dict[str, Any], str]] = [
    ({"per_layer_config": {"03": {"head_dim": [1]}}}, "per_layer_config"),  # a list: crashed before
    ({"per_layer_config": {"03": {"head_dim": -4}}}, "per_layer_config"),
    ({"per_layer_config": {"x": {}}}, "per_layer_config"),
    ({"per_layer_config": {"99": {"head_dim": 8}}}, "per_layer_config"),
    ({"per_layer_config": [1]}, "per_layer_config"),
    ({"per_layer_config": {"03": {"sliding_window": 3}}}, "beyond head_dim"),
    ({"per_layer_config": {"00": {"head_dim": 32}}}, "varying within a layer kind"),
    ({"layer_types": ["x"] * 4}, "layer_types"),
    ({"global_head_dim": "a"}, "global_head_dim"),
    ({"num_global_key_value_heads": 3, "attention_k_eq_v": True}, "num_global_key_value_heads"),
    (
        {
            "enable_moe_block": True,
            "num_experts": 4,
            "top_k_experts": 2,
            "moe_intermediate_size": 8,
            "num_kv_shared_layers": 1,
            "use_double_wide_mlp": True,
        },
        "use_double_wide_mlp and enable_moe_block",
    ),
]
MISTRAL_LARGE4_BROKEN: list[tuple[dict[str, Any], str]] = [
    ({"kv_source_layers": [0, 2, 1, 3]}, "kv_source_layers"),  # a source after its layer
    ({"kv_source_layers": [0, 0]}, "kv_source_layers"),
    ({"kv_source_layers": [[0], 1, 2, 3]}, "kv_source_layers"),
    ({"no_rope_layers": [2, 1, 1, 1]}, "no_rope_layers"),
    ({"index_topk_pattern": "FS"}, "index_topk_pattern"),
    ({"index_topk_pattern": 5}, "index_topk_pattern"),
    ({"indexer_types": ["full"] * 3}, "indexer_types"),
]


@pytest.mark.parametrize(("extra", "named"), GEMMA4_BROKEN)
def test_a_broken_gemma_4_config_is_refused_by_name(extra: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigProblem) as refused:
        architecture_from_config("acme/gemma4", {**_GEMMA4, **extra})
    assert any(named in field for field in refused.value.fields)


@pytest.mark.parametrize(("extra", "named"), MISTRAL_LARGE4_BROKEN)
def test_a_broken_mistral_large_4_config_is_refused_by_name(extra: dict[str, Any], named: str) -> None:
    config = {"model_type": "mistral_large4", "text_config": {**_MISTRAL_LARGE4_TEXT, **extra}}
    with pytest.raises(ConfigProblem) as refused:
        architecture_from_config("acme/large4", config)
    assert refused.value.kind == "absurd"
    assert named in refused.value.fields
