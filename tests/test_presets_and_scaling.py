"""Presets, cards, ZeRO stages, LoRA by rank and activation estimates, each against its source."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from bot.estimate.activations import estimate_activations, layer_bytes
from bot.estimate.core import estimate
from bot.estimate.hardware import Gpu
from bot.estimate.models import Architecture, close_matches, find_preset, presets, search_presets
from bot.estimate.request import InvalidRequest, parse_request
from bot.estimate.saved_activations import AttentionImpl, Precision
from bot.estimate.setup import Setup
from bot.estimate.sharding import STRATEGIES, card_share, per_gpu_gb
from bot.estimate.step_peak import OptimizerKind, step_peak
from bot.present.answer import render_embed
from bot.present.details import render_details
from bot.present.problems import describe_problem

# Published totals (the safetensors parameter counts on each model's Hugging Face page).
PUBLISHED = {
    "llama-3.1-8b": 8_030_261_248,
    "llama-3.1-70b": 70_553_706_496,
    "llama-3.1-405b": 405_853_388_800,
    "llama-2-7b": 6_738_415_616,
    "llama-2-13b": 13_015_864_320,
    "llama-2-70b": 68_976_648_192,
    "mistral-7b": 7_241_732_096,
    "mixtral-8x7b": 46_702_792_704,
    "mixtral-8x22b": 140_630_071_296,
    "qwen2.5-7b": 7_615_616_512,
    "qwen2.5-14b": 14_770_033_664,
    "qwen2.5-32b": 32_763_876_352,
    "qwen2.5-72b": 72_706_203_648,
    "gemma-2-9b": 9_241_705_984,
    "gemma-2-27b": 27_227_128_320,
    "phi-3-mini": 3_821_079_552,
}


def test_every_required_preset_is_there() -> None:
    assert set(PUBLISHED) <= set(presets())  # the 2025-26 ones: tests/test_presets_2025.py


def test_llama_counts_are_exact() -> None:
    assert presets()["llama-3.1-8b"].parameter_count == 8_030_261_248
    assert presets()["llama-2-7b"].parameter_count == 6_738_415_616


@pytest.mark.parametrize(("key", "published"), sorted(PUBLISHED.items()))
def test_counted_parameters_match_the_published_total(key: str, published: int) -> None:
    model = presets()[key]
    assert model.parameter_count == pytest.approx(published, rel=0.005)
    assert model.published_params == published  # the data file states the same source


def test_lora_rank_16_on_llama_3_1_8b() -> None:
    assert presets()["llama-3.1-8b"].lora_adapter_params(16) == 41_943_040
    assert presets()["llama-3.1-8b"].lora_adapter_params(32) == 2 * 41_943_040


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("llama 8", "Llama 3.1 8B"),
        ("qwen72", "Qwen2.5 72B"),
        ("mixtral", "Mixtral 8x7B"),
        ("GEMMA 27", "Gemma 2 27B"),
    ],
)
def test_autocomplete_matches_loosely(query: str, first: str) -> None:
    found = search_presets(query)
    assert found
    assert found[0].name == first


def test_autocomplete_limits_and_empty_query() -> None:
    assert [m.name for m in search_presets("mixtral")] == ["Mixtral 8x7B", "Mixtral 8x22B"]
    assert len(search_presets("")) == min(25, len(presets()))  # Discord shows 25 choices at most
    assert len(search_presets("", limit=100)) == len(presets())
    assert len(search_presets("", limit=3)) == 3
    assert search_presets("zzz") == []


def test_find_preset_by_key_or_name_and_close_matches() -> None:
    assert find_preset("llama-3.1-8b") is find_preset("Llama 3.1 8B")
    assert find_preset("llama 3.1 8b") is presets()["llama-3.1-8b"]
    assert find_preset("llama 4") is None
    assert "Llama 3.1 8B" in close_matches("lama 3.1 8b")


def test_zero_reproduces_table_1_of_the_paper() -> None:
    # Rajbhandari et al. 2020, Table 1: Ψ = 7.5B, N_d = 64, K = 12 -> 120, 31.4, 16.6, 1.9 GB.
    weights, gradients, optimizer = 7.5 * 2, 7.5 * 2, 7.5 * 12
    per_gpu = [round(per_gpu_gb(s, weights, gradients, optimizer, 64), 1) for s in STRATEGIES]
    assert per_gpu == [120.0, 31.4, 16.6, 1.9]


def test_zero_through_the_estimator_keeps_the_paper_and_scales_for_other_optimizers() -> None:
    cluster = estimate(parse_request(params=7.5, gpus=64)).cluster
    assert cluster is not None
    assert [round(r.gb, 1) for r in cluster.paper_rows] == [120.0, 31.4, 16.6, 1.9]
    sgd = estimate(parse_request(params=7.5, optimizer="sgd", gpus=64)).cluster
    assert sgd is not None
    assert sgd.paper_rows[1].gb == pytest.approx(7.5 * 4 + 7.5 * 4 / 64)  # weights + grads, momentum sharded


def test_mixed_precision_shards_as_deepspeed_holds_it() -> None:
    # DeepSpeed's estimators without offload: stage 2 4Ψ + 16Ψ/N, stage 3 4·L + 18Ψ/N.
    cluster = estimate(parse_request(params=7.5, gpus=64)).cluster
    assert cluster is not None
    assert cluster.source == "deepspeed"
    assert [r.gb for r in cluster.rows] == pytest.approx([120.0, 30 + 120 / 64, 30 + 120 / 64, 135 / 64])
    assert cluster.largest_module_billion is None  # no architecture: nothing known to gather
    llama = estimate(parse_request(model="llama-3.1-8b", gpus=8)).cluster
    assert llama is not None
    embedding = 128_256 * 4096  # the largest module: the embedding (and the untied LM head)
    assert llama.largest_module_billion == pytest.approx(embedding / 1e9)
    assert llama.rows[3].gb == pytest.approx(4 * embedding / 1e9 + 18 * 8.030261248 / 8)
    mixtral = estimate(parse_request(model="mixtral-8x7b", gpus=8)).cluster
    assert mixtral is not None
    experts = 8 * 3 * 4096 * 14_336  # one layer's routed experts, one module in transformers 5
    assert mixtral.largest_module_billion == pytest.approx(experts / 1e9)
    bf16 = estimate(parse_request(params=7.5, gpus=64, precision="bf16")).cluster
    assert bf16 is not None
    assert (bf16.source, bf16.rows) == ("paper", bf16.paper_rows)
    assert estimate(parse_request(params=7)).cluster is None  # one card: no table


def test_smallest_fitting_stage() -> None:
    cluster = estimate(parse_request(params=8, gpus=8)).cluster  # 128 GB of model states
    assert cluster is not None
    assert cluster.smallest_fitting == "ZeRO-1"  # 4·8 + 12·8/8 = 44 GB
    none_fits = estimate(parse_request(params=70, gpus=2)).cluster
    assert none_fits is not None
    assert none_fits.smallest_fitting is None


GPT3 = Architecture(
    key="gpt-3",
    name="GPT-3 175B",
    hidden_size=12288,
    layers=96,
    attention_heads=96,
    kv_heads=96,
    intermediate_size=4 * 12288,
    vocab_size=50257,
    tied_embeddings=True,
    published_params=175_000_000_000,
)


def test_activation_formula_is_the_papers_for_a_gpt3_layer() -> None:
    s, b, h, a = 2048, 1, 12288, 96
    assert 5 * a * s / h == 80  # Korthikanti et al. 2022, section 4.1
    paper = s * b * h * (34 + 5 * a * s / h)
    assert layer_bytes(GPT3, b, s, flash_attention=False, gated_mlp=False) == paper
    assert layer_bytes(GPT3, b, s, flash_attention=True, gated_mlp=False) == s * b * h * 34


def test_checkpointing_keeps_each_layer_input_only() -> None:
    llama = presets()["llama-3.1-8b"]
    found = estimate_activations(llama, 1, 2048, checkpointing=True)
    assert found.per_layer_gb == pytest.approx(2 * 2048 * 4096 / 1e9)
    logits = 4 * 2048 * 128256 + 5 * 2048 * 4096
    assert found.total_gb == pytest.approx((32 * 2 * 2048 * 4096 + logits) / 1e9)


def test_gqa_and_gated_mlp_shape_the_activation_estimate() -> None:
    llama = presets()["llama-3.1-8b"]  # q = 4096, kv = 1024, f = 14336
    sb, h = 2048, 4096
    attention = sb * (2 * h + 2 * h + 4 * 1024 + 2 * h + h)
    mlp = 3 * sb * h + 8 * sb * 14336
    norms = 2 * 2 * sb * h
    assert layer_bytes(llama, 1, 2048, flash_attention=True) == attention + mlp + norms


def test_a_preset_request_uses_the_counted_parameters_and_estimates_activations() -> None:
    result = estimate(parse_request(model="Llama 3.1 8B", seq_len=4096, batch_size=2))
    assert result.params_billion == pytest.approx(8.030261248)
    assert result.model_states_gb == pytest.approx(8.030261248 * 16)
    assert result.activation_estimate is not None
    assert result.activations_gb == result.activation_estimate.total_gb > 0
    assert result.lora.rank == 16
    assert result.lora.adapter_params_billion == pytest.approx(0.04194304)


def test_entered_activations_win_over_the_estimate() -> None:
    result = estimate(parse_request(model="mistral-7b", seq_len=4096, activations=12))
    assert result.activations_gb == 12
    assert result.activation_estimate is None


def test_params_win_over_the_preset_and_the_embed_says_so() -> None:
    result = estimate(parse_request(params=7, model="llama-2-70b"))
    assert result.params_billion == 7
    assert result.preset_overridden
    assert result.lora.rank is None  # the 1 % rule: the preset's shapes do not describe a 7B model
    assert "`params` wins over the Llama 2 70B preset." in render_embed(result)["description"]
    details = render_details(result)["fields"][0]["value"]
    assert "`params` was given, so it wins over the Llama 2 70B preset" in details


def test_a_named_card_sets_capacity_and_verdict_title() -> None:
    result = estimate(parse_request(params=7, gpu="mi300x"))
    assert result.single_gpu.capacity_gb == 192
    assert result.single_gpu.fits
    embed = render_embed(result)
    assert embed["title"] == "✅ 7B · Adam: 112.0 GB fits one MI300X 192 GB"
    assert "🟦🟩🟨🟨🟨⬛⬛⬛ 58\u00a0%\u00a0of\u00a0192\u00a0GB" in embed["description"]
    assert Gpu.B200.memory_gb == 180
    assert Gpu.H100.memory_gb == 80


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"model": "llama 9"}, "`model` = `llama 9` is not allowed: give one of the presets, e.g. "),
        ({"params": 7, "seq_len": 2048}, "`batch_size` and `seq_len` need a `model` preset"),
        (
            {"params": 7, "gpus": 0},
            "`gpus` = 0 is not allowed: give a whole number at least 1 and at most 4,096",
        ),
        ({"params": 7, "gpus": 2.5}, "`gpus` = 2.5 is not allowed"),
        ({"model": "mistral-7b", "lora_rank": 2048}, "`lora_rank` = 2,048 is not allowed"),
        ({"params": 7, "gpu": "tpu"}, "`gpu` = `tpu` is not allowed: give one of h100, a100-40"),
        ({"model": "x" * 6000}, "`model` = `" + "x" * 100 + "…` is not allowed"),
    ],
)
def test_invalid_scaling_options(options: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_request(**options)
    assert message in "\n".join(describe_problem(p) for p in caught.value.problems)


@pytest.mark.parametrize("key", sorted(PUBLISHED))
def test_every_preset_embed_stays_within_discord_limits(key: str) -> None:
    from tests.embed_limits import embed_limit_problems

    request = parse_request(
        model=key,
        gpu="v100-16",
        gpus=4096,
        lora_rank=1024,
        batch_size=65_536,
        seq_len=1_048_576,
        flash_attention=False,
    )
    embed = render_embed(estimate(request))
    assert embed_limit_problems(embed) == []
    assert embed["color"] == 0xE74C3C


@pytest.mark.parametrize(
    "options",
    [
        {"model": "qwen3-8b", "seq_len": 2048, "precision": "bf16", "gpu": "b200"},
        {"model": "llama-3.1-8b", "seq_len": 4096, "precision": "bf16", "gpu": "h200"},
        {"model": "mistral-7b", "seq_len": 1024, "optimizer": "sgd", "precision": "bf16", "gpu": "h200"},
    ],
)
def test_the_largest_batch_is_the_last_whose_step_fits(options: dict[str, object]) -> None:
    found = estimate(parse_request(**options)).largest_batch
    assert found is not None
    assert found.checkpointed_batch is not None
    for batch, checkpointing in ((found.batch, False), (found.checkpointed_batch, True)):
        if batch is None:  # not even one sequence fits without checkpointing
            assert not estimate(parse_request(**options, batch_size=1)).verdict.fits
            continue
        # The batch and the verdict agree: the verdict's figure (the larger of V and the peak) fits.
        at = estimate(parse_request(**options, batch_size=batch, checkpointing=checkpointing))
        beyond = estimate(parse_request(**options, batch_size=batch + 1, checkpointing=checkpointing))
        assert at.peak is not None
        assert at.verdict.fits
        assert not beyond.verdict.fits


@pytest.mark.parametrize("key", ["qwen2.5-14b", "phi-4", "gpt-oss-20b", "gemma-3-12b"])
def test_on_several_cards_the_largest_batch_is_the_last_whose_cards_peak_fits(key: str) -> None:
    """With ZeRO-3 the verdict's strategy on 8 cards (only it fits), one card's peak at the largest
    batch fits, and at one more sequence it does not: the batch and the per-card peak agree."""
    options: dict[str, object] = {"model": key, "gpus": 8, "seq_len": 2048}
    found = estimate(parse_request(**options)).largest_batch
    assert found is not None
    assert found.strategy == "ZeRO-3"
    assert found.checkpointed_batch is not None
    for batch, checkpointing in ((found.batch, False), (found.checkpointed_batch, True)):
        assert batch is not None
        at = estimate(parse_request(**options, batch_size=batch, checkpointing=checkpointing))
        beyond = estimate(parse_request(**options, batch_size=batch + 1, checkpointing=checkpointing))
        assert (at.verdict.strategy, beyond.verdict.strategy) == ("ZeRO-3", "ZeRO-3")
        assert at.verdict.fits  # the verdict's per-GPU figure: the larger of V and the card's peak
        assert not beyond.verdict.fits


@pytest.mark.parametrize(("optimizer", "temporaries"), [("adam", 8), ("adam8bit", 4)])
def test_one_card_of_eight_steps_its_own_shard(optimizer: str, temporaries: float) -> None:
    """Llama 3.1 8B, mixed precision on 8 cards, ZeRO-1: a card's optimizer step holds the seed's
    weights and gradients whole (2 + 2 B/param), an eighth of its optimizer state (B - 4), and an
    eighth of the measured step's temporaries (foreach AdamW: the fp32 copy of the gradients and a
    sqrt buffer, 4 + 4; AdamW8bit: the copy, 4). (256 tokens: the step, not the loss, is the peak.)"""
    result = estimate(parse_request(model="llama-3.1-8b", optimizer=optimizer, gpus=8, seq_len=256))
    n, b = result.params_billion, result.bytes_per_param
    assert result.peak is not None
    card = result.peak.per_card
    assert card is not None
    assert (card.strategy, card.moment) == ("ZeRO-1", "optimizer step")
    assert card.peak_gb == pytest.approx(4 * n + (b - 4) * n / 8 + temporaries * n / 8 + 0.5)
    assert card.fits
    one_card = estimate(parse_request(model="llama-3.1-8b", seq_len=256)).peak
    assert one_card is not None
    assert one_card.per_card is None


def test_a_deepspeed_zero_3_card_also_holds_the_gathered_module() -> None:
    """Llama 3.1 8B on 2 cards: only ZeRO-3 fits by V; a card's optimizer step holds half the seed's
    16 B/param, half the step's 8 B/param temporaries, and the largest module (the 128,256 × 4,096
    embedding) gathered whole at 4 B/param, as DeepSpeed does."""
    result = estimate(parse_request(model="llama-3.1-8b", gpus=2, seq_len=256))
    n = result.params_billion
    assert result.cluster is not None
    assert result.cluster.largest_module_billion == pytest.approx(128_256 * 4096 / 1e9)
    assert result.peak is not None
    card = result.peak.per_card
    assert card is not None
    assert (card.strategy, card.moment) == ("ZeRO-3", "optimizer step")
    gathered = 4 * 128_256 * 4096 / 1e9
    assert card.peak_gb == pytest.approx(16 * n / 2 + 8 * n / 2 + gathered + 0.5)


@pytest.mark.parametrize("precision", ["mixed", "amp", "bf16"])
@pytest.mark.parametrize("optimizer", ["adamw", "sgd", "adam8bit"])
@pytest.mark.parametrize(("attention", "checkpointing"), [("sdpa", False), ("eager", False), ("sdpa", True)])
def test_a_higher_zero_stage_never_holds_more_at_any_moment(
    precision: Precision, optimizer: OptimizerKind, attention: AttentionImpl, checkpointing: bool
) -> None:
    """Each ZeRO stage shards one more part, so no moment of a card's step grows from one stage to the
    next; with the whole model (data parallel) every moment is exactly the one-card measurement."""
    arch = find_preset("llama-3.1-8b")
    assert arch is not None
    n, gpus = arch.parameter_count, 8
    options: dict[str, Any] = {
        "attention": attention,
        "precision": precision,
        "optimizer": optimizer,
        "checkpointing": checkpointing,
    }
    whole = step_peak(arch, n, 2, 1024, setup=Setup(**options))
    steps = [
        step_peak(arch, n, 2, 1024, share=card_share(strategy, gpus), setup=Setup(**options))
        for strategy in STRATEGIES
    ]
    assert steps[0].moments == whole.moments  # data parallel: the measured step itself
    for larger, smaller in itertools.pairwise(steps):
        for moment, held in smaller.moments.items():
            assert held <= larger.moments[moment]
    assert steps[-1].moments["optimizer step"] < whole.moments["optimizer step"] / 2


def test_no_batch_fits_when_the_model_states_fill_the_card() -> None:
    found = estimate(parse_request(model="llama-3.1-70b", seq_len=4096)).largest_batch
    assert found is not None
    assert (found.batch, found.checkpointed_batch) == (None, None)
    assert estimate(parse_request(model="llama-3.1-8b", activations=10)).largest_batch is None
    assert estimate(parse_request(params=8)).largest_batch is None


def test_the_step_peak_of_llama_3_1_8b_matches_the_measured_rates() -> None:
    # Issue 11's figures, measured per layer on CPU and extended: 114 GB saved, about 243.5 GB at the
    # peak (benchmarks/ACCURACY.md), with mixed-precision Adam at 4 × 4096.
    result = estimate(parse_request(model="llama-3.1-8b", batch_size=4, seq_len=4096))
    assert result.activations_gb == pytest.approx(114.2, abs=0.1)
    assert result.total_gb == pytest.approx(8.030261248 * 16 + 114.2, abs=0.1)  # V = M + A stays
    assert result.peak is not None
    assert result.peak.peak_gb == pytest.approx(243.5 + 0.5, rel=0.01)  # + the CUDA context
    assert result.peak.moment == "loss backward"


def test_an_entered_activation_figure_gets_no_peak() -> None:
    assert estimate(parse_request(model="llama-3.1-8b", activations=20, seq_len=4096)).peak is None
    assert estimate(parse_request(params=7, activations=20)).peak is None


def test_the_verdict_follows_the_peak_where_v_fits_but_the_peak_does_not() -> None:
    """Issue 21's finding: Llama 3.1 8B in bf16 with checkpointing was ✅ 67.6 GB (V) while its step
    peaks at 80.8 GB and Details said not even one sequence fits. The verdict follows the peak, and
    its advice never names checkpointing, which is on."""
    options = {"model": "llama-3.1-8b", "precision": "bf16", "seq_len": 4096, "checkpointing": True}
    result = estimate(parse_request(**options))
    assert result.total_gb == pytest.approx(67.6, abs=0.05)  # V = M + A stays, as its formula line
    assert result.peak is not None
    assert result.peak.moment == "optimizer step"  # the foreach AdamW step's temporary tips it over
    assert result.verdict_basis == "peak"
    assert result.judged_gb == pytest.approx(result.peak.peak_gb)
    assert not result.verdict.fits
    assert not result.single_gpu.fits
    embed = render_embed(result)
    assert embed["title"] == "❌ Llama 3.1 8B · Adam: 80.8 GB peak — 2 × H100 80 GB with ZeRO-3"
    assert "checkpointing" not in str(embed["description"]).split("\n", 1)[1]
    assert all(change.kind != "checkpointing" for change in result.verdict.changes)
    assert result.largest_batch is not None
    assert result.largest_batch.checkpointed_batch is None  # as the verdict: not even one fits


def test_a_sequence_beyond_the_model_s_context_is_estimated_with_a_warning() -> None:
    beyond = estimate(parse_request(model="llama-2-7b", seq_len=8192))
    assert beyond.beyond_context == 4096
    assert beyond.activation_estimate is not None
    assert beyond.activation_estimate.seq_len == 8192  # still estimated as asked
    warning = "⚠️ `seq_len` 8,192 is longer than Llama 2 7B's context of 4,096 tokens"
    assert warning in render_embed(beyond)["description"]
    details = {f["name"]: f["value"] for f in render_details(beyond)["fields"]}
    assert warning in "\n".join(details.values())
    assert estimate(parse_request(model="llama-2-7b", seq_len=4096)).beyond_context is None
