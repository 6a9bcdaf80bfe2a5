"""Phrases the views share: what is fine-tuned, with which method, on which card, and whether it fits."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, TypedDict

from bot.estimate.hardware import Gpu
from bot.estimate.hub import HubModel
from bot.estimate.methods import Method, adapted_linears
from bot.estimate.models import Architecture, LayerKind
from bot.estimate.optimizers import Optimizer, Precision, on_card_bytes_per_param_for
from bot.estimate.tensors import CountedModel
from bot.present.hub_problems import hub_notes
from bot.present.i18n import DEFAULT_LANGUAGE, Language
from bot.present.words import Words, optimizer_name, precision_name, strategy_name

# The command's choice names (choice_name, below) are worded at the bot's start; the estimator and the
# family declarations load after it (benchmarks/README.md, the cold start), so they are imported where
# an answer is worded.
if TYPE_CHECKING:
    from bot.estimate.core import AdapterHint, Change, Estimate

FITS_COLOUR = 0x2ECC71
DOES_NOT_FIT_COLOUR = 0xE74C3C
NEUTRAL_COLOUR = 0x5865F2


class EmbedField(TypedDict):
    name: str
    value: str
    inline: bool


def method_name(estimate: Estimate, w: Words) -> str:
    """The optimizer's name, or "Custom 10 B/param" when a custom B replaced it."""
    if estimate.request.bytes_per_param is not None:
        return w("method.custom", bytes=w.num(estimate.request.bytes_per_param))
    return optimizer_name(estimate.request.optimizer, w, estimate.request.precision)


def subject(estimate: Estimate, w: Words) -> str:
    """What is being fine-tuned: the preset's name, or "a 7B model"."""
    request = estimate.request
    if request.model is not None and request.params is None:
        return w("subject.named", name=request.model.name)
    return w("subject.size", a_size=w.a(w.short(estimate.params_billion)))


SHORT_METHOD_KEYS: dict[Optimizer, str] = {
    Optimizer.ADAM: "short.adam",
    Optimizer.ADAM8BIT: "short.adam8bit",
    Optimizer.SGD: "short.sgd",
    Optimizer.PAGED_ADAM8BIT: "optimizer.short_paged_adam8bit",
    Optimizer.ADAFACTOR: "optimizer.adafactor",
    Optimizer.LION: "optimizer.lion",
    Optimizer.MUON: "optimizer.short_muon",
}
# Vendor words dropped from a card's name in the title, where "H100 80 GB" says enough.
_VENDOR_PREFIXES = ("NVIDIA GeForce ", "NVIDIA ", "AMD Instinct ", "AMD ")


_SHORT_METHOD_OF = {Method.LORA: "method.short.lora", Method.QLORA: "method.short.qlora"}


def short_optimizer_name(estimate: Estimate, w: Words) -> str:
    """ "Adam", "8-bit Adam", "SGD" or "Custom 10 B/param": the optimizer (or custom B) alone."""
    if estimate.request.bytes_per_param is not None:
        return method_name(estimate, w)  # "Custom 10 B/param" is short already
    return w(SHORT_METHOD_KEYS[estimate.request.optimizer])


def short_method_name(estimate: Estimate, w: Words) -> str:
    """ "Adam", "LoRA · Adam" or "10 B/param": the method in a title that has to fit a phone."""
    name = short_optimizer_name(estimate, w)
    method = estimate.request.method
    return name if method is Method.FULL else w(_SHORT_METHOD_OF[method], optimizer=name)


def short_card_name(gpu: Gpu) -> str:
    """ "H100 80 GB" for "NVIDIA H100 80 GB": the card named without its vendor, for titles. The memory
    stays in the name: "2 × A100" would not say whether 40 GB or 80 GB cards are meant."""
    return _SHORT_CARD_NAMES[gpu]


def _without_vendor(name: str) -> str:
    for prefix in _VENDOR_PREFIXES:
        if name.startswith(prefix):
            return name.removeprefix(prefix)
    return name


_SHORT_CARD_NAMES = {gpu: _without_vendor(gpu.display_name) for gpu in Gpu}


