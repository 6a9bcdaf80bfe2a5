"""The MLA presets (DeepSeek-V3/R1, Kimi K2) get the calibrated MLA formulas (benchmarks/ACCURACY.md
section 4), each term written out here by hand from the measured saved-tensor list."""

from __future__ import annotations

import pytest

from bot.estimate.core import estimate
from bot.estimate.family_traits import traits_for
from bot.estimate.models import presets
from bot.estimate.request import parse_request
from bot.estimate.saved_activations import layer_saved_bytes, measured_activations
from bot.estimate.setup import Setup

# DeepSeek-V3's config.json: h, q/kv LoRA ranks, heads, qk_nope + qk_rope, v_head_dim, routed
# experts, active experts, expert and dense MLP widths, vocabulary, layers, dense-first layers.
H, R_Q, R_KV, A, D_QK, D_V, E, K, F, F_DENSE, V = (
    7168,
    1536,
    512,
    128,
    128 + 64,
    128,
    256,
    8,
    2048,
    18432,
    129280,
)

# Bytes per token, 16-bit weights (mixed), SDPA on the padded-V stand-in for FlashAttention-2.
ATTENTION_SIDE = (
    (6 * H + 4)  # input RMSNorm: fp32 copy, bf16 normalized, rsqrt
    + 2 * H  # its output, the input of q_a_proj and kv_a_proj_with_mqa
    + (6 * R_Q + 4 + 2 * R_Q)  # q_a_layernorm and its output (q_b_proj's input)
    + (6 * R_KV + 4 + 2 * R_KV)  # kv_a_layernorm and its output (kv_b_proj's input)
    + 4 * 2 * A * D_QK  # Q, K, V padded to d_qk, the padded output
    + 4 * A  # the fp32 log-sum-exp
    + 2 * A * D_V  # the cropped output's contiguous copy, o_proj's input
)
MOE_SIDE = (
    (6 * H + 4)  # post-attention RMSNorm
    + 4 * H
    + 4 * E
    + 4  # router: fp32 input copy, fp32 sigmoid, the top-k sum
    + 2 * H
    + 8 * F  # shared expert (1 × 2048): its input, gate, up, act, product
    + K * (4 * H + 8 * F + 40)  # per routed pair: indices, weights, gathered input, experts, output
)
DENSE_SIDE = (6 * H + 4) + 2 * H + 8 * F_DENSE  # the first 3 layers: a gated MLP of 18432


@pytest.mark.parametrize("key", ["deepseek-v3", "deepseek-r1"])
def test_deepseek_v3_layers_are_the_mla_formulas(key: str) -> None:
    arch = presets()[key]
    assert traits_for(arch).deepseek_moe
    seq = 4096
    moe = layer_saved_bytes(arch, 1, seq, moe_layer=True)
    dense = layer_saved_bytes(arch, 1, seq, moe_layer=False)
    assert moe == seq * (ATTENTION_SIDE + MOE_SIDE) + 4 * E  # + the experts' int32 offsets
    assert dense == seq * (ATTENTION_SIDE + DENSE_SIDE)
    # Eager instead: Q and K 2·a·d_qk each, V's copy and the output 2·a·d_v each, softmax 6·a·s.
    eager = layer_saved_bytes(arch, 1, seq, attention="eager", moe_layer=False)
    core_sdpa = 8 * A * D_QK + 4 * A + 2 * A * D_V
    assert eager == dense + seq * (4 * A * D_QK + 4 * A * D_V + 6 * A * seq - core_sdpa)


def test_the_bot_answers_deepseek_v3_with_the_mla_formulas() -> None:
    seq = 4096
    result = estimate(parse_request(model="deepseek-v3", batch_size=1, seq_len=seq))
    layers = 3 * seq * (ATTENTION_SIDE + DENSE_SIDE) + 58 * (seq * (ATTENTION_SIDE + MOE_SIDE) + 4 * E)
    # Outside the layers: final norm and the LM head's input, fp32 log-softmax, ids and labels, the
    # loss's total weight; RoPE's cos/sin over qk_rope_head_dim = 64 in bf16.
    outside = seq * (8 * H + 4 * V + 20) + 4 + 2 * seq * 64 * 2
    assert result.activations_gb == pytest.approx((layers + outside) / 1e9, rel=1e-12)
    assert result.activations_gb == pytest.approx(191.0, abs=0.05)


def test_kimi_k2_routes_through_the_same_layer() -> None:
    kimi = presets()["kimi-k2"]
    deepseek = presets()["deepseek-v3"]
    assert traits_for(kimi).deepseek_moe
    # Same widths but 64 heads and 384 experts: the attention core halves, the router grows.
    difference = layer_saved_bytes(deepseek, 1, 1, moe_layer=True) - layer_saved_bytes(
        kimi, 1, 1, moe_layer=True
    )
    assert difference == (8 * D_QK + 4 + 2 * D_V) * (128 - 64) + (4 + 4) * (256 - 384)


def test_amp_copies_the_shared_experts_and_the_dense_layers_weights() -> None:
    arch = presets()["deepseek-v3"]
    attention = H * R_Q + R_Q * A * D_QK + H * (R_KV + 64) + R_KV * A * (128 + D_V) + A * D_V * H
    moe_copies = 2 * (attention + H * E + 3 * H * F)
    dense_copies = 2 * (attention + 3 * H * F_DENSE)
    found = measured_activations(arch, 1, 4096, setup=Setup(precision="amp"))
    assert found.weight_copy_bytes == 2 * V * H + 3 * dense_copies + 58 * moe_copies
