"""The frontier of issue 20, round 4: DeepSeek-V4, Kimi Linear's ``linear_attn_config``, Hunyuan-A13B's
per-layer lists, and a missing ``mlp_layer_types`` read as each config class derives it.

The default suite holds the reader to figures transformers 5.24 gave (its meta-device build, and its
cache after a bf16 CPU forward), pinned below; under ``-m accuracy`` the same configs, and more, are
built again and compared live (torch and transformers needed).
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.estimate.hub import ConfigProblem, architecture_from_config
from bot.estimate.kv_cache import KvDtype, cache_bytes, layer_caches
from bot.estimate.models import Architecture
from tests.checkpoint_count import checkpoint_count


def _read(config: dict[str, Any]) -> Architecture:
    return architecture_from_config("frontier/check", config)


def _problem(config: dict[str, Any]) -> ConfigProblem:
    with pytest.raises(ConfigProblem) as caught:
        _read(config)
    return caught.value


# DeepSeek-V4 as a Hub config.json may give it: the class's defaults for everything else (DeepSeek-V4
# Flash's shape: DeepseekV4Config's docstring names its checkpoint deepseek-ai/DeepSeek-V4-Flash-Base).
V4_DEFAULT: dict[str, Any] = {
    "model_type": "deepseek_v4",
    "hidden_size": 4096,
    "num_hidden_layers": 43,
    "num_attention_heads": 64,
    "vocab_size": 129280,
}
# transformers 5.24's DeepseekV4ForCausalLM of its default config on the meta device: its state_dict,
# parameters and the persistent buffers the checkpoints hold (decl2: the hash routers' tid2eid,
# 3 × 129,280 × 6, and the other 40 routers' e_score_correction_bias, 40 × 256; 284,325,869,015
# parameters alone).
V4_DEFAULT_BUILT = 284_328_206_295
# A small DeepSeek-V4 of five layers, in the fields its config class takes.
V4_SMALL: dict[str, Any] = {
    "model_type": "deepseek_v4",
    "hidden_size": 256,
    "num_attention_heads": 8,
    "head_dim": 32,
    "vocab_size": 1000,
    "moe_intermediate_size": 344,
    "n_routed_experts": 4,
    "num_experts_per_tok": 2,
    "q_lora_rank": 96,
    "o_groups": 2,
    "o_lora_rank": 32,
    "hc_mult": 2,
    "index_n_heads": 2,
    "index_head_dim": 16,
    "num_hidden_layers": 5,
    "pad_token_id": 0,
}
# Older checkpoints' per-layer compress_ratios and top-level rates, and the class's own layer order.
V4_VARIANTS: dict[str, dict[str, Any]] = {
    "legacy ratios": {"compress_ratios": [0, 4, 128, 4, 0], "compress_rate_csa": 3, "compress_rate_hca": 16},
    "default order": {},
    "listed, cut": {
        "layer_types": ["sliding_attention"] * 2 + ["compressed_sparse_attention"] * 4,
        "compress_rates": {"compressed_sparse_attention": 8, "heavily_compressed_attention": 32},
        "hc_mult": 1,
    },
}
# Each state_dict (decl2: + 3 hash tables of 1,000 × 2 and 2 correction biases of 4 over the parameters).
V4_VARIANTS_BUILT = {"legacy ratios": 7_706_193, "default order": 7_718_337, "listed, cut": 7_709_678}


def test_deepseek_v4_is_counted_as_transformers_builds_it() -> None:
    model = _read(V4_DEFAULT)
    assert model.parameter_count == V4_DEFAULT_BUILT  # DeepSeek's "284B" (V4 Flash)
    assert round(model.active_parameter_count / 1e9, 1) == 13.8  # "13B" active: 6 of 256 experts
    assert (model.compressed_sparse_layers, model.heavily_compressed_layers) == (20, 23)
    for name, fields in V4_VARIANTS.items():
        assert _read({**V4_SMALL, **fields}).parameter_count == V4_VARIANTS_BUILT[name], name


def test_deepseek_v4_refuses_what_it_does_not_model() -> None:
    assert _problem({**V4_DEFAULT, "mlp_bias": True}).kind == "undeclared_family"  # the shared MLP's biases
    assert _problem({**V4_SMALL, "layer_types": ["sliding_attention", "full_attention"] * 3}).kind == "absurd"
    assert _problem({**V4_SMALL, "compress_ratios": [0, 8, 0, 0, 0]}).kind == "absurd"


# The small config of bot.measure.families (sliding, compressed-sparse, heavily-compressed; rates 3
# and 16), its window narrowed to 16: transformers' DynamicCache after a bf16 CPU forward of 2 x 40
# tokens held 14,976 bytes (benchmarks/accuracy_serve.py).
def test_deepseek_v4_caches_what_transformers_caches() -> None:
    from bot.measure.families import SMALL_CONFIGS

    model = _read({**SMALL_CONFIGS["deepseek_v4"], "sliding_window": 16})
    caches = layer_caches(model, KvDtype.BF16)
    assert [c.kind for c in caches] == ["sliding", "compressed_sparse", "heavily_compressed"]
    assert cache_bytes(caches, 40, 2) == 14_976


KIMI: dict[str, Any] = {
    "model_type": "kimi_linear",
    "hidden_size": 256,
    "intermediate_size": 688,
    "moe_intermediate_size": 344,
    "num_attention_heads": 8,
    "num_hidden_layers": 4,
    "num_experts": 4,
    "num_experts_per_token": 2,
    "vocab_size": 1000,
    "q_lora_rank": 96,
    "kv_lora_rank": 64,
    "qk_rope_head_dim": 16,
    "qk_nope_head_dim": 32,
    "v_head_dim": 32,
    "pad_token_id": 0,
}
# The checkpoints' form: 1-indexed layer lists and the KDA heads' fields, over the top-level ones.
KIMI_NESTED = {
    **KIMI,
    "linear_num_heads": 32,
    "linear_attn_config": {
        "full_attn_layers": [2, 4],
        "kda_layers": [1, 3],
        "num_heads": 4,
        "head_dim": 32,
        "short_conv_kernel_size": 3,
    },
}
KIMI_NESTED_BUILT = 5_685_384


def test_kimi_linear_reads_linear_attn_config_as_its_config_class_does() -> None:
    model = _read(KIMI_NESTED)
    assert model.parameter_count == KIMI_NESTED_BUILT
    assert model.layer_kinds == ("linear_attention", "attention", "linear_attention", "attention")
    assert (model.linear_key_heads, model.linear_key_head_dim, model.linear_conv_kernel) == (4, 32, 3)
    unnumbered = {"full_attn_layers": [2, 5], "kda_layers": [1, 3]}  # layer 4 left out, 5 is none
    assert _problem({**KIMI, "linear_attn_config": unnumbered}).kind == "absurd"
    # Without a list, KimiLinearConfig puts MLA on layers i > 0 with i % 4 == 0.
    plain = _read({**KIMI, "num_hidden_layers": 9, "linear_num_heads": 4, "linear_head_dim": 32})
    assert [i for i, kind in enumerate(plain.layer_kinds) if kind == "attention"] == [4, 8]


HUNYUAN: dict[str, Any] = {
    "model_type": "hunyuan_v1_moe",
    "hidden_size": 64,
    "intermediate_size": 96,
    "num_attention_heads": 4,
    "head_dim": 16,
    "num_hidden_layers": 2,
    "vocab_size": 100,
    "num_experts": 4,
}


def test_hunyuan_per_layer_lists_are_read_or_refused_by_name() -> None:
    # Hunyuan-A13B's config.json writes moe_topk, moe_intermediate_size and num_shared_expert per
    # layer; transformers 5.24 builds the same model for equal values (230,784 parameters here).
    listed = {**HUNYUAN, "moe_topk": [2, 2], "moe_intermediate_size": [96, 96], "num_shared_expert": [1, 1]}
    assert _read(listed).parameter_count == _read({**HUNYUAN, "moe_topk": 2}).parameter_count == 230_784
    assert _read(listed).experts_per_token == 2
    varying = _problem({**HUNYUAN, "moe_topk": [2, 1]})
    assert (varying.kind, varying.fields) == (
        "undeclared_family",
        ("hunyuan_v1_moe with moe_topk varying by layer",),
    )
    wider = _problem({**HUNYUAN, "moe_intermediate_size": [128, 128]})  # transformers builds 96-wide experts
    assert wider.fields == ("hunyuan_v1_moe with moe_intermediate_size other than intermediate_size",)


# A MoE config without mlp_layer_types: the config classes derive it (issue 20, point 4), each its
# own way; built by transformers 5.24 on the meta device, five layers, two of which the class makes
# dense where it reads first_k_dense_replace (the constant first layer of GLM-4.7-Flash's lite).
MISSING_LIST_BUILT = {"cohere2_moe": 6_355_456, "exaone_moe": 6_357_056, "glm4_moe_lite": 7_233_056}


def _without_list(name: str) -> dict[str, Any]:
    from bot.measure.families import SMALL_CONFIGS

    config = {k: v for k, v in SMALL_CONFIGS[name].items() if k not in ("mlp_layer_types", "layer_types")}
    return {**config, "num_hidden_layers": 5, "first_k_dense_replace": 2}


@pytest.mark.parametrize("name", sorted(MISSING_LIST_BUILT))
def test_a_missing_mlp_layer_types_is_what_the_config_class_derives(name: str) -> None:
    assert _read(_without_list(name)).parameter_count == MISSING_LIST_BUILT[name]


# The presets of this round: key -> the text model as transformers 5.24 builds it on the meta device
# (the preset's config: tests/test_measure.py builds every preset's), and the vendor's total with
# its rounding unit (the count with the vision tower within half of it).
PRESETS = {"qwen3.5-9b": 8_953_803_264}
PUBLISHED = {"qwen3.5-9b": (9_000_000_000, 10**9)}  # the family reference's "9B dense"


@pytest.mark.parametrize("key", sorted(PRESETS))
def test_a_preset_of_this_round_counts_what_transformers_builds(key: str) -> None:
    from bot.estimate.models import find_preset, presets

    model = presets()[key]
    assert model.parameter_count == PRESETS[key]
    figure, unit = PUBLISHED[key]
    assert model.published_params == figure
    assert abs(model.total_params - figure) < unit / 2
    assert find_preset("qwen3.5 9b") is model
    assert find_preset("qwen3.5 8b") is None


# --- under -m accuracy: the same and more, built live -----------------------------------------------


def _built(model_type: str, fields: dict[str, Any], held: bool = False) -> tuple[int, dict[str, Any]]:
    """The meta build's parameters (with ``held``, and its persistent buffers: its state_dict)."""
    import torch
    import transformers

    config = transformers.AutoConfig.for_model(model_type, **fields)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config)
    count = checkpoint_count(model) if held else sum(int(p.numel()) for p in model.parameters())
    return count, config.to_dict()


