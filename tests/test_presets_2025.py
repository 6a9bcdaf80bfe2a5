"""The 2025-26 presets: totals, active parameters, LoRA shapes, activations and loose names.

The exact counts below were taken from the Hugging Face ``transformers`` implementation (5.24,
verification only, not a dependency): each model built from its config on the ``meta`` device and
its state dict summed, with tied weights counted once. They are independent of ``bot/estimate``.
"""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from bot.estimate.activations import estimate_activations, layer_bytes, mlp_width
from bot.estimate.models import (
    Architecture,
    _squash,
    close_matches,
    find_preset,
    presets,
    search_presets,
)
from tests.test_frontier import GEMMA_3N  # issue 20's frontier presets
from tests.test_frontier_v4 import PRESETS as FRONTIER_V4  # issue 20's frontier presets, round 4
from tests.test_presets_and_scaling import PUBLISHED as PUBLISHED_2024
from tests.test_presets_decl import TRANSFORMERS_COUNT as DECL  # issue 20, point 4 (decl)
from tests.test_presets_decl2 import TRANSFORMERS_COUNT as DECL2  # issue 20 (decl2)
from tests.test_presets_hybrid import TRANSFORMERS_COUNT as HYBRID  # issue 20, point 3
from tests.test_presets_small import MULTIMODAL, SMALL  # issue 20's presets

# key -> the text model's parameters as transformers holds them (state dict, meta-device build).
TRANSFORMERS_COUNT = {
    "llama-3.3-70b": 70_553_706_496,
    "llama-4-scout": 107_769_861_120,  # Llama4ForConditionalGeneration.language_model
    "llama-4-maverick": 400_711_848_960,
    "qwen3-8b": 8_190_735_360,
    "qwen3-14b": 14_768_307_200,
    "qwen3-32b": 32_762_123_264,
    "qwen3-30b-a3b": 30_532_122_624,
    "qwen3-235b-a22b": 235_093_634_560,
    "deepseek-v3": 671_026_419_200,  # DeepseekV3ForCausalLM builds no MTP module
    "deepseek-r1": 671_026_419_200,
    "gpt-oss-120b": 116_829_156_672,
    "gpt-oss-20b": 20_914_757_184,
    "gemma-3-4b": 3_880_263_168,  # Gemma3ForConditionalGeneration.model.language_model
    "gemma-3-12b": 11_766_034_176,
    "gemma-3-27b": 27_009_346_304,
    "phi-4": 14_659_507_200,
    "mistral-small-3": 23_572_403_200,
    "kimi-k2": 1_026_408_232_448,
    "glm-4.5": 352_797_829_024,  # Glm4MoeForCausalLM builds no MTP layer
    "glm-4.5-air": 106_852_251_264,
}

EXACT = 0.0
TRUNCATED = -1.0  # the vendor printed the figure cut to its last digit: 0 <= count - figure < 1 unit