def card_name(estimate: Estimate, w: Words) -> str:
    """The picked card's name, or the original calculator's plain "80 GB GPU" when none was picked."""
    verdict = estimate.single_gpu
    return verdict.gpu.display_name if verdict.named else w("card.size", gb=w.num(verdict.capacity_gb))


def verdict_text(estimate: Estimate, w: Words) -> str:
    """Details' verdict: fits or by how much not, what the verdict followed, and what would fit."""
    verdict = estimate.verdict
    basis = basis_text(estimate, w)
    if verdict.fits:
        return f"{w('verdict.fits', gb=w.gb(verdict.capacity_gb - verdict.judged_gb))} {basis}"
    over = f"{w('verdict.over', gb=w.gb(verdict.overflow_gb))} {basis}"
    capacity = w.num(verdict.capacity_gb)
    if verdict.cards_needed is None:
        what = fill_advice(estimate, w)
        return f"{over} {w('verdict.activations_fill', a_capacity=w.a(capacity), what=what)}"
    text = f"{over} {w('verdict.sharded', gpus=w.plain(verdict.cards_needed), capacity=capacity)}"
    change = verdict.cheapest
    if change is not None and change.kind != "cards":
        text += f" {w('basis.cheapest', change=change_text(change, estimate, w))}"
    return text


def basis_text(estimate: Estimate, w: Words) -> str:
    """What decided the verdict: the step's peak (per GPU under the strategy on several cards), or V."""
    verdict = estimate.verdict
    where = w("basis.where_one")
    if verdict.strategy is not None:
        where = w(
            "basis.where_cards", strategy=strategy_name(verdict.strategy, w), gpus=w.plain(verdict.gpus)
        )
    if verdict.basis == "peak":
        return w("basis.peak", gb=w.gb(verdict.judged_gb), where=where, v=w.gb(verdict.total_gb))
    if verdict.peak_gb is not None:  # the step frees more than it adds: V is the larger figure
        return w("basis.v_over_peak", gb=w.gb(verdict.judged_gb), where=where, peak=w.gb(verdict.peak_gb))
    if estimate.request.activations is not None:
        return w("basis.entered", gb=w.gb(verdict.judged_gb), where=where)
    return w("basis.total", gb=w.gb(verdict.judged_gb), where=where)


def fill_advice(estimate: Estimate, w: Words, *, short: bool = False, listed: bool = False) -> str:
    """What shrinks what every card holds whatever the sharding (the activations), of the changes not
    on already: "activation checkpointing, a smaller batch or shorter sequences" (``short``, for the
    glance's two phone rows: "checkpointing, …"; ``listed``: "…, a smaller batch, shorter sequences",
    for an answer short of rows)."""
    request = estimate.request
    found = estimate.activation_estimate
    options = []
    if not request.checkpointing:
        options.append(w("train.checkpointing_short" if short else "advice.checkpointing"))
    if found is None or found.batch_size > 1:  # an entered figure's batch is not known
        options.append(w("advice.smaller_batch"))
    options.append(w("advice.shorter"))
    if len(options) == 1 or listed:
        return ", ".join(options)
    return w("advice.or", first=", ".join(options[:-1]), last=options[-1])


def change_text(change: Change, estimate: Estimate, w: Words, terse: bool = False) -> str:
    """One change that makes the request fit, with the per-card figure it fits at (``terse``: more
    cards by their memory alone, "3 × 96 GB", as the bar's caption has it: the title names them)."""
    gb = w.gb(change.gb)
    if change.kind == "cards":
        gpu = estimate.single_gpu
        card = f"{w.num(gpu.capacity_gb)} GB" if terse else short_card_name(gpu.gpu)
        return w("advice.cards", gpus=w.plain(change.gpus), card=card)
    return w(_CHANGE_KEYS[change.kind], gb=gb)


_CHANGE_KEYS = {
    "checkpointing": "advice.checkpointing_fits",
    "lora": "advice.lora_fits",
    "qlora": "advice.qlora_fits",
}