def _fields(config: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k != "model_type"}


@pytest.mark.accuracy
@pytest.mark.usefixtures("quiet_transformers")
def test_the_pinned_figures_are_transformers_own() -> None:
    assert _built("deepseek_v4", {}, held=True)[0] == V4_DEFAULT_BUILT
    for name, fields in V4_VARIANTS.items():
        built = _built("deepseek_v4", _fields({**V4_SMALL, **fields}), held=True)[0]
        assert built == V4_VARIANTS_BUILT[name], name
    assert _built("kimi_linear", _fields(KIMI_NESTED))[0] == KIMI_NESTED_BUILT
    for name, built in MISSING_LIST_BUILT.items():
        config = _without_list(name)
        assert _built(str(config["model_type"]), _fields(config))[0] == built, name
    assert _built("hunyuan_v1_moe", {**_fields(HUNYUAN), "moe_topk": [2, 1]})[0] == 230_784


@pytest.mark.accuracy
@pytest.mark.usefixtures("quiet_transformers")
@pytest.mark.parametrize(
    "name", ["cohere2_moe", "mellum", "glm4_moe_lite", "exaone_moe", "deepseek_v32", "kimi_linear"]
)
@pytest.mark.parametrize("listed", [False, True])
def test_mlp_layer_types_or_its_absence_counts_as_built(name: str, listed: bool) -> None:
    """With the list, the list alone decides (first_k_dense_replace is not read then); without it, the
    class's derivation. DeepSeek-V3.2's e_score_correction_bias is a buffer the checkpoints hold, which
    the count keeps (one per expert of each MoE layer)."""
    config = _without_list(name)
    if listed:
        config["mlp_layer_types"] = ["sparse", "dense", "sparse", "sparse", "dense"]
    built, written = _built(str(config["model_type"]), _fields(config))
    written = {**written, "first_k_dense_replace": 2}
    if not listed:
        written.pop("mlp_layer_types", None)
    model = _read(written)
    buffers = model.moe_layers * model.experts if name == "deepseek_v32" else 0
    assert model.parameter_count - buffers == built


