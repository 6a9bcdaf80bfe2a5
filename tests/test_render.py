"""Rendering an estimate to Discord's embed JSON and to terminal text."""

from __future__ import annotations

import pytest

from bot.estimate.core import estimate
from bot.estimate.optimizers import Optimizer
from bot.estimate.request import parse_request
from bot.present.answer import render_embed, usage_bar
from bot.present.command_line import command_line
from bot.present.compare import render_compare
from bot.present.details import render_details
from bot.present.figures import figures
from bot.present.i18n import Language
from bot.present.phrases import DOES_NOT_FIT_COLOUR, FITS_COLOUR, optimizer_choice_name
from bot.present.terminal import embed_to_text
from bot.present.words import Words
from tests.embed_limits import embed_limit_problems


def embed_for(**options: object) -> dict[str, object]:
    return render_embed(estimate(parse_request(**options)))


def details_for(**options: object) -> dict[str, object]:
    return render_details(estimate(parse_request(**options)))


def field(embed: dict[str, object], name: str) -> str:
    fields = embed["fields"]
    assert isinstance(fields, list)
    return str(next(f["value"] for f in fields if f["name"] == name))


def test_worked_example_embed() -> None:
    embed = embed_for(params=7, activations=20)
    assert embed["title"] == "❌ 7B · Adam: 132.0 GB — 3 × H100 80 GB with ZeRO-3"
    description = str(embed["description"])
    assert description.startswith("`/vram params:7 optimizer:adam activations:20`")
    assert "M = N × B = 7 × 16 = 112.0 GB" in description
    assert "V = M + A = 112.0 + 20.0 = **132.0 GB**" in description
    assert "🟨\u00a0optimizer state 84.0\u00a0GB 🟪\u00a0activations 20.0\u00a0GB" in description
    assert embed["color"] == DOES_NOT_FIT_COLOUR
    assert "💡 LoRA 35.1 GB (one 48 GB card) · QLoRA 24.8 GB (one 48 GB card)" in description
    assert "first-order estimate" in str(embed["footer"]).lower()
    details = details_for(params=7, activations=20)
    assert "52.0 GB over" in field(details, "Does it fit the card?")
    assert "3 × 80 GB GPUs" in field(details, "Does it fit the card?")


def test_details_have_one_breakdown_line_per_part_and_the_sum() -> None:
    lines = field(details_for(params=7, optimizer="adam8bit"), "Breakdown per parameter").splitlines()
    assert lines[0] == "16-bit weights: 2 B/param · 14.0 GB"
    assert lines[2] == "fp32 master weights: 4 B/param · 28.0 GB"
    assert lines[-1] == "**Sum: 12 B/param**"
    assert len(lines) == 5


def test_fitting_estimate_is_green_with_headroom() -> None:
    embed = embed_for(params=1, optimizer="sgd", activations=2)
    assert embed["color"] == FITS_COLOUR
    assert embed["title"] == "✅ 1B · SGD: 10.0 GB fits one H100 80 GB"
    assert "Fits, with 70.0 GB to spare." in field(
        details_for(params=1, optimizer="sgd", activations=2), "Does it fit the card?"
    )


def test_activations_that_fill_the_card_advise_checkpointing() -> None:
    embed = embed_for(params=1, activations=90)
    assert str(embed["title"]).startswith(
        "❌ 1B · Adam: 106.0 GB — activations alone overflow one H100 80 GB"
    )
    verdict = field(details_for(params=1, activations=90), "Does it fit the card?")
    assert "activation checkpointing, a smaller batch or shorter sequences" in verdict
    assert "fills an 80 GB card" in verdict
    # The short answer says what to do too (issue 21: it said "activations alone overflow" only).
    assert "💡 Every card overflows: checkpointing, a smaller batch" in str(embed["description"])


def test_no_smaller_batch_advice_for_a_batch_of_one() -> None:
    verdict = field(
        details_for(model="llama-3.1-8b", batch_size=1, seq_len=1_048_576, gpu="t4"), "Does it fit the card?"
    )
    assert "smaller batch" not in verdict
    assert "shorter sequences" in verdict


