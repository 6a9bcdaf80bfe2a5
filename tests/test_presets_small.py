"""The small presets (issue 20) and how a name reaches a preset: a size typed is the preset's size, and
a vendor's variant of a preset's repo (``-Instruct``, ``-Base``, ``-it``…) answers from the preset.

Each shape below is the repo's published ``config.json`` (the fields the count reads); the accuracy
test builds it with transformers 5.24 on the ``meta`` device, which gave the counts in SMALL.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.estimate.core import estimate
from bot.estimate.hub import architecture_from_config
from bot.estimate.models import (
    _SIZE,
    Architecture,
    _sizes,
    _squash,
    close_matches,
    find_preset,
    preset_variant,
    presets,
    search_presets,
)
from bot.estimate.request import parse_request
from bot.present.answer import render_embed
from bot.present.command_line import command_line
from bot.present.custom_ids import pack, unpack
from bot.present.i18n import Language
from bot.present.interactions import is_a_presets_own
from tests.checkpoint_count import checkpoint_count

# key -> the repo's config.json (https://huggingface.co/<hub_id>/blob/main/config.json), the fields
# that set the parameter count and the context length.
PUBLISHED_CONFIGS: dict[str, dict[str, Any]] = {
    "llama-3.2-1b": {
        "model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 8192, "vocab_size": 128256,
        "tie_word_embeddings": True, "max_position_embeddings": 131072,
    },
    "llama-3.2-3b": {
        "model_type": "llama", "hidden_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 24,
        "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 8192, "vocab_size": 128256,
        "tie_word_embeddings": True, "max_position_embeddings": 131072,
    },
    "qwen2.5-0.5b": {
        "model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24, "num_attention_heads": 14,
        "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936,
        "tie_word_embeddings": True, "max_position_embeddings": 32768,
    },
    "qwen2.5-1.5b": {
        "model_type": "qwen2", "hidden_size": 1536, "num_hidden_layers": 28, "num_attention_heads": 12,
        "num_key_value_heads": 2, "intermediate_size": 8960, "vocab_size": 151936,
        "tie_word_embeddings": True, "max_position_embeddings": 32768,
    },
    "qwen2.5-3b": {
        "model_type": "qwen2", "hidden_size": 2048, "num_hidden_layers": 36, "num_attention_heads": 16,
        "num_key_value_heads": 2, "intermediate_size": 11008, "vocab_size": 151936,
        "tie_word_embeddings": True, "max_position_embeddings": 32768,
    },
    "qwen3-0.6b": {
        "model_type": "qwen3", "hidden_size": 1024, "num_hidden_layers": 28, "num_attention_heads": 16,
        "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 3072, "vocab_size": 151936,
        "tie_word_embeddings": True, "max_position_embeddings": 40960,
    },
    "qwen3-1.7b": {
        "model_type": "qwen3", "hidden_size": 2048, "num_hidden_layers": 28, "num_attention_heads": 16,
        "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 6144, "vocab_size": 151936,
        "tie_word_embeddings": True, "max_position_embeddings": 40960,
    },
    "qwen3-4b": {
        "model_type": "qwen3", "hidden_size": 2560, "num_hidden_layers": 36, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 9728, "vocab_size": 151936,
        "tie_word_embeddings": True, "max_position_embeddings": 40960,
    },
    "gemma-3-270m": {
        "model_type": "gemma3_text", "hidden_size": 640, "num_hidden_layers": 18, "num_attention_heads": 4,
        "num_key_value_heads": 1, "head_dim": 256, "intermediate_size": 2048, "vocab_size": 262144,
        "tie_word_embeddings": True, "max_position_embeddings": 32768, "sliding_window": 512,
    },
    "gemma-3-1b": {
        "model_type": "gemma3_text", "hidden_size": 1152, "num_hidden_layers": 26, "num_attention_heads": 4,
        "num_key_value_heads": 1, "head_dim": 256, "intermediate_size": 6912, "vocab_size": 262144,
        "tie_word_embeddings": True, "max_position_embeddings": 32768, "sliding_window": 512,
    },
    "smollm3-3b": {
        "model_type": "smollm3", "hidden_size": 2048, "num_hidden_layers": 36, "num_attention_heads": 16,
        "num_key_value_heads": 4, "intermediate_size": 11008, "vocab_size": 128256,
        "tie_word_embeddings": True, "max_position_embeddings": 65536,
    },
    # Issue 20's OLMo 2/3 and MiniMax-M2 (the repos' config.json; bot/data/models.toml names them).
    "olmo-2-7b": {
        "model_type": "olmo2", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
        "num_key_value_heads": 32, "intermediate_size": 11008, "vocab_size": 100352,
        "tie_word_embeddings": False, "max_position_embeddings": 4096,
    },
    "olmo-2-13b": {
        "model_type": "olmo2", "hidden_size": 5120, "num_hidden_layers": 40, "num_attention_heads": 40,
        "num_key_value_heads": 40, "intermediate_size": 13824, "vocab_size": 100352,
        "tie_word_embeddings": False, "max_position_embeddings": 4096,
    },
    "olmo-2-32b": {
        "model_type": "olmo2", "hidden_size": 5120, "num_hidden_layers": 64, "num_attention_heads": 40,
        "num_key_value_heads": 8, "intermediate_size": 27648, "vocab_size": 100352,
        "tie_word_embeddings": False, "max_position_embeddings": 4096,
    },
    "olmo-3-7b": {
        "model_type": "olmo3", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
        "num_key_value_heads": 32, "intermediate_size": 11008, "vocab_size": 100278,
        "tie_word_embeddings": False, "max_position_embeddings": 65536, "sliding_window": 4096,
    },
    "olmo-3-32b": {
        "model_type": "olmo3", "hidden_size": 5120, "num_hidden_layers": 64, "num_attention_heads": 40,
        "num_key_value_heads": 8, "intermediate_size": 27648, "vocab_size": 100278,
        "tie_word_embeddings": False, "max_position_embeddings": 65536, "sliding_window": 4096,
    },
    "minimax-m2": {
        "model_type": "minimax_m2", "hidden_size": 3072, "num_hidden_layers": 62, "num_attention_heads": 48,
        "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 1536, "vocab_size": 200064,
        "tie_word_embeddings": False, "max_position_embeddings": 196608, "num_local_experts": 256,
        "num_experts_per_tok": 8,
    },
}  # fmt: skip

TRUNCATED, ROUNDED = "truncated", "rounded"  # how the vendor printed the figure, to its last digit

# key -> (parameters as transformers 5.24 holds them, built from the config above on the meta
# device; the published total, how it was printed, the unit of its last digit). Sources: the model
# cards of each hub_id (Llama 3.2: Meta's "1.23B", "3.21B"; Qwen: "Number of Parameters"), Google's
# Gemma 3 270M announcement ("270M") and the Gemma 3 report (1B), the SmolLM3-3B Hub page ("3.08B").
SMALL: dict[str, tuple[int, int, str, int]] = {
    "llama-3.2-1b": (1_235_814_400, 1_230_000_000, TRUNCATED, 10**7),
    "llama-3.2-3b": (3_212_749_824, 3_210_000_000, TRUNCATED, 10**7),
    "qwen2.5-0.5b": (494_032_768, 490_000_000, ROUNDED, 10**7),
    "qwen2.5-1.5b": (1_543_714_304, 1_540_000_000, ROUNDED, 10**7),
    "qwen2.5-3b": (3_085_938_688, 3_090_000_000, ROUNDED, 10**7),
    "qwen3-0.6b": (596_049_920, 600_000_000, ROUNDED, 10**8),
    "qwen3-1.7b": (1_720_574_976, 1_700_000_000, ROUNDED, 10**8),
    "qwen3-4b": (4_022_468_096, 4_000_000_000, ROUNDED, 10**8),
    "gemma-3-270m": (268_098_176, 270_000_000, ROUNDED, 10**7),
    "gemma-3-1b": (999_885_952, 1_000_000_000, ROUNDED, 10**8),
    "smollm3-3b": (3_075_098_624, 3_080_000_000, ROUNDED, 10**7),
    # Ai2's model cards (OLMo 2: "7.30B", "13.7B", "32.2B"; OLMo 3: "7B", "32B"); MiniMax's "230
    # billion total parameters" (the Hub page: "229B").
    "olmo-2-7b": (7_298_617_344, 7_300_000_000, ROUNDED, 10**7),
    "olmo-2-13b": (13_716_198_400, 13_700_000_000, ROUNDED, 10**8),
    "olmo-2-32b": (32_234_279_936, 32_200_000_000, ROUNDED, 10**8),
    "olmo-3-7b": (7_298_011_136, 7_000_000_000, ROUNDED, 10**9),
    "olmo-3-32b": (32_233_522_176, 32_000_000_000, ROUNDED, 10**9),
    "minimax-m2": (228_689_764_864, 230_000_000_000, ROUNDED, 10**10),  # with its correction-bias buffer
}

# The non-embedding figures the vendors print beside the total (Qwen's model cards; the Gemma 3
# report's table 1: 1B "698M"; Google's 270M announcement: "100 million for the transformer
# blocks"): the count without the embedding matrix, which pins the blocks apart from the vocabulary.
NON_EMBEDDING: dict[str, tuple[int, int]] = {
    "qwen2.5-0.5b": (360_000_000, 10**7),
    "qwen2.5-1.5b": (1_310_000_000, 10**7),
    "qwen2.5-3b": (2_770_000_000, 10**7),
    "qwen3-0.6b": (440_000_000, 10**7),
    "qwen3-1.7b": (1_400_000_000, 10**8),
    "qwen3-4b": (3_600_000_000, 10**8),
    "gemma-3-270m": (100_000_000, 10**7),
    "gemma-3-1b": (698_000_000, 10**6),
}


def _printed(count: int, figure: int, how: str, unit: int) -> bool:
    if how == TRUNCATED:
        return 0 <= count - figure < unit
    return abs(count - figure) <= unit // 2


@pytest.mark.parametrize("key", sorted(SMALL))
def test_each_small_preset_is_its_published_config_and_total(key: str) -> None:
    model = presets()[key]
    config = PUBLISHED_CONFIGS[key]
    counted, figure, how, unit = SMALL[key]
    assert model.family == config["model_type"]
    shape = (
        model.hidden_size, model.layers, model.attention_heads, model.kv_heads, model.attention_head_dim,
        model.intermediate_size, model.vocab_size, model.tied_embeddings, model.context_length,
    )  # fmt: skip
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    published = (
        hidden, config["num_hidden_layers"], heads, config["num_key_value_heads"],
        config.get("head_dim", hidden // heads), config["intermediate_size"], config["vocab_size"],
        config["tie_word_embeddings"], config["max_position_embeddings"],
    )  # fmt: skip
    assert shape == published
    assert model.parameter_count == counted
    assert model.published_params == figure
    assert _printed(model.parameter_count, figure, how, unit)
    if key in NON_EMBEDDING:
        blocks, block_unit = NON_EMBEDDING[key]
        assert _printed(
            model.parameter_count - model.vocab_size * model.hidden_size, blocks, ROUNDED, block_unit
        )
    # The Hub path counts the same config.json to the same total (a variant's fine-tune on the Hub).
    assert architecture_from_config(model.hub_id or key, config).parameter_count == counted


@pytest.mark.accuracy
@pytest.mark.parametrize("key", sorted(PUBLISHED_CONFIGS))
def test_transformers_builds_each_published_config_with_the_presets_count(key: str) -> None:
    import torch
    import transformers

    fields = dict(PUBLISHED_CONFIGS[key])
    config = transformers.AutoConfig.for_model(str(fields.pop("model_type")), **fields)
    with torch.device("meta"):  # shapes only: no memory, no weights
        model = transformers.AutoModelForCausalLM.from_config(config)
    assert checkpoint_count(model) == presets()[key].parameter_count == SMALL[key][0]


# key -> the repo's config.json (text_config and the vision_config fields that differ from the
# transformers defaults, which are the published ones otherwise), the text model's count as the
# meta-device build holds it, and the whole repo's (text + vision tower + merger), which is the Hub's
# printed total ("8.29B params", "8.77B params").
MULTIMODAL: dict[str, tuple[dict[str, Any], int, int]] = {
    "qwen2.5-vl-7b": (
        {
            "model_type": "qwen2_5_vl", "tie_word_embeddings": False,
            "text_config": {
                "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28,
                "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064,
                "tie_word_embeddings": False,
            },
            "vision_config": {
                "depth": 32, "hidden_size": 1280, "intermediate_size": 3420, "out_hidden_size": 3584,
            },
        },
        7_615_616_512,
        8_292_166_656,
    ),
    "qwen3-vl-8b": (
        {
            "model_type": "qwen3_vl", "tie_word_embeddings": False,
            "text_config": {
                "hidden_size": 4096, "num_hidden_layers": 36, "num_attention_heads": 32,
                "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288, "vocab_size": 151936,
                "tie_word_embeddings": False,
            },
            "vision_config": {"depth": 27, "hidden_size": 1152, "out_hidden_size": 4096},
        },
        8_190_735_360,
        8_767_123_696,
    ),
    "qwen3-vl-30b-a3b": (
        {
            "model_type": "qwen3_vl_moe", "tie_word_embeddings": False,
            "text_config": {
                "hidden_size": 2048, "num_hidden_layers": 48, "num_attention_heads": 32,
                "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 6144,
                "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8,
                "vocab_size": 151936, "tie_word_embeddings": False, "max_position_embeddings": 262144,
            },
            "vision_config": {"depth": 27, "hidden_size": 1152, "out_hidden_size": 2048},
        },
        30_532_122_624,
        31_070_754_032,
    ),
}  # fmt: skip


@pytest.mark.parametrize("key", sorted(MULTIMODAL))
def test_a_vl_preset_is_its_text_model_and_the_tower_makes_the_published_total(key: str) -> None:
    model = presets()[key]
    config, text, whole = MULTIMODAL[key]
    fields = config["text_config"]
    assert (model.hidden_size, model.layers, model.intermediate_size, model.vocab_size) == (
        fields["hidden_size"], fields["num_hidden_layers"], fields["intermediate_size"], fields["vocab_size"],
    )  # fmt: skip
    assert model.text_only_of_multimodal
    assert model.parameter_count == text
    assert model.parameter_count + model.non_text_params == whole
    # The Hub prints three significant digits ("8.29B", "31.1B").
    assert _printed(whole, model.published_params, ROUNDED, 10 ** (len(str(model.published_params)) - 3))


@pytest.mark.accuracy
@pytest.mark.parametrize("key", sorted(MULTIMODAL))
def test_transformers_builds_each_vl_repo_with_the_text_count_and_the_published_total(key: str) -> None:
    import torch
    import transformers

    fields = dict(MULTIMODAL[key][0])
    config = transformers.AutoConfig.for_model(str(fields.pop("model_type")), **fields)
    with torch.device("meta"):
        model = transformers.AutoModelForImageTextToText.from_config(config)
    total = sum(int(p.numel()) for p in model.parameters())
    vision = sum(int(p.numel()) for name, p in model.named_parameters() if ".visual." in f".{name}")
    assert (total - vision, total) == MULTIMODAL[key][1:]
    assert total - vision == presets()[key].parameter_count
    # The mergers (the projector, trained) and the rest of the tower (frozen unless train_vision).
    merger = sum(int(p.numel()) for name, p in model.named_parameters() if "merger" in name)
    assert (merger, vision - merger) == (presets()[key].projector_params, presets()[key].tower_params)


# --- a size typed is the preset's size ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "key"),
    [
        ("qwen3 4b", "qwen3-4b"),  # was Qwen3 14B
        ("qwen2.5 3b", "qwen2.5-3b"),  # was Qwen2.5 32B
        ("llama 1b", "llama-3.2-1b"),  # was Llama 3.1 8B
        ("Qwen3 4 B", "qwen3-4b"),
        ("qwen3-0.6b", "qwen3-0.6b"),
        ("gemma 270m", "gemma-3-270m"),
        ("gemma 3 0.27b", "gemma-3-270m"),
        ("qwen3 a3b", "qwen3-30b-a3b"),
        ("deepseek v3 671b", "deepseek-v3"),  # no size in its name: its total counts
        ("llama 4 scout 109b", "llama-4-scout"),  # "17B" in its name is the active count
        ("smollm3", "smollm3-3b"),
    ],
)
def test_a_loose_name_with_a_size_finds_that_size(typed: str, key: str) -> None:
    assert search_presets(typed)[0].key == key


@pytest.mark.parametrize("typed", ["gemma 2b", "qwen3 3b", "mixtral 7b", "gemma e3b", "qwen2.5 15b"])
def test_a_size_no_preset_has_finds_none_and_the_refusal_names_the_closest(
    typed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert search_presets(typed) == []
    assert find_preset(typed) is None
    assert main(["estimate", "--model", typed]) == 2  # the CLI took the first loose hit before
    err = capsys.readouterr().err
    assert "is not allowed: give one of the presets, e.g." in err
    assert close_matches(typed)[0] in err


def _size_text(prefix: str, value: int) -> str:
    return prefix + (f"{value / 1e9:g}b" if value >= 10**9 else f"{value / 1e6:g}m")


def test_no_name_carrying_a_size_resolves_to_a_preset_of_another_size() -> None:
    # Every preset's name with each size they carry swapped for every other size a preset
    # carries: whatever answers (an exact name, the first suggestion) carries the typed size, in a
    # name or as its total ("llama 4 maverick 405b" is Maverick, 401.6B).
    every_size = {
        size for model in presets().values() for name in (model.name, model.key) for size in _sizes(name)
    }
    tried = 0
    for model in presets().values():
        name = model.name.lower()  # its key writes the same sizes
        for match in _SIZE.finditer(name):
            for size in every_size - _sizes(name):
                typed = name[: match.start()] + _size_text(*size) + name[match.end() :]
                tried += 1
                for found in [find_preset(typed), *search_presets(typed, limit=1)]:
                    if found is None:
                        continue
                    sizes = _sizes(" ".join((found.name, found.key, *found.aliases)))
                    total = found.parameter_count + found.non_text_params
                    assert size in sizes or abs(size[1] - total) <= 0.03 * total, (typed, found.key)
    assert tried > 1000


# --- a preset's own variants answer from the preset ------------------------------------------------


@pytest.mark.parametrize(
    ("repo", "key"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"),
        ("Qwen/Qwen3-8B-Base", "qwen3-8b"),
        ("qwen/qwen3-4b-instruct-2507", "qwen3-4b"),
        ("google/gemma-3-1b-it", "gemma-3-1b"),
        ("meta-llama/Llama-2-7b-chat-hf", "llama-2-7b"),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"),
        ("HuggingFaceTB/SmolLM3-3B-Base", "smollm3-3b"),
    ],
)
def test_a_variant_of_a_presets_repo_is_the_preset_and_says_so(repo: str, key: str) -> None:
    found = find_preset(repo)
    assert found is not None
    assert found.key == key
    assert preset_variant(found) == repo
    assert search_presets(repo)[0] == found  # autocomplete offers it first, by the repo's ID
    assert not is_a_presets_own(repo)  # the Hub's suggestion of it stays in autocomplete
    request = parse_request(model=repo)
    assert request.given()["model"] == repo  # controls and the command line carry the repo
    pressed = unpack(pack(request)).model  # a control's custom_id keeps the variant
    assert isinstance(pressed, Architecture)
    assert preset_variant(pressed) == repo
    english = render_embed(estimate(request), Language.EN)["description"]
    german = render_embed(estimate(request), Language.DE)["description"]
    name = presets()[key].name
    assert f"\nCounted as the preset {name}: same architecture" in english  # (and a -2507 its context)
    assert f"\nAls Preset {name} gerechnet: gleiche Architektur" in german
    assert command_line(request).startswith(f"/vram model:{repo} ")


@pytest.mark.parametrize(
    "repo",
    [
        "mistralai/Mistral-7B-Instruct-v0.2",  # another version: another rope and window
        "Qwen/Qwen2.5-Coder-7B-Instruct",  # another model under a similar name
        "someone/Llama-3.1-8B-Instruct",  # someone else's fine-tune
        "Qwen/Qwen2.5-7B-Instruct-AWQ",  # a quantized checkpoint: the Hub says what it stores
        "meta-llama/Llama-3.1-8B-Instruct-extra",
    ],
)
def test_other_repos_are_not_variants(repo: str) -> None:
    assert find_preset(repo) is None


def test_a_presets_own_repo_stays_silent_and_a_variant_is_answered_offline() -> None:
    own = find_preset("qwen/qwen3-32b")
    assert own is presets()["qwen3-32b"]
    assert preset_variant(own) is None
    assert is_a_presets_own("Qwen/Qwen3-32B")
    # HF_ENDPOINT is a closed port in the tests: a Hub lookup would fail.
    assert main(["estimate", "--model", "Qwen/Qwen2.5-7B-Instruct"]) == 0


def test_small_presets_keep_keys_names_and_choices_within_discords_limits() -> None:
    for key in SMALL:
        model = presets()[key]
        assert find_preset(model.name) is model
        assert find_preset(_squash(model.key)) is model
        assert len(f"{model.name} — {model.parameter_count:,} parameters") <= 100


def test_the_readme_lists_every_preset() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    start = readme.index("The presets (`model`): ")
    listed = " ".join(readme[start : readme.index("Typing", start)].split())
    for model in presets().values():
        assert re.split(r"[\s-]", model.name)[0] in listed, model.name  # the family: Qwen2.5, Gemma…
        for size in _SIZE.finditer(model.name.lower()):  # and every size its name writes: 0.6B, 270M
            assert model.name[size.start() : size.end()] in listed, model.name


@pytest.mark.parametrize(
    ("repo", "key"),
    [
        ("Qwen/Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b"),
        ("Qwen/Qwen3-235B-A22B-Thinking-2507", "qwen3-235b-a22b"),
        ("Qwen/Qwen3-4B-Instruct-2507", "qwen3-4b"),
    ],
)
def test_a_qwen3_2507_release_answers_offline_with_its_longer_context(repo: str, key: str) -> None:
    # Before, the -2507 releases took the preset's 40,960 and warned at any seq_len above it.
    found = find_preset(repo)
    assert found is not None
    assert (found.key, found.hub_id, found.context_length) == (key, repo, 262_144)
    assert presets()[key].context_length == 40_960
    long = estimate(parse_request(model=repo, seq_len=100_000))
    assert long.beyond_context is None
    assert "262,144-token context" in render_embed(long)["description"]
    assert estimate(parse_request(model=key, seq_len=100_000)).beyond_context == 40_960