# key -> (published figure, tolerance, unit of the last printed digit). Sources:
PUBLISHED_TOTAL: dict[str, tuple[int, float, int]] = {
    # https://huggingface.co/meta-llama/Llama-3.3-70B-Instruct (safetensors total)
    "llama-3.3-70b": (70_553_706_496, EXACT, 1),
    # https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E (safetensors total, vision included)
    "llama-4-scout": (108_641_793_536, EXACT, 1),
    # https://ai.meta.com/blog/llama-4-multimodal-intelligence/ ("400B total parameters")
    "llama-4-maverick": (400_000_000_000, 0.005, 10**9),
    # https://huggingface.co/Qwen/Qwen3-8B, -14B, -32B, -30B-A3B, -235B-A22B (safetensors totals)
    "qwen3-8b": (8_190_735_360, EXACT, 1),
    "qwen3-14b": (14_768_307_200, EXACT, 1),
    "qwen3-32b": (32_762_123_264, EXACT, 1),
    "qwen3-30b-a3b": (30_532_122_624, EXACT, 1),
    "qwen3-235b-a22b": (235_093_634_560, EXACT, 1),
    # https://huggingface.co/deepseek-ai/DeepSeek-V3 ("671B of the Main Model weights")
    "deepseek-v3": (671_000_000_000, 0.005, 10**9),
    # https://huggingface.co/deepseek-ai/DeepSeek-R1 (same architecture, 671B)
    "deepseek-r1": (671_000_000_000, 0.005, 10**9),
    # https://openai.com/index/gpt-oss-model-card/ (116.83B and 20.91B total)
    "gpt-oss-120b": (116_830_000_000, 0.005, 10**7),
    "gpt-oss-20b": (20_910_000_000, 0.005, 10**7),
    # https://huggingface.co/google/gemma-3-4b-it, -12b-it, -27b-it (safetensors totals, vision included)
    "gemma-3-4b": (4_300_079_472, EXACT, 1),
    "gemma-3-12b": (12_187_325_040, EXACT, 1),
    "gemma-3-27b": (27_432_406_640, EXACT, 1),
    # https://huggingface.co/microsoft/phi-4 (safetensors total)
    "phi-4": (14_659_507_200, EXACT, 1),
    # https://huggingface.co/mistralai/Mistral-Small-24B-Base-2501 (safetensors total)
    "mistral-small-3": (23_572_403_200, EXACT, 1),
    # https://huggingface.co/moonshotai/Kimi-K2-Instruct (the Hub's "1.03T params")
    "kimi-k2": (1_030_000_000_000, 0.005, 10**10),
    # https://huggingface.co/zai-org/GLM-4.5 ("355B total parameters"): the figure matches no count
    # within 0.5 % (transformers 352.80B, -0.62 %; with the MTP layer about 358.3B), so 1 % here.
    "glm-4.5": (355_000_000_000, 0.01, 10**9),
    # https://huggingface.co/zai-org/GLM-4.5-Air ("106B total"): printed cut, counted 106.85B.
    "glm-4.5-air": (106_000_000_000, TRUNCATED, 10**9),
}

# key -> (published active figure, tolerance, unit). Vendors print these cut to 2-3 digits
# ("37B" for 37.55B), so TRUNCATED holds the count within that digit; gpt-oss prints 3 digits.
PUBLISHED_ACTIVE: dict[str, tuple[int, float, int]] = {
    # https://ai.meta.com/blog/llama-4-multimodal-intelligence/ ("17 billion active parameters")
    "llama-4-scout": (17_000_000_000, TRUNCATED, 10**9),
    "llama-4-maverick": (17_000_000_000, TRUNCATED, 10**9),
    # https://huggingface.co/Qwen/Qwen3-30B-A3B ("3.3B activated"), .../Qwen3-235B-A22B ("22B")
    "qwen3-30b-a3b": (3_300_000_000, TRUNCATED, 10**8),
    "qwen3-235b-a22b": (22_000_000_000, TRUNCATED, 10**9),
    # https://huggingface.co/deepseek-ai/DeepSeek-V3 ("37B activated for each token")
    "deepseek-v3": (37_000_000_000, TRUNCATED, 10**9),
    "deepseek-r1": (37_000_000_000, TRUNCATED, 10**9),
    # https://openai.com/index/gpt-oss-model-card/ (5.13B and 3.61B active, input embedding excluded)
    "gpt-oss-120b": (5_130_000_000, 0.005, 10**7),
    "gpt-oss-20b": (3_610_000_000, 0.005, 10**7),
    # https://huggingface.co/moonshotai/Kimi-K2-Instruct ("32 billion activated parameters")
    "kimi-k2": (32_000_000_000, TRUNCATED, 10**9),
    # https://huggingface.co/zai-org/GLM-4.5 ("32 billion active", "12 billion active"), counted
    # without the embedding and LM head matrices
    "glm-4.5": (32_000_000_000, TRUNCATED, 10**9),
    "glm-4.5-air": (12_000_000_000, TRUNCATED, 10**9),
    # https://mistral.ai/news/mixtral-of-experts ("12.9B active"), .../mixtral-8x22b ("39B active"):
    # rounded, 12.88B and 39.16B counted
    "mixtral-8x7b": (12_900_000_000, 0.005, 10**8),
    "mixtral-8x22b": (39_000_000_000, 0.005, 10**9),
}