@pytest.mark.parametrize(
    ("number", "english"),
    [
        ("8", "an 8"),
        ("80", "an 80"),
        ("800", "an 800"),
        ("8.5", "an 8.5"),
        ("11", "an 11"),
        ("18", "an 18"),
        ("11,000", "an 11,000"),
        ("18,500", "an 18,500"),
        ("110", "a 110"),
        ("1,800", "a 1,800"),
        ("7", "a 7"),
        ("48", "a 48"),
        ("192", "a 192"),
        ("0.5", "a 0.5"),
    ],
)
def test_the_english_article_follows_the_number_sound(number: str, english: str) -> None:
    assert Words().a(number) == english
    assert Words(Language.DE).a(number) == number  # German's article is in its text


def test_a_and_an_before_numbers_in_every_view() -> None:
    assert str(details_for(params=8)["title"]).endswith("an 8B model")
    assert str(details_for(params=7)["title"]).endswith("a 7B model")
    assert str(details_for(params=11)["title"]).endswith("an 11B model")
    assert "a 80" not in str(details_for(params=1, activations=90))


def test_copyable_command_line_lists_only_what_was_given() -> None:
    assert command_line(parse_request(params=7)) == "/vram params:7 optimizer:adam"
    assert (
        command_line(parse_request(params=0.5, optimizer="sgd", bytes_per_param=10))
        == "/vram params:0.5 optimizer:sgd bytes_per_param:10"
    )


@pytest.mark.parametrize(
    ("parts", "bar"),
    [
        ([("activations", 0)], "⬛⬛⬛⬛⬛⬛⬛⬛ 0 % of 80 GB"),
        ([("weights", 20), ("optimizer", 20)], "🟦🟦🟨🟨⬛⬛⬛⬛ 50 % of 80 GB"),
        ([("weights", 40), ("activations", 40)], "🟦🟦🟦🟦🟪🟪🟪🟪 100 % of 80 GB"),
        ([("weights", 30), ("gradients", 5), ("optimizer", 5)], "🟦🟦🟦🟩⬛⬛⬛⬛ 50 % of 80 GB"),
        ([("weights", 84)], "🟦🟦🟦🟦🟦🟦🟦🟦 1.1 × 80 GB"),
        ([("weights", 112)], "🟦🟦🟦🟦🟦🟦🟦🟦 1.4 × 80 GB"),
        ([("optimizer", 1128.8)], "🟨🟨🟨🟨🟨🟨🟨🟨 14 × 80 GB"),
        ([("weights", 500), ("activations", 500)], "🟦🟦🟦🟦🟪🟪🟪🟪 12 × 80 GB"),
    ],
)
def test_usage_bar(parts: list[tuple[str, float]], bar: str) -> None:
    assert usage_bar(parts) == bar.replace("of 80 GB", "of\u00a080\u00a0GB").replace(
        " × 80 GB", "\u00a0×\u00a080\u00a0GB"
    ).replace(" % ", "\u00a0%\u00a0")


def test_the_bar_stays_one_phone_line_and_its_colours_are_the_parts() -> None:
    for options in ({"params": 7}, {"params": 100_000, "activations": 1_000_000}, {"params": 0.001}):
        bar = str(embed_for(**options)["description"]).splitlines()[-1]
        assert len(bar) <= 30
        assert bar.count("🟦") + bar.count("🟩") + bar.count("🟨") + bar.count("🟪") + bar.count("⬛") == 8


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
    text = embed_to_text(embed_for(params=7, optimizer="adam8bit"))
    assert "**" not in text
    assert "`" not in text
    assert "/vram params:7 optimizer:adam8bit" in text
    assert "V = M + A = 84.0 + 0 = 84.0 GB" in text
    details = embed_to_text(details_for(params=7, optimizer="adam8bit"))
    assert "❌ Does not fit: 4.0 GB over." in details


def test_choice_names_start_with_the_key() -> None:
    for optimizer in Optimizer:
        name = optimizer_choice_name(optimizer)
        assert name.startswith(optimizer.value + " ")
        assert len(name) <= 100  # Discord's limit for a choice name
    assert optimizer_choice_name(Optimizer.ADAM8BIT) == "adam8bit · 8-bit Adam, ~12 B/param"


