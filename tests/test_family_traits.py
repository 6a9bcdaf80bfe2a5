"""The family traits and the MoE terms of the calibrated estimate (bot/estimate/family_traits.py,
saved_activations.py).

Pure: no torch. Every preset's figures are pinned (a change to how traits are found must move none of
them); a Hub config is estimated with its family's traits, exactly as the preset of the same shape; a
MoE layer's eager-attention peak follows the experts' width, not the dense intermediate_size."""

from __future__ import annotations

import dataclasses

import pytest

from bot.estimate import families
from bot.estimate.core import estimate
from bot.estimate.families import FAMILIES, family
from bot.estimate.family_traits import FamilyTraits, traits_for
from bot.estimate.hub import ConfigProblem, architecture_from_config
from bot.estimate.models import Architecture, presets
from bot.estimate.request import EstimateRequest
from bot.estimate.saved_activations import measured_activations
from bot.estimate.setup import Setup
from bot.estimate.step_peak import step_peak
from bot.present.answer import render_embed
from tests.hub_configs import CONFIGS

# Per preset at batch 1 × seq 4096, mixed-precision AdamW: saved activations (with autocast's weight
# copies under amp) for mixed SDPA, mixed eager and amp SDPA; the step's peak with SDPA; and the
# "eager attention backward" moment. The last column of the MoE presets (GLM-4.5, gpt-oss, Llama 4,
# Mixtral, Qwen3-MoE) moved when that moment took the experts' width; nothing else moved, but Llama 4's,
# GLM-4.5's, Gemma 2's and Phi-3's / Phi-4's when their layers were measured.
PINNED: dict[str, tuple[int, int, int, int, int]] = {
    "deepseek-r1": (
        191_013_169_156,
        960_489_695_236,
        319_875_999_748,
        16_104_634_060_800,
        10_388_067_671_044,
    ),
    "deepseek-v3": (
        191_013_169_156,
        960_489_695_236,
        319_875_999_748,
        16_104_634_060_800,
        10_388_067_671_044,
    ),
    # Gemma 2's moved when its tanh soft-capping was measured (eager scores, and the logits in every
    # setup; mixed SDPA was 95,868,372,996 and 50,515,687,428).
    "gemma-2-27b": (97_965_524_998, 297_053_407_238, 157_629_499_400, 653_451_079_680, 679_241_933_830),
    "gemma-2-9b": (52_612_839_430, 144_205_428_742, 74_798_610_440, 221_800_943_616, 272_532_347_910),
    "gemma-3-12b": (70_333_234_180, 149_240_675_332, 98_402_008_068, 282_384_820_224, 312_986_799_620),
    "gemma-3-27b": (116_171_336_708, 317_935_184_900, 178_382_990_340, 648_224_311_296, 697_579_292_164),
    "gemma-3-4b": (33_801_091_076, 61_747_476_484, 43_708_364_804, 96_716_807_172, 113_629_355_012),
    # act: Gemma 3n's layers (AltUp, LAuReL, per-layer inputs, K/V sharing, the first 10 layers'
    # activation sparsity), measured on benchmarks/hybrid_activations.py; before, no estimate.
    "gemma-3n-e2b": (42_278_260_676, 67_272_380_356, 57_708_258_244, 112_969_141_508, 126_685_826_308),
    "gemma-3n-e4b": (57_469_838_436, 86_657_606_756, 78_635_213_924, 164_045_653_632, 179_504_020_868),
    # GLM-4.5's moved when its layers were measured: DeepSeek-V3's MoE layer, and SDPA's output copied
    # for o_proj under its partial RoPE (mixed SDPA was 185,593,388,676).
    "glm-4.5": (202_319_224_452, 1_098_950_270_596, 345_468_714_628, 8_467_147_896_576, 6_053_197_138_244),
    "glm-4.5-air": (76_080_994_820, 524_396_517_892, 136_185_920_004, 2_564_454_030_336, 2_032_158_840_068),
    "gpt-oss-120b": (45_265_946_628, 124_745_910_276, 80_637_478_916, 2_803_899_760_128, 1_766_777_483_652),
    "gpt-oss-20b": (31_315_020_804, 84_301_663_236, 55_269_035_012, 501_954_172_416, 378_753_516_420),
    "kimi-k2": (165_110_786_052, 549_849_049_092, 285_455_230_980, 24_633_797_578_752, 14_957_549_984_772),
    "llama-2-13b": (38_973_816_836, 200_008_876_036, 73_109_684_228, 312_380_743_680, 385_833_359_364),
    "llama-2-70b": (131_072_606_212, 655_780_036_612, 295_411_728_388, 1_655_439_556_608, 1_628_096_888_836),
    "llama-2-7b": (25_106_137_092, 128_168_574_980, 43_724_652_548, 161_721_974_784, 225_207_525_380),
    "llama-3.1-405b": (
        393_985_671_172,
        2_048_928_006_148,
        1_286_174_949_380,
        9_740_481_331_200,
        7_749_082_923_012,
    ),
    "llama-3.1-70b": (
        132_649_664_516,
        657_357_094_916,
        298_565_844_996,
        1_693_288_955_904,
        1_651_752_763_396,
    ),
    "llama-3.1-8b": (28_562_243_588, 133_235_294_212, 48_975_921_156, 192_726_269_952, 247_544_291_332),
    "llama-3.3-70b": (
        132_649_664_516,
        657_357_094_916,
        298_565_844_996,
        1_693_288_955_904,
        1_651_752_763_396,
    ),
    # Llama 4's moved when its MoE layer was measured: transformers runs every token through every
    # expert (and autocast copies every expert's weights); Scout's mixed SDPA was 54,268,873,732.
    "llama-4-maverick": (
        1_126_186_696_708,
        1_193_800_974_340,
        2_065_504_354_308,
        9_617_084_375_040,
        6_838_194_968_580,
    ),
    "llama-4-scout": (
        307_939_590_148,
        375_553_867_780,
        565_743_140_868,
        2_586_476_666_880,
        1_890_574_997_508,
    ),
    "mistral-7b": (26_985_185_284, 131_658_235_908, 46_610_333_700, 173_801_570_304, 235_716_354_052),
    "mistral-small-3": (62_066_606_084, 192_907_919_364, 116_301_053_956, 565_737_676_800, 525_060_659_204),
    "mixtral-8x22b": (
        101_341_939_460,
        376_578_459_396,
        194_345_649_924,
        3_375_121_711_104,
        2_353_426_978_564,
    ),
    "mixtral-8x7b": (46_327_743_492, 151_000_794_116, 87_966_696_452, 1_120_867_024_896, 809_375_622_148),
    "phi-3-mini": (21_315_010_564, 121_961_529_348, 30_397_120_516, 91_705_909_248, 178_099_972_100),
    "phi-4": (46_720_696_324, 206_497_464_324, 78_410_760_196, 351_828_172_800, 414_904_604_676),
    "qwen2.5-14b": (45_375_635_460, 241_838_931_972, 83_467_255_812, 354_480_807_936, 451_484_112_900),
    "qwen2.5-32b": (88_604_753_924, 350_555_815_940, 166_038_945_796, 786_333_032_448, 812_086_482_948),
    "qwen2.5-72b": (135_388_545_028, 660_095_975_428, 305_218_011_140, 1_744_948_887_552, 1_684_641_284_100),
    "qwen2.5-7b": (28_461_711_364, 108_778_176_516, 46_744_158_212, 182_774_796_288, 216_450_102_276),
    "qwen3-14b": (49_023_369_220, 212_742_782_980, 85_435_957_252, 354_439_372_800, 422_357_239_812),
    "qwen3-235b-a22b": (
        150_208_543_748,
        767_528_303_620,
        265_924_148_228,
        5_642_247_229_440,
        4_067_792_764_932,
    ),
    "qwen3-30b-a3b": (40_825_626_628, 198_237_855_748, 69_073_739_780, 732_770_942_976, 627_693_285_380),
    "qwen3-32b": (102_125_092_868, 521_891_037_188, 179_557_974_020, 786_290_958_336, 985_849_518_084),
    "qwen3-8b": (34_378_301_444, 152_135_483_396, 55_589_945_348, 196_577_648_640, 268_513_908_740),
    # Issue 20's presets, pinned as first computed (the VL text models: Qwen2.5 7B's and Qwen3 8B's).
    "qwen2.5-vl-7b": (28_461_711_364, 108_778_176_516, 46_744_158_212, 182_774_796_288, 216_450_102_276),
    "qwen3-vl-8b": (34_378_301_444, 152_135_483_396, 55_589_945_348, 196_577_648_640, 268_513_908_740),
    "gemma-3-1b": (16_297_882_116, 27_092_316_676, 19_041_874_436, 38_886_220_036, 37_569_405_188),
    "gemma-3-270m": (8_372_824_580, 15_845_894_660, 9_200_413_188, 20_716_133_636, 15_953_108_228),
    "llama-3.2-1b": (9_292_038_148, 61_225_910_276, 13_123_534_852, 30_796_132_356, 79_912_480_772),
    "llama-3.2-3b": (17_248_501_764, 85_822_750_724, 27_224_129_540, 77_105_995_776, 131_654_264_836),
    "qwen2.5-0.5b": (8_163_246_084, 42_282_598_404, 10_040_360_964, 20_058_343_684, 48_215_623_940),
    "qwen2.5-1.5b": (14_409_744_388, 48_814_309_380, 19_273_170_948, 41_000_383_492, 69_329_892_356),
    "qwen2.5-3b": (21_745_582_084, 80_775_168_004, 30_955_749_380, 74_062_528_512, 123_404_214_276),
    "qwen3-0.6b": (10_765_156_356, 56_324_734_980, 13_142_016_004, 24_088_494_084, 63_973_965_828),
    "qwen3-1.7b": (15_496_331_268, 61_055_909_892, 21_304_918_020, 44_563_019_780, 84_669_478_916),
    "qwen3-4b": (27_684_192_260, 145_441_374_212, 39_526_678_532, 96_539_234_304, 202_991_543_300),
    "smollm3-3b": (21_508_603_908, 80_387_194_884, 30_697_275_396, 73_802_366_976, 123_155_460_100),
    # Issue 20's OLMo 2/3, MiniMax-M2 and Qwen3-VL 30B-A3B, as measured (OLMo's fp32 norms and
    # projection-wide QK-norm, MiniMax-M2's one rsqrt per token of it: benchmarks/ACCURACY.md).
    "olmo-2-7b": (36_998_037_508, 140_060_475_396, 53_995_454_468, 175_166_816_256, 244_382_310_404),
    "olmo-2-13b": (56_914_165_764, 217_949_224_964, 88_352_571_396, 329_188_761_600, 413_158_430_724),
    "olmo-2-32b": (106_055_155_716, 368_006_217_732, 177_549_164_548, 773_622_718_464, 822_440_253_444),
    "olmo-3-7b": (36_996_825_092, 140_059_262_980, 53_993_635_844, 175_152_267_264, 244_373_217_284),
    "olmo-3-32b": (106_053_943_300, 368_005_005_316, 177_547_194_372, 773_604_532_224, 822_428_887_044),
    "minimax-m2": (84_390_426_628, 389_116_573_700, 147_375_503_364, 5_488_554_356_736, 3_599_881_720_836),
    "qwen3-vl-30b-a3b": (40_825_626_628, 198_237_855_748, 69_073_739_780, 732_770_942_976, 627_693_285_380),
}


