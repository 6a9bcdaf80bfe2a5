"""Rendering an estimate to Discord's embed JSON and to terminal text."""

from __future__ import annotations

import pytest

from bot.estimate.core import estimate
from bot.estimate.optimizers import Optimizer
from bot.estimate.request import parse_request
from bot.present.answer import render_embed, usage_bar
from bot.present.command_line import command_line
from bot.present.phrases import DOES_NOT_FIT_COLOUR, FITS_COLOUR, optimizer_choice_name
from bot.present.terminal import embed_to_text
from bot.present.words import Words
from tests.embed_limits import embed_limit_problems


def embed_for(**options: object) -> dict[str, object]:
    return render_embed(estimate(parse_request(**options)))


def field(embed: dict[str, object], name: str) -> str:
    fields = embed["fields"]
    assert isinstance(fields, list)
    return str(next(f["value"] for f in fields if f["name"] == name))


def test_worked_example_embed() -> None:
    embed = embed_for(params=7, activations=20)
    assert embed["title"] == "VRAM to fully fine-tune a 7B model · Mixed-precision Adam"
    description = str(embed["description"])
    assert description.startswith("`/vram params:7 optimizer:adam activations:20`")
    assert "M = N × B = 7 × 16 = 112.0 GB" in description
    assert "V = M + A = 112.0 GB + 20.0 GB = **132.0 GB**" in description
    assert field(embed, "Model states M") == "112.0 GB"
    assert field(embed, "Activations A") == "20.0 GB"
    assert field(embed, "Total V") == "**132.0 GB**"
    assert embed["color"] == DOES_NOT_FIT_COLOUR
    verdict = field(embed, "Single 80 GB GPU")
    assert verdict.startswith("❌")
    assert "52.0 GB over" in verdict
    assert "2 × 80 GB GPUs" in verdict
    assert field(embed, "LoRA hint").startswith("💡")
    assert "35.1 GB" in field(embed, "LoRA hint")
    assert "confirm it on a real training step" in str(embed["footer"]).lower()


def test_breakdown_has_one_line_per_part_and_the_sum() -> None:
    lines = field(embed_for(params=7, optimizer="adam8bit"), "Breakdown per parameter").splitlines()
    assert lines[0] == "16-bit weights: 2 B/param · 14.0 GB"
    assert lines[2] == "fp32 master weights: 4 B/param · 28.0 GB"
    assert lines[-1] == "**Sum: 12 B/param**"
    assert len(lines) == 5


def test_fitting_estimate_is_green_with_headroom() -> None:
    embed = embed_for(params=1, optimizer="sgd", activations=2)
    assert embed["color"] == FITS_COLOUR
    assert field(embed, "Single 80 GB GPU") == "✅ Fits, with 70.0 GB to spare."


def test_activations_that_fill_the_card_advise_checkpointing() -> None:
    verdict = field(embed_for(params=1, activations=90), "Single 80 GB GPU")
    assert verdict.startswith("❌")
    assert "activation checkpointing" in verdict


def test_copyable_command_line_lists_only_what_was_given() -> None:
    assert command_line(parse_request(params=7)) == "/vram params:7 optimizer:adam"
    assert (
        command_line(parse_request(params=0.5, optimizer="sgd", bytes_per_param=10))
        == "/vram params:0.5 optimizer:sgd bytes_per_param:10"
    )


@pytest.mark.parametrize(
    ("total", "bar"),
    [
        (0, "`░░░░░░░░░░░░░░░░░░░░` 0 % of 80 GB"),
        (40, "`██████████░░░░░░░░░░` 50 % of 80 GB"),
        (80, "`████████████████████` 100 % of 80 GB"),
        (84, "`████████████████████|▓` 105 % of 80 GB"),
        (1000, "`████████████████████|" + "▓" * 20 + "…` 1,250 % of 80 GB"),
    ],
)
def test_usage_bar(total: float, bar: str) -> None:
    assert usage_bar(total) == bar


def test_gb_formatting() -> None:
    assert Words().gb(0) == "0 GB"
    assert Words().gb(0.016) == "0.016 GB"
    assert Words().gb(112) == "112.0 GB"
    assert Words().gb(1_600_000) == "1,600,000.0 GB"


@pytest.mark.parametrize(
    "options",
    [
        {"params": 7},
        {"params": 100_000, "activations": 1_000_000, "optimizer": "adam"},
        {"params": 1e-9, "bytes_per_param": 1e-9},
        {"params": 405, "optimizer": "sgd", "activations": 123.456},
    ],
)
def test_embeds_stay_within_discord_limits(options: dict[str, object]) -> None:
    assert embed_limit_problems(embed_for(**options)) == []


def test_limit_checker_catches_oversized_embeds() -> None:
    embed = embed_for(params=7)
    embed["title"] = "x" * 257
    embed["fields"] = [{"name": "n", "value": "v" * 1025, "inline": False}] * 26
    problems = embed_limit_problems(embed)
    assert "title has 257 characters" in problems
    assert "26 fields" in problems
    assert any("characters in all" in p for p in problems)


def test_terminal_text_has_the_same_content_without_markdown() -> None:
    embed = embed_for(params=7, optimizer="adam8bit")
    text = embed_to_text(embed)
    assert "**" not in text
    assert "`" not in text
    assert "/vram params:7 optimizer:adam8bit" in text
    assert "Total V: 84.0 GB" in text
    assert "❌ Does not fit: 4.0 GB over." in text


def test_choice_names_start_with_the_key() -> None:
    for optimizer in Optimizer:
        name = optimizer_choice_name(optimizer)
        assert name.startswith(optimizer.value + " ")
        assert len(name) <= 100  # Discord's limit for a choice name
    assert optimizer_choice_name(Optimizer.ADAM8BIT) == "adam8bit · 8-bit Adam, ~12 B/param"


def test_a_mixture_of_experts_shows_total_and_active_parameters_and_what_it_leaves_out() -> None:
    description = str(embed_for(model="deepseek-v3")["description"])
    assert "671B total, 37.6B active per token" in description
    assert "Its 1 multi-token-prediction layer(s) are not counted" in description
    scout = str(embed_for(model="llama-4-scout")["description"])
    assert "108B total, 17.2B active per token" in scout
    assert "Only the text model is counted" in scout
    dense = str(embed_for(model="llama-3.1-8b")["description"])
    assert "active per token" not in dense


def test_lora_by_rank_names_the_layers_it_counts() -> None:
    hint = field(embed_for(model="deepseek-v3", lora_rank=8), "LoRA hint")
    assert "rank 8 on q_a_proj, q_b_proj, kv_a_proj_with_mqa, kv_b_proj, o_proj," in hint
    assert "experts.gate_proj" in hint