def test_a_mixture_of_experts_shows_total_and_active_parameters_and_what_it_leaves_out() -> None:
    description = str(embed_for(model="deepseek-v3")["description"])
    assert "671B total, 37.6B active per token" in description
    assert "Its 1 multi-token-prediction layer(s) are not counted" in field(
        details_for(model="deepseek-v3"), "The preset"
    )
    scout = str(embed_for(model="llama-4-scout")["description"])
    assert "108B total, 17.2B active per token" in scout
    assert "vision encoder and projector too" in field(details_for(model="llama-4-scout"), "The preset")
    dense = str(embed_for(model="llama-3.1-8b")["description"])
    assert "active per token" not in dense


def test_a_preset_without_batch_or_sequence_says_activations_are_not_counted() -> None:
    description = str(embed_for(model="llama-3.1-8b")["description"])
    assert "🟪\u00a0activations not counted: add `seq_len`" in description
    assert "activations not counted" not in str(embed_for(params=7)["description"])
    assert "activations not counted" not in str(embed_for(model="llama-3.1-8b", seq_len=4096)["description"])


def test_lora_by_rank_names_the_layers_it_counts() -> None:
    hint = field(details_for(model="deepseek-v3", lora_rank=8), "Why LoRA changes the picture")
    assert "rank 8 on q_a_proj, q_b_proj, kv_a_proj_with_mqa, kv_b_proj, o_proj," in hint
    assert "experts.gate_up_proj" in hint  # peft's 3-D experts of transformers 5


def test_compare_says_when_a_preset_has_no_activations_counted() -> None:
    compare = render_compare(estimate(parse_request(model="deepseek-v3")))
    assert "Activations not counted (add `seq_len`)" in str(compare["description"])
    estimated = render_compare(estimate(parse_request(model="deepseek-v3", seq_len=4096)))
    assert "not counted" not in str(estimated["description"])


@pytest.mark.parametrize("language", list(Language))
def test_the_peak_on_several_cards_says_it_is_one_card_holding_everything(language: Language) -> None:
    """The step's peak is that of one process holding the whole model: with gpus > 1 Details says
    so, and gives one card's peak under the strategy the verdict follows; on one card it says
    nothing of the kind."""
    options = {"model": "llama-3.1-70b", "batch_size": 1, "seq_len": 4096}
    marker = {Language.EN: "one card holding the whole model", Language.DE: "das ganze Modell hält"}[language]
    sharded = embed_to_text(render_details(estimate(parse_request(**options, gpus=8)), language))
    single = embed_to_text(render_details(estimate(parse_request(**options)), language))
    assert marker in sharded
    assert " 8 " in sharded.split(marker)[1].splitlines()[0]  # names the cards
    assert marker not in single


@pytest.mark.parametrize("language", list(Language))
def test_details_give_one_cards_peak_and_batch_under_zero(language: Language) -> None:
    """Llama 3.1 8B on 8 cards at 2,048 tokens (the README's example): ZeRO-1 fits (the verdict's
    strategy), and so does one card's peak under it; a card takes 2 sequences (13 checkpointed), by
    the larger of V and the peak per card. It used to say that not even one sequence fits, from one
    card's whole optimizer step added to a ZeRO-3 card's states. On 2 cards nothing fits even with
    ZeRO-3, the verdict's strategy there, so the advice is more or larger cards, not "shard further"."""
    result = estimate(parse_request(model="llama-3.1-8b", gpus=8, seq_len=2048))
    text = embed_to_text(render_details(result, language))
    per_gpu, batch, advice = {
        Language.EN: (
            "With ZeRO-1 across the 8 cards, each card holds its share of the model states and of the "
            "optimizer step's temporaries: ≈ 52.7 GB per GPU at the optimizer step; fits one 80 GB GPU.",
            "holds a micro-batch of up to 2 sequences (13 with full activation checkpointing). That is "
            "per GPU, with ZeRO-1 across the 8 cards, as in the verdict.",
            "even with ZeRO-3 across the 2 cards and full activation checkpointing: use more cards or larger",
        ),
        Language.DE: (
            "Mit ZeRO-1 über die 8 Karten hält jede Karte ihren Anteil an den Modellzuständen und an den "
            "Zwischenspeichern des Optimizer-Schritts: ≈ 52,7 GB je GPU beim Optimizer-Schritt; passt "
            "auf eine 80-GB-GPU.",
            "einen Micro-Batch von bis zu 2 Sequenzen (13 mit vollem Activation-Checkpointing). Das gilt "
            "je GPU, mit ZeRO-1 über die 8 Karten – wie im Urteil.",
            "auch nicht mit ZeRO-3 über die 2 Karten und vollem Activation-Checkpointing: mehr Karten",
        ),
    }[language]
    assert per_gpu in text
    assert batch in text
    two = estimate(parse_request(model="llama-3.1-8b", gpus=2, seq_len=2048))
    assert advice in embed_to_text(render_details(two, language))


