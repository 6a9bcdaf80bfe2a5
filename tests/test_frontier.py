"""The frontier of issue 20 (points 3 and 4): the families that answered only from their tensors
(Gemma 3n, Mamba-1, Falcon-Mamba, Jamba, LFM2-MoE), and the presets added with them.

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
        assert (arch.state_bytes_per_sequence(2), arch.cache_bytes_per_token(2)) == (fixed, per_token)
