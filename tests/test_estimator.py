"""The estimator's figures against the seed calculator's formulas and worked example."""

from __future__ import annotations

import math

import pytest

from bot.estimate.core import Estimate, estimate, gpus_needed_sharded, smallest_card
from bot.estimate.optimizers import Optimizer
from bot.estimate.request import InvalidRequest, parse_request
from bot.present.answer import title
from bot.present.problems import describe_problem, given_value
from bot.present.words import Words


def run(**options: object) -> Estimate:
    return estimate(parse_request(**options))


def test_worked_example_7b_adam_is_112_gb() -> None:
    result = run(params=7)
    assert result.bytes_per_param == 16
    assert result.model_states_gb == 112
    assert result.total_gb == 112
    assert not result.single_gpu.fits


def test_worked_example_with_20_gb_activations_is_132_gb() -> None:
    result = run(params=7, optimizer="adam", activations=20)
    assert result.model_states_gb == 112
    assert result.activations_gb == 20
    assert result.total_gb == 132
    assert result.single_gpu.overflow_gb == 52


@pytest.mark.parametrize(
    ("optimizer", "bytes_per_param", "total_7b"),
    [("adam", 16, 112), ("adam8bit", 12, 84), ("sgd", 8, 56)],
)
def test_every_optimizer(optimizer: str, bytes_per_param: float, total_7b: float) -> None:
    result = run(params=7, optimizer=optimizer)
    assert result.bytes_per_param == bytes_per_param
    assert Optimizer(optimizer).bytes_per_param == bytes_per_param
    assert result.total_gb == total_7b
    assert sum(result.part_gb(part) for part in result.parts) == pytest.approx(total_7b)
    assert [p.bytes_per_param for p in result.parts][:2] == [2, 2]  # 16-bit weights and gradients


def test_adam_parts_are_the_seed_breakdown() -> None:
    parts = run(params=1).parts
    assert [(p.key, p.bytes_per_param) for p in parts] == [
        ("part.weights16", 2),
        ("part.gradients16", 2),
        ("part.master32", 4),
        ("part.adam_momentum32", 4),
        ("part.adam_variance32", 4),
    ]
    assert [p.kind for p in parts] == ["weights", "gradients", "optimizer", "optimizer", "optimizer"]


def test_custom_bytes_per_param_overrides_the_optimizer_with_one_line() -> None:
    result = run(params=7, optimizer="sgd", bytes_per_param=10)
    assert result.bytes_per_param == 10
    assert len(result.parts) == 1
    assert result.part_gb(result.parts[0]) == 70
    assert result.total_gb == 70
    assert result.custom_bytes
    assert title(result) == "✅ 7B · Custom 10 B/param: 70.0 GB fits one H100 80 GB"


@pytest.mark.parametrize(
    ("options", "fits", "headroom"),
    [
        ({"params": 5}, True, 0.0),  # exactly 80 GB fits
        ({"params": 4, "activations": 16}, True, 0.0),
        ({"params": 5, "activations": 0.001}, False, -0.001),
        ({"params": 1, "optimizer": "sgd"}, True, 72.0),
    ],
)
def test_the_80_gb_boundary(options: dict[str, object], fits: bool, headroom: float) -> None:
    verdict = run(**options).single_gpu
    assert verdict.capacity_gb == 80
    assert verdict.fits is fits
    assert verdict.headroom_gb == pytest.approx(headroom)


@pytest.mark.parametrize(
    ("model_states", "activations", "gpus"),
    [
        (112, 0, 2),  # 56 per GPU
        (112, 20, 2),  # 56 + 20 = 76
        (160, 0, 2),  # exactly 80 each
        (160.0000001, 0, 3),
        (112, 60, 6),  # 112 / 6 + 60 = 78.7; 5 would be 82.4
        (70, 10, 1),
        (1, 80, None),  # activations alone fill the card
        (1, 95, None),
    ],
)
def test_sharded_gpu_count(model_states: float, activations: float, gpus: int | None) -> None:
    assert gpus_needed_sharded(model_states, activations, 80) == gpus
    if gpus is not None:
        assert model_states / gpus + activations <= 80 + 1e-9
        if gpus > 1:
            assert model_states / (gpus - 1) + activations > 80


