"""The measuring machinery of issue 11 on a tiny Llama: one real training step with torch on CPU;
and what ``vram-bot measure`` builds: every preset's derived config on the ``meta`` device, and tiny
repos read from the fake Hub, measured end to end.

Marked ``accuracy``: deselected by default (``addopts``), run with ``pytest -m accuracy`` after
``pip install -e ".[measure]"``; skipped when torch or transformers is not installed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.estimate.hub import forget_all
from bot.estimate.models import presets
from bot.estimate.saved_activations import (
    layer_saved_bytes,
    measured_activations,
    outside_saved_bytes,
    rope_bytes,
)
from bot.estimate.setup import Setup as TrainingSetup
from bot.estimate.step_peak import step_peak, step_peak_bytes
from bot.measure import extrapolate, measure_step
from bot.measure.configs import config_for
from bot.measure.families import SMALL_CONFIGS, architecture
from bot.measure.types import MeasureSetup
from tests.checkpoint_count import checkpoint_count
from tests.fake_hub import FakeHub, point_hub_client_at, running_in_thread
from tests.test_presets_2025 import TRANSFORMERS_COUNT

pytestmark = pytest.mark.accuracy


@pytest.fixture(autouse=True, scope="module")
def _torch_and_transformers() -> None:
    """Skip where they are not installed. Imported here, not at the module's top: collecting this
    module for the default run (which deselects it) would otherwise load torch, some 2.6 s."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")


TINY: dict[str, Any] = {
    "model_type": "llama",
    "hidden_size": 64,
    "intermediate_size": 176,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "vocab_size": 256,
    "max_position_embeddings": 256,
    "tie_word_embeddings": False,
    "use_cache": False,
}
SETUP = MeasureSetup(precision="mixed", optimizer="adamw", attention="sdpa", batch_size=2, seq_len=32)


def _counted_parameters(config: dict[str, Any], layers: int) -> int:
    """The parameters of a Llama config counted by hand (as bot.estimate.models counts them)."""
    h, f, v = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    q = config["num_attention_heads"] * config["head_dim"]
    kv = config["num_key_value_heads"] * config["head_dim"]
    per_layer = h * q + 2 * h * kv + q * h + 3 * h * f + 2 * h
    return int(2 * v * h + layers * per_layer + h)


@pytest.mark.parametrize(("precision", "weight_bytes"), [("mixed", 2), ("bf16", 2), ("amp", 4)])
def test_parameter_bytes_are_the_counted_parameters_times_their_bytes(
    precision: Any, weight_bytes: int
) -> None:
    setup = MeasureSetup(precision=precision, batch_size=2, seq_len=16)
    measured = measure_step(TINY, 2, setup)
    counted = _counted_parameters(TINY, 2)
    assert measured.parameters == counted
    assert measured.parameters == architecture("tiny", TINY, 2).parameter_count
    assert measured.param_bytes == counted * weight_bytes
    assert measured.grad_bytes == counted * weight_bytes
    # AdamW keeps two states per parameter in the optimizer's weights' dtype (+ a scalar step each).
    optimizer_weight_bytes = 4 if precision in ("mixed", "amp") else 2
    assert measured.optimizer_bytes - 2 * counted * optimizer_weight_bytes < 1024
    assert measured.master_bytes == (4 * counted if precision == "mixed" else 0)


def test_one_more_layer_saves_a_positive_and_stable_amount() -> None:
    one = measure_step(TINY, 1, SETUP)
    two = measure_step(TINY, 2, SETUP)
    again = measure_step(TINY, 2, SETUP)
    per_layer = two.saved_bytes - one.saved_bytes
    assert per_layer > 0
    assert again.saved_bytes - one.saved_bytes == per_layer
    # Each layer after the first saves the same (the first also saves the shared RoPE tables).
    assert two.saved_per_layer[1] == per_layer


def test_the_calibrated_formulas_match_the_measured_saved_bytes() -> None:
    one = measure_step(TINY, 1, SETUP)
    two = measure_step(TINY, 2, SETUP)
    full = extrapolate(one, two, 2)
    arch = architecture("llama-tiny", TINY, 2)
    assert full.saved_per_layer == layer_saved_bytes(arch, SETUP.batch_size, SETUP.seq_len)
    assert full.saved_outside == outside_saved_bytes(arch, SETUP.batch_size, SETUP.seq_len)


