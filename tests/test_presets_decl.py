"""The presets of issue 20, point 4 whose shape two public sources agree on (bot/data/models.toml's
"decl" block): each total against transformers 5.24's meta-device build of the preset's config.json
and the vendor's published figure. Pure: no torch (the builds' counts are pinned here; tests/test_measure.py
rebuilds every preset's config under -m accuracy).
"""

from __future__ import annotations

import pytest

from bot.estimate.models import find_preset, presets

# key -> what the checkpoint holds as transformers 5.24 builds its config on the meta device: the
# parameters and the persistent buffers (Nemotron-H's e_score_correction_bias, 23 MoE layers x 128;
# Gemma 4's layer_scalar, one a layer). Qwen3.5: the text model; its vision tower is non_text_params.
TRANSFORMERS_COUNT = {
    "nemotron-3-nano-30b": 31_577_937_344 + 23 * 128,
    "qwen3.5-27b": 26_895_998_464,
    "gemma-4-31b": 30_697_345_280 + 60,
    "gemma-4-26b-a4b": 25_233_141_760 + 30,
    "qwen3.5-0.8b": 752_393_024,
    "qwen3.5-2b": 1_881_825_088,
    "qwen3.5-4b": 4_205_751_296,
}
# Qwen's size names round the text model (0.8B: 0.75B; 4B: 4.21B, 4.54B with its tower): these are
# held to the name by the text model, their towers besides (meta-device builds of their vision configs).
NAMED_BY_TEXT = {"qwen3.5-0.8b": 100_592_896, "qwen3.5-2b": 331_416_576, "qwen3.5-4b": 333_514_240}
# key -> (the vendor's figure, the unit it is rounded to: the count is within half of it).
PUBLISHED_TOTAL = {
    "nemotron-3-nano-30b": (31_600_000_000, 10**8),  # NVIDIA: "31.6B total parameters"
    "qwen3.5-27b": (27_000_000_000, 10**9),  # its name, with the vision tower (0.46B)
    "gemma-4-31b": (30_700_000_000, 10**8),  # Google: "30.7B" dense, the vision encoder besides
    "gemma-4-26b-a4b": (25_200_000_000, 10**8),  # Google: "25.2B total, 3.8B active"
    "qwen3.5-0.8b": (800_000_000, 10**8),  # their names
    "qwen3.5-2b": (2_000_000_000, 10**9),
    "qwen3.5-4b": (4_000_000_000, 10**9),
}
PUBLISHED_ACTIVE = {
    "nemotron-3-nano-30b": (3_600_000_000, 10**8),  # "3.6B including embeddings"
    "gemma-4-26b-a4b": (3_800_000_000, 10**8),
}
# What a user types -> the preset it must be (and a loose size that must not become another preset).
NAMES = {
    "Nemotron 3 Nano 30B-A3B": "nemotron-3-nano-30b",
    "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": "nemotron-3-nano-30b",
    "qwen3.5 27b": "qwen3.5-27b",
    "Qwen/Qwen3.5-0.8B": "qwen3.5-0.8b",
    "qwen3.5 4b": "qwen3.5-4b",
    "gemma 4 31b": "gemma-4-31b",
    "google/gemma-4-31B-it": "gemma-4-31b",
    "gemma 4 26b a4b": "gemma-4-26b-a4b",
}


@pytest.mark.parametrize("key", sorted(TRANSFORMERS_COUNT))
def test_a_preset_counts_what_transformers_builds_and_the_vendor_publishes(key: str) -> None:
    model = presets()[key]
    assert model.parameter_count == TRANSFORMERS_COUNT[key]
    figure, unit = PUBLISHED_TOTAL[key]
    assert model.published_params == figure
    if key in NAMED_BY_TEXT:
        assert model.non_text_params == NAMED_BY_TEXT[key]
        assert abs(model.parameter_count - figure) < unit / 2
    else:
        assert abs(model.total_params - figure) < unit / 2
    if key in PUBLISHED_ACTIVE:
        active, active_unit = PUBLISHED_ACTIVE[key]
        assert model.published_active_params == active
        assert abs(model.active_parameter_count - active) < active_unit / 2
    else:
        assert not model.is_moe


@pytest.mark.parametrize("typed", sorted(NAMES))
def test_the_names_people_type_find_these_presets(typed: str) -> None:
    found = find_preset(typed)
    assert found is not None
    assert found.key == NAMES[typed]


def test_a_size_no_preset_has_is_not_answered_by_another() -> None:
    assert find_preset("gemma 4 27b") is None
    assert find_preset("qwen3.5 28b") is None


def test_the_gemma_4_presets_keep_their_global_layers_own_shape() -> None:
    # 10 (31B) and 5 (26B-A4B) full-attention layers of 512-wide K = V heads: 4 and 2 of them.
    big, moe = presets()["gemma-4-31b"], presets()["gemma-4-26b-a4b"]
    assert (big.global_layers, big.global_head_dim, big.global_kv_heads, big.global_k_eq_v) == (
        10,
        512,
        4,
        True,
    )
    assert (moe.global_layers, moe.global_kv_heads, moe.sliding_window_layers) == (5, 2, 25)
    # KV per token and layer kind: sliding 2 x 16 x 256 x 2 B; global 2 x 4 x 512 x 2 B (keys and values
    # apart, as transformers caches them also where K = V).
    from bot.estimate.kv_cache import layer_caches

    per_token = {c.kind: c.bytes_per_token for c in layer_caches(big)}
    assert per_token == {"sliding": 16_384, "full": 8_192}
