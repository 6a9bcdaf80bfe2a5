"""A multimodal repo's vision (and audio) towers and projectors, counted from its config.json.

Each tower is declared once (``bot.estimate.families.Tower``, by the multimodal family's class in
transformers 5.24); this module only adds up what the declaration names, from the tower's
sub-config (``vision_config``) with the sub-config class's defaults for the fields left out. The
count matches transformers' meta-device build (``tests/test_family_coverage.py``, ``-m accuracy``).

Pure: no torch, no transformers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.estimate.families import Multimodal, Piece, Tower

_MAX_DIMENSION = 1 << 20  # a tower's widths beyond this are no model's


@dataclass(frozen=True, slots=True)
class TowerCount:
    """The towers' parameters (frozen by default), by part, and the projectors' (trained)."""

    vision: int
    audio: int
    projector: int

    @property
    def towers(self) -> int:
        return self.vision + self.audio

    @property
    def total(self) -> int:
        return self.vision + self.audio + self.projector


class _Fields:
    """A tower's sub-config read with its class's defaults; None where a field is missing or unusable."""

    def __init__(
        self, config: Mapping[str, Any], tower: Tower, text_hidden: int, top: Mapping[str, Any]
    ) -> None:
        self.config = config
        self.tower = tower
        self.text_hidden = text_hidden
        self.top = top  # the multimodal config itself: a "top." field is its (Kimi K2.5's projector)

    def raw(self, name: str) -> object:
        config = self.config
        if name.startswith("top."):
            name, config = name.removeprefix("top."), self.top
        value = config.get(name)
        return self.tower.defaults.get(name) if value is None else value

    def whole(self, name: str) -> int | None:
        value = self.raw(name)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= _MAX_DIMENSION:
            return None
        return value

    def dim(self, name: str) -> int | None:
        t = self.tower
        if name == "width":
            return self.whole(t.width)
        if name == "mlp":
            if t.mlp_ratio is None:
                return self.whole(t.mlp)
            width, ratio = self.whole(t.width), self.raw(t.mlp_ratio)
            if not width or isinstance(ratio, bool) or not isinstance(ratio, int | float) or ratio <= 0:
                return None
            return int(width * ratio)  # Qwen2-VL: int(embed_dim * mlp_ratio)
        if name == "merged":
            width, merge = self.whole(t.width), self.raw(t.merge)
            if isinstance(merge, list) and len(merge) == 2:  # a kernel per side (Kimi K2.5's [2, 2])
                sides = [m for m in merge if isinstance(m, int) and not isinstance(m, bool) and 0 < m <= 64]
                area = sides[0] * sides[1] if len(sides) == 2 else None
            else:
                side = self.whole(t.merge)
                area = side * side if side else None
            return width * area if width and area else None
        if name == "patch":
            channels, patch = self.whole(t.channels), self.whole(t.patch)
            frames = self.whole(t.temporal) if t.temporal else 1
            return channels * frames * patch * patch if channels and patch and frames else None
        if name in ("grid", "grid_cls"):
            image, patch = self.whole("image_size"), self.whole(t.patch)
            return (image // patch) ** 2 + (name == "grid_cls") if image and patch else None
        if name == "text":
            return self.text_hidden
        if name.startswith("half."):  # a SwiGLU's output: half its input's width (Cohere 2 Vision)
            whole = self.dim(name.removeprefix("half."))
            return whole // 2 if whole else None
        if name == "features":  # the width × the layers fed to the projector (one, or a list's)
            layers, width = self.raw("top.vision_feature_layer"), self.whole(t.width)
            return width * (len(layers) if isinstance(layers, list) else 1) if width else None
        return self.whole(name)

    def times(self, piece: Piece) -> int | None:
        if piece.times is None:
            return 1
        listed = self.raw(piece.times)
        return len(listed) if isinstance(listed, list) else None

    def flag(self, switch: bool | str) -> bool:
        return switch if isinstance(switch, bool) else self.raw(switch) is True


def _piece(piece: Piece, read: _Fields) -> int | None:
    if piece.when is not None and not read.flag(piece.when):
        return 0
    dims = [read.dim(name) for name in piece.dims]
    times = read.times(piece)
    if times is None or any(d is None for d in dims):
        return None
    sizes = [d for d in dims if d is not None]
    bias = read.flag(piece.bias)
    if piece.kind == "linear":
        inp, out = sizes
        count = inp * out + (out if bias else 0)
    elif piece.kind == "norm":
        count = sizes[0] * (2 if bias else 1)
    elif piece.kind == "gated_mlp":
        width, inner = sizes
        count = 3 * width * inner + ((2 * inner + width) if bias else 0)
    else:  # a learned table
        count = 1
        for size in sizes:
            count *= size
    return count * times


def _pieces(pieces: tuple[Piece, ...], read: _Fields) -> int | None:
    counts = [_piece(p, read) for p in pieces]
    return None if any(c is None for c in counts) else sum(c for c in counts if c is not None)


def _block(read: _Fields) -> int | None:
    """One ViT block: two norms, qkv (3 × width²), the output projection and the MLP."""
    t = read.tower
    width, inner = read.dim("width"), read.dim("mlp")
    if width is None or inner is None:
        return None
    norms = 2 * width * (2 if t.norm_bias else 1)
    attention = 3 * width * width + (3 * width if read.flag(t.qkv_bias) else 0)
    attention += width * width + (width if t.o_bias else 0)
    matrices = 3 if t.gated_mlp else 2
    mlp = matrices * width * inner + (((matrices - 1) * inner + width) if t.mlp_bias else 0)
    return norms + attention + mlp


def _tower(
    tower: Tower, config: Mapping[str, Any], text_hidden: int, top: Mapping[str, Any]
) -> tuple[int, int] | None:
    read = _Fields(config, tower, text_hidden, top)
    depth, block = read.whole(tower.depth), _block(read)
    head, tail = _pieces(tower.head, read), _pieces(tower.tail, read)
    projector = _pieces(tower.projector, read)
    if depth is None or block is None or head is None or tail is None or projector is None:
        return None
    return head + depth * block + tail, projector


def count_towers(config: Mapping[str, Any], declared: Multimodal, text_hidden: int) -> TowerCount | None:
    """The towers and projectors of a multimodal repo's config.json by its declaration; None when it
    declares none or the config lacks a tower's sub-config or a field it needs (the repo's tensors
    then say)."""
    if not declared.towers:
        return None
    parts = {"vision": 0, "audio": 0, "projector": 0}
    for tower in declared.towers:
        sub = config.get(tower.config)
        counted = _tower(tower, sub, text_hidden, config) if isinstance(sub, dict) else None
        if counted is None:
            return None
        parts[tower.part] += counted[0]
        parts["projector"] += counted[1]
    return TowerCount(**parts)


__all__ = ["TowerCount", "count_towers"]
