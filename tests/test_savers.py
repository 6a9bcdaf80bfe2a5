"""The memory savers and the 2026 optimizers (issue 21, point 2): torchtune's recipe, host RAM, conflicts.

Pure and fast; the CPU measurements behind the figures are benchmarks/accuracy_optimizers.py's.
"""

from __future__ import annotations

import json

import pytest

from bot.cli import main
from bot.estimate.core import estimate
from bot.estimate.optimizers import Optimizer, Precision, bytes_per_param_for
from bot.estimate.request import InvalidRequest, parse_request
from bot.present.answer import render_embed
from bot.present.command_line import command_line
from bot.present.details import render_details
from bot.present.i18n import Language
from bot.present.problems import problems_message
from tests.phone_lines import assert_phone_lines_within, embed_characters

GIB = 2**30
# torchtune's README, "Memory and training speed": Llama 3.1 8B full fine-tune on one RTX 4090, batch 2
# × 2048 tokens, peak 18.9 GiB; its recipe llama3_1/8B_full_single_device: bf16, PagedAdamW8bit,
# optimizer_in_bwd, LinearCrossEntropyLoss (chunked), activation checkpointing.
TORCHTUNE_8B_PEAK_GIB = 18.9
TORCHTUNE_8B = [
    "estimate",
    "--model",
    "llama-3.1-8b",
    "--precision",
    "bf16",
    "--optimizer",
    "paged_adam8bit",
    "--optimizer-in-backward",
    "--chunked-loss",
    "--checkpointing",
    "--batch-size",
    "2",
    "--seq-len",
    "2048",
    "--gpu",
    "rtx4090",
]

# The same recipe as /vram options.
TORCHTUNE_8B_OPTIONS: dict[str, object] = {
    "model": "llama-3.1-8b",
    "precision": "bf16",
    "optimizer": "paged_adam8bit",
    "optimizer_in_backward": True,
    "chunked_loss": True,
    "checkpointing": True,
    "batch_size": 2,
    "seq_len": 2048,
    "gpu": "rtx4090",
}


def test_torchtunes_8b_full_fine_tune_is_expressible_and_within_15_percent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*TORCHTUNE_8B, "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["savers"]["optimizer_in_backward"] is True
    assert found["savers"]["chunked_loss"] is True
    assert [part["paged"] for part in found["savers"]["in_host"]] == [True]  # the 8-bit moments
    assert found["savers"]["not_held"][0]["key"] == "part.gradients16"
    request = parse_request(**TORCHTUNE_8B_OPTIONS)
    peak = estimate(request).peak
    assert peak is not None
    # Before the savers the bot said 2.55 × this (51.7 GB) and "❌ 3 × RTX 4090".
    assert peak.peak_gb * 1e9 / GIB == pytest.approx(TORCHTUNE_8B_PEAK_GIB, rel=0.15)
    assert peak.fits
    assert main(TORCHTUNE_8B) == 0
    title, _, command = capsys.readouterr().out.splitlines()[:3]
    # Nine options make a long answer: its title leaves the optimizer to the command line below it.
    assert title == "✅ Llama 3.1 8B: 19.7 GB peak fits one RTX 4090 24 GB"
    assert "optimizer:paged_adam8bit" in command


def test_offloaded_optimizer_state_leaves_the_card_and_is_shown_in_host_ram() -> None:
    seed = estimate(parse_request(params=7))
    offloaded = estimate(parse_request(params=7, offload="optimizer"))
    assert (seed.model_states_gb, offloaded.model_states_gb) == (112, 28)  # 16 → 2 + 2 on the card
    # The fp32 master copy goes with the moments, as under DeepSpeed ZeRO-Offload: 4 + 4 + 4.
    assert offloaded.host_gb == pytest.approx(84)
    assert [part.key for part in offloaded.in_host] == [
        "part.master32",
        "part.adam_momentum32",
        "part.adam_variance32",
    ]


def test_each_saver_lowers_the_moment_it_acts_on_and_accumulation_keeps_m() -> None:
    # SGD in bf16 at 2 × 2048: without checkpointing the loss holds the peak, which a chunked loss and
    # offloaded activations lower; with it the recompute does (every gradient but the embedding's),
    # which the optimizer in backward removes.
    base = {
        "model": "llama-3.1-8b",
        "precision": "bf16",
        "optimizer": "sgd",
        "batch_size": 2,
        "seq_len": 2048,
    }
    for setup, saver in (
        ({}, {"chunked_loss": True}),
        ({}, {"offload": "activations"}),
        ({"checkpointing": True}, {"optimizer_in_backward": True}),
    ):
        plain = estimate(parse_request(**base, **setup)).peak
        saved = estimate(parse_request(**base, **setup, **saver)).peak
        assert plain is not None
        assert saved is not None
        assert saved.peak_gb < plain.peak_gb - 1, saver
    plain_request = parse_request(**base)
    accumulated = estimate(parse_request(**base, grad_accum=8))
    assert accumulated.model_states_gb == estimate(plain_request).model_states_gb
    # From the second micro-batch on the accumulated gradients (16 GB) live through forward.
    assert accumulated.peak is not None
    assert accumulated.peak.moment == "loss backward"