def test_sharded_count_is_in_the_verdict() -> None:
    # Mixed precision runs on DeepSpeed, whose ZeRO-3 holds 18 B/param sharded (16-bit weights, fp32
    # master and moments, fp32 gradient partition): 1260 GB / 80 → 16 cards, not the paper's 14.
    assert run(params=70).single_gpu.sharded_gpus == 16
    # amp (FSDP) follows the paper's rule: 1120 GB / 80.
    assert run(params=70, precision="amp").single_gpu.sharded_gpus == 14
    assert run(params=7, activations=80).single_gpu.sharded_gpus is None


@pytest.mark.parametrize(
    "options",
    [
        {"params": 70},
        {"params": 7, "activations": 60},
        {"params": 13, "optimizer": "adam8bit", "activations": 35.5},
        {"params": 405, "optimizer": "sgd"},
        {"model": "llama-3.1-70b", "batch_size": 1, "seq_len": 2048},
        {"model": "deepseek-v3"},
        {"params": 70, "precision": "bf16", "activations": 10},
        {"params": 30, "bytes_per_param": 10, "activations": 5},
    ],
)
def test_the_verdicts_card_count_is_the_one_the_zero3_row_fits(options: dict[str, object]) -> None:
    """ "n × H100 with ZeRO-3" in the title: asking with gpus:n shows ZeRO-3 fitting, with n − 1 not."""
    needed = run(**options).single_gpu.sharded_gpus
    assert needed is not None
    assert needed > 1

    def zero3_fits(gpus: int) -> bool:
        cluster = run(**options, gpus=gpus).cluster
        assert cluster is not None
        return next(row for row in cluster.judged if row.strategy == "ZeRO-3").fits

    assert zero3_fits(needed)
    assert needed == 2 or not zero3_fits(needed - 1)


def test_lora_and_qlora_hint_for_7b_adam() -> None:
    result = run(params=7, activations=20)
    lora, qlora = result.lora, result.qlora
    assert lora.base_gb == 14  # frozen 16-bit base, 2 × N
    assert lora.adapter_params_billion == pytest.approx(0.07)  # at most 1 % of N
    assert lora.adapters_gb == pytest.approx(0.07 * 16)
    assert lora.total_gb == pytest.approx(14 + 1.12 + 20)
    assert lora.smallest_card_gb == 48
    assert qlora.base_bytes_per_param == 0.52
    assert qlora.base_gb == pytest.approx(3.64)
    assert qlora.total_gb == pytest.approx(3.64 + 1.12 + 20)
    assert qlora.smallest_card_gb == 48


def test_lora_hint_uses_the_optimizer_bytes_and_picks_the_smallest_card() -> None:
    lora = run(params=7, optimizer="sgd").lora
    assert lora.adapters_gb == pytest.approx(0.07 * 8)
    assert lora.smallest_card_gb == 24
    assert run(params=70).lora.smallest_card_gb is None  # 140 GB of frozen base
    assert smallest_card(24) == 24
    assert smallest_card(24.01) == 48
    assert smallest_card(80.01) is None


def test_defaults() -> None:
    request = parse_request(params=13)
    assert request.optimizer is Optimizer.ADAM
    assert request.activations is None
    assert estimate(request).activations_gb == 0
    assert request.bytes_per_param is None
    assert (request.gpu, request.gpus, request.lora_rank) == (None, 1, 16)


