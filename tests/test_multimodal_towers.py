"""A multimodal repo counted whole from its config.json (issue 20, point 3): the text model by its
family, the vision tower and projector by their declaration (bot.estimate.families' mm block,
bot.estimate.towers). The tower is frozen by default and trained with ``train_vision``. Every
declared wrapper is held to transformers' meta-device build by tests/test_family_coverage.py
(``-m accuracy``); here the published configs against the presets' recorded builds, and one repo
through the fake Hub."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from bot.estimate.core import estimate
from bot.estimate.hub import ConfigProblem, architecture_from_config, forget_all, register
from bot.estimate.models import Architecture, presets
from bot.estimate.request import parse_request
from bot.hub_lookup import fetch_architecture
from bot.hub_settings import HubSettings
from bot.present.answer import render_embed
from bot.present.i18n import Language
from tests.fake_hub import FakeHub

# Qwen/Qwen2.5-VL-7B-Instruct's config.json as published: the text model's fields at the top level
# (transformers 4.x), the vision tower in vision_config.
QWEN2_5_VL_7B: dict[str, Any] = {
    "architectures": ["Qwen2_5_VLForConditionalGeneration"],
    "model_type": "qwen2_5_vl",
    "hidden_size": 3584,
    "intermediate_size": 18944,
    "num_attention_heads": 28,
    "num_hidden_layers": 28,
    "num_key_value_heads": 4,
    "max_position_embeddings": 128000,
    "max_window_layers": 28,
    "sliding_window": 32768,
    "use_sliding_window": False,
    "tie_word_embeddings": False,
    "vocab_size": 152064,
    "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
    "vision_config": {
        "depth": 32,
        "hidden_act": "silu",
        "hidden_size": 1280,
        "intermediate_size": 3420,
        "num_heads": 16,
        "in_chans": 3,
        "out_hidden_size": 3584,
        "patch_size": 14,
        "spatial_merge_size": 2,
        "spatial_patch_size": 14,
        "window_size": 112,
        "fullatt_block_indexes": [7, 15, 23, 31],
        "tokens_per_second": 2,
        "temporal_patch_size": 2,
    },
}
# Qwen/Qwen3-VL-8B-Instruct's: text_config and vision_config (its deepstack mergers).
QWEN3_VL_8B: dict[str, Any] = {
    "architectures": ["Qwen3VLForConditionalGeneration"],
    "model_type": "qwen3_vl",
    "tie_word_embeddings": False,
    "text_config": {
        "model_type": "qwen3_vl_text",
        "hidden_size": 4096,
        "head_dim": 128,
        "intermediate_size": 12288,
        "num_attention_heads": 32,
        "num_hidden_layers": 36,
        "num_key_value_heads": 8,
        "vocab_size": 151936,
        "tie_word_embeddings": False,
    },
    "vision_config": {
        "deepstack_visual_indexes": [8, 16, 24],
        "depth": 27,
        "hidden_size": 1152,
        "in_channels": 3,
        "intermediate_size": 4304,
        "model_type": "qwen3_vl",
        "num_heads": 16,
        "num_position_embeddings": 2304,
        "out_hidden_size": 4096,
        "patch_size": 16,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
    },
}


@pytest.mark.parametrize(("config", "key"), [(QWEN2_5_VL_7B, "qwen2.5-vl-7b"), (QWEN3_VL_8B, "qwen3-vl-8b")])
def test_a_published_config_counts_text_tower_and_projector_as_transformers_builds_them(
    config: dict[str, Any], key: str
) -> None:
    # The presets' parts are transformers 5.24's meta-device builds of these configs (models.toml).
    preset = presets()[key]
    found = architecture_from_config("qwen/vl", config)
    assert found.parameter_count == preset.parameter_count  # the text model
    parts = (found.non_text_params, found.projector_params)
    assert parts == (preset.non_text_params, preset.projector_params)
    assert (found.total_params, found.tower_params) == (preset.total_params, preset.tower_params)


def test_a_flat_config_ties_by_either_level_and_an_unusable_tower_field_leaves_the_stored_count() -> None:
    tied = architecture_from_config("qwen/3b", {**QWEN2_5_VL_7B, "tie_word_embeddings": True})
    assert tied.tied_embeddings
    untied = architecture_from_config("qwen/7b", QWEN2_5_VL_7B)
    assert untied.parameter_count - tied.parameter_count == 152064 * 3584  # the LM head
    broken = {**QWEN2_5_VL_7B, "vision_config": {**QWEN2_5_VL_7B["vision_config"], "depth": "32"}}
    found = architecture_from_config("qwen/x", broken, stored_params=8_292_166_656)
    assert (found.non_text_params, found.projector_params) == (676_550_144, 0)  # the stored rest, no parts
    huge = {"depth": 1 << 20, "hidden_size": 1 << 20}  # 10^19 parameters: no model's
    absurd = {**QWEN2_5_VL_7B, "vision_config": {**QWEN2_5_VL_7B["vision_config"], **huge}}
    with pytest.raises(ConfigProblem) as refused:
        architecture_from_config("qwen/y", absurd)
    assert (refused.value.kind, refused.value.fields) == ("absurd", ("vision_config",))


def test_a_hub_repo_answers_from_its_declaration_with_the_tower_frozen(tmp_path: Path) -> None:
    async def lookup() -> Architecture | object:
        hub = FakeHub()
        await hub.start()
        hub.add("acme/Qwen2.5-VL-7B", QWEN2_5_VL_7B)  # no stored count, no safetensors: the config alone
        try:
            settings = HubSettings(
                endpoint=hub.url, cache_dir=tmp_path, token=None, timeout_s=5.0, offline=False
            )
            return await asyncio.to_thread(fetch_architecture, "acme/Qwen2.5-VL-7B", settings)
        finally:
            await hub.stop()

    found = asyncio.run(lookup())
    assert isinstance(found, Architecture)
    try:
        register(found)
        n, tower = 8_292_166_656, 631_975_680
        assert (found.total_params, found.tower_params) == (n, tower)
        frozen = estimate(parse_request(model="acme/Qwen2.5-VL-7B"))  # Adam, mixed precision: 16 B
        assert frozen.model_states_gb == pytest.approx((n - tower) / 1e9 * 16 + tower / 1e9 * 2)
        trained = estimate(parse_request(model="acme/Qwen2.5-VL-7B", train_vision=True))
        assert trained.model_states_gb == pytest.approx(n / 1e9 * 16)
        text = render_embed(frozen, Language.EN)["description"]
        assert "🧊 tower frozen" in text
        assert "vision encoder and projector too" in text
    finally:
        forget_all()
