"""Serving (issue 22): ``/vram … task:serve`` through the fake Discord and the CLI, and its bad input.

The cache's bytes are held to transformers' own cache by ``tests/test_serving_accuracy.py``
(``-m accuracy``); here the published per-token figures, the answer's limits on a phone in both
languages, its controls, and the ephemeral refusals.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.cli import build_parser
from bot.estimate.kv_cache import layer_caches
from bot.estimate.models import Architecture, presets
from bot.estimate.request import parse_request
from bot.estimate.serving import ServedWeights, serving_estimate
from bot.estimate.tensors import Packing, TensorCount
from bot.estimate.weight_formats import WeightFormat
from bot.present.i18n import Language
from bot.present.serving import render_serving_compare, render_serving_details, render_serving_embed
from bot.preview import run_estimate
from bot.runtime.runner import VramBot
from tests.embed_limits import embed_limit_problems
from tests.fake_discord import FakeDiscord, custom_ids
from tests.phone_lines import embed_characters, phone_lines

MAX_CHARACTERS = 900
MAX_PHONE_LINES = 14
# Dense GQA, sliding window (Gemma 3, gpt-oss), MLA (DeepSeek-V3), MoE (Qwen3-30B-A3B) and the
# hybrids: Gated DeltaNet (Qwen3-Next) and Mamba-2 (Granite 4.0 H).
MODELS = (
    "qwen3-32b",
    "gemma-3-27b",
    "gpt-oss-120b",
    "deepseek-v3",
    "qwen3-30b-a3b",
    "qwen3-next-80b-a3b",
    "granite-4.0-h-small",
)
SERVE: dict[str, Any] = {"task": "serve", "seq_len": 32768, "batch_size": 16}


def test_the_cache_per_token_is_each_attention_kinds_published_figure() -> None:
    """2·g·d values per token and layer for GQA; MLA's 576 (512 latent + 64 RoPE key) for DeepSeek-V3,
    the figure the issue cites; a sliding layer keeps window − 1 tokens (transformers'
    DynamicSlidingWindowLayer); fp8 halves every figure."""
    qwen, deepseek, gemma = (presets()[key] for key in ("qwen3-32b", "deepseek-v3", "gemma-3-27b"))
    (full,) = layer_caches(qwen)
    assert (full.kind, full.layers, full.bytes_per_token) == ("full", 64, 2 * 8 * 128 * 2)
    (mla,) = layer_caches(deepseek)
    assert (mla.kind, mla.layers, mla.bytes_per_token) == ("mla", 61, 576 * 2)
    sliding, global_ = layer_caches(gemma)
    assert (sliding.kind, sliding.layers, sliding.tokens_kept(32768)) == ("sliding", 52, 1023)
    assert (global_.kind, global_.layers, global_.tokens_kept(32768)) == ("full", 10, 32768)
    (fp8,) = layer_caches(qwen, parse_request(model="qwen3-32b", task="serve", kv_cache="fp8").kv_cache)
    assert fp8.bytes_per_token == full.bytes_per_token // 2
    # Tensor parallelism: 8 K/V heads over 16 GPUs keep one head each, replicated.
    (split,) = layer_caches(qwen, gpus=16)
    assert (split.bytes_per_token, split.replicated) == (2 * 1 * 128 * 2, True)


@pytest.mark.parametrize("language", list(Language))
def test_every_serving_view_keeps_the_answers_limits_in_both_languages(language: Language) -> None:
    """The glance ≤ 900 characters and ≤ 14 phone lines; Details and Compare within Discord's limits."""
    for model in MODELS:
        for extra in ({}, {"weights": "fp8", "kv_cache": "fp8", "gpus": 8, "gpu": "h200"}):
            request = parse_request(model=model, **SERVE, **extra)
            found = serving_estimate(request)
            glance = render_serving_embed(found, language)
            assert embed_characters(glance) <= MAX_CHARACTERS, (model, extra)
            assert phone_lines(glance) <= MAX_PHONE_LINES, (model, extra)
            for view in (render_serving_details(found, language), render_serving_compare(found, language)):
                assert not embed_limit_problems(view), (model, extra)


pytestmark_e2e = pytest.mark.asyncio(loop_scope="module")


@pytestmark_e2e
# Dense GQA, sliding window with experts (gpt-oss), MLA with experts (DeepSeek-V3), the two hybrids;
# every preset kind is rendered in both languages above.
@pytest.mark.parametrize(
    "model", ["qwen3-32b", "gpt-oss-120b", "deepseek-v3", "qwen3-next-80b-a3b", "granite-4.0-h-small"]
)
async def test_a_serving_answer_fits_a_phone_and_its_controls_stay_serving(
    fake: FakeDiscord, bot: VramBot, model: str
) -> None:
    answer = await fake.invoke("vram", model=model, **SERVE)
    assert not answer.ephemeral
    embed = answer.embed
    assert embed["title"][0] in "✅❌"
    assert "serve bf16" in embed["title"]
    line = embed["description"].split("\n", 1)[0]
    assert line.startswith(f"`/vram model:{model} ")
    assert "task:serve" in line
    assert embed_characters(embed) <= MAX_CHARACTERS
    assert phone_lines(embed) <= MAX_PHONE_LINES
    ids = custom_ids(answer.message)
    select = next(i for i in ids if i.startswith("vram:opt:"))
    picked = await fake.send_interaction(
        fake.component_interaction(answer.message, select, values=["fp8"], user="bob")
    )
    assert "serve fp8" in picked.embed["title"]
    for custom_id in ids[1:]:  # Estimate, Compare, Details
        clicked = await fake.send_interaction(
            fake.component_interaction(answer.message, custom_id, user="bob")
        )
        assert not embed_limit_problems(clicked.embed), custom_id
        assert "task:serve" in clicked.embed["description"].split("\n", 1)[0]


