"""The exact count from safetensors headers (bot/estimate/tensors.py): packed checkpoints unpacked to
the parameters they hold, each format by its own layout, and the parts Details shows."""

from __future__ import annotations

import pytest

from bot.estimate.tensors import count_tensors, packing_of, part_of

H, F, E, OUT = 256, 512, 4, 384  # hidden, MLP width, experts, a projection's output


def test_gptq_and_awq_int4_count_eight_weights_per_int32_and_drop_zeros_scales_and_g_idx() -> None:
    layer = "model.layers.0.mlp.down_proj"
    # GPTQ (AutoGPTQ QuantLinear): qweight (in * 4 / 32, out), qzeros (in / group, out * 4 / 32).
    gptq = [
        (f"{layer}.qweight", "I32", [F // 8, H]),
        (f"{layer}.qzeros", "I32", [F // 128, H // 8]),
        (f"{layer}.scales", "F16", [F // 128, H]),
        (f"{layer}.g_idx", "I32", [F]),
        (f"{layer}.bias", "F16", [H]),
    ]
    found = count_tensors(gptq, packing="gptq", bits=4)
    assert found.total == F * H + H
    assert found.stored_elements == F // 8 * H + F // 128 * H // 8 + F // 128 * H + F + H
    # AWQ (AutoAWQ WQLinear_GEMM): qweight (in, out * 4 / 32).
    awq = [(f"{layer}.qweight", "I32", [F, H // 8]), (f"{layer}.qzeros", "I32", [F // 128, H // 8])]
    assert count_tensors(awq, packing="awq", bits=4).total == F * H
    assert count_tensors(awq[:1], packing="gptq", bits=8).total == F * H // 2  # 4 int8 per int32


def test_fp8_block_scales_and_mxfp4_blocks_are_unpacked() -> None:
    fp8 = [
        ("model.layers.0.self_attn.q_proj.weight", "F8_E4M3", [OUT, H]),
        ("model.layers.0.self_attn.q_proj.weight_scale_inv", "F32", [3, 2]),  # 128 x 128 blocks
        ("model.layers.0.input_layernorm.weight", "BF16", [H]),
    ]
    assert count_tensors(fp8, packing="fp8").total == OUT * H + H
    # gpt-oss: two FP4 values a byte in blocks of 32 values (16 bytes), one E8M0 scale a block.
    experts = "model.layers.0.mlp.experts"
    mxfp4 = [
        (f"{experts}.gate_up_proj_blocks", "U8", [E, 2 * F, H // 32, 16]),
        (f"{experts}.gate_up_proj_scales", "U8", [E, 2 * F, H // 32]),
        (f"{experts}.gate_up_proj_bias", "BF16", [E, 2 * F]),
        (f"{experts}.down_proj_blocks", "U8", [E, H, F // 32, 16]),
        (f"{experts}.down_proj_scales", "U8", [E, H, F // 32]),
    ]
    found = count_tensors(mxfp4, packing="mxfp4")
    assert found.total == E * 2 * F * H + E * 2 * F + E * H * F
    assert found.parts == (("experts", found.total),)


def test_bitsandbytes_4bit_counts_two_values_a_byte_and_not_its_state() -> None:
    weight = "model.layers.0.mlp.up_proj.weight"
    tensors = [
        (weight, "U8", [F * H // 2, 1]),
        (f"{weight}.absmax", "F32", [F * H // 64]),
        (f"{weight}.quant_map", "F32", [16]),
        (f"{weight}.quant_state.bitsandbytes__nf4", "U8", [99]),
        ("model.norm.weight", "BF16", [H]),
    ]
    assert count_tensors(tensors, packing="bitsandbytes_4bit").total == F * H + H


def test_the_config_names_the_packing() -> None:
    assert packing_of({}) == (None, 16)
    assert (
        packing_of({"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}})[0]
        == "fp8"
    )
    assert packing_of({"quantization_config": {"quant_method": "gptq", "bits": 8}}) == ("gptq", 8)
    assert packing_of({"text_config": {"quantization_config": {"quant_method": "mxfp4"}}})[0] == "mxfp4"
    assert packing_of({"quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": True}})[0] == (
        "bitsandbytes_4bit"
    )
    assert packing_of({"quantization_config": {"quant_method": "hqq"}})[0] == "unknown"


@pytest.mark.parametrize(
    ("name", "part"),
    [
        ("model.embed_tokens.weight", "embeddings"),
        ("lm_head.weight", "lm_head"),
        ("model.layers.3.self_attn.q_proj.weight", "layers"),
        ("model.layers.3.mlp.experts.7.up_proj.weight", "experts"),
        ("model.layers.3.mlp.shared_experts.up_proj.weight", "layers"),
        ("model.visual.blocks.0.attn.qkv.weight", "vision"),
        ("model.vision_tower.encoder.layers.0.mlp.fc1.weight", "vision"),
        ("model.multi_modal_projector.linear_1.weight", "projector"),
        ("audio_tower.layers.0.fc1.weight", "audio"),
        ("mtp.layers.0.mlp.gate_proj.weight", "mtp"),
        ("model.layers.61.eh_proj.weight", "mtp"),  # DeepSeek-V3's MTP: the layer past num_hidden_layers
        ("backbone.embeddings.weight", "embeddings"),
        ("model.norm.weight", "other"),
    ],
)
def test_tensor_names_give_the_part(name: str, part: str) -> None:
    assert part_of(name, layers=61) == part


def test_a_tied_head_is_counted_once_and_mtp_is_left_out_of_n() -> None:
    tensors = [
        ("model.embed_tokens.weight", "BF16", [1000, H]),
        ("model.layers.0.mlp.up_proj.weight", "BF16", [F, H]),
        ("model.layers.1.mlp.up_proj.weight", "BF16", [F, H]),  # past layers=1: MTP
    ]
    found = count_tensors(tensors, layers=1)
    assert found.tied_embeddings
    assert found.total == 1000 * H + F * H
    assert found.part("mtp") == F * H
    with pytest.raises(ValueError, match="no parameters"):
        count_tensors([])