def _holds(count: int, published: int, tolerance: float, unit: int) -> bool:
    if tolerance == EXACT:
        return count == published
    if tolerance == TRUNCATED:
        return 0 <= count - published < unit
    return abs(count - published) <= tolerance * published


def test_the_2024_and_2025_tables_name_every_preset() -> None:
    named = set(PUBLISHED_2024) | set(TRANSFORMERS_COUNT) | set(SMALL) | set(MULTIMODAL) | set(HYBRID)
    named |= set(GEMMA_3N) | set(FRONTIER_V4) | set(DECL) | set(DECL2)
    assert named == set(presets())
    assert set(PUBLISHED_TOTAL) == set(TRANSFORMERS_COUNT)


@pytest.mark.parametrize(("key", "expected"), sorted(TRANSFORMERS_COUNT.items()))
def test_the_count_is_what_transformers_holds(key: str, expected: int) -> None:
    assert presets()[key].parameter_count == expected


@pytest.mark.parametrize(("key", "published"), sorted(PUBLISHED_TOTAL.items()))
def test_the_count_matches_the_published_total(key: str, published: tuple[int, float, int]) -> None:
    model = presets()[key]
    figure, tolerance, unit = published
    assert model.published_params == figure  # the data file states the same figure
    # A multimodal repo's total holds the vision tower too: the text count plus non_text_params.
    assert _holds(model.parameter_count + model.non_text_params, figure, tolerance, unit)


@pytest.mark.parametrize(("key", "published"), sorted(PUBLISHED_ACTIVE.items()))
def test_active_parameters_match_the_vendors_figure(key: str, published: tuple[int, float, int]) -> None:
    model = presets()[key]
    figure, tolerance, unit = published
    assert model.published_active_params == figure
    assert _holds(model.active_parameter_count, figure, tolerance, unit)
    assert model.active_parameter_count < model.parameter_count


def test_dense_models_are_wholly_active() -> None:
    for model in presets().values():
        if not model.is_moe:
            assert model.active_parameter_count == model.parameter_count


def test_gpt_oss_active_by_hand() -> None:
    # OpenAI's model card: attention + the 4 chosen experts + router + norms + unembedding (no input
    # embedding). Shapes from the gpt-oss package's ModelConfig: h 2880, 64 heads of 64, 8 KV heads.
    h, q, kv, layers, vocab = 2880, 64 * 64, 8 * 64, 36, 201_088
    attention = h * q + q + 2 * (h * kv + kv) + q * h + h + 64  # biases on q/k/v/o, 64 sinks
    expert = h * 2 * h + 2 * h + h * h + h  # gate_up (h -> 2f, f = h) and down, with biases
    router = h * 128 + 128
    per_layer = attention + 4 * expert + router + 2 * h
    assert presets()["gpt-oss-120b"].active_parameter_count == layers * per_layer + h + vocab * h


def test_deepseek_v3_total_by_hand() -> None:
    # DeepSeek-V3 technical report, section 2 and table of hyper-parameters: MLA, 3 dense layers.
    h, heads, q_lora, kv_lora, nope, rope, v = 7168, 128, 1536, 512, 128, 64, 128
    attention = (
        h * q_lora + q_lora  # q_a_proj and its norm
        + q_lora * heads * (nope + rope)  # q_b_proj
        + h * (kv_lora + rope) + kv_lora  # kv_a_proj_with_mqa and its norm
        + kv_lora * heads * (nope + v)  # kv_b_proj
        + heads * v * h  # o_proj
    )  # fmt: skip
    dense = 3 * h * 18432
    moe = 256 * 3 * h * 2048 + 3 * h * 2048 + h * 256 + 256  # routed, shared, router, correction bias
    total = 2 * 129_280 * h + 61 * (attention + 2 * h) + 3 * dense + 58 * moe + h
    assert total == TRANSFORMERS_COUNT["deepseek-v3"] == presets()["deepseek-v3"].parameter_count