@pytestmark_e2e
@pytest.mark.parametrize(
    ("options", "words"),
    [
        (
            {"model": "qwen3-32b", "task": "serve", "optimizer": "sgd", "lora_rank": 8},
            ["optimizer", "lora_rank"],
        ),
        ({"model": "qwen3-32b", "task": "serve", "gpus": 3}, ["tensor parallelism"]),
        ({"params": 7, "weights": "fp8"}, ["weights", "task:train"]),
        ({"model": "qwen3-32b", "task": "serve", "kv_cache": "int2"}, ["kv_cache", "bf16, fp8"]),
        ({"model": "qwen3-32b", "task": "serve", "weights": "int3"}, ["weights", "fp8", "int4"]),
        ({"model": "qwen3-32b", "task": "serve", "method": "qlora"}, ["method", "task:serve"]),
    ],
    ids=[
        "training options",
        "tensor parallel",
        "serving option for training",
        "not a dtype",
        "not a weight format",
        "a training method",
    ],
)
async def test_bad_serving_input_gets_a_clear_ephemeral_answer(
    fake: FakeDiscord, bot: VramBot, options: dict[str, Any], words: list[str]
) -> None:
    answer = await fake.invoke("vram", **options)
    assert answer.ephemeral
    content = answer.body["data"]["content"]
    assert all(word in content for word in words), content


@pytest.mark.parametrize("language", ["de"])
def test_the_cli_serves_json_with_the_figures_and_check_says_whether_it_fits(
    capsys: pytest.CaptureFixture[str], language: str
) -> None:
    words = [
        "estimate",
        "--model",
        "qwen3-32b",
        "--task",
        "serve",
        "--seq-len",
        "32768",
        "--batch-size",
        "16",
    ]
    words += ["--lang", language]
    assert run_estimate(build_parser().parse_args([*words, "--weights", "fp8", "--kv-cache", "fp8"])) == 0
    assert "fp8:" in capsys.readouterr().out.split("\n", 1)[0]
    assert run_estimate(build_parser().parse_args([*words, "--format", "json", "--check"])) == 1
    figures = json.loads(capsys.readouterr().out)
    assert figures["task"] == "serve"
    assert figures["fits"] is False
    assert figures["kv_cache"]["bytes_per_token"] == 64 * 2 * 8 * 128 * 2
    assert figures["kv_cache"]["gb"] == pytest.approx(16 * 32768 * 262144 / 1e9)
    assert figures["weights_gb"] > 60
    assert figures["max_sequences"] == 1
    assert figures["max_seq_len"] > 0
    tp = [*words, "--gpus", "4", "--format", "json", "--check"]
    assert run_estimate(build_parser().parse_args(tp)) == 0
    assert json.loads(capsys.readouterr().out)["fits"] is True


def test_stored_weights_are_counted_as_the_checkpoint_packs_them() -> None:
    """A pre-quantized repo (its tensors read from the Hub) is served as stored: gpt-oss's MXFP4 packs
    the routed experts only (4.25 bits with its E8M0 scales), an FP8 checkpoint every linear layer;
    embeddings, norms and attention outside the packed part stay bf16."""
    gpt_oss, qwen = presets()["gpt-oss-120b"], presets()["qwen3-32b"]

    def stored(model: Architecture, packing: Packing) -> ServedWeights:
        tensors = TensorCount(total=model.parameter_count, parts=(), stored_elements=1, packing=packing)
        request = parse_request(
            model=model.model_copy(update={"tensors": tensors}), task="serve", weights="stored"
        )
        return serving_estimate(request).weights

    mxfp4 = stored(gpt_oss, "mxfp4")
    experts = sum(i * o * n for name, i, o, n in gpt_oss.linear_layers() if name.startswith("experts."))
    assert (mxfp4.format, mxfp4.scope, mxfp4.quantized_params) == (WeightFormat.MXFP4, "experts", experts)
    assert mxfp4.total_gb == pytest.approx(
        (experts * 4.25 / 8 + (gpt_oss.parameter_count - experts) * 2) / 1e9
    )
    fp8 = stored(qwen, "fp8")
    assert (fp8.format, fp8.scope) == (WeightFormat.FP8, "linears")
    assert fp8.other_params == 2 * qwen.vocab_size * qwen.hidden_size + fp8.replicated_params


@pytest.mark.parametrize("model", MODELS)
def test_the_cli_answers_every_layer_kind_with_its_cache(
    capsys: pytest.CaptureFixture[str], model: str
) -> None:
    """The issue's "done when" in the CLI: ``--task serve --seq-len 32768 --batch-size 16`` for dense,
    sliding-window, MLA, MoE and hybrid models; the JSON's cache is the layer kinds' own (held to
    transformers' cache to the byte by tests/test_serving_accuracy.py)."""
    words = ["estimate", "--model", model, "--task", "serve", "--seq-len", "32768", "--batch-size", "16"]
    assert run_estimate(build_parser().parse_args([*words, "--format", "json"])) == 0
    figures = json.loads(capsys.readouterr().out)
    caches = layer_caches(presets()[model])
    assert figures["kv_cache"]["bytes_per_token"] == sum(c.layers * c.bytes_per_token for c in caches)
    held = sum(c.bytes_for(32768) for c in caches) * 16
    assert figures["kv_cache"]["gb"] == pytest.approx(held / 1e9)
