"""The one table of what a training step keeps: each part, where it lives, its planned and measured GB.

A row is one colour of the bar in one place: the weights, the gradients, the optimizer state (the fp32
master copy with it, as ZeRO counts it) or the saved activations, on the card (``gpu``), in host RAM
(``host``: offloaded or paged out) or not held at all (``none``: the gradients under the optimizer in
backward, stepped and freed one tensor at a time). Each row carries B's parts that make it (the
catalogue keys that word it), its planned GB (parameters × bytes per parameter; the activations'
figure as the estimate has it) and, where a step was measured (``vram-bot measure``), the measured GB
of the same row. The breakdown, the bar, Details, ``--format json`` and ``vram-bot measure`` read it.

Memory is in decimal GB, as everywhere in the estimate: the seed's M = N × B is a row sum (7B with
Adam: 14 + 14 + 84 = 112 GB on the card).

Pure Python; nothing here knows Discord or words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Literal

from bot.estimate.optimizers import Part, PartKind
from bot.estimate.value_type import value_type

Place = Literal["gpu", "host", "none"]
RowKind = PartKind | Literal["activations"]
PLACES: tuple[Place, ...] = ("gpu", "host", "none")
MODEL_STATE_KINDS: tuple[PartKind, ...] = ("weights", "gradients", "optimizer")


@value_type
class PartRow:
    """One kind of memory in one place: B's ``parts`` in it (none for activations), counted over the
    trained parameters, or over the frozen ones (``frozen``: a tower's or a LoRA base's weights)."""

    kind: RowKind
    place: Place
    parts: tuple[Part, ...]
    planned_gb: float
    frozen: bool = False
    measured_gb: float | None = None  # None: not measured

    @property
    def bytes_per_param(self) -> float:
        total = 0.0
        for part in self.parts:
            total += part.bytes_per_param
        return total

    @property
    def paged(self) -> bool:
        """Kept in paged memory, which the driver evicts to host RAM (bitsandbytes' paged optimizers)."""
        return any(part.paged for part in self.parts)

    @property
    def measured_ratio(self) -> float | None:
        """Measured ÷ planned, where both exist and the plan is not zero."""
        if self.measured_gb is None or not self.planned_gb:
            return None
        return self.measured_gb / self.planned_gb


@value_type
class PartsTable:
    """The rows, in the order every view lists them: the card's (weights, gradients, optimizer state,
    frozen weights, activations), then host RAM's, then what is not held."""

    rows: tuple[PartRow, ...]

    def at(self, place: Place) -> tuple[PartRow, ...]:
        return tuple(row for row in self.rows if row.place == place)

    def gb(self, place: Place = "gpu", kind: RowKind | None = None) -> float:
        """Planned GB in ``place`` (of one ``kind``, or of all)."""
        total = 0.0
        for row in self.rows:
            if row.place == place and (kind is None or row.kind == kind):
                total += row.planned_gb
        return total

    def parts(self, place: Place, *, frozen: bool = False) -> tuple[Part, ...]:
        """B's parts in ``place`` (the trained parameters', or the frozen ones')."""
        return tuple(
            part for row in self.rows if row.place == place and row.frozen is frozen for part in row.parts
        )

    def with_measured(self, measured: Mapping[tuple[RowKind, bool], float]) -> PartsTable:
        """The same table with the measured GB of each card row, by (kind, frozen): what a measured
        step held of it (rows not measured keep None)."""
        return PartsTable(
            tuple(
                replace(row, measured_gb=measured.get((row.kind, row.frozen)))
                if row.place == "gpu" and (row.kind, row.frozen) in measured
                else row
                for row in self.rows
            )
        )


def parts_table(
    *,
    on_card: tuple[Part, ...],
    in_host: tuple[Part, ...],
    not_held: tuple[Part, ...],
    frozen: Part | None,
    trained_billion: float,
    frozen_billion: float,
    activations_gb: float,
    host_activations_gb: float = 0.0,
) -> PartsTable:
    """The table of a training step: B's parts by kind and place over the trained parameters, the
    frozen weights over the frozen ones, and the activations on the card and in host RAM.

    The card always has its weights, gradients, optimizer-state and activations rows (a part moved
    off the card leaves a row of 0 GB there: the seed's breakdown keeps its shape), the other places
    only the rows they hold."""
    rows = _state_rows("gpu", on_card, trained_billion, every_kind=True)
    if frozen is not None:
        rows.append(PartRow("weights", "gpu", (frozen,), frozen_billion * frozen.bytes_per_param, True))
    rows.append(PartRow("activations", "gpu", (), activations_gb))
    if in_host:
        rows += _state_rows("host", in_host, trained_billion)
    if host_activations_gb:
        rows.append(PartRow("activations", "host", (), host_activations_gb))
    if not_held:
        rows += _state_rows("none", not_held, trained_billion)
    return PartsTable(tuple(rows))


def _state_rows(
    place: Place, parts: tuple[Part, ...], trained_billion: float, every_kind: bool = False
) -> list[PartRow]:
    """B's ``parts`` in ``place`` by kind, over the trained parameters: a row for each kind they hold
    (``every_kind``: for each kind)."""
    by_kind: dict[PartKind, list[Part]] = {}
    for part in parts:  # one pass, in the parts' order
        by_kind.setdefault(part.kind, []).append(part)
    rows = []
    for kind in MODEL_STATE_KINDS:
        found = by_kind.get(kind, [])
        if found or every_kind:
            gb = 0.0
            for part in found:
                gb += trained_billion * part.bytes_per_param
            rows.append(PartRow(kind, place, tuple(found), gb))
    return rows