def advice_line(estimate: Estimate, w: Words, *, terse: bool = False) -> str | None:
    """The short answer's word on what would fit, when it does not, in the LoRA line's place: every
    change that fits, cheapest first, with its per-card figure (more cards only on the cards asked
    for: on one card the title gives the count); where no number of cards can, what shrinks what
    every card holds (``terse``: in the fewest words, for an answer short of phone rows). None: it
    fits, or only what the LoRA line or the title says would (it stays)."""
    verdict = estimate.verdict
    if verdict.fits:
        return None
    if verdict.cards_needed is None and not verdict.changes:
        what = fill_advice(estimate, w, short=True, listed=terse)
        return w("perf.fill_terse" if terse else "advice.fill", what=what)
    shown = [change for change in verdict.changes if change.kind != "cards" or verdict.strategy is not None]
    if all(change.kind in ("lora", "qlora") for change in shown):
        return None  # the LoRA line says as much, and which card they fit

    # Each change in one piece: a phone wraps between them, never inside "10 × H100 80 GB ZeRO-3".
    changes = [change_text(change, estimate, w, terse).replace(" ", "\u00a0") for change in shown]
    return w("advice.fits_with", changes=" · ".join(changes))


def adapter_fit(hint: AdapterHint, w: Words) -> str:
    """ "fits one 24 GB card", naming the smallest usual card that holds the adapter set-up."""
    if hint.smallest_card_gb is None:
        return w("lora.fits_none")
    return w("lora.fits", gb=w.num(hint.smallest_card_gb))


def adapters_text(estimate: Estimate, w: Words) -> str:
    """How many adapter parameters LoRA trains, on which layers, and how that was counted."""
    lora, model = estimate.lora, estimate.request.architecture
    if lora.rank is None or model is None:
        return w("lora.budget")
    share = lora.adapter_params_billion / estimate.params_billion * 100
    names = (linear.name for linear in adapted_linears(model, lora.rank, estimate.request.lora_targets))
    return w(
        # A hybrid's adapters sit on the layers of their kind (lora: attention's on attention layers).
        "lora.rank_by_kind" if len(model.mixer_counts) > 1 else "lora.rank",
        rank=w.plain(lora.rank),
        modules=", ".join(dict.fromkeys(names)),
        count=w.count(lora.adapter_params_billion * 1e9),
        share=w.num(share, ".2g"),
    )


def lora_terms(estimate: Estimate, w: Words) -> dict[str, str]:
    """The LoRA sum, base + adapters + activations = total, and the card it fits, as placeholders."""
    lora = estimate.lora
    return {
        "adapters": adapters_text(estimate, w),
        "base": w.gb(lora.base_gb),
        "adapter_gb": w.gb(lora.adapters_gb),
        "activations": w.gb(lora.activations_gb),
        "total": w.gb(lora.total_gb),
        "fit": adapter_fit(lora, w),
    }


def architecture_shape(model: Architecture, w: Words) -> str:
    shape = w(
        "preset.shape",
        layers=w.plain(model.layers),
        hidden=model.hidden_size,
        heads=model.attention_heads,
        kv_heads=model.kv_heads,
        mlp=model.intermediate_size,
        vocab=model.vocab_size,
    )
    return shape + (w("preset.experts", experts=model.experts) if model.experts > 1 else "")


def tower_name(estimate: Estimate, w: Words) -> str:
    """The towers' name: vision, audio or both, by what the repo's tensors hold (a preset's: vision)."""
    model = estimate.request.model
    tensors = model.tensors if model is not None else None
    vision, audio = (tensors.part("vision"), tensors.part("audio")) if tensors is not None else (1, 0)
    if vision and audio:
        return w("tower.vision_audio")
    return w("tower.audio" if audio else "tower.vision")


def tower_line(estimate: Estimate, w: Words) -> str | None:
    """The glance's word on a multimodal model's towers: frozen (their weights only), or trained
    too with ``train_vision``; None for a text model."""
    if not estimate.request.tower_params:
        return None
    if estimate.frozen is None:
        return w("glance.tower_trained")
    both = tower_name(estimate, w) == w("tower.vision_audio")
    return w("glance.towers_frozen" if both else "glance.tower_frozen")


