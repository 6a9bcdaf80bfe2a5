"""Real peft LoRA steps of the hybrid and DSA families whose figures were outside target (issue 21),
on shapes of their own (not ``benchmarks.hybrid_activations``' configs the fixes were measured on),
against the estimate's torch-fallback path: adapters exact, model states and saved activations
within ±5 %, the step's peak within ±10 % (``-m accuracy``: torch, transformers and peft)."""

from __future__ import annotations

from typing import Any

import pytest

from bot.measure.types import LoraTargets, MeasureSetup

pytestmark = pytest.mark.accuracy

_DSA = {
    "hidden_size": 160,
    "intermediate_size": 320,
    "moe_intermediate_size": 96,
    "num_attention_heads": 2,
    "num_key_value_heads": 2,
    "n_routed_experts": 4,
    "num_experts_per_tok": 2,
    "n_shared_experts": 1,
    "n_group": 1,
    "topk_group": 1,
    "q_lora_rank": 80,
    "kv_lora_rank": 40,
    "qk_nope_head_dim": 24,
    "qk_rope_head_dim": 8,
    "v_head_dim": 24,
    "index_n_heads": 3,
    "index_head_dim": 40,
    "index_topk": 32,
    "first_k_dense_replace": 1,
    "mlp_layer_types": ["dense", "sparse", "sparse"],
    "vocab_size": 384,
    "num_hidden_layers": 3,
}

# family, config fields, LoRA targets, seq_len, batch: each fixed row at a shape of its own.
CASES: dict[str, tuple[str, dict[str, Any], LoraTargets, int, int]] = {
    # The DSA indexer's adapters run under torch.no_grad; MLA's latent norms keep nothing frozen.
    "deepseek_v32": ("deepseek_v32", _DSA, "all-linear", 320, 1),
    "glm_moe_dsa": (
        "glm_moe_dsa",
        {**_DSA, "indexer_types": ["full", "full", "shared"]},
        "all-linear",
        192,
        2,
    ),
    # What is still saved at the last Mamba-1 layer's scan backward; dt_proj's adapter never runs.
    "jamba": (
        "jamba",
        {
            "hidden_size": 160,
            "intermediate_size": 256,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "num_hidden_layers": 2,
            "num_experts": 4,
            "num_experts_per_tok": 2,
            "attn_layer_period": 2,
            "attn_layer_offset": 1,
            "expert_layer_period": 2,
            "expert_layer_offset": 1,
            "mamba_d_state": 6,
            "mamba_d_conv": 4,
            "mamba_expand": 2,
            "mamba_dt_rank": 10,
            "vocab_size": 384,
        },
        "all-linear",
        160,
        1,
    ),
    "mamba": (
        "mamba",
        {
            "hidden_size": 160,
            "intermediate_size": 320,
            "state_size": 6,
            "conv_kernel": 4,
            "time_step_rank": 10,
            "vocab_size": 384,
            "num_hidden_layers": 3,
        },
        "all-linear",
        64,
        2,
    ),
    # A Mamba-2 layer ahead of the first adapter: its forward's scan working set.
    "nemotron_h": (
        "nemotron_h",
        {
            "hidden_size": 160,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "head_dim": 48,
            "layers_block_type": ["mamba", "attention", "mlp"],
            "intermediate_size": 320,
            "mamba_num_heads": 5,
            "mamba_head_dim": 40,
            "n_groups": 1,
            "ssm_state_size": 24,
            "vocab_size": 384,
        },
        "attention",
        320,
        1,
    ),
    # The Mamba-2 fallback's frozen D, gated norm and dt_bias keep nothing under LoRA.
    "nemotron_h all-linear": (
        "nemotron_h",
        {
            "hidden_size": 192,
            "num_attention_heads": 3,
            "num_key_value_heads": 1,
            "head_dim": 64,
            "layers_block_type": ["mamba", "mamba", "attention", "mlp"],
            "intermediate_size": 384,
            "mamba_num_heads": 6,
            "mamba_head_dim": 48,
            "n_groups": 3,
            "ssm_state_size": 16,
            "vocab_size": 384,
        },
        "all-linear",
        384,
        1,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hybrid_lora_step_is_within_target(case: str) -> None:
    pytest.importorskip("peft")
    import transformers

    from benchmarks.accuracy_methods import TOLERANCE, _row
    from bot.estimate.families import family as declared
    from bot.estimate.hub import architecture_from_config
    from bot.measure import measure_step
    from bot.measure.families import attention_it_runs

    model_type, fields, targets, seq_len, batch = CASES[case]
    attention = attention_it_runs(declared(model_type))
    setup = MeasureSetup(
        "bf16", "adamw", attention, False, batch, seq_len, method="lora", lora_targets=targets
    )
    config = transformers.AutoConfig.for_model(model_type, **fields).to_dict()
    arch = architecture_from_config(f"test/{case}", config)
    measured = measure_step({"model_type": model_type, "use_cache": False, **fields}, arch.layers, setup)
    ratios = _row(case, setup, measured, arch, "fallback", 0.0).ratios()
    off = {k: round(v, 3) for k, v in ratios.items() if abs(v - 1) > TOLERANCE[k] + 1e-9}
    assert not off, f"{case}: measured ÷ estimate {ratios}"
