"""decl2 (issue 20): DeepSeek-V4 Flash's preset and the routers' buffers DeepSeek-V4's checkpoints hold.

Pure: no torch. The figures are transformers 5.24's meta-device builds (state_dict: parameters and
persistent buffers), pinned here; tests/test_measure.py rebuilds the preset's config under -m accuracy.
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.estimate.hub import ConfigProblem, architecture_from_config
from bot.estimate.models import find_preset, presets
from bot.measure.configs import config_for
from tests.test_frontier_v4 import V4_SMALL

# DeepSeek-V4 Flash's config.json: 284,332,230,231 parameters and 2,337,280 buffer values (3 hash
# tables of 129,280 × 6, 40 correction biases of 256).
FLASH_BUILT = 284_334_567_511
TRANSFORMERS_COUNT = {"deepseek-v4-flash": FLASH_BUILT}


def test_deepseek_v4_flash_is_its_checkpoint_and_deepseeks_284b() -> None:
    model = presets()["deepseek-v4-flash"]
    assert model.parameter_count == FLASH_BUILT
    assert model.published_params == 284_000_000_000  # DeepSeek: "284B total"
    assert abs(model.total_params - model.published_params) < 0.5e9
    assert model.published_active_params == 13_000_000_000  # "13B activated"
    assert round(model.active_parameter_count / 1e9, 1) == 13.8  # with both embedding matrices
    assert (model.hash_routed_layers, model.compressed_sparse_layers, model.heavily_compressed_layers) == (
        3,
        21,
        20,
    )
    for typed in ("deepseek v4 flash", "deepseek-ai/DeepSeek-V4-Flash-Base", "DeepSeek-V4-Flash"):
        found = find_preset(typed)
        assert found is not None, typed
        assert found.key == "deepseek-v4-flash", typed


def test_the_presets_config_reads_back_as_the_preset() -> None:
    """vram-bot measure builds config_for(preset): read as a Hub config, it is the preset again."""
    model = presets()["deepseek-v4-flash"]
    config = config_for(model)
    assert config["layer_types"][:4] == [
        "sliding_attention",
        "sliding_attention",
        "compressed_sparse_attention",
        "heavily_compressed_attention",
    ]
    assert config["mlp_layer_types"].count("hash_moe") == 3
    back = architecture_from_config("deepseek-ai/DeepSeek-V4-Flash", config)
    assert back.parameter_count == model.parameter_count
    assert back.compressed_kinds == model.compressed_kinds


SMALL = V4_SMALL  # tests/test_frontier_v4.py's small DeepSeek-V4 of five layers
# The hash-routed layers as DeepseekV4Config decides them (the list, else num_hash_layers, else 3):
# each meta build's state_dict (transformers 5.24); a hash table is 1,000 × 2, a correction bias 4.
HASHED_BUILT: dict[str, tuple[dict[str, Any], int]] = {
    "listed": ({"mlp_layer_types": ["moe", "hash_moe", "moe", "hash_moe", "moe", "moe"]}, 7_716_341),
    "legacy num_hash_layers": ({"num_hash_layers": 1}, 7_714_345),
    "default": ({}, 7_718_337),
}


@pytest.mark.parametrize("name", sorted(HASHED_BUILT))
def test_deepseek_v4_counts_its_hash_tables_and_correction_biases(name: str) -> None:
    fields, built = HASHED_BUILT[name]
    assert architecture_from_config("decl2/check", {**SMALL, **fields}).parameter_count == built


def test_a_hash_list_deepseek_v4_has_no_word_for_is_absurd() -> None:
    with pytest.raises(ConfigProblem) as caught:
        architecture_from_config("decl2/check", {**SMALL, "mlp_layer_types": ["moe", "dense"] * 3})
    assert caught.value.kind == "absurd"