def tower_text(estimate: Estimate, w: Words) -> str | None:
    """Details' word on the towers: what the frozen ones cost and M with them, or that they train."""
    request = estimate.request
    towers = request.tower_params
    if not towers:
        return None
    tower = tower_name(estimate, w)
    frozen = estimate.frozen
    if frozen is None:
        return w("details.trained_tower", tower=tower, count=w.count(towers))
    return w(
        "details.frozen",
        tower=tower,
        count=w.count(towers),
        w=w.num(frozen.bytes_per_param),
        gb=w.gb(estimate.part_gb(frozen)),
        trained=w.short(estimate.trained_params_billion),
        bytes=w.num(estimate.bytes_per_param),
        frozen=w.short(estimate.frozen_params_billion),
        m=w.gb(estimate.model_states_gb),
    )


_KIND_KEYS: dict[LayerKind, str] = {
    "attention": "hybrid.kind_attention",
    "linear_attention": "hybrid.kind_linear_attention",
    "mamba": "hybrid.kind_mamba",
    "conv": "hybrid.kind_conv",
    "attention_mamba": "hybrid.kind_attention_mamba",
    "none": "hybrid.kind_none",
    "mamba1": "frontier.kind_mamba1",
}


def hybrid_kinds(model: Architecture, w: Words) -> str:
    """The layers of a hybrid model by kind, in the model's order: "36 Gated DeltaNet, 12 attention"."""
    if model.output_groups is not None:  # DeepSeek-V4: its attention kinds, the indexer in the CSA layers
        sliding = model.layers - model.compressed_sparse_layers - model.heavily_compressed_layers
        counts = (
            ("frontier.kind_sliding_window", sliding),
            ("frontier.kind_compressed_sparse", model.compressed_sparse_layers),
            ("frontier.kind_heavily_compressed", model.heavily_compressed_layers),
        )
        return ", ".join(w(key, count=n, heads=model.index_heads or 0) for key, n in counts if n)
    parts = [w(_KIND_KEYS[kind], count=count) for kind, count in model.mixer_counts.items()]
    if model.index_heads is not None:
        parts.append(w("hybrid.indexer", heads=model.index_heads))
    return ", ".join(parts)


def hybrid_activation_notes(model: Architecture, w: Words) -> list[str]:
    """hybact: which path a hybrid model's activations follow (the GPU kernels, with how much more
    the torch fallback saves), what its sparse-attention indexer keeps; or, where its family's
    activations are not modelled, that they are left to ``activations``."""
    from bot.estimate import hybrid_saved
    from bot.estimate.family_traits import offers_activations, traits_for

    kinds = hybrid_kinds(model, w)
    if not offers_activations(model):
        return [w("hybrid.activations", kinds=kinds)]
    notes = []
    if hybrid_saved.has_kernel_layers(model):
        ratio = hybrid_saved.fallback_ratio(model, traits_for(model))
        notes.append(w("hybact.kernel_path", kinds=kinds, ratio=w.num(ratio, ".1f")))
    if model.output_groups is not None:  # act: DeepSeek-V4's layers (compressed_layer_bytes)
        notes.append(w("hybact.compressed", kinds=kinds, streams=w.plain(model.residual_streams)))
    elif model.index_heads is not None:
        notes.append(w("hybact.indexer", kinds=kinds))
    return notes