@pytest.mark.parametrize("language", list(Language))
def test_a_peak_below_v_says_so(language: Language) -> None:
    """A step never holds all the gradients (freed before the loss) and all the activations (freed
    before the step) at once, so its peak can be below V: Details says "V − …", never "V + -…", and a
    card's peak that fits where V does not says that the verdict follows V."""
    below_v = estimate(parse_request(model="llama-3.1-70b", optimizer="sgd", precision="bf16", seq_len=512))
    assert below_v.peak is not None
    assert below_v.peak.transients_gb < 0
    text = embed_to_text(render_details(below_v, language))
    assert "V − 16.6 GB" in text.replace("16,6", "16.6")
    assert "+ -" not in text
    assert "+ −" not in text
    two = estimate(parse_request(model="qwen2.5-14b", precision="bf16", gpus=2, seq_len=2048))
    assert two.cluster is not None
    assert not two.cluster.followed.fits  # ❌ by V per GPU
    assert two.peak is not None
    assert two.peak.per_card is not None
    assert two.peak.per_card.fits
    marker = {
        Language.EN: "though V does not: the verdict follows V",
        Language.DE: "V aber nicht: das Urteil folgt V",
    }
    assert marker[language] in embed_to_text(render_details(two, language))


@pytest.mark.parametrize("language", list(Language))
def test_on_eight_cards_the_verdict_follows_each_cards_peak(language: Language) -> None:
    """Issue 21's finding: Llama 3.1 8B on 8 cards at 2 × 4,096 was ✅ "77.3 GB per GPU" with ZeRO-3
    while a card's step peaks at 82.2 GB. The verdict follows the peak: ❌ with the card's figure for
    the 8 cards, a bar beyond the card, and the cheapest changes that fit (checkpointing, 10 cards)."""
    result = estimate(parse_request(model="llama-3.1-8b", gpus=8, seq_len=4096, batch_size=2))
    embed = render_embed(result, language)
    title, advice = {
        Language.EN: (
            "❌ Llama 3.1 8B · Adam: 82.2 GB peak per GPU on 8 × H100 80 GB with ZeRO-3",
            "💡 Fits with checkpointing 54.8 GB · 10 × H100 80 GB ZeRO-3",
        ),
        Language.DE: (
            "❌ Llama 3.1 8B · Adam: 82,2 GB Spitze pro GPU auf 8 × H100 80 GB mit ZeRO-3",
            "💡 Passt mit Checkpointing 54,8 GB · 10 × H100 80 GB ZeRO-3",
        ),
    }[language]
    assert embed["title"] == title
    assert embed["color"] == DOES_NOT_FIT_COLOUR
    description = str(embed["description"])
    assert advice in description.replace("\u00a0", " ")  # each change in one piece
    assert "⚠️" not in description
    assert description.endswith(
        "1,1\u00a0×\u00a080\u00a0GB" if language is Language.DE else "1.1\u00a0×\u00a080\u00a0GB"
    )
    assert result.verdict_basis == "peak"
    assert result.verdict.cards_needed == 10
    # --format json says the same: the card's peak, what the verdict follows, and that it does not fit.
    shown = figures(result)
    assert shown["peak_gb"] == pytest.approx(82.2, abs=0.05)
    assert (shown["verdict_basis"], shown["fits"]) == ("peak", False)
    assert shown["verdict"]["changes"][0] == {
        "kind": "checkpointing",
        "gb_per_gpu": pytest.approx(54.8, abs=0.05),
        "gpus": 8,
    }
    entered = figures(estimate(parse_request(params=1, optimizer="sgd", activations=90)))
    assert (entered["peak_gb"], entered["verdict_basis"]) == (None, "total")
    # Compare judges each row as its answer: Adam's row is the title's 82.2 GB per GPU, over the card.
    compare = str(render_compare(result, language)["description"]).replace("\u00a0", " ")
    row = {
        Language.EN: "Adam · 16 B/param: **82.2 GB**, ❌ 2.2 GB over",
        Language.DE: "Adam · 16 B/Param.: **82,2 GB**, ❌ 2,2 GB zu viel",
    }
    assert row[language] in compare
    ten = estimate(parse_request(model="llama-3.1-8b", gpus=10, seq_len=4096, batch_size=2))
    assert ten.verdict.fits  # the card count is what gpus:10 shows fitting
    roomy = estimate(parse_request(model="llama-3.1-8b", gpus=8, seq_len=2048, batch_size=1))
    assert roomy.verdict.fits
    assert "💡 Fits with" not in str(render_embed(roomy, language)["description"])