def test_lora_on_an_mla_moe_model_counts_every_expert_by_hand() -> None:
    r, h = 8, 7168
    attention = (
        (h + 1536)  # q_a_proj
        + (1536 + 128 * 192)  # q_b_proj
        + (h + 512 + 64)  # kv_a_proj_with_mqa
        + (512 + 128 * 256)  # kv_b_proj
        + (128 * 128 + h)  # o_proj
    )
    dense_mlp = 3 * (h + 18432)
    routed = 256 * 3 * (h + 2048)
    shared = 3 * (h + 2048)
    expected = r * (61 * attention + 3 * dense_mlp + 58 * (routed + shared))
    model = presets()["deepseek-v3"]
    assert model.lora_adapter_params(8) == expected
    assert model.lora_target_modules == (
        "q_a_proj",
        "q_b_proj",
        "kv_a_proj_with_mqa",
        "kv_b_proj",
        "o_proj",
        "gate_proj",
        "up_proj",
        "down_proj",
        "experts.gate_proj",
        "experts.up_proj",
        "experts.down_proj",
        "shared_experts.gate_proj",
        "shared_experts.up_proj",
        "shared_experts.down_proj",
    )


def test_lora_on_qwen3_moe_by_hand() -> None:
    r, h = 16, 2048
    attention = (h + 32 * 128) + 2 * (h + 4 * 128) + (32 * 128 + h)
    experts = 128 * 3 * (h + 768)
    assert presets()["qwen3-30b-a3b"].lora_adapter_params(r) == r * 48 * (attention + experts)
    assert "shared_experts.up_proj" not in presets()["qwen3-30b-a3b"].lora_target_modules


def test_lora_on_mla_without_q_compression() -> None:
    # DeepSeek-V2-Lite style: q_lora_rank null gives a plain q_proj.
    lite = presets()["deepseek-v3"].model_copy(update={"q_lora_rank": None, "key": "mla-lite"})
    assert lite.lora_target_modules[:3] == ("q_proj", "kv_a_proj_with_mqa", "kv_b_proj")
    full = presets()["deepseek-v3"]
    saved = 61 * ((7168 + 1536) + (1536 + 128 * 192) - (7168 + 128 * 192))
    assert full.lora_adapter_params(1) - lite.lora_adapter_params(1) == saved


def test_dense_lora_names_and_llama_count_unchanged() -> None:
    llama = presets()["llama-3.1-8b"]
    assert llama.lora_target_modules == (
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "gate_proj",
        "up_proj",
        "down_proj",
    )
    assert llama.lora_adapter_params(16) == 41_943_040


def test_layer_layout_of_the_moe_presets() -> None:
    assert (presets()["deepseek-v3"].dense_layers, presets()["deepseek-v3"].moe_layers) == (3, 58)
    assert (presets()["kimi-k2"].dense_layers, presets()["kimi-k2"].moe_layers) == (1, 60)
    assert (presets()["llama-4-maverick"].dense_layers, presets()["llama-4-maverick"].moe_layers) == (24, 24)
    assert (presets()["llama-4-scout"].dense_layers, presets()["llama-4-scout"].moe_layers) == (0, 48)
    assert presets()["mixtral-8x7b"].moe_layers == 32


