"""A Hub repo's config.json counted like the presets, repo IDs, and the request's handling of them.

Pure: no Hub, no Discord. The configs are the real repos' (tests/hub_configs.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, get_args

import pytest
from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils._validators import validate_repo_id
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.estimate.core import estimate
from bot.estimate.families import FAMILIES
from bot.estimate.hub import (
    ConfigProblem,
    FailureKind,
    HubFailure,
    architecture_from_config,
    forget_all,
    is_repo_id,
    register,
)
from bot.estimate.models import presets
from bot.estimate.request import InvalidRequest, parse_request
from bot.present.answer import render_embed
from bot.present.command_line import command_line, parse_command_line
from bot.present.custom_ids import pack, unpack
from bot.present.details import render_details
from bot.present.hub_problems import describe_hub_failure
from bot.present.i18n import Language
from tests.hub_configs import CONFIGS, FAMILY_CONFIGS


@pytest.fixture(autouse=True)
def empty_registry() -> Iterator[None]:
    forget_all()
    yield
    forget_all()


@pytest.mark.parametrize("key", sorted(CONFIGS))
def test_a_repos_config_counts_like_its_preset(key: str) -> None:
    preset = presets()[key]
    found = architecture_from_config(f"someone/{key}", CONFIGS[key])
    assert found.parameter_count == preset.parameter_count
    assert found.active_parameter_count == preset.active_parameter_count
    assert found.lora_target_modules == preset.lora_target_modules
    assert found.moe_layers == preset.moe_layers
    assert (found.sliding_window, found.sliding_window_layers) == (
        preset.sliding_window,
        preset.sliding_window_layers,
    )
    assert found.text_only_of_multimodal == preset.text_only_of_multimodal
    assert (found.source, found.hub_id, found.name) == ("hub", f"someone/{key}", f"someone/{key}")


def test_a_quantized_checkpoints_stored_count_is_shown_not_used() -> None:
    # DeepSeek-V3's FP8 checkpoint stores 684.5B "parameters" (weights, scales and the MTP layer).
    found = architecture_from_config("deepseek-ai/x", CONFIGS["deepseek-v3"], stored_params=684_531_386_000)
    assert found.parameter_count == presets()["deepseek-v3"].parameter_count
    assert found.hub_stored_params == 684_531_386_000
    register(found)
    result = estimate(parse_request(model="deepseek-ai/x"))
    # The answer says what N holds in a few words (a phone's rows), Details in a sentence.
    assert "\nN = 671B unpacked (Hub: 685B).\n" in render_embed(result, Language.EN)["description"]
    details = json.dumps(render_details(result, Language.EN), ensure_ascii=False)
    assert "The Hub stores 685B parameters" in details
    assert "pre-quantized" in details
    close = architecture_from_config("a/b", CONFIGS["qwen3-32b"], stored_params=32_762_123_264 + 1000)
    assert close.hub_stored_params is None  # within 1 %: nothing to explain


def test_a_multimodal_repo_counts_its_text_model_and_says_so() -> None:
    found = architecture_from_config("google/g", CONFIGS["gemma-3-27b"], stored_params=27_432_406_640)
    assert found.text_only_of_multimodal
    assert found.non_text_params == 27_432_406_640 - found.parameter_count
    assert found.hub_stored_params is None
    register(found)
    embed = render_embed(estimate(parse_request(model="google/g")), Language.EN)
    assert "vision encoder and projector too" in embed["description"]
    assert "🧊 tower frozen" in embed["description"]  # the stored rest: the tower, frozen
    # mm: the config alone counts the tower too (SigLIP by its declaration), to the Hub's stored total.
    alone = architecture_from_config("google/i", CONFIGS["gemma-3-27b"])
    assert (alone.total_params, alone.projector_params) == (27_432_406_640, 1152 * 5376 + 1152)
    # Without a vision_config nor a stored count the tower is unknown: N is the text model.
    bare = {k: v for k, v in CONFIGS["gemma-3-27b"].items() if k != "vision_config"}
    unknown = architecture_from_config("google/h", bare)
    assert (unknown.total_params, unknown.tower_params) == (unknown.parameter_count, 0)
    register(unknown)
    embed = render_embed(estimate(parse_request(model="google/h")), Language.EN)
    assert "Only the text model is counted" in embed["description"]
    assert "🧊" not in embed["description"]


@pytest.mark.parametrize(
    ("config", "kind", "fields"),
    [
        (
            {
                "architectures": ["RwkvForCausalLM"],
                "model_type": "rwkv",
                "hidden_size": 768,
                "vocab_size": 50280,
            },
            "undeclared_family",
            ("rwkv",),
        ),
        (
            {**CONFIGS["llama-3.1-8b"], "num_hidden_layers": None},
            "unknown_architecture",
            ("num_hidden_layers",),
        ),
        ({**CONFIGS["llama-3.1-8b"], "hidden_size": 10**12}, "absurd", ("hidden_size",)),
        ({**CONFIGS["llama-3.1-8b"], "num_hidden_layers": -3}, "absurd", ("num_hidden_layers",)),
        ({**CONFIGS["llama-3.1-8b"], "num_key_value_heads": 7}, "absurd", ("num_key_value_heads",)),
        ({**CONFIGS["llama-3.1-8b"], "vocab_size": "many"}, "absurd", ("vocab_size",)),
        ([1, 2, 3], "malformed", ()),
        (
            {**CONFIGS["llama-3.1-8b"], "architectures": ["BertForMaskedLM"], "model_type": "bert"},
            "not_a_decoder",
            ("bert",),
        ),
    ],
    ids=["rwkv", "no-layers", "huge", "negative", "heads", "text", "list", "bert"],
)
def test_configs_the_counter_cannot_use_say_why(config: Any, kind: str, fields: tuple[str, ...]) -> None:
    with pytest.raises(ConfigProblem) as caught:
        architecture_from_config("a/b", config)
    assert (caught.value.kind, caught.value.fields) == (kind, fields)


@pytest.mark.parametrize(
    "text", ["Qwen/Qwen3-32B", "meta-llama/Llama-3.1-8B", "a/b", "x_y/z.1-2", "_a/b_", "a/" + "b" * 96]
)
def test_repo_ids_of_the_hubs_form(text: str) -> None:
    assert is_repo_id(text)


@pytest.mark.parametrize(
    "text",
    [
        "../etc/passwd",
        "a/../b",
        "https://huggingface.co/a/b",
        "a/b c",
        " a/b",
        "a/b\n",
        "a/b/c",
        "/b",
        "a/",
        "a/" + "b" * 97,
        "Qwen/a--b",
        "a/b.git",
        "a/b-",
        "a./b",
        "a/café",
        "-a/b",
        "a/b.",
        "a//b",
        "a/b?x=1",
    ],
)
def test_anything_else_is_no_repo_id(text: str) -> None:
    assert not is_repo_id(text)
    with pytest.raises(InvalidRequest) as caught:
        parse_request(model=text)
    assert [p.code for p in caught.value.problems] in (["bad_repo_id"], ["out_of_range"], ["unknown_model"])


def test_repo_ids_are_what_huggingface_hub_accepts_in_the_owner_name_form() -> None:
    # Every string of up to five characters over the characters the rules are about, and the lengths
    # around the limit: the two checks agree on each.
    alphabet = "a_-./é"
    longest = [""]
    texts: list[str] = []
    for _ in range(5):
        longest = [text + c for text in longest for c in alphabet]
        texts += longest
    texts += [f"{'o' * owner}/{'n' * name}" for owner in (95, 96, 97) for name in (1, 96, 97)]
    for text in texts:
        try:
            validate_repo_id(text)
            accepted = text.count("/") == 1
        except HFValidationError:
            accepted = False
        assert is_repo_id(text) == accepted, text


@pytest.mark.parametrize("model_type", [["llama"], {"name": "llama"}, "llama`<@&1>`", "x" * 41, 7], ids=repr)
def test_a_model_type_that_is_no_plain_name_is_never_echoed(model_type: object) -> None:
    causal = {**CONFIGS["llama-3.1-8b"], "architectures": ["LlamaForCausalLM"], "model_type": model_type}
    encoder = {**causal, "architectures": ["BertModel"]}
    cases: tuple[tuple[dict[str, Any], FailureKind, str], ...] = (
        (causal, "undeclared_family", "The `config.json` of `acme/Odd` names no `model_type`"),
        (encoder, "not_a_decoder", "`acme/Odd` is not a decoder-only language model the counter knows"),
    )
    for config, kind, opening in cases:
        with pytest.raises(ConfigProblem) as caught:
            architecture_from_config("acme/Odd", config)
        assert (caught.value.kind, caught.value.fields) == (kind, ("model_type",))
        for language in Language:
            sentence = describe_hub_failure(HubFailure(kind, "acme/Odd", caught.value.fields), language)
            assert "`model_type`" in sentence
            assert not any(echo in sentence for echo in ("llama`", "{", "['", "x" * 41))
        assert describe_hub_failure(HubFailure(kind, "acme/Odd", caught.value.fields)).startswith(opening)


def test_a_preset_by_its_hub_id_needs_no_lookup() -> None:
    assert parse_request(model="Qwen/Qwen3-32B").model == presets()["qwen3-32b"]


def test_a_repo_not_looked_up_asks_the_runtime_to() -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_request(model="acme/Unknown-7B")
    assert [(p.code, p.given) for p in caught.value.problems] == [("unresolved_repo", "acme/Unknown-7B")]


def test_a_looked_up_repo_travels_by_its_id() -> None:
    register(architecture_from_config("acme/Tiny-8B", CONFIGS["llama-3.1-8b"], revision="a" * 40))
    request = parse_request(model="acme/Tiny-8B", optimizer="sgd")
    hash(request)  # frozen and hashable, as every request
    assert request.given()["model"] == "acme/Tiny-8B"
    assert "model:acme/Tiny-8B" in command_line(request)
    assert unpack(pack(request)) == request
    assert parse_command_line(command_line(request)) == request
    embed = render_embed(estimate(request), Language.DE)
    assert "Commit aaaaaaa" in embed["description"]


@pytest.mark.parametrize("language", list(Language))
@pytest.mark.parametrize("kind", get_args(FailureKind))
def test_every_hub_failure_has_its_sentence(kind: FailureKind, language: Language) -> None:
    sentence = describe_hub_failure(HubFailure(kind, "acme/Thing", ("hidden_size",)), language)
    assert "`acme/Thing`" in sentence
    if kind == "gated":
        assert "HF_TOKEN" in sentence
    if kind in ("unknown_architecture", "absurd"):
        assert "`hidden_size`" in sentence
        assert "`params`" in sentence


def test_a_repo_that_cannot_be_had_offers_the_closest_presets() -> None:
    sentence = describe_hub_failure(HubFailure("not_found", "someone/Qwen3-32B-Instruct"), Language.EN)
    assert sentence.startswith("There is no Hugging Face repo `someone/Qwen3-32B-Instruct`")
    assert "Presets with a similar name: Qwen3 32B" in sentence
    gated = describe_hub_failure(HubFailure("gated", "someone/Qwen3-32B-Instruct"), Language.EN)
    assert "Presets" not in gated  # the repo exists: the way in is a token, not another model


def test_a_causal_lm_of_an_undeclared_family_is_refused_and_says_why() -> None:
    # Counting it as Llama-shaped would be a silent miscount (Cohere 2 MoE, LFM2, ERNIE 4.5 MoE).
    config = {**CONFIGS["llama-3.1-8b"], "architectures": ["AcmeForCausalLM"], "model_type": "acme_lm"}
    with pytest.raises(ConfigProblem) as caught:
        architecture_from_config("acme/Lm", config)
    failure = HubFailure(caught.value.kind, "acme/Lm", caught.value.fields)
    assert describe_hub_failure(failure, Language.EN).startswith(
        "The counter has no declaration for the family of `acme/Lm` (`acme_lm`)"
    )
    assert "`params`" in describe_hub_failure(failure, Language.DE)


@pytest.mark.parametrize("model_type", sorted(FAMILY_CONFIGS))
def test_a_declared_familys_config_counts_as_transformers_builds_it(model_type: str) -> None:
    # Were ERNIE 4.5 MoE 0.15x (every expert dropped), Apertus 1.27x (a plain MLP counted as gated),
    # Mistral 3 1.03x (the top-level tying ignored), Cohere 2 MoE refused (num_shared_experts: 0).
    config, built = FAMILY_CONFIGS[model_type]
    assert architecture_from_config("acme/m", config).parameter_count == built


@pytest.mark.parametrize(
    "config",
    [
        # RWKV's recurrent time mixing and xLSTM's matrix memory are not declared.
        {"model_type": "rwkv", "hidden_size": 2048, "num_hidden_layers": 16},
        {"model_type": "xlstm", "hidden_size": 2048, "intermediate_size": [8192, 16384]},
    ],
    ids=["rwkv", "xlstm"],
)
def test_a_family_without_a_declaration_is_refused_not_guessed(config: dict[str, Any]) -> None:
    with pytest.raises(ConfigProblem) as caught:
        architecture_from_config("acme/m", {**config, "architectures": ["SomeForCausalLM"]})
    assert (caught.value.kind, caught.value.fields) == ("undeclared_family", (config["model_type"],))


# Every field some declaration reads, given anything JSON can hold: the reader answers with an
# architecture or a ConfigProblem, never another exception.
_FIELDS = sorted(
    {
        name
        for family in FAMILIES
        for name in (*family.defaults, *(n for ns in family.names.values() for n in ns))
    }
    | {"hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim"}
    | {"intermediate_size", "vocab_size", "tie_word_embeddings", "moe_intermediate_size", "mlp_only_layers"}
    | {"mlp_layer_types", "num_experts", "num_local_experts", "n_routed_experts", "n_shared_experts"}
    | {"first_k_dense_replace", "kv_lora_rank", "q_lora_rank", "layer_types", "sliding_window"}
)
_JSON = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 5000),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=3),
    st.lists(st.one_of(st.integers(-2, 70), st.sampled_from(["dense", "sparse"])), max_size=70),
)


@pytest.mark.fuzz  # a few seconds: with the fuzzing, not the default run
@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from([f.model_type for f in FAMILIES]),
    st.dictionaries(st.sampled_from(_FIELDS), _JSON, max_size=12),
)
def test_any_values_in_a_declared_familys_fields_get_an_answer_or_a_reason(
    model_type: str, fields: dict[str, Any]
) -> None:
    base = {**CONFIGS["llama-3.1-8b"], "num_hidden_layers": 4, "model_type": model_type}
    answer: object
    try:
        answer = architecture_from_config("acme/m", {**base, **fields}).parameter_count > 0
    except ConfigProblem as problem:
        answer = problem.kind in ("absurd", "unknown_architecture", "undeclared_family")
    assert answer is True
