"""Real peft LoRA steps where the estimate missed the layer's own terms or charged idle adapters
(issue 21; lora3), on shapes of their own (not ``benchmarks.hybrid_activations``' configs the terms
were read from): Gemma 3n's layer under LoRA (its frozen fp32 norms, AltUp, LAuReL and per-layer
linears), and the answer's model states of a DSA family, whose indexer adapters never get a gradient
(``-m accuracy``: torch, transformers and peft)."""

from __future__ import annotations

from typing import Any

import pytest

from bot.measure.types import LoraTargets, MeasureSetup, Precision

pytestmark = pytest.mark.accuracy

# Gemma 3n unlike the benchmark's: 4 streams, LAuReL rank 4, per-layer inputs of 8, two sparse layers,
# one K/V-sharing layer, MQA heads of 40.
_GEMMA3N: dict[str, Any] = {
    "hidden_size": 160,
    "num_attention_heads": 4,
    "num_key_value_heads": 1,
    "head_dim": 40,
    "intermediate_size": [256, 352, 256, 352],
    "num_hidden_layers": 4,
    "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
    "activation_sparsity_pattern": [0.95, 0.95, 0.0, 0.0],
    "num_kv_shared_layers": 1,
    "altup_num_inputs": 4,
    "laurel_rank": 4,
    "hidden_size_per_layer_input": 8,
    "vocab_size": 384,
}


# Another for the attention-only adapters: 2 streams, LAuReL rank 6, per-layer inputs of 12, three layers.
_GEMMA3N_ATTENTION: dict[str, Any] = {
    **_GEMMA3N,
    "hidden_size": 128,
    "num_attention_heads": 2,
    "num_key_value_heads": 2,
    "head_dim": 64,
    "intermediate_size": [320, 256, 320],
    "num_hidden_layers": 3,
    "layer_types": ["full_attention", "sliding_attention", "full_attention"],
    "activation_sparsity_pattern": [0.95, 0.0, 0.0],
    "altup_num_inputs": 2,
    "laurel_rank": 6,
    "hidden_size_per_layer_input": 12,
}


@pytest.mark.parametrize(
    ("precision", "checkpointing", "targets"),
    [
        ("bf16", False, "all-linear"),
        ("amp", False, "all-linear"),
        ("bf16", True, "all-linear"),
        ("bf16", False, "attention"),
        ("amp", False, "attention"),
        ("bf16", True, "attention"),
    ],
)
def test_a_gemma3n_lora_step_is_within_target(
    precision: Precision, checkpointing: bool, targets: LoraTargets
) -> None:
    """main: all-linear bf16 saved 0.90, amp 0.85, checkpointed 1.34; attention-only 0.91 (the
    streams frozen: nothing before the first q_proj saved), checkpointed 1.22 with that alone (peft
    makes the embeddings' output require a gradient there; main 0.98 / 0.92, within target); now saved
    and peak within target."""
    pytest.importorskip("peft")
    import transformers

    from benchmarks.accuracy_methods import TOLERANCE, _row
    from bot.estimate.hub import architecture_from_config
    from bot.measure import measure_step

    fields = _GEMMA3N if targets == "all-linear" else _GEMMA3N_ATTENTION
    seq_len = 256 if targets == "all-linear" else 192
    setup = MeasureSetup(
        precision, "adamw", "sdpa", checkpointing, 2, seq_len, method="lora", lora_targets=targets
    )
    config = transformers.AutoConfig.for_model("gemma3n_text", **fields).to_dict()
    arch = architecture_from_config("test/gemma3n", config)
    measured = measure_step({"model_type": "gemma3n_text", "use_cache": False, **fields}, arch.layers, setup)
    ratios = _row("gemma3n_text", setup, measured, arch, "fallback", 0.0).ratios()
    off = {k: round(v, 3) for k, v in ratios.items() if abs(v - 1) > TOLERANCE[k] + 1e-9}
    assert not off, f"gemma3n {precision} {targets}: measured ÷ estimate {ratios}"


def test_the_answers_model_states_leave_the_dsa_indexer_adapters_untrained() -> None:
    """The answer's model states (``states_of(method, adapter_states(request))``) against a real
    step's live weights, gradients and AdamW state on GLM-5 with a wide indexer: counted, so within
    1 % (main: 0.93, the indexer's adapters charged gradients and optimizer state)."""
    pytest.importorskip("peft")
    import transformers

    from bot.estimate.hub import architecture_from_config
    from bot.estimate.methods import Method, adapter_states, states_of
    from bot.estimate.request import EstimateRequest
    from bot.measure import measure_step

    fields: dict[str, Any] = {
        "hidden_size": 128,
        "intermediate_size": 256,
        "moe_intermediate_size": 64,
        "num_attention_heads": 2,
        "num_key_value_heads": 2,
        "n_routed_experts": 4,
        "num_experts_per_tok": 2,
        "n_shared_experts": 1,
        "n_group": 1,
        "topk_group": 1,
        "q_lora_rank": 96,
        "kv_lora_rank": 32,
        "qk_nope_head_dim": 16,
        "qk_rope_head_dim": 8,
        "v_head_dim": 16,
        "index_n_heads": 8,
        "index_head_dim": 64,
        "index_topk": 16,
        "first_k_dense_replace": 1,
        "mlp_layer_types": ["dense", "sparse"],
        "vocab_size": 256,
        "num_hidden_layers": 2,
    }
    config = transformers.AutoConfig.for_model("glm_moe_dsa", **fields).to_dict()
    arch = architecture_from_config("test/glm5-states", config)
    request = EstimateRequest(
        model=arch, method=Method.LORA, optimizer="adam", precision="bf16", lora_rank=16
    )
    states = states_of(request.method, adapter_states(request))
    assert states is not None
    setup = MeasureSetup("bf16", "adamw", "sdpa", False, 1, 32, method="lora")
    measured = measure_step({"model_type": "glm_moe_dsa", "use_cache": False, **fields}, arch.layers, setup)
    ratio = measured.model_state_bytes / (states.model_states_gb * 1e9)
    assert abs(ratio - 1) <= 0.01, f"model states measured ÷ adapter_states {ratio:.4f}"
