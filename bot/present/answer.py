"""The answer to ``/vram``: the estimate at a glance, as a Discord embed (plain JSON data, no Discord I/O).

It is written for a phone: the verdict and the figure are the title, and the rest is a short text in
the description (fields would add a heading line each). In order: the copyable ``/vram …`` line
(controls of a request too long for their custom_id read it back from there, so it stays the first
line), the seed's two formulas with the numbers, the parts in GB, LoRA and QLoRA in one line, and a
coloured bar. Everything longer (bytes per parameter of each part, the sharding table, the
activation estimate's assumptions) is in Details.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

from bot.estimate.core import Estimate
from bot.estimate.hardware import DEFAULT_GPU
from bot.estimate.optimizers import PartKind
from bot.estimate.sharding import Strategy, per_gpu_gb
from bot.estimate.value_type import value_type
from bot.present.command_line import command_line
from bot.present.i18n import DEFAULT_LANGUAGE, Language, catalogue
from bot.present.phrases import (
    DOES_NOT_FIT_COLOUR,
    FITS_COLOUR,
    architecture_notes,
    context_warning,
    peak_warning,
    short_card_name,
    short_method_name,
    short_subject,
)
from bot.present.words import Words, strategy_name, words_for

# Eight cells (10 GB each on an 80 GB card): coloured squares are emoji, some 22 px wide on a phone,
# and with ten the caption wrapped onto a second line at 360 px in the screenshots; eight and the
# caption fit one line.
BAR_CELLS = 8
# One colour per part, the same in the bar and in the breakdown line above it, which is the bar's legend.
# Emoji squares render in colour on every Discord client (desktop, web, iOS, Android); ANSI colour in
# code blocks does not reach the phones.
SQUARES: dict[str, str] = {
    "weights": "🟦",
    "gradients": "🟩",
    "optimizer": "🟨",
    "activations": "🟪",
}
FREE_SQUARE = "⬛"
ACTIVATION_KEYS = ("glance.activations", "glance.activations_estimated", "glance.activations_not_counted")
_PART_KEYS: dict[PartKind, str] = {
    "weights": "glance.weights",
    "gradients": "glance.gradients",
    "optimizer": "glance.optimizer",
}


@value_type
class Glance:
    """What the title, colour and bar agree on: fits or not, and the memory on one card.

    With ``gpus`` > 1 it follows the smallest strategy that fits on that many cards (or, when none
    does, ZeRO-3, the one that needs the least), so a 7B model that fits eight cards with ZeRO-1 is
    green with ZeRO-1's figure, not red with the single card's.
    """

    fits: bool
    per_card_gb: float
    strategy: Strategy | None  # None: the verdict is for one card

    @property
    def colour(self) -> int:
        return FITS_COLOUR if self.fits else DOES_NOT_FIT_COLOUR


def glance(estimate: Estimate) -> Glance:
    cluster = estimate.cluster
    if cluster is None:
        return Glance(estimate.single_gpu.fits, estimate.total_gb, None)
    best = cluster.smallest_fitting
    row = next(r for r in cluster.rows if r.strategy == (best or "ZeRO-3"))
    return Glance(best is not None, row.gb, row.strategy)


def colour(estimate: Estimate) -> int:
    return glance(estimate).colour


def title(estimate: Estimate, language: Language = DEFAULT_LANGUAGE) -> str:
    """The verdict and the figure: "✅ 7B · SGD: 56.0 GB fits one H100 80 GB"."""
    w = words_for(language)
    return _title(estimate, glance(estimate), w, w.gb(estimate.total_gb), w.short(estimate.params_billion))


def _title(estimate: Estimate, seen: Glance, w: Words, total: str, size: str) -> str:
    """``total`` (V) and ``size`` (N) as the formula shows them, formatted once for both."""
    subject = short_subject(estimate, w, size)
    method = short_method_name(estimate, w)
    card = short_card_name(estimate.single_gpu.gpu)
    if seen.strategy is not None and seen.fits:
        return w(
            "glance.cluster_fits",
            gb=w.gb(seen.per_card_gb),
            gpus=w.plain(estimate.request.gpus),
            strategy=strategy_name(seen.strategy, w),
            subject=subject,
            method=method,
            card=card,
        )
    if seen.fits:
        return w("glance.fits", gb=total, subject=subject, method=method, card=card)
    needed = estimate.single_gpu.sharded_gpus
    if needed is None:
        return w("glance.activations_fill", gb=total, subject=subject, method=method, card=card)
    return w("glance.sharded", gb=total, gpus=w.plain(needed), subject=subject, method=method, card=card)


def formula(estimate: Estimate, w: Words, total: str | None = None, size: str | None = None) -> str:
    """M = N × B and V = M + A with the numbers filled in (``total``: V and ``size``: N, if formatted
    already)."""
    model_states = w.amount(estimate.model_states_gb)  # M in both lines: formatted once
    first = w(
        "formula.model_states",
        n=w.short(estimate.params_billion) if size is None else size,
        b=w.num(estimate.bytes_per_param),
        m=f"{model_states} GB",
    )
    second = w(
        "formula.total",
        m=model_states,
        a=w.amount(estimate.activations_gb),
        v=w.gb(estimate.total_gb) if total is None else total,
    )
    return f"{first}\n{second}"


def part_sizes(estimate: Estimate) -> list[tuple[str, float]]:
    """The memory by colour of the bar: weights, gradients, optimizer state (a custom B is one part,
    shown in the optimizer's colour, since it has no breakdown), and activations."""
    sizes: dict[str, float] = {}
    for part in estimate.parts:
        sizes[part.kind] = sizes.get(part.kind, 0.0) + part.gb
    sizes["activations"] = estimate.activations_gb
    return list(sizes.items())


def _per_card_parts(
    estimate: Estimate, seen: Glance, parts: list[tuple[str, float]]
) -> list[tuple[str, float]]:
    """The ``parts`` on one card: all of them, or each part's share under a ZeRO strategy (ZeRO shards
    each part on its own terms, so the shares are exact; activations are on every card)."""
    strategy = seen.strategy
    if strategy is None:
        return parts
    if estimate.custom_bytes:
        # A custom B has no breakdown: its one part is what the strategy leaves of the model states.
        row_gb = seen.per_card_gb
        return [("optimizer", row_gb - estimate.activations_gb), ("activations", estimate.activations_gb)]
    gpus = estimate.request.gpus
    shares = {
        "weights": per_gpu_gb(strategy, 1.0, 0.0, 0.0, gpus),
        "gradients": per_gpu_gb(strategy, 0.0, 1.0, 0.0, gpus),
        "optimizer": per_gpu_gb(strategy, 0.0, 0.0, 1.0, gpus),
        "activations": 1.0,
    }
    return [(kind, gb * shares[kind]) for kind, gb in parts]


def short_gb(value: float, w: Words, space: str = " ") -> str:
    """GB as the breakdown and the LoRA line show them: whole from 100 GB on (1,342 GB), where a tenth
    says nothing and costs a phone's columns; the formulas above keep the exact figures. ``space``
    goes between the number and "GB"."""
    number = w.num(value, ",.0f") if abs(value) >= 100 else w.amount(value)
    return f"{number}{space}GB"


# The breakdown keeps each part in one piece on a phone: a no-break space after its square and before
# "GB", so a narrow screen may wrap between the parts' words, but never strands a square or a unit
# (the screenshots showed "14.0" and "GB" on two lines).
NBSP = "\u00a0"


@cache
def _item_templates(language: Language, custom: bool) -> dict[str, str]:
    """The breakdown's templates, each after its square and with no-break spaces: the model states'
    parts by kind (a custom B is one part, in the optimizer's colour), and the activations' three
    wordings by their catalogue key."""
    strings = catalogue(language)
    keys = {"optimizer": "glance.custom"} if custom else dict(_PART_KEYS)
    return {
        kind: f"{SQUARES[kind]}{NBSP}{strings[key]}".replace(" GB", f"{NBSP}GB") for kind, key in keys.items()
    } | {
        key: f"{SQUARES['activations']}{NBSP}{strings[key]}".replace(" GB", f"{NBSP}GB")
        for key in ACTIVATION_KEYS
    }


def _breakdown(estimate: Estimate, w: Words, parts: list[tuple[str, float]]) -> str:
    """The parts (:func:`part_sizes`) with their GB, each after its colour in the bar: the bar's legend."""
    templates = _item_templates(w.language, estimate.custom_bytes)
    items = []
    for kind, gb in parts:
        if kind != "activations":
            items.append(templates[kind].format(gb=short_gb(gb, w, NBSP)))
    if estimate.activation_estimate is not None:
        key = "glance.activations_estimated"
    elif estimate.request.model is not None and estimate.request.activations is None:
        # A preset without batch or sequence length: A = 0 would read as "no activations", so say
        # that they are left out and how to have them estimated.
        key = "glance.activations_not_counted"
    else:
        key = "glance.activations"
    items.append(templates[key].format(gb=short_gb(estimate.activations_gb, w, NBSP)))
    # No separators: the coloured squares divide the parts, and every column counts on a phone.
    return " ".join(items)


def _cells(parts: list[tuple[str, float]], cells: int, gb_per_cell: float) -> list[str]:
    """``cells`` squares split between the parts by largest remainder, so that the colours add up to
    the bar's length exactly and a part of at least half a cell shows."""
    counts: list[int] = []
    behind: list[float] = []  # each part's whole cells minus its exact share: most behind first
    missing = cells
    for _, gb in parts:
        exact = gb / gb_per_cell
        whole = math.floor(exact)
        counts.append(whole)
        behind.append(whole - exact)
        missing -= whole
    if missing > 0:
        order = sorted(range(len(parts)), key=behind.__getitem__)  # stable: ties in the parts' order
        for index in range(missing):
            counts[order[index % len(order)]] += 1
    squares = []
    for (kind, _), count in zip(parts, counts):  # noqa: B905 (the same length by construction)
        squares.append(SQUARES[kind] * count)
    return squares


def multiple(ratio: float, w: Words) -> str:
    """How many cards' worth: 1.4, 14; never "1" for something that overflows."""
    if ratio < 10:
        return w.num(max(1.1, math.ceil(round(ratio * 10, 6)) / 10), ".1f")
    return w.num(round(ratio), ",.0f")


def usage_bar(
    parts: list[tuple[str, float]],
    capacity_gb: float = DEFAULT_GPU.memory_gb,
    language: Language = DEFAULT_LANGUAGE,
) -> str:
    """The bar for ``parts`` (kind, GB) on one card: within the card, each part's share of the card
    and ``⬛`` for what is free; beyond it, the parts' shares of the total, and the multiple of the
    card in the caption."""
    return _usage_bar(parts, capacity_gb, words_for(language))


def _usage_bar(parts: list[tuple[str, float]], capacity_gb: float, w: Words) -> str:
    total = sum(gb for _, gb in parts)
    if total <= capacity_gb:
        used = round(total / capacity_gb * BAR_CELLS)
        cells = "".join(_cells(parts, used, capacity_gb / BAR_CELLS)) if used else ""
        percent = w.num(total / capacity_gb * 100, ".0f")  # at most 100: no thousands to group
        caption = _caption_template(w.language, "bar.share", capacity_gb).format(percent=percent)
        return f"{cells}{FREE_SQUARE * (BAR_CELLS - used)} {caption}"
    cells = "".join(_cells(parts, BAR_CELLS, total / BAR_CELLS))
    times = multiple(total / capacity_gb, w)
    return f"{cells} {_caption_template(w.language, 'bar.multiple', capacity_gb).format(multiple=times)}"


@cache
def _caption_template(language: Language, key: str, capacity_gb: float) -> str:
    """The bar's caption for one card size, with no-break spaces: should a narrow screen wrap the
    line, the caption moves whole (the numbers filled in have no spaces)."""
    capacity = words_for(language).num(capacity_gb)
    return catalogue(language)[key].replace("{capacity}", capacity).replace(" ", NBSP)


def bar_line(estimate: Estimate, w: Words, seen: Glance, parts: list[tuple[str, float]]) -> str:
    # With several cards the bar is one card's share; the title says which strategy and that it is
    # per GPU, so the caption stays short enough for the bar's line.
    return _usage_bar(_per_card_parts(estimate, seen, parts), estimate.single_gpu.capacity_gb, w)


@cache
def _adapter_card_text(language: Language, card_gb: float | None) -> str:
    """The smallest usual card the adapter set-up fits, in the fewest words: one of a few card
    sizes, so worded once per language and size."""
    w = words_for(language)
    if card_gb is None:
        return w("glance.adapter_none")
    return w("glance.adapter_fits", gb=w.num(card_gb))


def lora_line(estimate: Estimate, w: Words) -> str:
    lora, qlora, language = estimate.lora, estimate.qlora, w.language
    return w(
        "glance.lora",
        lora=short_gb(lora.total_gb, w),
        lora_fit=_adapter_card_text(language, lora.smallest_card_gb),
        qlora=short_gb(qlora.total_gb, w),
        qlora_fit=_adapter_card_text(language, qlora.smallest_card_gb),
    )


def preset_line(estimate: Estimate, w: Words) -> str | None:
    """Only what the title's name does not say: that ``params`` won, or a mixture of experts' active
    count (the architecture and what the count leaves out are in Details)."""
    model = estimate.request.model
    if model is None:
        return None
    if estimate.preset_overridden:
        return w("glance.overridden", model=model.name)
    if model.source == "hub":
        # A Hub repo says where its architecture came from and what its count means (a stored count
        # that differs, a family counted approximately, a multimodal repo's text model).
        return "\n".join(architecture_notes(model, w))
    if model.is_moe:
        total, active = w.count(model.parameter_count), w.count(model.active_parameter_count)
        return w("glance.moe", total=total, active=active)
    return None


def render_embed(estimate: Estimate, language: Language = DEFAULT_LANGUAGE) -> dict[str, Any]:
    """The answer as a Discord embed object (the JSON shape Discord documents)."""
    w = words_for(language)
    seen = glance(estimate)  # the title, the colour and the bar agree on it
    total = w.gb(estimate.total_gb)  # V and N, in the title and the formula
    size = w.short(estimate.params_billion)
    description = [f"`{command_line(estimate.request)}`"]
    preset = preset_line(estimate, w)
    if preset:
        description.append(preset)
    parts = part_sizes(estimate)  # the breakdown is the bar's legend: the same parts for both
    description += [formula(estimate, w, total, size), _breakdown(estimate, w, parts)]
    # Rare, and worth the lines: the sequence is longer than the model's context, or V fits the card
    # but the step's peak does not (Details has the full peak and the largest batch).
    description += [line for line in (context_warning(estimate, w), peak_warning(estimate, w)) if line]
    description += [lora_line(estimate, w), bar_line(estimate, w, seen, parts)]
    return {
        "title": _title(estimate, seen, w, total, size),
        "description": "\n".join(description),
        "color": seen.colour,
        "footer": {"text": _footer(language)},
    }


@cache
def _footer(language: Language) -> str:
    return catalogue(language)["glance.footer"]