def test_checkpointing_keeps_only_each_layers_input() -> None:
    setup = MeasureSetup(precision="mixed", checkpointing=True, batch_size=2, seq_len=32)
    one = measure_step(TINY, 1, setup)
    two = measure_step(TINY, 2, setup)
    assert two.saved_bytes - one.saved_bytes == 2 * 2 * 32 * TINY["hidden_size"]


def test_the_peak_is_above_the_live_bytes_at_every_phase_boundary() -> None:
    measured = measure_step(TINY, 1, SETUP)
    assert measured.peak_bytes >= max(measured.after_forward, measured.after_backward, measured.after_step)
    # Foreach AdamW on fp32 master weights: fp32 gradients 4 B/param + one state-sized temporary 4 B/param.
    assert measured.peak_step - measured.after_step == 8 * measured.parameters


SHRINK = {
    "hidden_size": 64,
    "intermediate_size": 176,
    "moe_intermediate_size": 88,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "vocab_size": 256,
}


@pytest.mark.parametrize("family", ["qwen2", "qwen3", "gemma3", "mixtral", "qwen3_moe"])
@pytest.mark.parametrize(("precision", "attention"), [("mixed", "eager"), ("amp", "sdpa")])
def test_each_familys_layer_matches_its_formula_to_the_byte(
    family: str, precision: Any, attention: Any
) -> None:
    config = {**SMALL_CONFIGS[family], **SHRINK}
    if "moe_intermediate_size" not in SMALL_CONFIGS[family]:
        del config["moe_intermediate_size"]
    setup = MeasureSetup(precision=precision, attention=attention, batch_size=2, seq_len=32)
    full = extrapolate(measure_step(config, 1, setup), measure_step(config, 2, setup), 2)
    expected = layer_saved_bytes(
        architecture(family, config, 2), 2, 32, attention=attention, precision=precision
    )
    assert full.saved_per_layer == expected


@pytest.mark.parametrize("precision", ["mixed", "amp"])
def test_gpt_oss_sinks_and_clamped_experts_match_their_formula(precision: Any) -> None:
    config = {**SMALL_CONFIGS["gpt_oss"], **SHRINK}
    del config["moe_intermediate_size"]
    setup = MeasureSetup(precision=precision, attention="eager", batch_size=2, seq_len=32)
    full = extrapolate(measure_step(config, 1, setup), measure_step(config, 2, setup), 2)
    arch = architecture("gpt_oss", config, 2)
    assert full.saved_per_layer == layer_saved_bytes(arch, 2, 32, attention="eager", precision=precision)
    assert full.saved_outside == outside_saved_bytes(arch, 2, 32, attention="eager", precision=precision)


# Both precisions with both attentions: the setups a family's own formulas are checked in.
FOUR_SETUPS = [("mixed", "sdpa"), ("mixed", "eager"), ("amp", "sdpa"), ("amp", "eager")]


def _assert_a_layer_matches_its_formulas(
    family: str, config: dict[str, Any], precision: Any, attention: Any
) -> None:
    """Depths 1 and 2 measured and extended: one layer, what is outside the layers and autocast's
    weight copies each equal the formulas', to the byte."""
    setup = MeasureSetup(precision=precision, attention=attention, batch_size=2, seq_len=32)
    two = measure_step(config, 2, setup)
    full = extrapolate(measure_step(config, 1, setup), two, 2)
    arch = architecture(family, config, 2)
    kw: dict[str, Any] = {"attention": attention, "precision": precision}
    assert full.saved_per_layer == layer_saved_bytes(arch, 2, 32, **kw)
    assert full.saved_outside == outside_saved_bytes(arch, 2, 32, **kw)
    assert (
        two.saved_weight_copies == measured_activations(arch, 2, 32, setup=setup.training).weight_copy_bytes
    )


LLAMA4_SHRINK = {
    "hidden_size": 64,
    "intermediate_size": 88,  # an expert's width, in Llama 4's names
    "intermediate_size_mlp": 176,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "vocab_size": 256,
}


@pytest.mark.parametrize(("precision", "attention"), FOUR_SETUPS)
def test_llama4_experts_match_their_formula_to_the_byte(precision: Any, attention: Any) -> None:
    """Every token through every expert (4 of them, 1 routed), the shared expert, the compute-dtype
    eager softmax, the complex64 RoPE table, and under autocast every expert's weight copy."""
    config = {**SMALL_CONFIGS["llama4"], **LLAMA4_SHRINK}
    _assert_a_layer_matches_its_formulas("llama4", config, precision, attention)


