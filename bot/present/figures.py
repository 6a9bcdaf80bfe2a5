"""The estimate's figures as plain JSON for scripts: ``vram-bot estimate … --format json``.

The schema is versioned (``schema`` and ``version``): a field's meaning never changes within a
version; new fields may be added. Memory is in decimal GB, as everywhere else. The README documents
every field.
"""

from __future__ import annotations

from typing import Any

from bot.estimate.core import AdapterHint, ClusterVerdict, Estimate, LargestBatch
from bot.estimate.models import Architecture
from bot.estimate.parts_table import PartsTable
from bot.estimate.sharding import PerGpu
from bot.present.command_line import command_line
from bot.present.savers import savers_json

SCHEMA = "vram-bot/estimate"
VERSION = 1


def fits(estimate: Estimate) -> bool:
    """The verdict a script checks: it fits one card, or, on several, some strategy fits each card,
    by the figure the verdict follows (``verdict_basis``)."""
    return estimate.verdict.fits


def _verdict(estimate: Estimate) -> dict[str, Any]:
    """The one verdict every view reads: its figure per GPU, what it is, and what would fit."""
    verdict = estimate.verdict
    return {
        "basis": verdict.basis,
        "strategy": verdict.strategy,
        "gpus": verdict.gpus,
        "judged_gb": verdict.judged_gb,
        "total_gb": verdict.total_gb,
        "peak_gb": verdict.peak_gb,
        "fits": verdict.fits,
        "cards_needed": verdict.cards_needed,
        "changes": [{"kind": c.kind, "gb_per_gpu": c.gb, "gpus": c.gpus} for c in verdict.changes],
    }


def _rows(rows: tuple[PerGpu, ...]) -> list[dict[str, Any]]:
    """Per GPU under each strategy; ``fits`` here is the row's own figure's (V, or the judged one)."""
    return [{"strategy": row.strategy, "gb_per_gpu": row.gb, "fits": row.fits} for row in rows]


def _cluster(cluster: ClusterVerdict | None) -> dict[str, Any] | None:
    if cluster is None:
        return None
    return {
        "gpus": cluster.gpus,
        "source": cluster.source,
        "strategies": _rows(cluster.rows),
        "paper_strategies": _rows(cluster.paper_rows),
        "judged_strategies": _rows(cluster.judged),
        "smallest_fitting": cluster.smallest_fitting,
        "largest_module_billion": cluster.largest_module_billion,
    }


def _batch(found: LargestBatch | None) -> dict[str, Any] | None:
    if found is None:
        return None
    return {
        "seq_len": found.seq_len,
        "strategy": found.strategy,  # on several cards: the per-GPU batch's strategy
        "batch": found.batch,
        "checkpointed_batch": found.checkpointed_batch,
        "per_sequence_gb": found.per_sequence_gb,
        "per_sequence_checkpointed_gb": found.per_sequence_checkpointed_gb,
    }


def _adapter(hint: AdapterHint) -> dict[str, Any]:
    return {
        "base_gb": hint.base_gb,
        "rank": hint.rank,
        "adapter_params_billion": hint.adapter_params_billion,
        "adapters_gb": hint.adapters_gb,
        "activations_gb": hint.activations_gb,
        "total_gb": hint.total_gb,
        "smallest_card_gb": hint.smallest_card_gb,
    }


def _frozen(estimate: Estimate) -> dict[str, Any] | None:
    """A multimodal model's frozen towers: their billions of parameters, the bytes each keeps (its
    weights) and their GB, which model_states_gb holds beside the trained parameters' parts."""
    part = estimate.frozen
    if part is None:
        return None
    return {
        "params_billion": estimate.frozen_params_billion,
        "trained_params_billion": estimate.trained_params_billion,
        "bytes_per_param": part.bytes_per_param,
        "gb": estimate.part_gb(part),
    }


def parts_table_json(table: PartsTable) -> list[dict[str, Any]]:
    """Each row of the parts table: its kind (the bar's colour), where it lives (``gpu``, ``host``,
    ``none``: not held), whether it is the frozen parameters', B's parts in it, and its GB as planned
    and as measured (``null`` where no step was measured: the bot itself never measures)."""
    return [
        {
            "kind": row.kind,
            "place": row.place,
            "frozen": row.frozen,
            "parts": [part.key for part in row.parts],
            "bytes_per_param": row.bytes_per_param if row.parts else None,
            "paged": row.paged,
            "planned_gb": row.planned_gb,
            "measured_gb": row.measured_gb,
        }
        for row in table.rows
    ]


def figures(estimate: Estimate) -> dict[str, Any]:
    """Every figure of the estimate, by the names the README's schema table gives them."""
    request, model = estimate.request, estimate.request.model
    counted = model if model is not None and request.params is None else None
    verdict = estimate.single_gpu
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "request": request.given(),
        "command_line": command_line(request),
        "parameters": {
            "billion": estimate.params_billion,
            "count": counted.total_params if counted else None,
            "active_count": counted.active_parameter_count if isinstance(counted, Architecture) else None,
        },
        "bytes_per_param": estimate.bytes_per_param,
        "parts": [
            {
                "key": part.key,
                "kind": part.kind,
                "bytes_per_param": part.bytes_per_param,
                "gb": estimate.part_gb(part),
            }
            for part in estimate.parts
        ],
        "frozen": _frozen(estimate),
        # The one parts table: every part where it lives, planned (and measured) GB.
        "parts_table": parts_table_json(estimate.table),
        "model_states_gb": estimate.model_states_gb,
        "activations_gb": estimate.activations_gb,
        "activations_estimated": estimate.activation_estimate is not None,
        "total_gb": estimate.total_gb,
        "card": {"name": verdict.gpu.display_name, "memory_gb": verdict.capacity_gb},
        "fits_one_card": verdict.fits,
        "headroom_gb": verdict.headroom_gb,
        "sharded_gpus_needed": verdict.sharded_gpus,
        "cluster": _cluster(estimate.cluster),
        "fits": fits(estimate),
        # The step's peak, per GPU on several cards (None: not estimated), and what the verdict follows.
        "peak_gb": estimate.verdict.peak_gb,
        "verdict_basis": estimate.verdict_basis,
        "verdict": _verdict(estimate),
        "largest_batch": _batch(estimate.largest_batch),
        "lora": _adapter(estimate.lora),
        "qlora": _adapter(estimate.qlora),
        "savers": savers_json(estimate),
    }
