"""MPT, Persimmon, JetMoE and Zamba2 (decl2; issue 20, point 2): counts only, each config's count equal to
transformers 5.24's meta-device build (its parameters and persistent buffers), and what a declaration
does not model refused by name. Needs torch and transformers (under -m accuracy); the pinned figures
below hold the reader without them.
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.estimate.hub import ConfigProblem, architecture_from_config
from tests.checkpoint_count import checkpoint_count

_SMALL = {"vocab_size": 500, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4}
_MPT = {"vocab_size": 500, "d_model": 64, "n_layers": 2, "n_heads": 4}
_JETMOE = {**_SMALL, "num_key_value_heads": 2, "kv_channels": 16, "intermediate_size": 100}
_ZAMBA2 = {**_SMALL, "num_mem_blocks": 2, "adapter_rank": 8, "n_mamba_heads": 4, "mamba_d_state": 16}
_ZAMBA2_KINDS = ["linear_attention", "hybrid", "hybrid", "linear_attention", "hybrid"]
# case -> (model_type, config fields, the meta build's count).
BUILT: dict[str, tuple[str, dict[str, Any], int]] = {
    "mpt default (MPT-1B's widths)": ("mpt", {}, 1_311_213_568),
    "mpt untied": ("mpt", {**_MPT, "tie_word_embeddings": False}, 162_624),
    "persimmon default (Persimmon-8B)": ("persimmon", {}, 9_397_175_296),
    "persimmon without qk_layernorm, tied": (
        "persimmon",
        {**_SMALL, "intermediate_size": 100, "qk_layernorm": False, "tie_word_embeddings": True},
        91_848,
    ),
    # Zamba2: its shared blocks counted once where tied (transformers ties them only with tied
    # embeddings), each hybrid layer's own where not, with the adapters each block holds.
    "zamba2 default (Zamba2-2.7B)": ("zamba2", {}, 2_481_848_336),
    "zamba2 tied, 2 blocks over 3 hybrid layers, attention adapters": (
        "zamba2",
        {
            **_ZAMBA2,
            "num_hidden_layers": 5,
            "layers_block_type": _ZAMBA2_KINDS,
            "use_shared_attention_adapter": True,
        },
        429_404,
    ),
    "zamba2 untied, 2 blocks, attention adapters": (
        "zamba2",
        {
            **_ZAMBA2,
            "num_hidden_layers": 5,
            "layers_block_type": _ZAMBA2_KINDS,
            "use_shared_attention_adapter": True,
            "tie_word_embeddings": False,
        },
        589_596,
    ),
    "zamba2 K/V heads, biases, intermediate_size": (
        "zamba2",
        {
            **_ZAMBA2,
            "num_key_value_heads": 2,
            "intermediate_size": 100,
            "num_hidden_layers": 3,
            "layers_block_type": ["hybrid", "linear_attention", "hybrid"],
            "num_mem_blocks": 1,
            "add_bias_linear": True,
            "use_conv_bias": False,
        },
        189_816,
    ),
    "jetmoe default (JetMoE-8B)": ("jetmoe", {}, 4_293_888_000),
    "jetmoe untied, 4 experts, top-1": (
        "jetmoe",
        {**_JETMOE, "num_local_experts": 4, "num_experts_per_tok": 1, "tie_word_embeddings": False},
        260_160,
    ),
}


def _config(model_type: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The config.json transformers writes for these fields (AutoConfig's to_dict)."""
    import transformers

    return dict(transformers.AutoConfig.for_model(model_type, **fields).to_dict())