def _cache_held(config: dict[str, Any], lengths: tuple[int, ...]) -> int:
    """transformers' cache after forwards of ``lengths`` tokens in turn (a prefill, then more)."""
    import torch
    import transformers

    from bot.measure.cache import cache_bytes as held

    built = transformers.AutoConfig.for_model("deepseek_v4", **_fields(config))
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(built, dtype=torch.bfloat16).eval()
    cache = None
    with torch.no_grad():
        for tokens in lengths:
            ids = torch.randint(0, 1000, (2, tokens))
            cache = model(input_ids=ids, use_cache=True, cache=cache).cache
    return held(cache)


@pytest.mark.accuracy
@pytest.mark.usefixtures("quiet_transformers")
@pytest.mark.parametrize("lengths", [(1,), (2,), (3,), (5,), (16,), (17,), (40,), (7, 1), (30, 3, 1)])
def test_deepseek_v4_cache_is_transformers_own_at_every_length(lengths: tuple[int, ...]) -> None:
    from bot.measure.families import SMALL_CONFIGS

    config = {**SMALL_CONFIGS["deepseek_v4"], "sliding_window": 8, "use_cache": True}
    caches = layer_caches(_read(config), KvDtype.BF16)
    assert cache_bytes(caches, sum(lengths), 2) == _cache_held(config, lengths)