def architecture_notes(model: HubModel, w: Words, brief: bool = False, counted: bool = True) -> list[str]:
    """What the count of a preset means: total and active parameters of a mixture of experts, the
    text model of a multimodal repo, multi-token-prediction layers left out; for a repo known by its
    tensors only, what they say. ``brief``: only what changes how a figure reads (what N holds, a count
    the tensors contradict, a packed checkpoint, a MoE's active count in a few words), for a short
    answer that a phone has no room for the rest in; Details says it all. Without ``counted`` (brief
    only), the MoE's active count is left to Details too."""
    if isinstance(model, CountedModel):
        return hub_notes(model, w, brief)
    # brief: a hybrid's activation path and the MoE's long form are Details' to say.
    notes = hybrid_activation_notes(model, w) if model.is_hybrid and not brief else []
    if model.is_moe and brief:
        if not counted:
            return notes + hub_notes(model, w, brief)
        total, active = w.count(model.parameter_count), w.count(model.active_parameter_count)
        notes.append(w("glance.moe", total=total, active=active))
    elif model.is_moe:
        from bot.estimate.family_traits import traits_for

        # Llama 4 in transformers keeps every expert's activations, not only the routed ones'.
        all_experts = traits_for(model).dense_experts
        notes.append(
            w(
                "preset.moe_all_experts" if all_experts else "preset.moe",
                total=w.count(model.parameter_count),
                active=w.count(model.active_parameter_count),
            )
        )
    if model.text_only_of_multimodal:  # N holds the towers (by the tensors or a count); the shape does not
        if model.tensors is not None:
            notes.append(w("preset.text_only_activations"))
        elif model.non_text_params:
            notes.append(w("preset.text_only"))
        else:  # a config without a stored count: the tower is not known, so not in N
            notes.append(w("preset.text_model_only"))
    if model.mtp_layers and not brief:  # left out as the published count leaves them: Details says so
        notes.append(w("preset.mtp", layers=w.plain(model.mtp_layers)))
    return notes + hub_notes(
        model, w, brief
    )  # a Hub repo's source and stored count (bot/present/hub_problems.py)


def largest_batch_text(estimate: Estimate, w: Words) -> str | None:
    """The largest micro-batch that fits, with and without checkpointing, when the request asks about
    a sequence length or a batch of a known architecture."""
    found, request = estimate.largest_batch, estimate.request
    if found is None or (request.seq_len is None and request.batch_size is None):
        return None
    card = card_name(estimate, w)
    seq_len = w.plain(found.seq_len)
    sharded = None
    if found.strategy is not None:
        sharded = {"strategy": strategy_name(found.strategy, w), "gpus": w.plain(request.gpus)}
    if found.checkpointed_batch is None:
        if sharded is not None:  # ZeRO-3 shards all it can already: only more or larger cards are left
            key = "batch.none_sharded_zero3" if found.strategy == "ZeRO-3" else "batch.none_sharded"
            return w(key, seq_len=seq_len, card=card, **sharded)
        return w("batch.none", seq_len=seq_len, card=card)
    if found.batch is None:
        text = w(
            "batch.only_checkpointed",
            seq_len=seq_len,
            card=card,
            checkpointed=w.plain(found.checkpointed_batch),
        )
    else:
        text = w(
            "batch.largest_one" if found.batch == 1 else "batch.largest",
            seq_len=seq_len,
            card=card,
            batch=w.plain(found.batch),
            checkpointed=w.plain(found.checkpointed_batch),
        )
    return text if sharded is None else f"{text} {w('batch.per_gpu', **sharded)}"


def context_warning(estimate: Estimate, w: Words) -> str | None:
    """A warning when the sequence is longer than the model was trained for (it is still estimated)."""
    context, model, seq_len = estimate.beyond_context, estimate.request.model, estimate.request.seq_len
    if context is None or model is None or seq_len is None:
        return None
    return w(
        "activations.beyond_context", seq_len=w.plain(seq_len), model=model.name, context=w.plain(context)
    )


def activation_assumptions(estimate: Estimate, w: Words) -> str | None:
    from bot.estimate.family_traits import traits_for

    found = estimate.activation_estimate
    if found is None:
        return None
    warning = context_warning(estimate, w)
    assumptions = w(
        "activations.assumptions",
        batch=w.plain(found.batch_size),
        seq_len=w.plain(found.seq_len),
        setup=precision_name(estimate.request.precision, w),
        attention=w("activations.flash" if found.flash_attention else "activations.standard"),
        recompute=w("activations.checkpointing" if found.checkpointing else "activations.no_checkpointing"),
        per_layer=w.gb(found.per_layer_gb),
        outside=w.gb(found.outside_layers_gb),
    )
    model = estimate.request.architecture
    if model is not None and model.is_moe and traits_for(model).dense_experts:
        # Far more than a top-k MoE keeps, and not what every framework does: say why.
        experts = w(
            "activations.dense_experts",
            experts=w.plain(model.experts),
            active=w.plain(model.experts_per_token),
        )
        assumptions = f"{assumptions}\n{experts}"
    return f"{warning}\n{assumptions}" if warning else assumptions