# The reader alone, on the config.json each class writes (its defaults written out), pinned.
WRITTEN: dict[str, dict[str, Any]] = {
    "mpt": {"model_type": "mpt", "d_model": 2048, "n_heads": 16, "n_layers": 24, "vocab_size": 50368},
    "persimmon": {
        "model_type": "persimmon",
        "hidden_size": 4096,
        "num_hidden_layers": 36,
        "num_attention_heads": 64,
        "intermediate_size": 16384,
        "vocab_size": 262144,
    },
    # JetMoE-8B as its config.json gives it (num_attention_heads left out: kv heads × top-k).
    "jetmoe": {
        "model_type": "jetmoe",
        "hidden_size": 2048,
        "num_hidden_layers": 24,
        "num_key_value_heads": 16,
        "kv_channels": 128,
        "intermediate_size": 5632,
        "num_local_experts": 8,
        "num_experts_per_tok": 2,
        "vocab_size": 32000,
    },
}
WRITTEN["zamba2"] = {
    "model_type": "zamba2",
    "hidden_size": 2560,
    "num_attention_heads": 32,
    "vocab_size": 32000,
}
WRITTEN_BUILT = {
    "mpt": 1_311_213_568,
    "persimmon": 9_397_175_296,
    "jetmoe": 8_522_237_952,
    "zamba2": 2_481_848_336,
}


@pytest.mark.parametrize("name", sorted(WRITTEN))
def test_the_defaults_count_as_built(name: str) -> None:
    assert architecture_from_config("decl2/check", WRITTEN[name]).parameter_count == WRITTEN_BUILT[name]


def test_zamba2s_layer_list_is_the_model() -> None:
    """Without layers_block_type, Zamba2Config's own 54-layer list is built: another depth is refused."""
    with pytest.raises(ConfigProblem) as refused:
        architecture_from_config("decl2/check", {**WRITTEN["zamba2"], "num_hidden_layers": 12})
    assert refused.value.kind == "absurd"


def test_zamba2s_hybrid_layers_cache_their_shared_attentions_keys_and_values() -> None:
    """transformers' cache after a bf16 forward of the small config (tests/test_hybrid_cache.py):
    112,128 B a sequence (the Mamba-2 states) and 4,096 B a token (2 hybrid layers × K and V × 8
    heads of 2h / 8 = 64 × 2 B)."""
    from bot.estimate.kv_cache import KvDtype, cache_bytes, layer_caches
    from bot.measure.families import SMALL_CONFIGS

    model = architecture_from_config("decl2/check", SMALL_CONFIGS["zamba2"])
    caches = layer_caches(model, KvDtype.BF16)
    per_token = sum(cache.layers * cache.bytes_per_token for cache in caches)
    assert (model.state_bytes_per_sequence(2), per_token) == (112_128, 4_096)
    assert cache_bytes(caches, 9) - cache_bytes(caches, 5) == 4 * 4_096


def test_what_the_declarations_do_not_model_is_refused_by_name() -> None:
    for fields, named in (({"no_bias": False}, "no_bias"), ({"expansion_ratio": 8}, "expansion_ratio")):
        with pytest.raises(ConfigProblem, match=named) as refused:
            architecture_from_config("decl2/check", {**WRITTEN["mpt"], **fields})
        assert refused.value.kind == "undeclared_family"


@pytest.mark.accuracy
@pytest.mark.usefixtures("quiet_transformers")
@pytest.mark.parametrize("case", sorted(BUILT))
def test_each_config_counts_what_transformers_builds(case: str) -> None:
    import torch
    import transformers

    model_type, fields, pinned = BUILT[case]
    config = transformers.AutoConfig.for_model(model_type, **fields)
    with torch.device("meta"):
        meta = transformers.AutoModelForCausalLM.from_config(config)
    held = checkpoint_count(meta)
    assert held == pinned, case
    assert architecture_from_config("decl2/check", _config(model_type, fields)).parameter_count == held, case


@pytest.mark.accuracy
@pytest.mark.usefixtures("quiet_transformers")
@pytest.mark.parametrize("name", sorted(WRITTEN))
def test_the_pinned_written_configs_are_transformers_own(name: str) -> None:
    import torch
    import transformers

    fields = {k: v for k, v in WRITTEN[name].items() if k != "model_type"}
    config = transformers.AutoConfig.for_model(name, **fields)
    with torch.device("meta"):
        meta = transformers.AutoModelForCausalLM.from_config(config)
    assert sum(p.numel() for p in meta.parameters()) == WRITTEN_BUILT[name]