def _figures(arch: Architecture) -> tuple[int, int, int, int, int]:
    saved = []
    for precision, attention in (("mixed", "sdpa"), ("mixed", "eager"), ("amp", "sdpa")):
        acts = measured_activations(arch, 1, 4096, setup=Setup(attention=attention, precision=precision))  # type: ignore[arg-type]
        saved.append(int(acts.saved_bytes + acts.weight_copy_bytes))
    sdpa = step_peak(arch, arch.parameter_count, 1, 4096, setup=Setup(attention="sdpa"))
    eager = step_peak(arch, arch.parameter_count, 1, 4096, setup=Setup(attention="eager"))
    return (*saved, int(sdpa.peak_bytes), int(eager.moments["eager attention backward"]))  # type: ignore[return-value]


def test_every_preset_is_pinned() -> None:
    # Hybrid presets have no activation estimate pinned here (tests/test_presets_hybrid.py), nor those
    # of a family whose activations were not measured: nothing to pin.
    offered = {key for key, model in presets().items() if not model.is_hybrid and _measured(model)}
    assert sorted(PINNED) == sorted(offered)


def _measured(model: Architecture) -> bool:
    declared = family(model.family)
    return declared is not None and declared.activations_measured


@pytest.mark.parametrize("key", sorted(PINNED))
def test_each_presets_figures_are_unchanged(key: str) -> None:
    assert _figures(presets()[key]) == PINNED[key]


