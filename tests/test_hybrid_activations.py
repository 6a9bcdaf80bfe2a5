"""The hybrid layers' activations (issue 20, point 3; bot/estimate/hybrid_saved.py): the kernel path
from the kernels' own saves, by hand; the torch fallback against bytes measured on CPU
(benchmarks/hybrid_activations.py); and the hybrid presets answering with activations, a peak and a
largest batch. Pure: no torch.
"""

from __future__ import annotations

import pytest

from bot.estimate.core import estimate
from bot.estimate.family_traits import traits_for
from bot.estimate.hub import architecture_from_config
from bot.estimate.hybrid_saved import delta_net_bytes, hybrid_layers_saved_bytes, mamba_bytes
from bot.estimate.models import presets
from bot.estimate.request import EstimateRequest

# One preset of each kind: Gated DeltaNet, Mamba-2, the sparse-attention indexer.
HYBRID_PRESETS = ("qwen3-next-80b-a3b", "granite-4.0-h-small", "deepseek-v3.2")


@pytest.mark.parametrize("key", HYBRID_PRESETS)
def test_a_hybrid_preset_answers_with_its_activations_peak_and_largest_batch(key: str) -> None:
    # Before: activations left to the user (activation_estimate None, no peak, no largest batch).
    found = estimate(EstimateRequest(model=presets()[key], seq_len=4096, batch_size=1))
    assert found.activation_estimate is not None
    assert found.activations_gb > 0
    assert found.peak is not None
    assert found.largest_batch is not None


def test_the_kernel_path_is_what_the_kernels_save_by_hand() -> None:
    qwen = presets()["qwen3-next-80b-a3b"]  # 16 key heads, 32 value heads, d_k = d_v = 128, conv 4
    k, v, conv = 16 * 128, 32 * 128, 2 * 16 * 128 + 32 * 128
    # causal-conv1d: x; fla: q, k (normalized) and their rstd, v, g's cumsum, beta, A (64 per value
    # head); softplus' fp32 input and output; FusedRMSNormGated: x, z, rstd; out_proj's input.
    by_hand = 2 * conv + (2 * k + 4 * 16) * 2 + 2 * v + 4 * 32 + 2 * 32 + 2 * 64 * 32 + 8 * 32
    by_hand += 2 * v + 2 * v + 4 * 32 + 2 * v
    assert delta_net_bytes(qwen, "kernel") == by_hand
    granite = presets()["granite-4.0-h-small"]  # 128 heads of 64 (I = 8192), 1 group of 128
    # mamba_split_conv1d_scan_combined: zxbcdt (z, x, B, C, dt), out_x, the gated norm's rstd.
    assert mamba_bytes(granite, "kernel") == 2 * (2 * 8192 + 2 * 128 + 128) + 2 * 8192 + 4 * 1
    # The fallback keeps the chunked scan's fp32 intermediates: several times more.
    assert delta_net_bytes(qwen, "fallback") > 4 * delta_net_bytes(qwen, "kernel")
    assert mamba_bytes(granite, "fallback") > 4 * mamba_bytes(granite, "kernel")


# Saved bytes per layer and token measured on CPU (torch 2.13, transformers 5.24) by
# benchmarks/hybrid_activations.py's hook for these configs, batch 2 × 512 tokens, mixed precision:
# (config, each layer's measured bytes per token).
MEASURED = {
    "qwen3_5_text": (
        {
            "model_type": "qwen3_5_text",
            "hidden_size": 256,
            "intermediate_size": 512,
            "num_hidden_layers": 2,
            "layer_types": ["linear_attention", "full_attention"],
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "head_dim": 64,
            "vocab_size": 512,
            "linear_num_key_heads": 2,
            "linear_num_value_heads": 4,
            "linear_key_head_dim": 64,
            "linear_value_head_dim": 64,
            "linear_conv_kernel_dim": 4,
            "rms_norm_eps": 1e-6,
            "tie_word_embeddings": False,
        },
        (33452, 15474),
    ),
}


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_the_fallback_path_is_within_five_percent_of_the_measured_layers(name: str) -> None:
    config, measured = MEASURED[name]
    arch = architecture_from_config(f"bench/{name}", config)
    estimated = hybrid_layers_saved_bytes(
        arch, 2, 512, attention="sdpa", precision="mixed", traits=traits_for(arch), path="fallback"
    )
    for layer, per_token in zip(estimated, measured, strict=True):
        assert abs(per_token / (layer / 1024) - 1) < 0.05


