"""The hybrid presets (issue 20, point 3): totals against transformers' build and the vendors'
figures, their layer kinds, their fixed state and KV per token, and a Hub config of Nemotron-H's
pattern string. Pure: no torch (the counts were taken from transformers 5.24's meta-device builds).
"""

from __future__ import annotations

import pytest

from bot.estimate.core import estimate
from bot.estimate.hub import architecture_from_config
from bot.estimate.kv_cache import KvDtype, layer_caches
from bot.estimate.models import Architecture, presets
from bot.estimate.request import EstimateRequest

# key -> the text model's parameters as transformers 5.24 builds them on the meta device (the config
# class's defaults, or the preset's config.json fields, given to AutoModelForCausalLM.from_config).
TRANSFORMERS_COUNT = {
    "qwen3-next-80b-a3b": 79_674_391_296,  # Qwen3NextConfig() is this checkpoint's
    "qwen3.5-35b-a3b": 34_660_610_688,  # Qwen3_5MoeForConditionalGeneration's language model
    "granite-4.0-h-small": 32_207_337_984,
    "deepseek-v3.2": 671_877_929_216,  # DeepseekV32Config(); the bot counts 14,848 more, as for V3
}
# key -> (the vendor's figure, how it is rounded: the count is within half of this unit of it).
PUBLISHED_TOTAL = {
    # https://huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct ("80B in total and 3B activated")
    "qwen3-next-80b-a3b": (80_000_000_000, 10**9),
    # https://huggingface.co/Qwen/Qwen3.5-35B-A3B (its name): text model and vision tower
    "qwen3.5-35b-a3b": (35_000_000_000, 10**9),
    # https://huggingface.co/ibm-granite/granite-4.0-h-small ("32B total, 9B active")
    "granite-4.0-h-small": (32_000_000_000, 10**9),
    # https://huggingface.co/deepseek-ai/DeepSeek-V3.2 (the Hub's 685B, the MTP module included)
    "deepseek-v3.2": (685_000_000_000, 10**9),
}
# Active per token; DeepSeek's 37B is V3's figure, to which V3.2's indexer adds 0.86B (38.4B).
PUBLISHED_ACTIVE = {
    "qwen3-next-80b-a3b": (3_000_000_000, 2 * 10**9),  # 3.87B counted with both embeddings, 3.25B without
    "qwen3.5-35b-a3b": (3_000_000_000, 10**9),
    "granite-4.0-h-small": (9_000_000_000, 10**9),
    "deepseek-v3.2": (37_000_000_000, 3 * 10**9),
}


def test_every_hybrid_preset_has_its_rows() -> None:
    assert set(TRANSFORMERS_COUNT) == set(PUBLISHED_TOTAL) == set(PUBLISHED_ACTIVE)
    assert all(presets()[key].is_hybrid for key in TRANSFORMERS_COUNT)


@pytest.mark.parametrize("key", sorted(TRANSFORMERS_COUNT))
def test_a_hybrid_preset_counts_what_transformers_builds_and_the_vendor_publishes(key: str) -> None:
    model = presets()[key]
    assert abs(model.parameter_count - TRANSFORMERS_COUNT[key]) <= 15_000
    figure, unit = PUBLISHED_TOTAL[key]
    assert model.published_params == figure
    # The vendor's total holds the vision tower (Qwen3.5) and the MTP module (DeepSeek's Hub total).
    total = model.parameter_count + model.non_text_params + model.mtp_parameter_count
    assert abs(total - figure) < unit / 2
    active, active_unit = PUBLISHED_ACTIVE[key]
    assert model.published_active_params == active
    assert abs(model.active_parameter_count - active) < active_unit / 2


def _cache_bytes_per_token(arch: Architecture) -> int:
    """Every layer's cache per token of one sequence in bf16 (a window not capping it)."""
    return sum(cache.layers * cache.bytes_per_token for cache in layer_caches(arch, KvDtype.BF16))


def test_the_hybrid_presets_layers_state_and_kv_by_hand() -> None:
    qwen = presets()["qwen3-next-80b-a3b"]
    assert qwen.mixer_counts == {"linear_attention": 36, "attention": 12}
    # Gated DeltaNet: a conv state over q, k, v (2·16·128 + 32·128 channels × 4 taps, bf16) and a
    # 128 × 128 fp32 matrix per value head; attention: K and V of 2 heads of 256 in bf16.
    delta = (2 * 16 * 128 + 32 * 128) * 4 * 2 + 32 * 128 * 128 * 4
    assert qwen.state_bytes_per_sequence() == 36 * delta
    assert _cache_bytes_per_token(qwen) == 12 * 2 * 2 * 256 * 2
    granite = presets()["granite-4.0-h-small"]
    # Mamba-2: conv over x, B, C (8192 + 2·128) × 4 in bf16; 128 heads × 64 × 128 fp32.
    assert granite.state_bytes_per_sequence() == 36 * ((8192 + 256) * 4 * 2 + 128 * 64 * 128 * 4)
    assert _cache_bytes_per_token(granite) == 4 * 2 * 8 * 128 * 2
    # MLA caches the 512-wide latent and the 64-wide rope key; the indexer its 128-wide key.
    assert _cache_bytes_per_token(presets()["deepseek-v3.2"]) == 61 * (512 + 64 + 128) * 2


def test_a_hybrid_model_estimates_its_activations_and_takes_an_entered_figure_as_measured() -> None:
    # hybact: the hybrid layers are modelled (tests/test_hybrid_activations.py), so the estimate
    # gives them; an entered `activations` still replaces it.
    request = EstimateRequest(model=presets()["granite-4.0-h-small"], seq_len=4096, batch_size=1)
    found = estimate(request)
    assert found.activation_estimate is not None
    assert found.activations_gb > 0
    entered = estimate(request.model_copy(update={"activations": 20.0}))
    assert entered.activations_gb == 20.0


def test_nemotron_hs_pattern_string_is_read_layer_by_layer() -> None:
    # A Nemotron-H config.json as the Hub holds it (hybrid_override_pattern, one letter a layer):
    # Mamba-2, MLP, Mamba-2, attention, MLP, Mamba-2, MoE. 116,574,496: transformers 5.24's build,
    # and the MoE router's e_score_correction_bias buffer of 8 the checkpoint holds.
    config = {
        "model_type": "nemotron_h",
        "architectures": ["NemotronHForCausalLM"],
        "hidden_size": 1024,
        "hybrid_override_pattern": "M-M*-ME",
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "head_dim": 128,
        "intermediate_size": 3072,
        "mamba_num_heads": 32,
        "mamba_head_dim": 64,
        "n_groups": 8,
        "ssm_state_size": 128,
        "conv_kernel": 4,
        "n_routed_experts": 8,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 512,
        "moe_shared_expert_intermediate_size": 1024,
        "n_shared_experts": 1,
        "vocab_size": 32000,
    }
    model = architecture_from_config("nvidia/acme", config)
    assert model.layers == 7
    assert model.mixer_counts == {"mamba": 3, "none": 3, "attention": 1}
    assert (model.dense_layers, model.moe_layers) == (2, 1)
    assert model.parameter_count == 116_574_496 + 8