def test_activations_follow_the_active_experts_and_mla_widths() -> None:
    model = presets()["deepseek-v3"]
    s, h = 1024, 7168
    attention = 2 * s * h + 2 * s * (128 * 192 + 128 * 192 + 128 * 128 + 128 * 128) + s * h
    attention += 2 * s * (1536 + 512)  # the latent inputs of q_b_proj and kv_b_proj
    norms = 2 * 2 * s * h
    dense = attention + 3 * s * h + 4 * 2 * s * 18432 + norms
    moe = attention + 3 * s * h + 4 * 2 * s * (8 * 2048 + 2048) + norms
    assert layer_bytes(model, 1, s, flash_attention=True, moe_layer=False) == dense
    assert layer_bytes(model, 1, s, flash_attention=True, moe_layer=True) == moe
    found = estimate_activations(model, 1, s)
    outside = 5 * s * h + 4 * s * 129_280
    assert found.total_gb == pytest.approx((3 * dense + 58 * moe + outside) / 1e9)
    assert found.per_layer_gb == pytest.approx((3 * dense + 58 * moe) / 61 / 1e9)


def test_moe_width_without_shared_experts_and_for_interleaved_layers() -> None:
    assert mlp_width(presets()["qwen3-30b-a3b"], moe_layer=True) == 8 * 768
    maverick = presets()["llama-4-maverick"]
    assert mlp_width(maverick, moe_layer=True) == 8192 + 8192  # top-1 expert + the shared expert
    assert mlp_width(maverick, moe_layer=False) == 16384
    assert mlp_width(presets()["mixtral-8x7b"], moe_layer=True) == 2 * 14336  # as before


def test_gqa_with_head_dim_not_hidden_over_heads() -> None:
    model = presets()["mistral-small-3"]  # 32 heads of 128 = 4096 < hidden 5120
    s, h = 512, 5120
    attention = 2 * s * h + 2 * s * (4096 + 1024 + 1024 + 4096) + s * h
    expected = attention + 3 * s * h + 8 * s * 32768 + 4 * s * h
    assert layer_bytes(model, 1, s, flash_attention=True) == expected


@pytest.mark.parametrize(
    ("typed", "key"),
    [
        ("qwen3-32b", "qwen3-32b"),
        ("qwen3 32b", "qwen3-32b"),
        ("deepseek-v3", "deepseek-v3"),
        ("deepseek r1", "deepseek-r1"),
        ("gpt-oss-120b", "gpt-oss-120b"),
        ("llama 4 scout", "llama-4-scout"),
        ("kimi k2", "kimi-k2"),
        ("glm 4.5 air", "glm-4.5-air"),
        ("gemma 3 27b", "gemma-3-27b"),
        ("phi-4", "phi-4"),
        ("mistral small", "mistral-small-3"),
        ("Qwen/Qwen3-32B", "qwen3-32b"),
        ("meta-llama/Llama-4-Scout-17B-16E", "llama-4-scout"),
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama-4-scout"),
        ("deepseek-ai/DeepSeek-V3", "deepseek-v3"),
        ("openai/gpt-oss-20b", "gpt-oss-20b"),
    ],
)
def test_loose_names_and_hub_ids_find_the_preset(typed: str, key: str) -> None:
    found = find_preset(typed)
    assert found is not None
    assert found.key == key
    assert search_presets(typed)[0].key == key  # autocomplete offers it first
    assert presets()[key].name in close_matches(typed)


def test_autocomplete_ranks_whole_tokens_first() -> None:
    assert [m.key for m in search_presets("llama 4")][:2] == ["llama-4-scout", "llama-4-maverick"]
    assert [m.key for m in search_presets("glm air")] == ["glm-4.5-air"]
    assert search_presets("llama 8")[0].key == "llama-3.1-8b"


def test_keys_are_short_and_names_do_not_collide() -> None:
    seen: dict[str, str] = {}
    for model in presets().values():
        assert re.fullmatch(r"[a-z0-9.-]{1,20}", model.key)
        for name in {_squash(n) for n in (model.key, model.name, model.hub_id or "", *model.aliases) if n}:
            assert seen.setdefault(name, model.key) == model.key, name


