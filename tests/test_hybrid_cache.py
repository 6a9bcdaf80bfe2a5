"""The fixed per-sequence state and the per-token cache of each hybrid family, against the cache a
transformers forward returns (CPU, bf16, random weights, small configs): exact to the byte.

Each family's small config goes through the bot's Hub reader (``architecture_from_config``); the
model built from the same config runs two forwards of different lengths with ``use_cache``, and the
cache's tensors (each storage once) give the per-token bytes (their difference) and the fixed bytes
(what is left). Needs torch and transformers; skipped without them.
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.estimate.hub import architecture_from_config
from bot.measure.cache import cache_bytes

pytestmark = [pytest.mark.accuracy, pytest.mark.usefixtures("quiet_transformers")]

BATCH = 2
LENGTHS = (5, 9)
_ATTENTION = {"num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 128}
_MOE = {"moe_intermediate_size": 32, "num_experts_per_tok": 2}
# Small configs of every hybrid kind: Gated DeltaNet, Mamba-2 (alone, beside attention, in
# parallel with it), the short convolution, and DeepSeek-V3.2's indexer beside MLA.
SMALL: dict[str, dict[str, Any]] = {
    "qwen3_next": {
        **_ATTENTION,
        **_MOE,
        "hidden_size": 64,
        "num_hidden_layers": 4,
        "intermediate_size": 64,
        "shared_expert_intermediate_size": 32,
        "num_experts": 4,
        "linear_num_key_heads": 2,
        "linear_num_value_heads": 4,
        "linear_key_head_dim": 8,
        "linear_value_head_dim": 12,
    },
    "qwen3_5_text": {
        **_ATTENTION,
        "hidden_size": 64,
        "num_hidden_layers": 4,
        "intermediate_size": 64,
        "linear_num_key_heads": 2,
        "linear_num_value_heads": 2,
        "linear_key_head_dim": 16,
        "linear_value_head_dim": 8,
        "linear_conv_kernel_dim": 3,
    },
    "nemotron_h": {
        **_ATTENTION,
        "hidden_size": 64,
        "layers_block_type": ["mamba", "moe", "attention", "mlp", "mamba"],
        "intermediate_size": 64,
        "mamba_num_heads": 4,
        "mamba_head_dim": 16,
        "n_groups": 2,
        "ssm_state_size": 8,
        "n_routed_experts": 4,
        "moe_intermediate_size": 32,
        "moe_shared_expert_intermediate_size": 32,
    },
    "granitemoehybrid": {
        **_ATTENTION,
        "hidden_size": 64,
        "num_hidden_layers": 3,
        "layer_types": ["mamba", "attention", "mamba"],
        "intermediate_size": 64,
        "shared_intermediate_size": 32,
        "num_local_experts": 4,
        "mamba_n_heads": 4,
        "mamba_d_head": 32,
        "mamba_d_state": 8,
    },
    "falcon_h1": {
        **_ATTENTION,
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "intermediate_size": 64,
        "mamba_d_ssm": 64,
        "mamba_n_heads": 4,
        "mamba_d_head": 16,
        "mamba_d_state": 8,
        "mamba_d_conv": 3,
    },
    "bamba": {
        **_ATTENTION,
        "hidden_size": 64,
        "num_hidden_layers": 3,
        "attn_layer_indices": [1],
        "intermediate_size": 64,
        "mamba_n_heads": 4,
        "mamba_d_head": 32,
        "mamba_d_state": 8,
        "mamba_n_groups": 2,
    },
    "mamba2": {
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_heads": 4,
        "head_dim": 32,
        "state_size": 8,
        "n_groups": 2,
        "vocab_size": 128,
    },
    "lfm2": {
        **_ATTENTION,
        "hidden_size": 64,
        "num_hidden_layers": 3,
        "layer_types": ["conv", "full_attention", "conv"],
        "intermediate_size": 96,
    },
    "deepseek_v32": {
        **_MOE,
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "intermediate_size": 64,
        "n_routed_experts": 4,
        "n_group": 1,
        "topk_group": 1,
        "q_lora_rank": 32,
        "kv_lora_rank": 16,
        "qk_nope_head_dim": 8,
        "qk_rope_head_dim": 8,
        "v_head_dim": 8,
        "index_n_heads": 2,
        "index_head_dim": 16,
        "index_topk": 4,
        "first_k_dense_replace": 1,
        "mlp_layer_types": ["dense", "sparse"],
        "vocab_size": 128,
    },
}


def _measured(model_type: str) -> tuple[int, int]:
    """(fixed bytes, bytes per token) of one sequence in the cache of a bf16 forward."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.for_model(model_type, **SMALL[model_type])
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16).eval()
    totals = []
    for length in LENGTHS:
        ids = torch.randint(0, 128, (BATCH, length))
        with torch.no_grad():
            totals.append(cache_bytes(model(input_ids=ids, use_cache=True).past_key_values))
    per_token = (totals[1] - totals[0]) // (LENGTHS[1] - LENGTHS[0])
    return (totals[0] - per_token * LENGTHS[0]) // BATCH, per_token // BATCH


@pytest.mark.parametrize("model_type", sorted(SMALL))
def test_the_fixed_state_and_the_per_token_cache_are_what_transformers_keeps(model_type: str) -> None:
    from transformers import AutoConfig

    config = AutoConfig.for_model(model_type, **SMALL[model_type]).to_dict()
    arch = architecture_from_config("acme/small", config)
    fixed, per_token = _measured(model_type)
    assert (arch.state_bytes_per_sequence(2), arch.cache_bytes_per_token(2)) == (fixed, per_token)
    assert arch.is_hybrid