@pytest.mark.parametrize(("precision", "attention"), FOUR_SETUPS)
def test_glm_4_5_layers_match_their_formula_to_the_byte(precision: Any, attention: Any) -> None:
    """GLM-4.5 runs DeepSeek-V3's MoE layer under GQA attention with QK-norm and RoPE on half of each
    head (whose concatenated Q leaves SDPA's output head-major: o_proj's input is a copy). Layer 0
    is dense (first_k_dense_replace = 1), layer 1 MoE; the RoPE tables are saved in layer 0's region,
    which the formula counts outside the layers."""
    config = {**SMALL_CONFIGS["glm4_moe"], **SHRINK, "first_k_dense_replace": 1}
    setup = MeasureSetup(precision=precision, attention=attention, batch_size=2, seq_len=32)
    measured = measure_step(config, 2, setup)
    arch = architecture("glm4_moe", config, 2)
    kw: dict[str, Any] = {"attention": attention, "precision": precision}
    dense = layer_saved_bytes(arch, 2, 32, moe_layer=False, **kw)
    moe = layer_saved_bytes(arch, 2, 32, moe_layer=True, **kw)
    tables = rope_bytes(arch, 32, precision=precision)
    assert measured.saved_per_layer == [dense + tables, moe]
    assert measured.saved_outside == outside_saved_bytes(arch, 2, 32, **kw) - tables
    assert (
        measured.saved_weight_copies
        == measured_activations(arch, 2, 32, setup=setup.training).weight_copy_bytes
    )


def test_vram_bot_measure_runs_one_step_of_a_small_family(capsys: pytest.CaptureFixture[str]) -> None:
    from bot.cli import main

    assert main(["measure", "--family", "llama", "--seq-len", "64"]) == 0
    printed = dict(line.split(maxsplit=1) for line in capsys.readouterr().out.splitlines())
    assert printed["model_states_measured"] == printed["model_states_proposed"]


# --- vram-bot measure's targets: presets and Hub repos (bot.measure.configs) ------------------------


@pytest.mark.parametrize("key", sorted(presets()))
def test_transformers_builds_every_presets_config_with_the_presets_count(key: str) -> None:
    import torch
    import transformers

    fields = dict(config_for(presets()[key]))
    config = transformers.AutoConfig.for_model(str(fields.pop("model_type")), **fields)
    with torch.device("meta"):  # shapes only: no memory, no weights
        model = transformers.AutoModelForCausalLM.from_config(config)
    assert checkpoint_count(model) == presets()[key].parameter_count
    if key in TRANSFORMERS_COUNT:
        assert checkpoint_count(model) == TRANSFORMERS_COUNT[key]


TINY_GEMMA3 = {
    "architectures": ["Gemma3ForConditionalGeneration"],
    "model_type": "gemma3",
    "text_config": {**SHRINK, "model_type": "gemma3_text", "num_hidden_layers": 3, "sliding_window": 16},
    "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 32},
}


@pytest.fixture(scope="module")
def hub() -> Iterator[FakeHub]:
    hub = FakeHub()
    hub.add("acme/Tiny-Llama", {**TINY, "architectures": ["LlamaForCausalLM"], "num_hidden_layers": 3})
    hub.add("acme/Tiny-Gemma3", TINY_GEMMA3)
    fancy = {**TINY, "model_type": "fancy_new", "architectures": ["FancyForCausalLM"], "num_hidden_layers": 3}
    hub.add("acme/Fancy", fancy)
    with running_in_thread(hub):
        yield hub
    forget_all()