@pytest.mark.parametrize("key", sorted(CONFIGS))
def test_a_hub_config_gets_the_traits_and_figures_of_the_preset_of_its_shape(key: str) -> None:
    # Before, every Hub architecture (key "hub") got Llama's traits: Gemma 3 27B's SDPA activations
    # came out 102.1 GB where its preset says 116.2 GB, gpt-oss-20b's 23.4 where 31.3.
    preset = presets()[key]
    hub = architecture_from_config(preset.hub_id or "acme/model", CONFIGS[key])
    assert hub.key == "hub"
    assert hub.family == preset.family
    assert traits_for(hub) == traits_for(preset)
    for precision in ("mixed", "amp"):
        for attention in ("sdpa", "eager"):
            assert measured_activations(
                hub, 1, 4096, setup=Setup(attention=attention, precision=precision)
            ) == measured_activations(preset, 1, 4096, setup=Setup(attention=attention, precision=precision))


def test_a_gemma3_hub_config_has_gemmas_norms_qk_norm_and_two_rope_tables() -> None:
    hub = architecture_from_config("google/gemma-3-27b-it", CONFIGS["gemma-3-27b"])
    traits = traits_for(hub)
    assert hub.family == "gemma3_text"
    assert (traits.norm_style, traits.qk_norm, traits.rope_tables) == ("gemma", True, 2)