def test_kimi_linears_fallback_backward_holds_its_chunked_gradients_and_its_moe_layer_is_deepseeks() -> None:
    # act: benchmarks/hybrid_activations.py's Kimi Linear (h 256, 2 KDA heads of 48, MLA + MoE), 512 × 2.
    # At the measured backward peak: three fp32 [b, H, s/c, c, c, d] tensors (25,165,824 B each) and
    # one chunk's product (3,145,728 B), with the last two chunks' forward products (2 × 3,145,728 B)
    # freed. Before, its peak was 1.32x the estimate and its MLA + MoE layer saved 1.082x.
    from benchmarks.hybrid_activations import FAMILIES
    from bot.estimate.hybrid_saved import kda_backward_bytes
    from bot.estimate.step_peak import step_peak

    kimi = architecture_from_config("acme/kimi", {"model_type": "kimi_linear", **FAMILIES["kimi_linear"]})
    assert kda_backward_bytes(kimi, 2, 512, "fallback") == 3 * 25_165_824 + 3_145_728 - 2 * 3_145_728
    assert kda_backward_bytes(kimi, 2, 512, "kernel") == 0.0  # fla's backward: the inputs' shapes
    assert "kda backward" not in step_peak(kimi, 10**6, 2, 512).moments
    assert step_peak(kimi, 10**6, 2, 512, hybrid_path="fallback").moment == "kda backward"
    assert traits_for(kimi).deepseek_moe  # KimiLinearMoE: DeepSeek-V3's router and shared experts
    moe_layer = hybrid_layers_saved_bytes(
        kimi, 2, 512, attention="sdpa", precision="mixed", traits=traits_for(kimi), path="fallback"
    )[1]
    assert abs(13_766_672 / moe_layer - 1) < 0.01  # measured: 13,766,672 B


def test_gemma3ns_layers_save_what_its_measured_layers_saved() -> None:
    # act: bytes per token of the small Gemma 3n's layers (bot.measure.families; h 256, 4 AltUp streams,
    # LAuReL rank 4, per-layer inputs of 8, the last layer sharing K/V) measured at 128 × 2, mixed
    # precision, SDPA (each storage once; layers 0 and 1 also kept the RoPE tables and the per-layer
    # inputs, counted outside here). Before, Gemma 3n was refused an estimate.
    from bot.estimate.saved_activations import per_layer_parts_layers
    from bot.measure.families import SMALL_CONFIGS, architecture

    config = SMALL_CONFIGS["gemma3n"]
    for sparsity, measured in (([0.0] * 4, 33_521.13), ([0.95, 0.0, 0.0, 0.0], 34_899.14)):
        arch = architecture("gemma3n", {**config, "activation_sparsity_pattern": sparsity})
        layers = per_layer_parts_layers(arch, 2, 128, attention="sdpa", precision="mixed")
        assert abs(layers[0] / 256 - (measured if sparsity[0] else 33_521.13)) < 0.1
        assert abs(layers[2] / 256 - 33_521.13) < 0.1  # the 2h layers between
        assert abs(layers[3] / 256 - 32_464.63) < 0.1  # reusing layer 2's K and V
    # Gemma3nTextConfig: without a pattern the first 10 layers are sparse when there are more than 10.
    deep = {**config, "num_hidden_layers": 12, "layer_types": ["sliding_attention"] * 11 + ["full_attention"]}
    del deep["activation_sparsity_pattern"]
    assert architecture("gemma3n", deep).sparse_mlp_layers == tuple(range(10))


def test_deepseek_v4s_layers_save_what_its_measured_layers_saved() -> None:
    # act: bytes per token of the small DeepSeek-V4's layers (bot.measure.families: h 256, 2 streams,
    # 3 Sinkhorn iterations, sliding / compressed-sparse (rate 3) / heavily-compressed (rate 16)) and
    # outside them, measured at 128 × 2 with eager attention (its sinks: transformers runs no SDPA for
    # it), each storage once. Before, the calibrated formulas gave 0.43x of them.
    from bot.estimate.saved_activations import compressed_layers_bytes, measured_activations
    from bot.estimate.setup import Setup
    from bot.measure.families import SMALL_CONFIGS, architecture

    arch = architecture("deepseek_v4", SMALL_CONFIGS["deepseek_v4"])
    for precision, layers, outside in (
        ("mixed", (42_578.06, 48_985.19, 43_299.31), 11_728.02),
        ("amp", (52_882.06, 59_769.19, 54_627.31), 9_676.02),
    ):
        estimated = compressed_layers_bytes(arch, 2, 128, precision)  # type: ignore[arg-type]
        assert [round(b / 256, 2) for b in estimated] == list(layers)
        setup = Setup(attention="eager", precision=precision)  # type: ignore[arg-type]
        assert abs(measured_activations(arch, 2, 128, setup=setup).outside_layers_bytes / 256 - outside) < 0.1