@pytest.mark.parametrize(
    ("repo", "built_as"), [("acme/Tiny-Llama", "llama"), ("acme/Tiny-Gemma3", "gemma3_text")]
)
def test_vram_bot_measure_runs_a_repo_from_the_fake_hub(
    repo: str,
    built_as: str,
    hub: FakeHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bot.cli import main

    point_hub_client_at(hub, tmp_path, monkeypatch)
    assert main(["measure", repo, "--seq-len", "32", "--batch-size", "2"]) == 0
    printed = dict(line.split(maxsplit=1) for line in capsys.readouterr().out.splitlines())
    assert printed["model"].startswith(f"{repo} (Hugging Face at ")
    assert printed["model"].endswith(f", built as {built_as})")
    assert printed["layers"] == "3"
    assert printed["model_states_measured"] == printed["model_states_proposed"]


def test_a_causal_lm_transformers_does_not_know_is_refused_in_one_line(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.cli import main

    point_hub_client_at(hub, tmp_path, monkeypatch)
    assert main(["measure", "acme/Fancy"]) == 2
    err = capsys.readouterr().err
    # The bot's own refusal comes first: it has no declaration of the family, so no estimate to compare.
    assert err.startswith("measure: The counter has no declaration for the family of acme/Fancy (fancy_new)")
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize(("precision", "attention"), FOUR_SETUPS)
def test_phi_3_fused_projections_match_their_formula_to_the_byte(precision: Any, attention: Any) -> None:
    """One qkv_proj and one gate_up_proj (one autocast copy of each input; V a view of qkv's
    storage under SDPA) and RoPE by concatenation (o_proj's input a copy of SDPA's output)."""
    config = {**SMALL_CONFIGS["phi3"], **SHRINK}
    del config["moe_intermediate_size"]
    _assert_a_layer_matches_its_formulas("phi3", config, precision, attention)


@pytest.mark.parametrize("precision", ["mixed", "amp"])
def test_gemma_2_soft_capping_matches_its_formula_to_the_byte(precision: Any) -> None:
    """The tanh of the capped scores (eager, the only attention transformers runs Gemma 2 with) and of
    the capped logits."""
    config = {**SMALL_CONFIGS["gemma2"], **SHRINK}
    del config["moe_intermediate_size"]
    setup = MeasureSetup(precision=precision, attention="eager", batch_size=2, seq_len=32)
    full = extrapolate(measure_step(config, 1, setup), measure_step(config, 2, setup), 2)
    arch = architecture("gemma2", config, 2)
    assert full.saved_per_layer == layer_saved_bytes(arch, 2, 32, attention="eager", precision=precision)
    assert full.saved_outside == outside_saved_bytes(arch, 2, 32, attention="eager", precision=precision)


@pytest.mark.parametrize(
    ("config", "attention", "said"),
    [
        # Gemma 2's attention-logit soft-capping, which SDPA cannot apply: transformers refuses SDPA.
        (
            {"model_type": "gemma2", "attn_logit_softcapping": 50.0, "query_pre_attn_scalar": 16},
            "sdpa",
            "transformers does not run gemma2 with SDPA in this config: add --attention eager",
        ),
        # Phi-3's default pad_token_id (32000) outside a 256-token vocabulary: nn.Embedding asserts.
        ({"model_type": "phi3"}, "eager", "cannot build this phi3 config: Padding_idx must be within"),
    ],
)
def test_a_config_transformers_cannot_build_is_refused_in_one_line(
    config: dict[str, Any], attention: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.cli import main

    path = tmp_path / "config.json"
    path.write_text(json.dumps({**TINY, **config}), encoding="utf-8")
    assert main(["measure", "--config", str(path), "--attention", attention, "--seq-len", "16"]) == 2
    err = capsys.readouterr().err
    assert said in err
    assert "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("measure: ")]) == 1


# Multi-head Latent Attention at a tinier shape than the benchmark's: Q/K heads of 24 + 8, V of 16.
MLA_SHRINK = {
    "hidden_size": 64,
    "intermediate_size": 176,
    "moe_intermediate_size": 88,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "q_lora_rank": 48,
    "kv_lora_rank": 32,
    "qk_nope_head_dim": 24,
    "qk_rope_head_dim": 8,
    "head_dim": 8,
    "v_head_dim": 16,
    "vocab_size": 256,
}


@pytest.mark.parametrize(("precision", "attention"), FOUR_SETUPS)
def test_deepseek_v3_mla_and_moe_match_their_formula_to_the_byte(precision: Any, attention: Any) -> None:
    """MLA and DeepSeek-V3's MoE; under autocast the bf16 copies of attention, router and
    shared-expert weights, + the LM head's."""
    config = {**SMALL_CONFIGS["deepseek_v3"], **MLA_SHRINK}
    _assert_a_layer_matches_its_formulas("deepseek_v3", config, precision, attention)


def test_mla_sdpa_runs_the_padded_v_stand_in_without_an_s2_term() -> None:
    from bot.measure.step import PADDED_V_SDPA, build_model

    config = {**SMALL_CONFIGS["deepseek_v3"], **MLA_SHRINK}
    short, long = (MeasureSetup(batch_size=2, seq_len=n) for n in (32, 64))
    assert build_model(config, 1, short).config._attn_implementation == PADDED_V_SDPA
    assert build_model(config, 1, MeasureSetup(attention="eager")).config._attn_implementation == "eager"
    per_layer = [
        extrapolate(measure_step(config, 1, s), measure_step(config, 2, s), 2).saved_per_layer
        for s in (short, long)
    ]
    # Linear in s (the math kernel's fp32 scores would add 4·a·s² per layer), minus the 4E offsets.
    assert per_layer[1] - 16 == 2 * (per_layer[0] - 16)


@pytest.mark.parametrize("precision", ["mixed", "amp"])
def test_deepseek_dense_first_layers_match_their_formula(precision: Any) -> None:
    # first_k_dense_replace = 1: layer 0 is a dense MLP of intermediate_size, layer 1 a MoE layer.
    config = {**SMALL_CONFIGS["deepseek_v3"], **MLA_SHRINK, "first_k_dense_replace": 1}
    setup = MeasureSetup(precision=precision, attention="sdpa", batch_size=2, seq_len=32)
    measured = measure_step(config, 2, setup)
    arch = architecture("deepseek_v3", config, 2)
    assert (arch.dense_layers, arch.moe_layers) == (1, 1)
    kw: dict[str, Any] = {"attention": "sdpa", "precision": precision}
    dense, moe = (layer_saved_bytes(arch, 2, 32, moe_layer=m, **kw) for m in (False, True))
    # The first layer also saves RoPE's cos/sin, which every layer shares.
    assert measured.saved_per_layer == [dense + rope_bytes(arch, 32, precision=precision), moe]
    proposed = measured_activations(arch, 2, 32, setup=TrainingSetup(**kw))
    assert measured.saved_bytes == proposed.saved_bytes
    assert measured.saved_weight_copies == proposed.weight_copy_bytes
    peak = step_peak_bytes(arch, measured.parameters, 2, 32, setup=TrainingSetup(**kw))
    assert measured.peak_bytes == pytest.approx(peak, rel=0.10)


# --- a Hub repo's family traits, and a MoE layer's eager peak (saved_activations, step_peak) ---


@pytest.mark.parametrize(("precision", "attention"), [("mixed", "sdpa"), ("amp", "eager")])
def test_a_gemma3_hub_repo_is_estimated_with_gemma3s_traits(precision: Any, attention: Any) -> None:
    # What `vram-bot measure acme/Tiny-Gemma3` runs, without the Hub round trip. With Llama's traits
    # (every Hub architecture had them) the saved activations came out 0.0012 GB against 0.0014.
    from bot.estimate.hub import architecture_from_config
    from bot.measure.__main__ import run
    from bot.measure.configs import hub_target

    arch = architecture_from_config("acme/Tiny-Gemma3", TINY_GEMMA3)
    setup = MeasureSetup(precision=precision, attention=attention, batch_size=2, seq_len=32)
    figures = run(hub_target("acme/Tiny-Gemma3", TINY_GEMMA3, arch), setup)
    assert figures["saved_proposed"] == pytest.approx(figures["saved_measured"], rel=0.05)
    assert figures["peak_proposed"] == pytest.approx(figures["peak_measured"], rel=0.10)


@pytest.mark.parametrize("checkpointing", [False, True])
def test_a_moe_layers_eager_peak_follows_the_experts_width(checkpointing: bool) -> None:
    # Qwen3-MoE's intermediate_size is its dense layers' width, unused here (mlp_only_layers is empty):
    # 12 × the experts' 344. At 1024 × 2 eager attention's backward (or, checkpointed, the rebuilt first
    # layer) holds the peak; with the dense width in its terms the estimate was 1.044 (1.266) low.
    from bot.estimate.hub import architecture_from_config

    config = {**SMALL_CONFIGS["qwen3_moe"], "intermediate_size": 4096, "num_hidden_layers": 8}
    setup = MeasureSetup(
        precision="mixed", attention="eager", checkpointing=checkpointing, batch_size=2, seq_len=1024
    )
    full = extrapolate(measure_step(config, 1, setup), measure_step(config, 2, setup), 8)
    arch = architecture_from_config("acme/Tiny-Qwen3-MoE", config)
    assert arch.intermediate_size == 4096
    assert arch.expert_intermediate_size == 344
    peak = step_peak(
        arch, full.parameters, 2, 1024, setup=TrainingSetup(attention="eager", checkpointing=checkpointing)
    )
    assert peak.moment == ("recompute" if checkpointing else "eager attention backward")
    assert full.peak_bytes == pytest.approx(peak.peak_bytes, rel=0.02)