# Where a step's peak falls (the moments of bot.estimate.step_peak.step_peak).
PEAK_MOMENT_KEYS = {
    "loss forward": "peak.loss_forward",
    "loss backward": "peak.loss_backward",
    "eager attention backward": "peak.eager_backward",
    "recompute": "peak.recompute",
    "optimizer step": "peak.optimizer_step",
    "indexer forward": "hybact.peak_indexer",
}


def peak_text(estimate: Estimate, w: Words) -> str | None:
    """The step's peak beside V, and a warning when V fits the card but the peak does not; under
    ZeRO on several cards, also one card's peak with the verdict's strategy."""
    from bot.estimate.core import CUDA_CONTEXT_GB

    peak = estimate.peak
    if peak is None:
        return None
    card = card_name(estimate, w)
    capacity = estimate.single_gpu.capacity_gb
    moment = w(PEAK_MOMENT_KEYS[peak.moment])
    context = w.gb(CUDA_CONTEXT_GB)
    # Below V where the step frees more than it adds: the gradients are freed before the loss, the
    # activations before the optimizer step, and V holds both.
    head = w(
        "peak.beyond" if peak.transients_gb >= 0 else "peak.below",
        peak=w.gb(peak.peak_gb),
        moment=moment,
        transients=w.gb(abs(peak.transients_gb)),
        context=context,
    )
    against = _against_the_card(peak.peak_gb, peak.fits, estimate.total_gb <= capacity, capacity, card, w)
    line = f"{head}; {against}"
    card_peak, cluster = peak.per_card, estimate.cluster
    if card_peak is None or cluster is None:
        return line
    # The peak above is one process holding everything; under ZeRO a card holds its share.
    v_fits = estimate.verdict.total_gb <= capacity
    per_gpu = w(
        "peak.per_gpu",
        strategy=strategy_name(card_peak.strategy, w),
        gpus=w.plain(estimate.request.gpus),
        peak=w.gb(card_peak.peak_gb),
        moment=w(PEAK_MOMENT_KEYS[card_peak.moment]),
    )
    against = _against_the_card(card_peak.peak_gb, card_peak.fits, v_fits, capacity, card, w)
    return f"{line}\n{w('peak.whole_model')} {per_gpu}; {against}"


def _against_the_card(
    peak_gb: float, fits: bool, v_fits: bool, capacity_gb: float, card: str, w: Words
) -> str:
    """Over the card by how much, or fits it; a peak that fits where V does not says that the verdict
    follows V (which counts all the gradients and all the activations at once)."""
    if not fits:
        return w("peak.over", card=card, over=w.gb(peak_gb - capacity_gb))
    return w("peak.fits" if v_fits else "peak.fits_not_v", card=card)


def optimizer_choice_name(optimizer: Optimizer, language: Language = DEFAULT_LANGUAGE) -> str:
    """How a choice reads in Discord's picker; it starts with the key so typing the key finds it."""
    w = Words(language)
    return w(
        "choice.optimizer",
        key=optimizer.value,
        name=optimizer_name(optimizer, w),
        # What the card holds (a paged optimizer's moments page out): a menu, not a sum.
        bytes=bytes_text(on_card_bytes_per_param_for(optimizer, Precision.MIXED), w),
    )


def bytes_text(bytes_per_param: float, w: Words) -> str:
    """Bytes per parameter as a menu shows them, rounded as a rule of thumb is: "16", "6.03", never
    "6.03125" (bitsandbytes' block-wise absmax in full)."""
    return w.num(bytes_per_param, ".3g")


def gpu_choice_name(gpu: Gpu, language: Language = DEFAULT_LANGUAGE) -> str:
    return Words(language)("choice.gpu", key=gpu.value, name=gpu.display_name)


def choice_name(choice: StrEnum, language: Language = DEFAULT_LANGUAGE) -> str:
    """The name of one value of a choice option, as Discord's picker shows it."""
    if isinstance(choice, Optimizer):
        return optimizer_choice_name(choice, language)
    if isinstance(choice, Gpu):
        return gpu_choice_name(choice, language)
    if isinstance(choice, Precision):
        w = Words(language)
        return w("choice.precision", key=choice.value, name=precision_name(choice, w))
    return choice.value