def test_multimodal_and_mtp_presets_say_what_they_count() -> None:
    for model in presets().values():
        if model.text_only_of_multimodal:
            assert "counted and frozen unless train_vision" in model.note
            assert 0 < model.projector_params < model.tower_params
        if model.mtp_layers:
            assert "not counted" in model.note
    assert presets()["gpt-oss-120b"].sliding_window == 128
    assert presets()["gpt-oss-120b"].sliding_window_layers == 18
    assert presets()["gemma-3-27b"].sliding_window_layers == 52  # 5 local : 1 global over 62


def test_the_schema_refuses_half_an_mla() -> None:
    shape = presets()["deepseek-v3"].model_dump()
    shape["v_head_dim"] = None
    with pytest.raises(ValidationError, match="MLA needs"):
        Architecture.model_validate(shape)
    shape = presets()["qwen3-8b"].model_dump() | {"key": "Qwen3/8B"}
    with pytest.raises(ValidationError, match="key"):
        Architecture.model_validate(shape)


# The Hub's stored totals of the checkpoints that hold a multi-token-prediction layer, which
# parameter_count leaves out: https://huggingface.co/zai-org/GLM-4.5 and .../GLM-4.5-Air (BF16).
@pytest.mark.parametrize(("key", "stored"), [("glm-4.5", 358_337_791_296), ("glm-4.5-air", 110_468_824_832)])
def test_with_the_mtp_layer_the_count_is_the_hubs_stored_total(key: str, stored: int) -> None:
    model = presets()[key]
    assert model.parameter_count + model.mtp_parameter_count == stored


def test_deepseek_v3_hub_total_is_main_model_plus_mtp_plus_fp8_scales() -> None:
    # https://huggingface.co/deepseek-ai/DeepSeek-V3 stores 684,531,386,000 ("685B"): the main model,
    # the MTP module (with its own embedding and head copies) and one FP32 scale per 128 × 128 block
    # of every FP8 linear weight (the repo's quantization_config: weight_block_size [128, 128]).
    model = presets()["deepseek-v3"]

    def blocks(d_in: int, d_out: int) -> int:
        return -(-d_in // 128) * -(-d_out // 128)

    attention = blocks(7168, 1536) + blocks(1536, 24576) + blocks(7168, 576) + blocks(512, 32768)
    attention += blocks(16384, 7168)
    dense, expert = 3 * blocks(7168, 18432), 3 * blocks(7168, 2048)
    moe_layer = attention + 257 * expert  # 256 routed + 1 shared
    scales = 3 * (attention + dense) + 58 * moe_layer + moe_layer  # + the MTP block
    assert scales == 41_540_496
    assert model.mtp_parameter_count == 13_463_426_304  # the "14B" MTP module
    assert model.parameter_count + model.mtp_parameter_count + scales == 684_531_386_000
    assert presets()["qwen3-32b"].mtp_parameter_count == 0


def test_lora_on_fused_projections_by_hand() -> None:
    # Phi-4 (Phi3ForCausalLM): qkv_proj 5120 -> 5120 + 2·1280, gate_up_proj 5120 -> 2·17920.
    h, f, r = 5120, 17920, 8
    per_layer = (h + h + 2 * 1280) + (h + h) + (h + 2 * f) + (f + h)
    phi = presets()["phi-4"]
    assert phi.lora_adapter_params(r) == r * 40 * per_layer
    assert phi.lora_target_modules == ("qkv_proj", "o_proj", "gate_up_proj", "down_proj")
    oss = presets()["gpt-oss-20b"]  # experts.gate_up_proj 2880 -> 5760 per expert, 32 experts
    attention = (2880 + 4096) + 2 * (2880 + 512) + (4096 + 2880)
    experts = 32 * ((2880 + 5760) + (2880 + 2880))
    assert oss.lora_adapter_params(r) == r * 24 * (attention + experts)
    assert oss.lora_target_modules[-2:] == ("experts.gate_up_proj", "experts.down_proj")