def test_under_data_parallel_the_peak_is_each_cards_own() -> None:
    """Qwen2.5 1.5B fits 8 cards with plain data parallel, where every card holds the whole model:
    the peak's line is each card's, and no per-GPU line repeats it."""
    result = estimate(parse_request(model="qwen2.5-1.5b", gpus=8, seq_len=2048))
    assert result.cluster is not None
    assert result.cluster.followed.strategy == "data parallel"
    assert result.peak is not None
    assert result.peak.per_card is None
    assert "per GPU at" not in embed_to_text(render_details(result))


@pytest.mark.parametrize("language", list(Language))
def test_details_say_why_llama_4_keeps_so_much(language: Language) -> None:
    """transformers runs every token through all of Llama 4's experts: Details says so beside the
    activation estimate, and says nothing of the kind for a top-k MoE such as Mixtral."""
    note = {
        Language.EN: "transformers runs every token through all 16 experts of each MoE layer",
        Language.DE: "transformers schickt jedes Token durch alle 16 Experten jeder MoE-Schicht",
    }[language]
    scout = embed_to_text(
        render_details(estimate(parse_request(model="llama-4-scout", seq_len=4096)), language)
    )
    mixtral = embed_to_text(
        render_details(estimate(parse_request(model="mixtral-8x7b", seq_len=4096)), language)
    )
    assert note in scout
    assert "every token through all" not in mixtral
    assert "jedes Token durch alle" not in mixtral
    # The preset's count says the activations follow the total here, not the active experts.
    follows = {
        Language.EN: ("and so does the activation estimate", "the activation estimate the active experts"),
        Language.DE: (
            "und hier auch die Aktivierungsschätzung",
            "die Aktivierungsschätzung den aktiven Experten",
        ),
    }[language]
    assert follows[0] in scout
    assert follows[1] not in scout
    assert follows[1] in mixtral


def test_the_optimizer_menu_rounds_bytes_per_parameter() -> None:
    """Issue 21: the menu read "~6.03125 B/param" (8-bit Adam in bf16, bitsandbytes' absmax in full)."""
    from bot.present.controls import render_controls

    select = render_controls(parse_request(params=7, precision="bf16"), "est", Language.EN)[0]["components"][
        0
    ]
    descriptions = [option["description"] for option in select["options"]]
    assert "~6.03 B/param" in descriptions
    assert all("6.03125" not in text for text in descriptions)
    assert (
        "~16 B/param"
        in render_controls(parse_request(params=7), "est", Language.EN)[0]["components"][0]["options"][0][
            "description"
        ]
    )
