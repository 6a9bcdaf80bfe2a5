"""A multimodal model's vision (and audio) tower: counted in N, frozen by default (its weights only, no
gradients, no optimizer state), trained too with ``train_vision``; text-only models keep the seed's
M = N × B exactly. The Hub path (a repo's tensors) is in tests/test_hub_tensors.py."""

from __future__ import annotations

import dataclasses
import json

import pytest

from bot.cli import main
from bot.estimate.core import estimate
from bot.estimate.models import presets
from bot.estimate.optimizers import Optimizer, Precision, bytes_per_param_for, parts_for
from bot.estimate.request import option, parse_request
from bot.estimate.sharding import per_gpu_gb
from bot.estimate.tensors import CountedModel, TensorCount
from bot.present.answer import render_embed
from bot.present.command_line import command_line, parse_command_line
from bot.present.custom_ids import pack, unpack
from bot.present.details import render_details
from bot.present.i18n import Language

# Qwen2.5-VL 7B as transformers 5.24 builds it on the meta device: text model, vision tower (frozen),
# merger (the projector, trained with the text model); together the Hub page's 8.29B.
QWEN_VL_TEXT, QWEN_VL_TOWER, QWEN_VL_MERGER = 7_615_616_512, 631_975_680, 44_574_464


def _weight_bytes(optimizer: Optimizer, precision: Precision) -> float:
    return sum(part.bytes_per_param for part in parts_for(optimizer, precision) if part.kind == "weights")


def test_a_preset_counts_its_tower_frozen_and_train_vision_trains_it() -> None:
    model = presets()["qwen2.5-vl-7b"]
    n = QWEN_VL_TEXT + QWEN_VL_TOWER + QWEN_VL_MERGER
    assert model.total_params == n
    assert model.tower_params == QWEN_VL_TOWER
    for optimizer in Optimizer:
        for precision in Precision:
            options = {"model": "qwen2.5-vl-7b", "optimizer": optimizer.value, "precision": precision.value}
            frozen = estimate(parse_request(**options))
            # B on the card: the table's, but for the paged moments (off the card) and Muon (its AdamW
            # share is the model's).
            b = frozen.bytes_per_param
            if optimizer not in (Optimizer.PAGED_ADAM8BIT, Optimizer.MUON):
                assert b == bytes_per_param_for(optimizer, precision)
            weights = _weight_bytes(optimizer, precision)  # 2 B in mixed and bf16, 4 under amp
            trained = (n - QWEN_VL_TOWER) / 1e9
            assert frozen.model_states_gb == pytest.approx(trained * b + QWEN_VL_TOWER / 1e9 * weights)
            assert frozen.frozen is not None
            assert frozen.frozen.bytes_per_param == weights
            # train_vision: the seed's rule for every parameter.
            assert estimate(parse_request(**options, train_vision=True)).model_states_gb == n / 1e9 * b
    # Adam in mixed precision: 7.66 B × 16 + 0.632 B × 2 = 123.8 GB, against 132.7 GB all trained.
    assert estimate(parse_request(model="qwen2.5-vl-7b")).model_states_gb == pytest.approx(123.8, abs=0.05)


def test_llama_4_scout_is_its_published_total_and_shards_its_frozen_tower_as_weights() -> None:
    scout = presets()["llama-4-scout"]
    assert scout.total_params == 108_641_793_536  # the repo's safetensors total, vision included
    tower = scout.tower_params / 1e9
    assert scout.tower_params == 850_960_896  # without the 4096 -> 5120 projector
    found = estimate(parse_request(model="llama-4-scout", gpus=8, precision="amp"))
    n, trained = scout.params_billion, scout.params_billion - tower
    assert found.model_states_gb == pytest.approx(trained * 16 + tower * 4)  # fp32 weights under amp
    assert found.cluster is not None
    zero3 = next(row for row in found.cluster.rows if row.strategy == "ZeRO-3")
    # The tower's fp32 weights are sharded with the rest; gradients and moments are the trained part's.
    assert zero3.gb == pytest.approx(per_gpu_gb("ZeRO-3", n * 4, trained * 4, trained * 8, 8))


