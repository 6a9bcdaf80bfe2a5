"""The frontier of issue 20 (points 3 and 4): the families that answered only from their tensors
(Gemma 3n, Mamba-1, Falcon-Mamba, Jamba, LFM2-MoE, OLMo Hybrid, Kimi Linear), and the presets added with them.

The serving cache of each new layer kind is held to the cache a transformers forward returns (CPU,
bf16, random weights, small configs) to the byte, through both the architecture's per-sequence and
per-token figures and the serving estimate's layer caches (``bot.estimate.kv_cache``); the builds
need torch and transformers and run under ``-m accuracy``.
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.estimate.hub import architecture_from_config
from bot.estimate.kv_cache import cache_bytes, layer_caches
from bot.measure.cache import cache_bytes as measured_cache_bytes

BATCH = 2
LENGTHS = (5, 9)
_ATTENTION = {"num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 128}
# Small configs of each new kind: Gemma 3n's layers sharing keys and values (a sliding window
# shorter than the longer forward), Mamba-1 alone and beside attention and MoE (Jamba), LFM2-MoE.
SMALL: dict[str, dict[str, Any]] = {
    "gemma3n_text": {
        **_ATTENTION,
        "hidden_size": 64,
        "num_hidden_layers": 6,
        "intermediate_size": [64, 96, 64, 64, 128, 64],
        "vocab_size_per_layer_input": 128,
        "hidden_size_per_layer_input": 8,
        "laurel_rank": 4,
        "num_kv_shared_layers": 2,
        "layer_types": ["sliding_attention", "full_attention"] * 3,
        "sliding_window": 4,
        "activation_sparsity_pattern": [0.0] * 6,
    },
    "mamba": {"hidden_size": 64, "num_hidden_layers": 2, "state_size": 8, "vocab_size": 128},
    "falcon_mamba": {
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "state_size": 8,
        "vocab_size": 128,
        "expand": 3,
    },
    "jamba": {
        **_ATTENTION,
        "hidden_size": 64,
        "num_hidden_layers": 4,
        "intermediate_size": 64,
        "num_experts": 4,
        "attn_layer_period": 2,
        "attn_layer_offset": 1,
        "mamba_d_state": 8,
        "mamba_dt_rank": 8,
    },
    "olmo_hybrid": {
        **_ATTENTION,
        "hidden_size": 64,
        "num_hidden_layers": 3,
        "layer_types": ["linear_attention", "full_attention", "linear_attention"],
        "intermediate_size": 96,
        "linear_num_key_heads": 2,
        "linear_num_value_heads": 2,
        "linear_key_head_dim": 16,
        "linear_value_head_dim": 8,
        "linear_conv_kernel_dim": 3,
        "pad_token_id": 0,
    },
    "lfm2_moe": {
        **_ATTENTION,
        "hidden_size": 64,
        "num_hidden_layers": 3,
        "layer_types": ["conv", "full_attention", "conv"],
        "intermediate_size": 96,
        "moe_intermediate_size": 32,
        "num_experts": 4,
        "num_experts_per_tok": 2,
        "num_dense_layers": 1,
    },
    # Kimi Linear: Kimi Delta Attention beside MLA (its latent and rope key cached) and MoE.
    "kimi_linear": {
        "hidden_size": 64,
        "num_hidden_layers": 3,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "vocab_size": 128,
        "layer_types": ["linear_attention", "full_attention", "linear_attention"],
        "intermediate_size": 96,
        "moe_intermediate_size": 32,
        "num_experts": 4,
        "num_experts_per_token": 2,
        "kv_lora_rank": 16,
        "qk_rope_head_dim": 8,
        "qk_nope_head_dim": 16,
        "v_head_dim": 16,
        "linear_num_heads": 2,
        "linear_head_dim": 16,
        "linear_conv_kernel_dim": 3,
        "pad_token_id": 0,
        "bos_token_id": 1,
        "eos_token_id": 2,
    },
}


def _forward_cache_bytes(model_type: str) -> list[int]:
    """The cache of one sequence after a bf16 forward of each of LENGTHS."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.for_model(model_type, **SMALL[model_type])
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16).eval()
    totals = []
    for length in LENGTHS:
        ids = torch.randint(0, 128, (BATCH, length))
        with torch.no_grad():
            totals.append(measured_cache_bytes(model(input_ids=ids, use_cache=True).past_key_values) // BATCH)
    return totals


@pytest.mark.accuracy
@pytest.mark.usefixtures("quiet_transformers")
@pytest.mark.parametrize("model_type", sorted(SMALL))
def test_each_new_kind_caches_what_transformers_keeps(model_type: str) -> None:
    from transformers import AutoConfig

    config = AutoConfig.for_model(model_type, **SMALL[model_type]).to_dict()
    arch = architecture_from_config("acme/small", config)
    measured = _forward_cache_bytes(model_type)
    caches = layer_caches(arch)
    assert [cache_bytes(caches, length) for length in LENGTHS] == measured
    if not arch.sliding_window:  # the window caps the per-token figure of the longer forward
        per_token = (measured[1] - measured[0]) // (LENGTHS[1] - LENGTHS[0])
        fixed = measured[0] - per_token * LENGTHS[0]
        counted = sum(cache.layers * cache.bytes_per_token for cache in caches)
        assert (arch.state_bytes_per_sequence(2), counted) == (fixed, per_token)


# --- presets (issue 20, point 4) ------------------------------------------------------------------
# key -> the Gemma3nTextConfig fields of its config.json (the rest are the class's defaults), and
# its text model's parameters as transformers 5.24 builds them on the meta device.
GEMMA_3N: dict[str, tuple[dict[str, Any], int]] = {
    "gemma-3n-e4b": ({}, 6_835_235_568),
    "gemma-3n-e2b": (
        {
            "num_hidden_layers": 30,
            "intermediate_size": [8192] * 30,
            "num_kv_shared_layers": 10,
            "activation_sparsity_pattern": [0.95] * 10 + [0.0] * 20,
        },
        4_435_182_688,
    ),
}
# The model card's "raw parameter count" (8B, 5B) holds the towers too: within half a billion.
PUBLISHED_RAW = {"gemma-3n-e4b": 8_000_000_000, "gemma-3n-e2b": 5_000_000_000}


def _gemma_3n_config(key: str) -> dict[str, Any]:
    """The preset's config.json as a Hub repo holds it: the multimodal config around its text config."""
    fields, _ = GEMMA_3N[key]
    layers = fields.get("num_hidden_layers", 35)
    text = {
        "model_type": "gemma3n_text",
        "hidden_size": 2048,
        "num_hidden_layers": layers,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "head_dim": 256,
        "intermediate_size": fields.get("intermediate_size", [16384] * layers),
        "vocab_size": 262400,
        "vocab_size_per_layer_input": 262144,
        "hidden_size_per_layer_input": 256,
        "altup_num_inputs": 4,
        "laurel_rank": 64,
        "num_kv_shared_layers": fields.get("num_kv_shared_layers", 15),
        "sliding_window": 512,
        "layer_types": ["full_attention" if (i + 1) % 5 == 0 else "sliding_attention" for i in range(layers)],
        "max_position_embeddings": 32768,
    }
    return {
        "model_type": "gemma3n",
        "architectures": ["Gemma3nForConditionalGeneration"],
        "text_config": text,
    }


@pytest.mark.parametrize("key", sorted(GEMMA_3N))
def test_a_gemma_3n_preset_counts_what_transformers_builds_and_its_card_says(key: str) -> None:
    from bot.estimate.models import presets

    model = presets()[key]
    assert model.parameter_count == GEMMA_3N[key][1]
    assert model.published_params == PUBLISHED_RAW[key]
    assert abs(model.total_params - PUBLISHED_RAW[key]) < 500_000_000
    assert model.tower_params == model.non_text_params - model.projector_params > 0
    # The same count from its config.json through the Hub reader.
    read = architecture_from_config(f"google/{key}", _gemma_3n_config(key))
    assert read.parameter_count == model.parameter_count
    assert read.model_type == "gemma3n_text"
    assert (read.kv_cached_sliding_layers, read.kv_cached_full_layers) == (
        model.kv_cached_sliding_layers,
        model.kv_cached_full_layers,
    )


def test_gemma_3ns_sharing_layers_cache_nothing_of_their_own() -> None:
    from bot.estimate.kv_cache import KvDtype
    from bot.estimate.models import presets

    model = presets()["gemma-3n-e2b"]  # 30 layers: 20 cache (16 sliding, 4 full), the last 10 reuse
    caches = layer_caches(model, KvDtype.BF16)
    assert {cache.kind: cache.layers for cache in caches} == {"sliding": 16, "full": 4}
    assert sum(cache.layers * cache.bytes_per_token for cache in caches) == 20 * 2 * 2 * 256 * 2


@pytest.mark.parametrize(
    ("typed", "key"),
    [
        ("gemma 3n e2b", "gemma-3n-e2b"),
        ("Gemma 3n E4B", "gemma-3n-e4b"),
        ("google/gemma-3n-E4B-it", "gemma-3n-e4b"),
        ("google/gemma-3n-E2B", "gemma-3n-e2b"),
        ("gemma 3n e3b", None),  # no such size: never another one
        ("gemma 3n 2b", None),  # a total of 2B is neither (E2B holds 5.4B)
    ],
)
def test_a_gemma_3n_name_reaches_its_own_size_or_none(typed: str, key: str | None) -> None:
    from bot.estimate.models import find_preset, search_presets

    found = find_preset(typed)
    assert (found.key if found else None) == key
    assert [m.key for m in search_presets(typed)][:1] == ([key] if key else [])


@pytest.mark.accuracy
@pytest.mark.usefixtures("quiet_transformers")
@pytest.mark.parametrize("key", sorted(GEMMA_3N))
def test_a_gemma_3n_presets_config_builds_to_its_count(key: str) -> None:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from bot.estimate.models import presets

    config = AutoConfig.for_model("gemma3n_text", **GEMMA_3N[key][0])
    with torch.device("meta"):
        built = sum(p.numel() for p in AutoModelForCausalLM.from_config(config).parameters())
    assert built == GEMMA_3N[key][1] == presets()[key].parameter_count
