"""The answer to ``/vram``: the estimate at a glance, as a Discord embed (plain JSON data, no Discord I/O).

It is written for a phone: the verdict and the figure are the title, and the rest is a short text in
the description (fields would add a heading line each). In order: the copyable ``/vram …`` line
(controls of a request too long for their custom_id read it back from there, so it stays the first
line), the seed's two formulas with the numbers, the parts in GB, LoRA and QLoRA in one line, and a
coloured bar. An answer too long for a phone screen gives rows back (:data:`ROOMS`), down to leaving
the command line to Details where its controls carry the request themselves. Everything longer
(bytes per parameter of each part, the sharding table, the activation estimate's assumptions) is in
Details.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any, Literal

from bot.estimate.core import USUAL_CARDS_GB, Estimate
from bot.estimate.hardware import DEFAULT_GPU
from bot.estimate.methods import Method
from bot.estimate.models import preset_variant, variant_context
from bot.estimate.optimizers import PartKind
from bot.estimate.sharding import Strategy, card_share
from bot.estimate.value_type import value_type
from bot.present.command_line import command_line, given_line
from bot.present.custom_ids import carried
from bot.present.i18n import DEFAULT_LANGUAGE, Language, Template, catalogue, substituted
from bot.present.phone import MAX_PHONE_ROWS, embed_rows
from bot.present.phrases import (
    DOES_NOT_FIT_COLOUR,
    FITS_COLOUR,
    SHORT_METHOD_KEYS,
    advice_line,
    architecture_notes,
    bytes_text,
    context_warning,
    short_card_name,
    short_method_name,
    tower_line,
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
    # What a card holds beyond the parts: the step's transients and the CUDA context where the verdict
    # follows the peak, DeepSpeed's fp32 gradient partition and gathered module where it follows V.
    "extra": "🟧",
}
FREE_SQUARE = "⬛"
ACTIVATION_KEYS = (
    "glance.activations",
    "glance.activations_estimated",
    "glance.activations_not_counted",
    "glance.activations_need_option",
)
_PART_KEYS: dict[PartKind, str] = {
    "weights": "glance.weights",
    "gradients": "glance.gradients",
    "optimizer": "glance.optimizer",
}


@value_type
class Glance:
    """What the title, colour and bar agree on, as the estimate's one verdict has it: fits or not, and
    the judged figure on one card (the step's peak where the bot estimates it, else V).

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
    verdict = estimate.verdict
    return Glance(verdict.fits, verdict.judged_gb, verdict.strategy)


def colour(estimate: Estimate) -> int:
    return glance(estimate).colour


def title(estimate: Estimate, language: Language = DEFAULT_LANGUAGE) -> str:
    """The verdict and the figure: "✅ 7B · SGD: 56.0 GB fits one H100 80 GB"."""
    wording = _wording(language)
    w = wording.words
    total, size = w.gb(estimate.total_gb), w.short(estimate.params_billion)
    return _title(estimate, glance(estimate), wording, total, size)


# The title's wordings: fits one card, fits the cards asked for, overflows the cards asked for, needs
# this many, cannot fit at all.
_TITLE_KEYS = (
    "glance.fits",
    "glance.cluster_fits",
    "glance.cluster_over",
    "glance.sharded",
    "glance.activations_fill",
)


def _without(text: str, piece: str) -> str:
    """A title's wording without one of its pieces, which every title has (a wording without it is
    refused, not shown whole)."""
    if piece not in text:
        raise ValueError(f"a title without {piece!r}: {text!r}")
    return text.replace(piece, "")


# What an answer short of phone rows leaves to the command line above it: the method, then the subject
# too (the verdict and figure stay).
_METHOD_IN_TITLE = " · {method}"
_SUBJECT_IN_TITLE = "{subject}: "


def _title(
    estimate: Estimate,
    seen: Glance,
    wording: _Wording,
    total: str,
    size: str,
    named: bool = True,
    subject_shown: bool = True,
) -> str:
    """``total`` (V) and ``size`` (N) as the formula shows them, formatted once for both; without
    ``named``, the method and optimizer are left out, and without ``subject_shown`` the model too (the
    command line above names them)."""
    w = wording.words
    request = estimate.request
    # A preset's name, else the size, which the template words ("7B").
    subject = request.model.name if request.model is not None and request.params is None else None
    if request.bytes_per_param is None and request.method is Method.FULL:
        method = wording.short_methods[request.optimizer]
    else:
        method = short_method_name(estimate, w)  # "Custom 10 B/param", "LoRA · Adam"
    verdict = estimate.verdict
    # The judged figure, V where it decides ("total": the seed's V, as the formula shows it).
    judged = total if verdict.basis == "total" and seen.strategy is None else w.gb(seen.per_card_gb)
    values = {
        "subject": subject,
        "size": size,
        "gb": wording.peak_figure.fill({"gb": judged}) if verdict.basis == "peak" else judged,
        "method": method,
        "card": short_card_name(estimate.single_gpu.gpu),
    }
    if seen.strategy is not None:  # per GPU on the cards asked for, under the strategy followed
        key = "glance.cluster_fits" if seen.fits else "glance.cluster_over"
        values["gpus"] = w.plain(request.gpus)
        values["strategy"] = strategy_name(seen.strategy, w)
    elif seen.fits:
        key = "glance.fits"
    elif verdict.cards_needed is None:
        key = "glance.activations_fill"
    else:
        key = "glance.sharded"
        values["gpus"] = w.plain(verdict.cards_needed)
    if not subject_shown:
        return wording.setup_free_titles[key].fill(values)
    return wording.titles[key, subject is not None, named].fill(values)


def part_sizes(estimate: Estimate) -> list[tuple[str, float]]:
    """The memory on the card by colour of the bar, from the estimate's parts table: weights (a frozen
    tower's with them), gradients, optimizer state (a custom B is one part, shown in the optimizer's
    colour, since it has no breakdown), and activations. A kind a saver moved off the card entirely
    (offloaded, paged, or not held under the optimizer in backward) has no place on the card: the
    breakdown says where it went instead (:func:`moved_sizes`)."""
    table = estimate.table
    if estimate.custom_bytes:  # then a frozen tower's weights join its one part too
        return [("optimizer", estimate.model_states_gb), ("activations", estimate.activations_gb)]
    sizes: dict[str, float] = {}
    moved = {row.kind for row in table.rows if row.place != "gpu"}
    for row in table.rows:
        if row.place == "gpu" and not (row.kind in moved and not row.planned_gb):
            sizes[row.kind] = sizes.get(row.kind, 0.0) + row.planned_gb
    return list(sizes.items())


def moved_sizes(estimate: Estimate, seen: Glance) -> list[tuple[str, float]]:
    """What the savers keep in host RAM, by colour of the bar (optimizer state, activations): shown
    after the card's parts, off the bar; on several cards one card's host share, as the card's parts
    are (each rank offloads its partition of the optimizer state, and its own activations)."""
    moved = [(str(row.kind), row.planned_gb) for row in estimate.table.at("host")]
    if seen.strategy is None or not moved:
        return moved
    optimizer_share = card_share(seen.strategy, estimate.request.gpus).optimizer
    return [(kind, gb * optimizer_share if kind == "optimizer" else gb) for kind, gb in moved]


# An item's fewest columns, where the phone is short of rows: its square, its figure and the sign
# that says what the figure is (≈ estimated, + beyond the parts, → moved to host RAM).
_BARE_ITEMS = {
    "glance.activations_estimated": "≈\u00a0{gb}",
    "answer.extra_peak": "+{gb}",
    "train.host": "→\u00a0RAM\u00a0{gb}",
}


# The items kept in one piece: where a part went ("→ host RAM"), and what a card holds beyond its parts.
_WHOLE_ITEM_KEYS = ("train.host", "answer.extra_peak", "answer.extra_buffers")


def _around_gb(template: str) -> tuple[str, str | None]:
    """A catalogue text's words before and after its one ``{gb}`` (None after: it has none), its
    escaped braces read as the template reads them (filled with a NUL, which no catalogue has)."""
    filled = Template(template).fill({"gb": "\0"})
    if filled.count("\0") > 1:
        raise ValueError(f"a breakdown item with {{gb}} twice: {template!r}")
    before, gb, after = filled.partition("\0")
    return (before, after) if gb else (before, None)


# Below this, what a card holds beyond its parts is rounding, not a part of the bar worth a legend.
EXTRA_SHOWN_GB = 0.05


def per_card_parts(
    estimate: Estimate, seen: Glance, parts: list[tuple[str, float]]
) -> list[tuple[str, float]]:
    """The ``parts`` on one card, adding up to the judged figure: all of them, or each part's share
    under a ZeRO strategy (ZeRO shards each part on its own terms, so the shares are exact;
    activations are on every card), then what the card holds beyond them ("extra")."""
    strategy = seen.strategy
    if strategy is None:
        on_card = parts
    elif estimate.custom_bytes:
        # A custom B has no breakdown: its one part is what the strategy leaves of the model states.
        states = estimate.verdict.total_gb - estimate.activations_gb
        on_card = [("optimizer", states), ("activations", estimate.activations_gb)]
    else:
        share = card_share(strategy, estimate.request.gpus)
        # With the optimizer offloaded, DeepSpeed moves each 16-bit gradient to host RAM as it is
        # reduced (bot.estimate.sharding): under ZeRO no card keeps the gradients, as its figure has it.
        offloaded = estimate.request.savers.optimizer_offloaded and strategy != "data parallel"
        shares = {
            "weights": share.weights,
            "gradients": 0.0 if offloaded else share.gradients,
            "optimizer": share.optimizer,
            "activations": 1.0,
        }
        on_card = [(kind, gb * shares[kind]) for kind, gb in parts if shares[kind]]  # none: not on it
    extra = seen.per_card_gb
    for _, gb in on_card:
        extra -= gb
    return [*on_card, ("extra", extra)] if extra >= EXTRA_SHOWN_GB else on_card


# The breakdown keeps each part in one piece on a phone: a no-break space after its square and before
# "GB", so a narrow screen may wrap between the parts' words, but never strands a square or a unit
# (the screenshots showed "14.0" and "GB" on two lines).
NBSP = "\u00a0"


class _Wording:
    """What the answer words the same way every time in one language, worded once: one template for
    its middle lines (the formulas, the breakdown, any warnings and the LoRA line), the LoRA line's
    card words, the bar's captions by card size, the footer.

    Filling one template (:class:`~bot.present.i18n.Template`) is one call; a helper and a format
    per line and per part cost as much again as the numbers themselves, on every ``/vram``.
    """

    __slots__ = (
        "adapter_cards",
        "captions",
        "footer",
        "items",
        "language",
        "lines",
        "peak_figure",
        "setup_free_titles",
        "short_methods",
        "titles",
        "words",
    )

    def __init__(self, language: Language) -> None:
        strings = catalogue(language)
        w = words_for(language)
        self.language = language
        self.words = w
        self.footer = w("glance.footer")
        self.peak_figure = Template(strings["answer.peak_figure"])  # "82.2 GB peak"
        # By (a frozen tower, the method, whether the answer advises what would fit, which takes the
        # hint line's place, and whether the hint line is left out for room): the formulas' wording.
        self.lines = {
            (frozen, method, advised, hinted): Template(
                _lines_template(strings, frozen, method, advised, hinted)
            )
            for frozen in (False, True)
            for method in Method
            for advised in (False, True)
            for hinted in (False, True)
        }
        # The breakdown's items by (colour, catalogue key, whether worded): a part after its square,
        # in one piece; and the same in the fewest columns (the square and its GB), for an answer
        # short of phone rows. A text without a figure ("activations not counted: add `seq_len`")
        # keeps its words, and where the part went ("→ host RAM") and what a card holds beyond its
        # parts are the point of their items. Each as the words before and after its GB, the square
        # worded in: an answer adds the GB alone.
        self.items: dict[tuple[str, str, bool], tuple[str, str | None]] = {}
        for key in (*_PART_KEYS.values(), "glance.custom", *ACTIVATION_KEYS, *_WHOLE_ITEM_KEYS):
            whole = key in _WHOLE_ITEM_KEYS
            worded = _item_template(strings[key], whole)
            bare = _item_template(_BARE_ITEMS.get(key, "{gb}"), whole) if "{gb}" in worded else worded
            for kind, square in SQUARES.items():
                for shown, text in ((True, worded), (False, bare)):
                    self.items[kind, key, shown] = _around_gb(substituted(text, {"square": square}))
        # The smallest usual card the adapter set-up fits, in the fewest words (None: none of them).
        self.adapter_cards: dict[float | None, str] = {
            card: w("glance.adapter_fits", gb=w.num(card)) for card in USUAL_CARDS_GB
        }
        self.adapter_cards[None] = w("glance.adapter_none")
        self.captions: dict[tuple[str, float], Template] = {}
        # By (wording, whether the subject is a preset's name): a size's subject ("7B") worded in.
        size_subject = {"subject": strings["glance.subject"]}
        # ... and whether it names the method ("7B · Adam: …"), which an answer short of phone rows
        # leaves to its command line.
        title_texts = {
            (key, named): strings[key] if named else substituted(strings[key], size_subject)
            for key in _TITLE_KEYS
            for named in (False, True)
        }
        self.titles = {
            (key, named, method): Template(text if method else _without(text, _METHOD_IN_TITLE))
            for (key, named), text in title_texts.items()
            for method in (False, True)
        }
        # ... and the verdict and figure alone ("❌ 33.2 GB peak per GPU on 8 × A10G 24 GB with ZeRO-3"),
        # the setup left to the command line.
        self.setup_free_titles = {
            key: Template(_without(_without(strings[key], _METHOD_IN_TITLE), _SUBJECT_IN_TITLE))
            for key in _TITLE_KEYS
        }
        self.short_methods = {optimizer: w(key) for optimizer, key in SHORT_METHOD_KEYS.items()}

    def caption(self, key: str, capacity_gb: float) -> Template:
        """The bar's caption for one card size, with no-break spaces: should a narrow screen wrap
        the line, the caption moves whole (the numbers filled in have no spaces)."""
        template = self.captions.get((key, capacity_gb))
        if template is None:
            capacity = {"capacity": self.words.num(capacity_gb)}
            text = substituted(catalogue(self.language)[key], capacity).replace(" ", NBSP)
            template = self.captions[key, capacity_gb] = Template(text)
        return template


@cache
def _wording(language: Language) -> _Wording:
    return _Wording(language)


# The hint line under each method: the cheaper methods it does not use yet (QLoRA has none).
_HINT_KEYS = {Method.FULL: "glance.lora", Method.LORA: "method.glance.qlora", Method.QLORA: None}


def _lines_template(
    strings: dict[str, str],
    frozen: bool,
    method: Method = Method.FULL,
    advised: bool = False,
    hinted: bool = True,
) -> str:
    """M = N × B (with a frozen tower, its weights added) and V = M + A, ``{breakdown}`` (the bar's
    legend), ``{warnings}`` and the LoRA line (or ``{advice}``), as one template."""
    formula = strings["formula.model_states_frozen" if frozen else "formula.model_states"]
    model_states = substituted(formula, {"m": "{m} GB"})  # M with its unit here
    # The breakdown's items (each part after its square, in the card's order, then what is in host
    # RAM; no separators between them: the squares divide them, and every column counts on a phone)
    # are filled in per answer (:func:`_breakdown`), since the savers change which parts are there.
    breakdown = "{breakdown}"
    # An answer that does not fit says what would, LoRA and QLoRA among it where they fit: that line
    # takes the hint line's place, so the answer stays as short as one that fits.
    hint_key = _HINT_KEYS[method]
    if advised:
        tail = "{warnings}\n{advice}"
    else:
        tail = "{warnings}" + ("" if hint_key is None or not hinted else f"\n{strings[hint_key]}")
    return f"{model_states}\n{strings['formula.total']}\n{breakdown}{tail}"


def _item_template(template: str, whole: bool = False) -> str:
    """A breakdown item: ``{square}`` and the part's words around its ``{gb}`` (which keeps its unit
    with a no-break space), ``whole`` in one piece ("→ host RAM" is never stranded)."""
    return "{square}" + NBSP + (template.replace(" ", NBSP) if whole else template)


def _activations_key(estimate: Estimate) -> str:
    if estimate.activation_estimate is not None:
        return "glance.activations_estimated"
    if estimate.request.model is not None and estimate.request.activations is None:
        # Known by its tensors only, or of a family whose activations were not measured: no estimate.
        if estimate.request.activation_shape is None:
            return "glance.activations_need_option"
        # A preset without batch or sequence length: A = 0 would read as "no activations", so say
        # that they are left out and how to have them estimated.
        return "glance.activations_not_counted"
    return "glance.activations"


@value_type
class Room:
    """How much of the answer a phone's rows have room for: all of it, or, for an answer whose
    command line is long (every option of a recipe typed out), without the footer (Details' button
    says the same), without the LoRA hint line (Compare and Details have both methods), and at last
    with the breakdown's items as their square and GB alone (Details words each part). The lines that
    say what was counted (a preset's variant, a Hub repo's notes, a MoE's active count) stay; then
    the title leaves the method and optimizer to the command line (its verdict and figure stay), and
    the advice where every card overflows says so in the fewest words (every change it names stays);
    a Hub repo keeps only the notes that change how a figure reads, in a few words ("N = 32.8B unpacked
    (Hub: 17B)."; Details has them all in full). Where a
    recipe's every option still takes too many rows, the command line shows only the options given
    (not the optimizer at its default), then the title leaves the model to it too; last, for a
    request that every control carries in its custom_id, the command line moves to Details (which
    starts with it) and the title names the model and method again; at the very last, a preset
    MoE's active count is left to Details' architecture too."""

    footer: bool = True
    hint: bool = True
    words: bool = True
    method: bool = True  # the title's method and optimizer, which the command line names too
    advice: bool = True  # the advice in its full words
    # A Hub repo's notes in full; else only those that change how a figure reads, in a few words
    # (a packed checkpoint's sentence took six phone rows; Details has all).
    notes: bool = True
    # The command line: "full" (with the options it always shows), "given" (only those typed), or
    # "details" (left to Details: only for a request its controls carry, custom_ids.carried).
    echo: Literal["full", "given", "details"] = "full"
    subject: bool = True  # the title's model, which the command line names too
    counted: bool = True  # a preset MoE's active count, which Details' architecture gives too


# Tried in this order until the answer fits the phone (bot.present.phone.MAX_PHONE_ROWS).
ROOMS = (
    Room(),
    Room(footer=False),
    Room(footer=False, hint=False),
    Room(footer=False, hint=False, words=False),
    Room(footer=False, hint=False, words=False, method=False),
    Room(footer=False, hint=False, words=False, method=False, advice=False),
    Room(footer=False, hint=False, words=False, method=False, advice=False, notes=False),
    Room(footer=False, hint=False, words=False, method=False, advice=False, notes=False, echo="given"),
    Room(
        footer=False,
        hint=False,
        words=False,
        method=False,
        advice=False,
        notes=False,
        echo="given",
        subject=False,
    ),
    # The command line in Details gives back the rows it took: the answer takes back what they hold.
    Room(footer=False, echo="details"),
    Room(footer=False, hint=False, echo="details"),
    Room(footer=False, hint=False, words=False, echo="details"),
    Room(footer=False, hint=False, words=False, advice=False, notes=False, echo="details"),
    Room(footer=False, hint=False, words=False, method=False, advice=False, notes=False, echo="details"),
    Room(
        footer=False,
        hint=False,
        words=False,
        method=False,
        advice=False,
        notes=False,
        echo="details",
        counted=False,
    ),
)


# What the middle lines show of a room (Room's words, hint and advice): all that _lines reads of it.
_Middle = tuple[bool, bool, bool]


def _breakdown(
    estimate: Estimate, wording: _Wording, seen: Glance, parts: list[tuple[str, float]], words: bool
) -> str:
    """The bar's legend: each of the card's parts after its square (what the card holds beyond them
    last, in orange), then what the savers keep in host RAM ("→ host RAM"), each in one piece;
    without ``words``, each part as its square and GB alone (Room.words)."""
    w = wording.words
    items = wording.items
    activations_key = _activations_key(estimate)
    extra_key = "answer.extra_peak" if estimate.verdict.basis == "peak" else "answer.extra_buffers"
    custom = estimate.custom_bytes
    texts: list[str] = []
    for kind, gb in parts:
        if kind == "activations":
            key = activations_key
        else:
            key = extra_key if kind == "extra" else _part_key(kind, custom)
        before, after = items[kind, key, words]
        texts.append(f"{before}{w.short_gb(gb, NBSP)}{after}" if after is not None else before)
    for kind, gb in moved_sizes(estimate, seen):
        before, after = items[kind, "train.host", words]
        texts.append(f"{before}{w.short_gb(gb, NBSP)}{after}")
    return " ".join(texts)


def _part_key(kind: str, custom: bool) -> str:
    return "glance.custom" if custom else _PART_KEYS[kind]  # type: ignore[index]


def _lines(
    estimate: Estimate,
    wording: _Wording,
    seen: Glance,
    parts: list[tuple[str, float]],
    total: str,
    size: str,
    shown: _Middle = (True, True, True),
) -> str:
    """The answer's middle lines filled in (``total``: V and ``size``: N, as the title shows them),
    with what a room shows of them (``shown``: its words, hint and advice, :data:`_Middle`)."""
    words, hint, full_advice = shown
    w = wording.words
    model_states = w.amount(estimate.model_states_gb)  # M in both formulas: formatted once
    lora, qlora = estimate.lora, estimate.qlora
    values = {
        "n": size,
        "b": w.num(estimate.bytes_per_param),
        "m": model_states,
        "a": w.amount(estimate.activations_gb),
        "v": total,
        "lora": w.short_gb(lora.total_gb),
        "lora_fit": wording.adapter_cards[lora.smallest_card_gb],
        "qlora": w.short_gb(qlora.total_gb),
        "qlora_fit": wording.adapter_cards[qlora.smallest_card_gb],
        "warnings": "",
        "breakdown": _breakdown(estimate, wording, seen, parts, words),
    }
    frozen = estimate.frozen
    if frozen is not None:
        # Four digits (M itself is exact): the line stays one row of a phone.
        values["trained"] = w.num(estimate.trained_params_billion, ",.4g")
        values["frozen"] = w.num(estimate.frozen_params_billion, ".3g")
        # A rule of thumb's digits: idle adapters kept in fp32 make it 2.00014 B (lora3).
        values["w"] = bytes_text(frozen.bytes_per_param, w)
    # Rare, and worth the line: the sequence is longer than the model's context (Details has the
    # full peak and the largest batch).
    if estimate.beyond_context is not None:
        warning = context_warning(estimate, w)
        if warning:
            values["warnings"] = f"\n{warning}"
    advice = advice_line(estimate, w, terse=not full_advice)  # what would make it fit, when it does not
    if advice:
        values["advice"] = advice
    key = (frozen is not None, estimate.request.method, advice is not None, hint)
    return wording.lines[key].fill(values)


def _cells(parts: list[tuple[str, float]], cells: int, gb_per_cell: float) -> str:
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
    # zip without strict=True: the same length by construction.
    return "".join([SQUARES[kind] * count for (kind, _), count in zip(parts, counts)])  # noqa: B905


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
    return _usage_bar(parts, capacity_gb, _wording(language))


def _usage_bar(
    parts: list[tuple[str, float]], capacity_gb: float, wording: _Wording, cards: int | None = None
) -> str:
    """As :func:`usage_bar`; ``cards``: the title's count of cards under ZeRO-3, which the caption
    gives where the total's multiple of one card would say another number (DeepSpeed's ZeRO-3 keeps
    more than the total: gpt-oss-120b is 23 cards' worth, and 32 cards hold it)."""
    w = wording.words
    total = 0.0
    for _, gb in parts:  # a loop: a generator costs more than the four additions
        total += gb
    if total <= capacity_gb:
        used = round(total / capacity_gb * BAR_CELLS)
        cells = _cells(parts, used, capacity_gb / BAR_CELLS) if used else ""
        # At most 100 and whole: no separators to localize, and never an exponent.
        percent = format(total / capacity_gb * 100, ".0f")
        caption = wording.caption("bar.share", capacity_gb).fill({"percent": percent})
        return f"{cells}{FREE_SQUARE * (BAR_CELLS - used)} {caption}"
    cells = _cells(parts, BAR_CELLS, total / BAR_CELLS)
    ratio = total / capacity_gb
    # From 10 on the multiple is whole and rounded, which would say 14 for 14.1 cards' worth.
    if cards is not None and (ratio >= 10 or cards != math.ceil(round(ratio, 6))):
        times = w.plain(cards)
    else:
        times = multiple(ratio, w)
    return f"{cells} {wording.caption('bar.multiple', capacity_gb).fill({'multiple': times})}"


def bar_line(estimate: Estimate, wording: _Wording, seen: Glance, parts: list[tuple[str, float]]) -> str:
    # With several cards the bar is one card's share; the title says which strategy and that it is
    # per GPU, so the caption stays short enough for the bar's line.
    verdict = estimate.verdict
    cards = verdict.cards_needed if verdict.strategy is None else None  # a count in the title
    return _usage_bar(parts, estimate.single_gpu.capacity_gb, wording, cards)


def preset_line(estimate: Estimate, w: Words, notes: bool = True, counted: bool = True) -> str | None:
    """Only what the title's name does not say: that ``params`` won, or a mixture of experts' active
    count (the architecture and what the count leaves out are in Details; without ``counted``, the
    active count too)."""
    model = estimate.request.model
    if model is None:
        return None
    if estimate.preset_overridden:
        return w("glance.overridden", model=model.name)
    tower = tower_line(estimate, w)  # a multimodal model's towers: frozen, or trained too
    if model.source == "hub":
        # A Hub repo says where its architecture came from and what its count means (a stored count
        # that differs, a family counted approximately, a multimodal repo's text model).
        notes_kept = architecture_notes(model, w, brief=not notes, counted=counted)
        return "\n".join([*notes_kept, *([tower] if tower else [])])
    lines = []
    if preset_variant(model) is not None:  # another repo of the same architecture, e.g. the Instruct one
        context = variant_context(model)  # ... trained for a longer context (Qwen3's -2507 releases)
        if context is not None:
            lines.append(w("presets.variant_context", name=model.name, context=w.plain(context)))
        else:
            lines.append(w("glance.variant", name=model.name))  # the command line above names the repo
    if model.is_moe and counted:
        total, active = w.count(model.parameter_count), w.count(model.active_parameter_count)
        lines.append(w("glance.moe", total=total, active=active))
    if tower:
        lines.append(tower)
    return "\n".join(lines) or None


def render_embed(estimate: Estimate, language: Language = DEFAULT_LANGUAGE) -> dict[str, Any]:
    """The answer as a Discord embed object (the JSON shape Discord documents)."""
    wording = _wording(language)
    w = wording.words
    seen = glance(estimate)  # the title, the colour and the bar agree on it
    total = w.gb(estimate.total_gb)  # V and N, in the title and the formula
    size = w.short(estimate.params_billion)
    # The breakdown is the bar's legend: the same parts, one card's, adding up to the judged figure.
    parts = per_card_parts(estimate, seen, part_sizes(estimate))
    # The copyable command line first (controls read a request too long for their custom_id from it).
    request = estimate.request
    commands = {"full": f"`{command_line(request)}`\n"}
    bar = bar_line(estimate, wording, seen, parts)
    # Most answers fit a phone screen with everything; a long one (a recipe's every option typed
    # out, advice that wraps, what is in host RAM) has the answer count its rows and give some back,
    # least needed first (Room). Counting costs more than a length, so only a long text is counted: no
    # answer of fewer characters than _ROOMY_CHARACTERS has more rows (tests/test_properties.py).
    # A room differs from the one before in a few of its pieces (the second in the footer alone):
    # the title and the middle lines are made again only where what they read of the room changed.
    noted = preset_line(estimate, w)  # the brief notes only for the room that asks for them
    carries: bool | None = None  # whether the request's controls carry it (for echo="details")
    named: tuple[bool, bool] | None = None  # what the title and the lines were made for
    middle: _Middle | None = None
    for room in ROOMS:
        echo = room.echo
        if echo == "details":
            if carries is None:
                carries = carried(request)
            if not carries:
                continue
        command = commands.get(echo)
        if command is None:
            command = commands[echo] = f"`{given_line(request)}`\n" if echo == "given" else ""
        preset = noted if room.notes and room.counted else preset_line(estimate, w, room.notes, room.counted)
        head = f"{command}{preset}\n" if preset else command
        if named != (room.method, room.subject):
            named = room.method, room.subject
            title = _title(estimate, seen, wording, total, size, room.method, room.subject)
        if middle != (room.words, room.hint, room.advice):
            middle = room.words, room.hint, room.advice
            lines = _lines(estimate, wording, seen, parts, total, size, middle)
        description = f"{head}{lines}\n{bar}"
        embed: dict[str, Any] = {"title": title, "description": description, "color": seen.colour}
        if room.footer:
            embed["footer"] = {"text": wording.footer}
        if len(title) + len(description) <= _ROOMY_CHARACTERS or embed_rows(embed) <= MAX_PHONE_ROWS:
            break
    return embed


# The title and description up to which every answer fits 14 phone rows with everything in it: the
# shortest answers seen over 14 rows by the preview's count have some 330 characters (a QLoRA answer
# with a three-row title; tests/test_glance.py holds them), so 300 leaves a margin.
_ROOMY_CHARACTERS = 300