def test_the_seeds_three_keep_their_figures_and_the_new_ones_name_theirs() -> None:
    mixed = {optimizer: bytes_per_param_for(optimizer, Precision.MIXED) for optimizer in Optimizer}
    assert (mixed[Optimizer.ADAM], mixed[Optimizer.ADAM8BIT], mixed[Optimizer.SGD]) == (16, 12, 8)
    assert mixed[Optimizer.LION] == 12  # one fp32 momentum beside the 2 + 2 + 4
    assert mixed[Optimizer.ADAFACTOR] == pytest.approx(8.01)  # factored: rows + columns
    assert mixed[Optimizer.PAGED_ADAM8BIT] == 12  # its moments are paged, not gone


def test_optimizer_in_backward_with_accumulation_gets_a_clear_answer() -> None:
    with pytest.raises(InvalidRequest) as raised:
        parse_request(params=7, optimizer_in_backward=True, grad_accum=4)
    text = problems_message(raised.value.problems)
    assert "`grad_accum` to 1" in text


@pytest.mark.parametrize("language", list(Language))
def test_the_savers_add_no_line_to_the_short_answer(language: Language) -> None:
    """Nine options make a long command line (six phone rows); the whole answer, that line included,
    stays within the glance's limits: the verdict and total in the title, at most 900 characters and
    14 phone rows (it took 17 in English and 19 in German, the command's six among them)."""
    request = parse_request(**TORCHTUNE_8B_OPTIONS)
    embed = render_embed(estimate(request), language)
    title = str(embed["title"])
    assert title.startswith("✅")
    assert "19.7 GB" in title or "19,7 GB" in title  # the step's peak, which the verdict follows
    assert embed_characters(embed) <= 900
    description = str(embed["description"])
    assert description.startswith(f"`{command_line(request)}`\n")  # controls read the request there
    assert_phone_lines_within(embed, 14, f"savers torchtune {language.value}")
    # The paged moments are in host RAM, not "0 GB" on the card, and the gradients not held are gone.
    assert "→\u00a0" in description
    assert "0\u00a0GB" not in description.replace("20\u00a0GB", "")


@pytest.mark.parametrize("language", list(Language))
def test_a_part_moved_off_the_card_shows_where_it_went(language: Language) -> None:
    """Offloaded optimizer state is in host RAM, not 0 GB on the card: the glance's breakdown says
    so beside the card's parts, and Details lists each part where it lives."""
    found = estimate(parse_request(params=7, offload="optimizer"))
    description = str(render_embed(found, language)["description"]).replace("\u00a0", " ")
    host = {Language.EN: "🟨 → host RAM 84.0 GB", Language.DE: "🟨 → Host-RAM 84,0 GB"}[language]
    assert host in description
    assert "optimizer state 0 GB" not in description
    assert "Optimizer-Zustand 0 GB" not in description
    details = " ".join(f["value"] for f in render_details(found, language)["fields"]).replace("\u00a0", " ")
    assert {Language.EN: "in host RAM", Language.DE: "im Host-RAM"}[language] in details


def test_one_parts_table_carries_every_part_where_it_lives(capsys: pytest.CaptureFixture[str]) -> None:
    """The seed's figures are the table's card rows (7B Adam 14 + 14 + 84 = 112 GB, + 20 GB
    activations = 132 GB); a saver moves rows off the card, and --format json carries the same table."""
    seed = estimate(parse_request(params=7, activations=20)).table
    assert [(row.kind, row.place, row.planned_gb) for row in seed.rows] == [
        ("weights", "gpu", 14),
        ("gradients", "gpu", 14),
        ("optimizer", "gpu", 84),
        ("activations", "gpu", 20),
    ]
    assert seed.gb("gpu") == 132
    recipe = estimate(parse_request(**TORCHTUNE_8B_OPTIONS)).table
    assert [(row.kind, row.place) for row in recipe.rows if row.place != "gpu"] == [
        ("optimizer", "host"),  # the paged 8-bit moments
        ("gradients", "none"),  # stepped in backward
    ]
    assert main(["estimate", "7", "--offload", "optimizer", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["parts_table"]
    assert [(row["place"], row["planned_gb"]) for row in rows if row["kind"] == "optimizer"] == [
        ("gpu", 0),
        ("host", 84),
    ]
    assert all(row["measured_gb"] is None for row in rows)  # the bot plans; `vram-bot measure` measures


def test_the_requests_savers_follow_its_options_however_it_was_made() -> None:
    """``savers`` takes a shortcut for a request given no saver option: a variant made by model_copy,
    or a request given a saver at its default, still gets its own."""
    from bot.estimate.savers import NO_SAVERS, Offload, Savers

    plain = parse_request(params=7)
    assert plain.savers == NO_SAVERS
    variant = plain.model_copy(update={"offload": Offload.BOTH, "grad_accum": 4})
    assert variant.savers == Savers(offload=Offload.BOTH, grad_accum=4)
    assert variant.savers.optimizer_offloaded
    assert variant.savers.activations_offloaded
    assert parse_request(params=7, chunked_loss=True).savers == Savers(chunked_loss=True)
    assert parse_request(params=7, offload="none", grad_accum=1).savers == NO_SAVERS
    in_backward = parse_request(params=7, optimizer_in_backward=True).savers
    assert in_backward.optimizer_in_backward
    assert not in_backward.optimizer_offloaded