def test_a_config_of_an_undeclared_family_is_refused_not_given_llamas_traits() -> None:
    config = {**CONFIGS["llama-3.1-8b"], "model_type": "acme_lm", "architectures": ["AcmeForCausalLM"]}
    with pytest.raises(ConfigProblem) as caught:
        architecture_from_config("acme/small", config)
    assert (caught.value.kind, caught.value.fields) == ("undeclared_family", ("acme_lm",))


@pytest.mark.parametrize("key", ["qwen3-30b-a3b", "qwen3-235b-a22b", "llama-4-scout"])
def test_an_all_moe_models_eager_peak_does_not_depend_on_the_dense_width(key: str) -> None:
    # Every layer is MoE, so intermediate_size (the dense MLP's) is not in the model: the last
    # layer's freed MLP and its gradients are the experts', at moe_intermediate_size.
    arch = presets()[key]
    wider = arch.model_copy(update={"intermediate_size": 4 * arch.intermediate_size})
    for checkpointing in (False, True):
        peaks = [
            step_peak(
                a, arch.parameter_count, 1, 4096, setup=Setup(attention="eager", checkpointing=checkpointing)
            )
            for a in (arch, wider)
        ]
        assert peaks[0].moments == peaks[1].moments


def test_qwen3_30b_a3b_eager_peak_holds_the_experts_gradients() -> None:
    # 128 experts of 3 × 2048 × 768, the router 2048 × 128 and o_proj 4096 × 2048, in bf16: 1.23 GB
    # (with the dense 6144 it was 9.68 GB).
    arch = presets()["qwen3-30b-a3b"]
    moments = step_peak(arch, arch.parameter_count, 1, 4096, setup=Setup(attention="eager")).moments
    gradients = 2 * (128 * 3 * 2048 * 768 + 2048 * 128 + 4096 * 2048)
    assert gradients == pytest.approx(1.23e9, rel=0.01)
    assert moments["eager attention backward"] == PINNED["qwen3-30b-a3b"][4]


def test_llama4_runs_every_token_through_every_expert() -> None:
    """Llama 4's MoE layer (transformers ``Llama4TextMoe``) keeps per token, for each of its E experts,
    the repeated input and its score-weighted copy 2h + 2h, gate_up, act and product 8f, and the
    sigmoid score 4 + 2; so a second set of E experts adds E × (4h + 8f + 6) to a layer, and the
    top-k only its int64 indices (measured on the benchmark's small Llama 4: benchmarks/ACCURACY.md)."""
    scout = presets()["llama-4-scout"]
    assert traits_for(scout).dense_experts
    h, f, e = scout.hidden_size, scout.expert_intermediate_size, scout.experts
    per_token = [
        measured_activations(arch, 1, 1, setup=Setup(attention="sdpa")).per_layer_bytes
        for arch in (
            scout,
            scout.model_copy(update={"experts": 2 * e}),
            scout.model_copy(update={"experts_per_token": 2}),
        )
    ]
    assert per_token[1] - per_token[0] == e * (4 * h + 8 * f + 6)
    assert per_token[2] - per_token[0] == 8
    # Mixtral's grouped experts keep a token's tensors once per active expert, not per expert.
    mixtral = presets()["mixtral-8x7b"]
    assert not traits_for(mixtral).dense_experts
    more = mixtral.model_copy(update={"experts": 2 * mixtral.experts})
    grown = (
        measured_activations(more, 1, 1).per_layer_bytes - measured_activations(mixtral, 1, 1).per_layer_bytes
    )
    assert grown == 2 * 4 * mixtral.experts  # only the router's fp32 softmax and the int32 offsets