@pytest.mark.parametrize(
    ("options", "option", "allowed"),
    [
        ({"params": 0}, "params", "greater than 0 and at most 100,000"),
        ({"params": -7}, "params", "greater than 0 and at most 100,000"),
        ({"params": 100_001}, "params", "at most 100,000"),
        ({"params": math.nan}, "params", "billions of parameters"),
        ({"params": math.inf}, "params", "billions of parameters"),
        ({"params": "seven"}, "params", "billions of parameters"),
        ({"params": True}, "params", "billions of parameters"),
        ({"params": 7, "activations": -1}, "activations", "at least 0 and at most 1,000,000 (GB)"),
        ({"params": 7, "activations": 1_000_001}, "activations", "at most 1,000,000"),
        ({"params": 7, "bytes_per_param": 0}, "bytes_per_param", "greater than 0 and at most 64"),
        ({"params": 7, "bytes_per_param": 65}, "bytes_per_param", "at most 64"),
        (
            {"params": 7, "optimizer": "rmsprop"},
            "optimizer",
            "one of adam, adam8bit, sgd, paged_adam8bit, adafactor, lion, muon",
        ),
    ],
)
def test_invalid_input_names_option_value_and_range(
    options: dict[str, object], option: str, allowed: str
) -> None:
    message = problems_of(options)
    assert f"`{option}`" in message
    assert given_value(options[option], Words()) in message
    assert allowed in message


def problems_of(options: dict[str, object]) -> str:
    """Every problem with ``options``, worded in English as the bot says them."""
    with pytest.raises(InvalidRequest) as caught:
        parse_request(**options)
    return "\n".join(describe_problem(p) for p in caught.value.problems)


def test_missing_params_and_unknown_options_are_named() -> None:
    assert "give `params` (billions of parameters) or a `model` preset" in problems_of({})
    assert "`flavour` is not an option" in problems_of({"params": 7, "flavour": "vanilla"})


def test_several_problems_are_all_reported() -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_request(params=-1, activations=-1)
    assert len(caught.value.problems) == 2


@pytest.mark.parametrize(
    ("optimizer", "precision", "parts"),
    [
        # The seed's rules stay exactly as they were.
        ("adam", "mixed", [2, 2, 4, 4, 4]),
        ("adam8bit", "mixed", [2, 2, 4, 4]),
        ("sgd", "mixed", [2, 2, 4]),
        # fp32 weights and gradients under autocast; AdamW's moments follow the parameters (fp32).
        ("adam", "amp", [4, 4, 4, 4]),
        ("adam8bit", "amp", [4, 4, 2.03125]),  # bitsandbytes: 1 + 1 B + two fp32 absmax per 256
        ("sgd", "amp", [4, 4, 4]),
        # Pure bf16 (torchtune): every state in bf16.
        ("adam", "bf16", [2, 2, 2, 2]),
        ("adam8bit", "bf16", [2, 2, 2.03125]),
        ("sgd", "bf16", [2, 2, 2]),
    ],
)
def test_each_training_setup_stores_what_pytorch_allocates(
    optimizer: str, precision: str, parts: list[float]
) -> None:
    result = run(params=8, optimizer=optimizer, precision=precision)
    assert [p.bytes_per_param for p in result.parts] == parts
    assert result.model_states_gb == pytest.approx(8 * sum(parts))


def test_torchtune_s_bf16_adamw_on_an_8b_model_is_64_gb_not_128() -> None:
    assert run(params=8, precision="bf16").model_states_gb == 64.0
    assert run(params=8).model_states_gb == 128.0  # the seed's mixed precision


def test_the_cards_teams_rent_now_are_choices_with_their_data_sheet_memory() -> None:
    from bot.estimate.hardware import Gpu

    rented = {"rtx5090": 32, "rtxpro6000": 96, "b300": 288, "l4": 24, "a10g": 24}
    assert {key: Gpu(key).memory_gb for key in rented} == rented
    assert len(Gpu) <= 25  # Discord's choices per option
    assert run(params=7, optimizer="sgd", gpu="rtxpro6000").verdict.fits  # 56 GB on a 96 GB card
    assert not run(params=7, optimizer="sgd", gpu="rtx5090").verdict.fits