def test_a_text_model_is_unchanged_and_the_seed_example_exact() -> None:
    seed = estimate(parse_request(params=7, activations=20))
    assert (seed.model_states_gb, seed.total_gb, seed.frozen) == (112, 132, None)
    for key, model in presets().items():
        if model.text_only_of_multimodal:
            continue
        found = estimate(parse_request(model=key, gpus=8))
        assert found.frozen is None, key
        assert found.params_billion == model.parameter_count / 1e9, key
        assert found.model_states_gb == found.params_billion * 16, key
        # train_vision changes nothing but the request.
        with_option = estimate(parse_request(model=key, gpus=8, train_vision=True))
        assert dataclasses.replace(with_option, request=found.request) == found, key
    # params replaces the model's count: no tower to freeze.
    assert estimate(parse_request(params=8, model="qwen2.5-vl-7b")).model_states_gb == 128


def test_an_undeclared_family_freezes_its_tensors_towers() -> None:
    tensors = TensorCount(
        total=10_000_000_000,
        parts=(
            ("layers", 8_000_000_000),
            ("vision", 1_500_000_000),
            ("audio", 400_000_000),
            ("projector", 10**8),
        ),
        stored_elements=10_000_000_000,
    )
    model = CountedModel(name="acme/Omni", hub_id="acme/Omni", tensors=tensors)
    frozen = estimate(parse_request(model=model))
    assert frozen.model_states_gb == pytest.approx(8.1 * 16 + 1.9 * 2)
    assert estimate(parse_request(model=model, train_vision=True)).model_states_gb == 10 * 16
    assert "towers frozen; train_vision trains them" in str(render_embed(frozen)["description"]).replace(
        "`", ""
    )


def test_the_option_round_trips_through_custom_ids_and_the_command_line() -> None:
    assert option("train_vision").cli_flag == "--train-vision"
    request = parse_request(model="gemma-3-4b", train_vision=True)
    assert command_line(request) == "/vram model:gemma-3-4b optimizer:adam train_vision:True"
    assert parse_command_line(command_line(request)) == request
    assert "v=1" in pack(request).split(";") or "v=True" in pack(request).split(";")
    assert unpack(pack(request)) == request
    assert unpack(pack(parse_request(model="gemma-3-4b"))).train_vision is False


@pytest.mark.parametrize("language", list(Language))
def test_the_answer_says_which(language: Language) -> None:
    frozen = estimate(parse_request(model="qwen2.5-vl-7b"))
    trained = estimate(parse_request(model="qwen2.5-vl-7b", train_vision=True))
    glance, glance_trained = (str(render_embed(e, language)["description"]) for e in (frozen, trained))
    assert "🧊" in glance
    assert "train_vision" in glance
    assert "🧊" not in glance_trained
    assert "🔥" in glance_trained
    m = (
        "M = 7.66 × 16 + 0.632 × 2 = 123.8 GB"
        if language is Language.EN
        else "M = 7,66 × 16 + 0,632 × 2 = 123,8 GB"
    )
    assert m in glance
    details = json.dumps(render_details(frozen, language), ensure_ascii=False)
    assert "632" in details
    assert "train_vision" in details
    assert "🧊" not in str(render_embed(estimate(parse_request(model="qwen3-8b")), language)["description"])


def test_the_figures_give_the_frozen_part(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "--model", "qwen2.5-vl-7b", "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)
    frozen = found["frozen"]
    assert frozen["params_billion"] == QWEN_VL_TOWER / 1e9
    assert frozen["bytes_per_param"] == 2
    parts = sum(part["gb"] for part in found["parts"])
    assert found["model_states_gb"] == pytest.approx(parts + frozen["gb"])
    assert main(["estimate", "--model", "qwen2.5-vl-7b", "--train-vision", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["frozen"] is None
