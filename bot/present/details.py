"""The "Details" view: the formulas with the numbers filled in, explained as the original calculator's
details section explains them (model states dominate, activations are entered separately, LoRA).

It keeps everything the short answer leaves out: each part's bytes per parameter, the preset's
architecture and what its count leaves out, the activation estimate's assumptions, the sharding table
on several cards, QLoRA's sum and the full caveat."""

from __future__ import annotations

from typing import Any

from bot.estimate.core import Estimate
from bot.estimate.methods import Method
from bot.estimate.optimizers import Part
from bot.estimate.parts_table import Place
from bot.estimate.tensors import CountedModel
from bot.present.answer import colour
from bot.present.command_line import command_line
from bot.present.hub_problems import tensor_parts
from bot.present.i18n import DEFAULT_LANGUAGE, Language
from bot.present.phrases import (
    EmbedField,
    activation_assumptions,
    adapter_fit,
    adapters_text,
    architecture_notes,
    architecture_shape,
    card_name,
    largest_batch_text,
    lora_terms,
    method_name,
    peak_text,
    subject,
    tower_text,
    verdict_text,
)
from bot.present.savers import savers_text
from bot.present.words import Words, strategy_name


def _model_states(estimate: Estimate, w: Words) -> str:
    values = {
        "n": w.short(estimate.params_billion),
        "bytes": w.num(estimate.bytes_per_param),
        "m": w.gb(estimate.model_states_gb),
    }
    if estimate.custom_bytes:
        return w("details.custom_states", **values)
    parts = [w("details.part", bytes=w.num(p.bytes_per_param), part=w(p.key)) for p in estimate.parts]
    total = " + ".join(w.num(p.bytes_per_param) for p in estimate.parts)
    # With a frozen tower B is what a trained parameter costs, and M is worded with the tower's sum.
    key = "details.states" if estimate.frozen is None else "details.states_trained"
    text = w(key, method=method_name(estimate, w), sum=total, parts=", ".join(parts), **values)
    tower = tower_text(estimate, w)
    return f"{text} {tower}" if tower else text


def _activations(estimate: Estimate, w: Words) -> str:
    lines = [
        w(
            "details.activations",
            m=w.gb(estimate.model_states_gb),
            a=w.gb(estimate.activations_gb),
            v=w.gb(estimate.total_gb),
        )
    ]
    assumptions = activation_assumptions(estimate, w)
    lines.append(assumptions or w("details.activations_measure"))
    return "\n".join(lines)


def _lora(estimate: Estimate, w: Words) -> str:
    qlora = estimate.qlora
    return "\n".join(
        [
            w("details.lora", bytes=w.num(estimate.bytes_per_param), **lora_terms(estimate, w)),
            w(
                "lora.qlora",
                bytes=w.num(qlora.base_bytes_per_param),
                base=w.gb(qlora.base_gb),
                adapter_gb=w.gb(qlora.adapters_gb),
                activations=w.gb(qlora.activations_gb),
                total=w.gb(qlora.total_gb),
                fit=adapter_fit(qlora, w),
            ),
        ]
    )


# Each method's Details field: its name and its text.
_METHOD_KEYS = {
    Method.LORA: ("method.details.name_lora", "method.details.lora"),
    Method.QLORA: ("method.details.name_qlora", "method.details.qlora"),
}


def _method(estimate: Estimate, w: Words) -> EmbedField:
    """What LoRA or QLoRA changed: the frozen base's bytes, the adapters' and what the step saves."""
    keys = _METHOD_KEYS[estimate.request.method]
    base = estimate.frozen
    base_bytes = base.bytes_per_param if base is not None else 0.0
    workspace = 0.0
    if estimate.request.architecture is not None:
        linears = estimate.request.architecture.linear_layers()
        workspace = 2.0 * max((d_in * d_out for _, d_in, d_out, _ in linears), default=0) / 1e9
    value = w(
        keys[1],
        base=w.count(estimate.frozen_params_billion * 1e9),
        w=w.num(base_bytes, ".3g"),
        base_gb=w.gb(estimate.frozen_params_billion * base_bytes),
        adapters=adapters_text(estimate, w),
        bytes=w.num(estimate.bytes_per_param),
        adapter_gb=w.gb(estimate.trained_params_billion * estimate.bytes_per_param),
        workspace=w.gb(workspace),
    )
    return {"name": w(keys[0]), "value": value, "inline": False}


def _breakdown(estimate: Estimate, w: Words) -> str:
    """The parts table: each of B's parts on the card with its bytes and GB, B's sum, the frozen
    weights (not part of B), then what the savers keep in host RAM and what is not held at all."""
    table = estimate.table
    lines = [_part_line(w, part, estimate.part_gb(part)) for part in table.parts("gpu")]
    if len(estimate.parts) > 1:
        lines.append(w("breakdown.sum", bytes=w.num(estimate.bytes_per_param)))
    for part in table.parts("gpu", frozen=True):  # after B's sum: the frozen weights are not part of B
        lines.append(_part_line(w, part, estimate.part_gb(part)))
    elsewhere: tuple[tuple[Place, str], ...] = (
        ("host", "train.breakdown_host"),
        ("none", "train.breakdown_not_held"),
    )
    for place, key in elsewhere:
        for part in table.parts(place):
            # A paged part's own wording says where it goes ("paged to host RAM").
            line = w(
                "train.breakdown_paged" if part.paged else key,
                line=_part_line(w, part, estimate.part_gb(part)),
            )
            lines.append(line)
    return "\n".join(lines)