def test_gemma_2_keeps_the_tanh_of_its_capped_scores_and_logits() -> None:
    """Gemma 2 caps attention scores and logits with tanh, whose 16-bit output backward needs: eager
    attention keeps 2·a·s more per token and layer (SDPA cannot cap, so transformers refuses it), and
    every setup 2v more per token outside the layers (measured: benchmarks/ACCURACY.md)."""
    gemma2 = presets()["gemma-2-9b"]
    traits = traits_for(gemma2)
    assert traits.softcapping
    assert not traits_for(presets()["gemma-3-12b"]).softcapping
    uncapped = dataclasses.replace(traits, softcapping=False)
    s, a, v = 4096, gemma2.attention_heads, gemma2.vocab_size
    for attention, scores in (("eager", 2 * a * s), ("sdpa", 0)):
        capped = measured_activations(gemma2, 1, s, setup=Setup(attention=attention))  # type: ignore[arg-type]
        plain = measured_activations(gemma2, 1, s, traits=uncapped, setup=Setup(attention=attention))  # type: ignore[arg-type]
        assert capped.per_layer_bytes - plain.per_layer_bytes == s * scores
        assert capped.outside_layers_bytes - plain.outside_layers_bytes == s * 2 * v + 2  # + the cap


def test_phi_3_keeps_its_fused_projections_as_one() -> None:
    """Phi-3 and Phi-4 fuse qkv_proj and gate_up_proj: under autocast one bf16 copy of each linear's
    input (2h, where three and two separate linears keep 6h and 4h); under SDPA V is a view of
    qkv_proj's output, whose whole storage it keeps (2q + 2kv more), and the RoPE'd Q and K, written
    as a concatenation, leave SDPA's output head-major: o_proj's input is a copy (2q more)."""
    phi = presets()["phi-3-mini"]
    assert (phi.fused_qkv, phi.fused_gate_up, traits_for(phi).rope_cat) == (True, True, True)
    unfused = phi.model_copy(update={"fused_qkv": False, "fused_gate_up": False})
    plain = dataclasses.replace(traits_for(phi), rope_cat=False)
    h, q, kv = phi.hidden_size, phi.q_dim, phi.kv_dim

    def per_token(
        arch: Architecture, attention: str, precision: str, traits: FamilyTraits | None = None
    ) -> float:
        setup = Setup(attention=attention, precision=precision)  # type: ignore[arg-type]
        found = measured_activations(arch, 1, 1, traits=traits, setup=setup)
        return found.per_layer_bytes

    assert (
        per_token(phi, "sdpa", "mixed") - per_token(unfused, "sdpa", "mixed", plain) == 2 * q + 2 * kv + 2 * q
    )
    assert per_token(phi, "eager", "mixed") == per_token(unfused, "eager", "mixed", plain)
    assert per_token(phi, "eager", "amp") - per_token(unfused, "eager", "amp", plain) == -4 * h - 2 * h


def test_a_family_whose_activations_were_not_measured_asks_for_them_instead_of_guessing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A family counted exactly whose steps were not measured (benchmarks/ACCURACY.md; GPT-NeoX until
    # famact measured it, Gemma 3n until act): before, /vram gave the Llama-shaped figure anyway. A
    # synthetic declaration, Llama's counted but not measured, so the subject never runs out.
    unmeasured_type = "acme_counted_only"
    monkeypatch.setitem(
        families._BY_TYPE,
        unmeasured_type,
        dataclasses.replace(families.FAMILIES[0], model_type=unmeasured_type, activations_measured=False),
    )
    llama = architecture_from_config("acme/llama", CONFIGS["llama-3.1-8b"])
    neox = architecture_from_config("acme/neox", {**CONFIGS["llama-3.1-8b"], "model_type": unmeasured_type})
    measured, unmeasured = (
        estimate(EstimateRequest(model=model, seq_len=2048, gpu="h100")) for model in (llama, neox)
    )
    assert measured.activation_estimate is not None
    assert measured.peak is not None
    assert (unmeasured.activation_estimate, unmeasured.peak, unmeasured.largest_batch) == (None, None, None)
    assert unmeasured.activations_gb == 0.0
    assert "add `activations`" in render_embed(unmeasured)["description"]


def test_the_traits_are_each_familys_declaration_as_declared() -> None:
    """A new trait is one field of Family (bot/estimate/families.py): the formulas read every field of
    the declaration through traits_for, as declared, but the three it resolves with the architecture."""
    resolved = {"norm_style", "qk_norm", "attention_sinks"}
    base = presets()["llama-3.1-8b"]
    for declared in FAMILIES:
        traits = traits_for(base.model_copy(update={"model_type": declared.model_type}))
        for field in dataclasses.fields(declared):
            if field.name not in resolved:
                assert getattr(traits, field.name) == getattr(declared, field.name), (
                    declared.model_type,
                    field.name,
                )
