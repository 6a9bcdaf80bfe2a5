"""Counts from a repo's own tensors, through the fake Hub's safetensors headers: a family no
declaration knows answers with its exact count, a packed checkpoint is unpacked, the header reads
are bounded and kept per commit; and ``vram-bot estimate --model`` answers such a repo."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from bot import hub_lookup
from bot.cli import main
from bot.estimate.core import estimate
from bot.estimate.hub import HubFailure, forget_all, register
from bot.estimate.models import Architecture
from bot.estimate.request import parse_request
from bot.estimate.tensors import CountedModel
from bot.hub_lookup import fetch_architecture
from bot.hub_settings import HubSettings
from bot.present.hub_problems import hub_notes
from bot.present.i18n import DEFAULT_LANGUAGE
from bot.present.phrases import architecture_notes
from bot.present.words import Words
from tests.fake_hub import FakeHub, point_hub_client_at, running_in_thread
from tests.hub_tensors import (
    MAMBA2_PARAMS,
    QWEN3_32B_PARAMS,
    QWEN3_FP8_CONFIG,
    UNDECLARED_CONFIG,
    mamba2_shards,
    qwen3_fp8_tensors,
)

HYBRID_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",  # a declared family whose layout misses this repo's mixers
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
    "vocab_size": 512,
    "tie_word_embeddings": False,
}
MIXER = 256 * 64  # the mixer's in_proj in each layer, which a Llama layout does not have


def _hybrid_tensors() -> dict[str, tuple[str, list[int]]]:
    tensors = {"model.embed_tokens.weight": ("BF16", [512, 64]), "lm_head.weight": ("BF16", [512, 64])}
    for layer in range(2):
        prefix = f"model.layers.{layer}"
        shapes = {
            "self_attn.q_proj": [64, 64],
            "self_attn.k_proj": [32, 64],
            "self_attn.v_proj": [32, 64],
            "self_attn.o_proj": [64, 64],
            "mlp.gate_proj": [128, 64],
            "mlp.up_proj": [128, 64],
            "mlp.down_proj": [64, 128],
            "mixer.in_proj": [256, 64],
            "input_layernorm": [64],
            "post_attention_layernorm": [64],
        }
        tensors.update({f"{prefix}.{name}.weight": ("BF16", shape) for name, shape in shapes.items()})
    tensors["model.norm.weight"] = ("BF16", [64])
    return tensors


def _serve(hub: FakeHub) -> None:
    hub.add("acme/Mamba2-130m", UNDECLARED_CONFIG)
    hub.add_safetensors("acme/Mamba2-130m", mamba2_shards())
    hub.add("acme/Qwen3-32B-FP8", QWEN3_FP8_CONFIG, stored_params=17_000_000_000)
    hub.add_safetensors("acme/Qwen3-32B-FP8", {"model.safetensors": qwen3_fp8_tensors()})
    # A causal LM of a family no declaration knows whose config reads like Llama's: the layout
    # counts it as one, its tensors hold a mixer more a layer.
    hub.add("acme/Hybrid-Tiny", HYBRID_CONFIG)
    hub.add_safetensors("acme/Hybrid-Tiny", {"model.safetensors": _hybrid_tensors()})
    # A multimodal repo of a declared family: its text model in text_config, a vision tower beside.
    hub.add(
        "acme/Mistral3-Tiny",
        # transformers 5.24 ties Mistral 3 by the top-level key (True when absent): this one says no.
        {
            "model_type": "mistral3",
            "tie_word_embeddings": False,
            "text_config": {**HYBRID_CONFIG, "model_type": "mistral"},
        },
    )
    tensors = {
        name.replace("model.", "model.language_model.", 1): entry for name, entry in _hybrid_tensors().items()
    }
    tensors = {name: entry for name, entry in tensors.items() if ".mixer." not in name}
    tensors["model.vision_tower.transformer.layers.0.attention.q_proj.weight"] = ("BF16", [32, 32])
    tensors["model.multi_modal_projector.linear_1.weight"] = ("BF16", [64, 32])
    hub.add_safetensors("acme/Mistral3-Tiny", {"model.safetensors": tensors})
    # A header that claims a terabyte.
    hostile = hub.add("acme/Hostile", UNDECLARED_CONFIG | {"hidden_size": 32})
    hostile.blobs["model.safetensors"] = struct.pack("<Q", 10**12) + b"{}"
    hostile.lfs_sizes["model.safetensors"] = 10**12 + 8
    hostile.files.add("model.safetensors")
    # An index naming more shards than the lookup reads (each a real, tiny shard).
    hub.add("acme/Many-Shards", UNDECLARED_CONFIG | {"hidden_size": 64}, stored_params=1200)
    many = {f"model-{i:05d}-of-00300.safetensors": {f"x.{i}.weight": ("F32", [4])} for i in range(300)}
    hub.add_safetensors("acme/Many-Shards", many)


@pytest_asyncio.fixture(loop_scope="module")
async def hub() -> AsyncIterator[FakeHub]:
    hub = FakeHub()
    await hub.start()
    _serve(hub)
    yield hub
    await hub.stop()


on_the_loop = pytest.mark.asyncio(loop_scope="module")


def _settings(hub: FakeHub, cache: Path) -> HubSettings:
    return HubSettings(endpoint=hub.url, cache_dir=cache, timeout_s=2.0, offline=False)


@on_the_loop
async def test_an_unknown_family_is_counted_exactly_from_its_sharded_tensors(
    hub: FakeHub, tmp_path: Path
) -> None:
    hub_lookup.forget_tensors()  # another test may have read this commit's headers
    hub.requests.clear()
    found = await asyncio.to_thread(fetch_architecture, "acme/Mamba2-130m", _settings(hub, tmp_path))
    assert isinstance(found, CountedModel)  # before: refused, "lacks num_attention_heads, intermediate_size"
    assert found.total_params == MAMBA2_PARAMS
    assert found.tensors.shards == 3
    assert found.tensors.tied_embeddings
    assert found.tensors.part("embeddings") == 50280 * 768
    assert found.hub_revision == hub.repos["acme/mamba2-130m"].sha
    assert hub.range_reads() == 3  # one range read a shard: the headers are under 100 kB
    assert hub.whole_weight_reads == 0
    # The same commit again (a fresh disk cache): the headers are not read twice.
    hub.requests.clear()
    again = await asyncio.to_thread(fetch_architecture, "acme/Mamba2-130m", _settings(hub, tmp_path / "b"))
    assert again == found
    assert hub.range_reads() == 0


@on_the_loop
async def test_the_count_is_kept_on_disk_for_a_restart_and_offline_mode(hub: FakeHub, tmp_path: Path) -> None:
    hub_lookup.forget_tensors()
    online = await asyncio.to_thread(fetch_architecture, "acme/Mamba2-130m", _settings(hub, tmp_path))
    hub_lookup.forget_tensors()  # a restart
    hub.requests.clear()
    offline = HubSettings(endpoint=hub.url, cache_dir=tmp_path, offline=True)
    assert await asyncio.to_thread(fetch_architecture, "acme/Mamba2-130m", offline) == online
    assert hub.requests == []


@on_the_loop
async def test_an_fp8_checkpoint_is_unpacked_to_the_count_of_its_architecture(
    hub: FakeHub, tmp_path: Path
) -> None:
    hub_lookup.forget_tensors()
    hub.requests.clear()
    found = await asyncio.to_thread(fetch_architecture, "acme/Qwen3-32B-FP8", _settings(hub, tmp_path))
    assert isinstance(found, Architecture)
    assert found.tensors is not None
    assert found.total_params == found.parameter_count == QWEN3_32B_PARAMS
    assert found.tensors.packing == "fp8"
    assert found.tensors.stored_elements > QWEN3_32B_PARAMS  # the scales, stored beside the weights
    assert found.hub_stored_params is None  # nothing left to explain: the tensors agree
    assert hub.range_reads() == 2  # a 149 kB header: the first 100 kB, then the rest


@on_the_loop
async def test_a_layout_that_miscounts_a_repo_gives_way_to_its_tensors_and_says_so(
    hub: FakeHub, tmp_path: Path
) -> None:
    hub_lookup.forget_tensors()
    found = await asyncio.to_thread(fetch_architecture, "acme/Hybrid-Tiny", _settings(hub, tmp_path))
    assert isinstance(found, Architecture)
    assert found.total_params == found.parameter_count + 2 * MIXER  # N: the tensors' count
    assert found.params_billion == found.total_params / 1e9
    words = Words(DEFAULT_LANGUAGE)
    notes = " ".join(hub_notes(found, words))
    assert f"its tensors hold {words.count(found.total_params)}" in notes
    assert "pre-quantized" not in notes  # the miss is the layout's, not a packing's


@on_the_loop
async def test_a_multimodal_repo_counts_its_towers_in_n_and_says_the_activations_are_the_text_models(
    hub: FakeHub, tmp_path: Path
) -> None:
    hub_lookup.forget_tensors()
    found = await asyncio.to_thread(fetch_architecture, "acme/Mistral3-Tiny", _settings(hub, tmp_path))
    assert isinstance(found, Architecture)
    assert found.tensors is not None
    assert found.total_params == found.parameter_count + 32 * 32 + 64 * 32  # the layout: text only
    assert found.tensors.part("vision") == 32 * 32
    assert found.tensors.part("projector") == 64 * 32
    notes = architecture_notes(found, Words(DEFAULT_LANGUAGE))
    assert any("its vision encoder included" in note for note in notes)
    assert not any("tensors hold" in note for note in notes)  # the text model agrees with the layout
    # The tower is frozen (its 16-bit weights only); the projector trains with the text model.
    register(found)
    n, tower = found.total_params / 1e9, 32 * 32 / 1e9
    frozen = estimate(parse_request(model="acme/Mistral3-Tiny"))
    assert frozen.model_states_gb == pytest.approx((n - tower) * 16 + tower * 2)
    for optimizer in ("adam", "adam8bit", "sgd"):  # train_vision: the seed's M = N × B for all N
        trained = estimate(parse_request(model="acme/Mistral3-Tiny", optimizer=optimizer, train_vision=True))
        assert trained.model_states_gb == n * trained.bytes_per_param


@on_the_loop
async def test_too_many_shards_are_not_read_and_the_hubs_own_total_counts(
    hub: FakeHub, tmp_path: Path
) -> None:
    hub.requests.clear()
    found = await asyncio.to_thread(fetch_architecture, "acme/Many-Shards", _settings(hub, tmp_path))
    assert hub.range_reads() == 0  # model.safetensors is absent, the index names too many shards
    assert hub_lookup.MAX_SHARDS < 300
    # Not packed, so the Hub's stored total is exact: 300 tensors of 4.
    assert isinstance(found, CountedModel)
    assert found.total_params == 1200
    assert found.tensors.read_from == "hub_total"
    assert "Hub's own total" in " ".join(hub_notes(found, Words(DEFAULT_LANGUAGE)))


@on_the_loop
async def test_a_header_past_its_bound_is_not_read(hub: FakeHub, tmp_path: Path) -> None:
    hub.requests.clear()
    with pytest.raises(HubFailure) as failure:
        await asyncio.to_thread(fetch_architecture, "acme/Hostile", _settings(hub, tmp_path))
    assert failure.value.kind == "undeclared_family"  # as before: no count to answer with
    assert hub.range_reads() == 1  # the first 100 kB, and not the terabyte it claims
    assert hub_lookup.HEADER_MAX_BYTES < 10**12


@pytest.fixture(scope="module")
def threaded_hub() -> Iterator[FakeHub]:
    hub = FakeHub()
    _serve(hub)
    with running_in_thread(hub):
        yield hub
    forget_all()


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_cli_answers_an_unknown_family_with_its_count_and_asks_for_activations(
    threaded_hub: FakeHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    language: str,
) -> None:
    point_hub_client_at(threaded_hub, tmp_path, monkeypatch)
    forget_all()
    assert main(["estimate", "--model", "acme/Mamba2-130m", "--view", "details", "--lang", language]) == 0
    out = capsys.readouterr().out
    assert "/vram model:acme/Mamba2-130m optimizer:adam" in out
    assert ("128,983,488 parameters, counted from its tensors" if language == "en" else "128.983.488") in out
    assert (
        "activations need activations (GB" if language == "en" else "Aktivierungen brauchen activations"
    ) in out
    assert "(acme_ssm)" in out
    assert main(["estimate", "--model", "acme/Mamba2-130m", "--activations", "3"]) == 0
    answer = capsys.readouterr().out
    assert "2.1 GB" in answer  # M = 0.129 B x 16 B = 2.06 GB; V = M + 3
    assert "5.1 GB" in answer