def _part_line(w: Words, part: Part, gb: float) -> str:
    return w("breakdown.line", part=w(part.key), bytes=w.num(part.bytes_per_param), gb=w.gb(gb))


def _preset(estimate: Estimate, w: Words) -> str | None:
    model = estimate.request.model
    if model is None:
        return None
    if estimate.preset_overridden:
        return w("preset.overridden", model=model.name, count=w.count(model.total_params))
    if isinstance(model, CountedModel):  # its tensors' count, and no shape
        line = w("preset.counted_tensors_only", model=model.name, count=w.plain(model.total_params))
    else:
        line = w(
            "preset.counted_tensors" if model.tensors is not None else "preset.counted",
            model=model.name,
            count=w.plain(model.total_params),
            shape=architecture_shape(model, w),
        )
    parts = tensor_parts(model, w)
    return " ".join([line, *architecture_notes(model, w), *([parts] if parts else [])])


def _cluster(estimate: Estimate, w: Words) -> EmbedField | None:
    """The sharding table: memory per card under each strategy, and the smallest that fits."""
    cluster = estimate.cluster
    if cluster is None:
        return None
    # The rows the verdict judges: V per GPU, or the larger of it and the card's step peak where the
    # bot estimates the step, so that the table, the title and the bar agree.
    lines = [
        w(
            "cluster.row",
            mark="✅" if row.fits else "❌",
            strategy=strategy_name(row.strategy, w),
            gb=w.gb(row.gb),
        )
        for row in cluster.judged
    ]
    if estimate.verdict.peak_gb is not None:
        lines.append(w("basis.rows_peak"))
    best = cluster.smallest_fitting
    if best is None:
        needed = estimate.single_gpu.sharded_gpus
        if needed:
            lines.append(w("cluster.none_fits", gpus=w.plain(needed)))
        else:
            lines.append(w("cluster.none_fits_activations"))
    else:
        lines.append(w("cluster.smallest", strategy=strategy_name(best, w)))
    if cluster.source == "deepspeed":
        # DeepSpeed's figures decide; the paper's stay beside them (Table 1's convention).
        paper = " · ".join(
            w("cluster.paper_row", strategy=strategy_name(row.strategy, w), gb=w.gb(row.gb))
            for row in cluster.paper_rows
        )
        lines += [w("cluster.deepspeed"), w("cluster.paper", rows=paper)]
    else:
        lines.append(w("cluster.source"))
    name = w("field.cluster", gpus=w.plain(cluster.gpus), card=estimate.single_gpu.gpu.display_name)
    return {"name": name, "value": "\n".join(lines), "inline": False}


def render_details(estimate: Estimate, language: Language = DEFAULT_LANGUAGE) -> dict[str, Any]:
    w = Words(language)
    verdict = w(
        "details.verdict",
        card=card_name(estimate, w),
        capacity=w.num(estimate.single_gpu.capacity_gb),
        verdict=verdict_text(estimate, w),
    )
    fields: list[EmbedField] = []
    preset = _preset(estimate, w)
    if preset:
        fields.append({"name": w("field.preset"), "value": preset, "inline": False})
    fields += [
        {"name": w("details.states_name"), "value": _model_states(estimate, w), "inline": False},
        {"name": w("field.breakdown"), "value": _breakdown(estimate, w), "inline": False},
        {"name": w("details.activations_name"), "value": _activations(estimate, w), "inline": False},
    ]
    savers = savers_text(estimate, w)
    if savers:
        fields.append({"name": w("saver.field"), "value": savers, "inline": False})
    peak = peak_text(estimate, w)
    if peak:
        fields.append({"name": w("field.peak"), "value": peak, "inline": False})
    batch = largest_batch_text(estimate, w)
    if batch:
        fields.append({"name": w("field.largest_batch"), "value": batch, "inline": False})
    fields.append({"name": w("details.verdict_name"), "value": verdict, "inline": False})
    cluster = _cluster(estimate, w)
    if cluster:
        fields.append(cluster)
    if estimate.request.method is Method.FULL:
        fields.append({"name": w("details.lora_name"), "value": _lora(estimate, w), "inline": False})
    else:
        fields.append(_method(estimate, w))
    return {
        "title": w("details.title", subject=subject(estimate, w)),
        "description": f"`{command_line(estimate.request)}`",
        "color": colour(estimate),
        "fields": fields,
        "footer": {"text": w("embed.footer")},
    }
