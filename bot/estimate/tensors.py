"""A repo's exact parameter count from its safetensors headers, for any architecture.

Pure: the runtime (``bot/hub_lookup.py``) reads each shard's header (tensor name -> dtype and shape,
never the weights) and hands them here with the config's ``quantization_config`` and layer count.
Every stored tensor is a parameter (or a persistent buffer, which is as big in memory), counted once:
a tied LM head is stored once, as ``model.parameters()`` yields it once. Packed checkpoints are
counted as the parameters they hold once unpacked; their scales, zero points and quantisation state
are not parameters and are left out (each format's rule names its source below).

The count is split into the parts Details shows, by tensor name (transformers' module names).
A model known only by this count (its family undeclared) is a :class:`CountedModel`: exact model
states, activations only from the ``activations`` option.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

PartName = Literal[
    "embeddings", "lm_head", "layers", "experts", "vision", "audio", "projector", "mtp", "other"
]
Packing = Literal["fp8", "mxfp4", "gptq", "awq", "bitsandbytes_4bit", "bitsandbytes_8bit", "unknown"]

# Bits of each safetensors dtype (the format's dtype names, safetensors' README).
DTYPE_BITS = {
    "BOOL": 8, "U8": 8, "I8": 8, "F8_E4M3": 8, "F8_E5M2": 8, "F8_E8M0": 8,
    "I16": 16, "U16": 16, "F16": 16, "BF16": 16,
    "I32": 32, "U32": 32, "F32": 32, "I64": 64, "U64": 64, "F64": 64,
    "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6,
}  # fmt: skip


class TensorCount(BaseModel):
    """What a repo's tensors hold: the count a training run holds, its parts and how it was packed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    total: int = Field(gt=0)  # parameters once unpacked, MTP modules left out (transformers drops them)
    parts: tuple[tuple[PartName, int], ...]  # every part with parameters, MTP included, in PartName order
    stored_elements: int = Field(ge=0)  # the elements as stored (what the Hub's own count adds up)
    packing: Packing | None = None  # None: stored unpacked
    tied_embeddings: bool = False  # embeddings and no separate LM head
    largest_tensor: int = Field(default=0, ge=0)  # the most parameters one tensor holds (unpacked)
    shards: int = Field(default=1, ge=1)
    # Where the count comes from: the headers read, or (their reading failed or was too big) the Hub's
    # own total of an unpacked checkpoint's elements, which is exact too but has no parts.
    read_from: Literal["headers", "hub_total"] = "headers"

    def part(self, name: PartName) -> int:
        return dict(self.parts).get(name, 0)

    @property
    def towers(self) -> int:
        """The vision and audio towers' parameters: what a fine-tuning run freezes by default."""
        return self.part("vision") + self.part("audio")


# --- packed formats --------------------------------------------------------------------------------


def packing_of(config: Mapping[str, Any]) -> tuple[Packing | None, int]:
    """The checkpoint's packing by its config's ``quantization_config`` (also inside ``text_config``),
    and the bits of a packed weight (4 unless the config says otherwise)."""
    found = config.get("quantization_config")
    inner = config.get("text_config")
    if not isinstance(found, dict) and isinstance(inner, dict):
        found = inner.get("quantization_config")
    if not isinstance(found, dict):
        return None, 16
    method = str(found.get("quant_method", "")).lower()
    bits = found.get("bits", found.get("w_bit", 4))
    bits = bits if isinstance(bits, int) and not isinstance(bits, bool) and bits in (2, 3, 4, 8) else 4
    if method == "fp8":
        return "fp8", 8
    if method == "mxfp4":
        return "mxfp4", 4
    if method in ("gptq", "awq"):
        return method, bits  # type: ignore[return-value]  # narrowed by the test above
    if method == "bitsandbytes":
        return ("bitsandbytes_8bit", 8) if found.get("load_in_8bit") else ("bitsandbytes_4bit", 4)
    return "unknown", bits


# FP8 block-wise (DeepSeek-V3's and Qwen3-FP8's checkpoints, transformers' finegrained_fp8.py): the
# F8_E4M3 weight has the unpacked shape; ``weight_scale_inv`` holds one float per 128 x 128 block.
# Per-tensor FP8 (FBGEMM, compressed-tensors) adds ``weight_scale`` / ``input_scale``.
_FP8_EXTRAS = re.compile(r"\.(weight_scale_inv|weight_scale|input_scale|activation_scale)$")
# MXFP4 (gpt-oss, transformers' integrations/mxfp4.py convert_moe_packed_tensors): ``*_blocks`` are U8
# of two FP4 values each, ``*_scales`` one E8M0 exponent per 32 values.
_MXFP4_SCALES = re.compile(r"_scales$")
_MXFP4_BLOCKS = re.compile(r"_blocks$")
# GPTQ (AutoGPTQ / GPTQModel QuantLinear: qweight int32 of in·bits/32 x out) and AWQ (AutoAWQ
# WQLinear_GEMM: qweight int32 of in x out·bits/32): 32/bits weights per int32 either way; qzeros,
# scales and g_idx are the quantisation's, not the layer's.
_GPTQ_EXTRAS = re.compile(r"\.(qzeros|scales|g_idx)$")
_GPTQ_PACKED = re.compile(r"\.qweight$")
# bitsandbytes 4-bit (Params4bit, quantize_4bit: the weight flattened to (n + 1) // 2 bytes of two
# values each, in quant_storage): absmax, quant_map, nested_* and quant_state.* are its state; 8-bit
# (Int8Params) keeps the weight's shape in I8 beside SCB and weight_format.
_BNB_EXTRAS = re.compile(
    r"\.(absmax|quant_map|nested_absmax|nested_quant_map|quant_state\..*|SCB|weight_format)$"
)


def _unpacked(name: str, dtype: str, elements: int, packing: Packing | None, bits: int) -> int | None:
    """The parameters one stored tensor holds once unpacked; None for a quantisation state tensor."""
    if packing == "fp8":
        return None if _FP8_EXTRAS.search(name) else elements
    if packing == "mxfp4":
        if _MXFP4_SCALES.search(name):
            return None
        return elements * 2 if _MXFP4_BLOCKS.search(name) else elements
    if packing in ("gptq", "awq"):
        if _GPTQ_EXTRAS.search(name):
            return None
        return elements * (32 // bits) if _GPTQ_PACKED.search(name) and dtype == "I32" else elements
    if packing == "bitsandbytes_4bit":
        if _BNB_EXTRAS.search(name):
            return None
        # Packed 4-bit weights are integer storage (U8 by default); a float tensor is stored as is.
        if name.endswith(".weight") and dtype in ("U8", "I8"):
            return elements * DTYPE_BITS[dtype] // 4
        return elements
    if packing == "bitsandbytes_8bit":
        return None if _BNB_EXTRAS.search(name) else elements
    return elements


# --- parts, by transformers' module names -----------------------------------------------------------

_LAYER_INDEX = re.compile(r"(?:^|\.)(?:layers|h|blocks|block|decoder_layers)\.(\d+)\.")


def _names(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(patterns))


_PART_PATTERNS: tuple[tuple[PartName, re.Pattern[str]], ...] = (
    ("mtp", _names(r"(?:^|\.)mtp[._]")),
    # Qwen2.5-VL's and Qwen3-VL's merger (and Qwen3-VL's deepstack mergers) sit inside ``visual`` but
    # are the projector into the text model's width, which the fine-tuning recipes train.
    ("projector", _names("multi_modal_projector", "mm_projector", r"(?:^|\.)connector\.", "vision_proj",
                         "embed_vision", r"(?:^|\.)visual\.(?:merger|deepstack_merger_list)\.")),
    ("vision", _names(r"(?:^|\.)visual\.", "vision_tower", "vision_model", "vision_encoder", "image_encoder",
                      r"(?:^|\.)vision\.")),
    ("audio", _names("audio_tower", "audio_model", "audio_encoder", r"(?:^|\.)audio\.", "embed_audio")),
    ("lm_head", _names(r"(?:^|\.)(?:lm_head|embed_out)\.", r"^output\.")),
    ("embeddings", _names("embed_tokens", r"(?:^|\.)wte\.", "word_embeddings", "tok_embeddings",
                          r"(?:^|\.)embeddings\.")),
    ("experts", _names(r"\.experts\.")),
)  # fmt: skip


def part_of(name: str, layers: int | None = None) -> PartName:
    """The part of the model a tensor belongs to. ``layers``: the config's decoder layer count, past
    which a numbered layer is a multi-token-prediction module (DeepSeek-V3's and GLM-4.5's
    ``model.layers.{num_hidden_layers}``, which transformers does not build)."""
    for part, pattern in _PART_PATTERNS[:4]:  # the towers first: they have layers and embeddings too
        if pattern.search(name):
            return part
    index = _LAYER_INDEX.search(name)
    if index is not None and layers is not None and int(index.group(1)) >= layers:
        return "mtp"
    for part, pattern in _PART_PATTERNS[4:]:
        if pattern.search(name):
            return part
    return "layers" if index is not None else "other"


_PART_ORDER: tuple[PartName, ...] = (
    "embeddings", "layers", "experts", "lm_head", "other", "vision", "audio", "projector", "mtp"
)  # fmt: skip


def count_tensors(
    tensors: Iterable[tuple[str, str, Sequence[int]]],
    *,
    packing: Packing | None = None,
    bits: int = 4,
    layers: int | None = None,
    shards: int = 1,
) -> TensorCount:
    """The count of (name, safetensors dtype, shape) triples; ValueError when nothing is counted."""
    by_part: dict[PartName, int] = {}
    stored = largest = 0
    for name, dtype, shape in tensors:
        elements = math.prod(shape)
        stored += elements
        found = _unpacked(name, dtype, elements, packing, bits)
        if found is None:
            continue
        part = part_of(name, layers)
        by_part[part] = by_part.get(part, 0) + found
        largest = max(largest, found)
    total = sum(count for part, count in by_part.items() if part != "mtp")
    if total <= 0:
        raise ValueError("no parameters in the tensors")
    return TensorCount(
        total=total,
        parts=tuple((part, by_part[part]) for part in _PART_ORDER if by_part.get(part)),
        stored_elements=stored,
        packing=packing,
        tied_embeddings=bool(by_part.get("embeddings")) and not by_part.get("lm_head"),
        largest_tensor=largest,
        shards=shards,
    )


def hub_total(stored: int) -> TensorCount:
    """The Hub's stored safetensors total as the count: exact for a checkpoint that is not packed
    (the Hub adds up every tensor's elements), though it cannot tell the parts or leave MTP out."""
    return TensorCount(total=stored, parts=(), stored_elements=stored, read_from="hub_total")


# --- a model known by its tensors only ---------------------------------------------------------------


class CountedModel(BaseModel):
    """A Hub repo whose family no declaration knows, known by the exact count of its tensors: the
    model states (N × B) are exact; the activations come only from the ``activations`` option. It
    travels as an :class:`~bot.estimate.models.Architecture` does, by its repo ID."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str = "hub"
    name: str
    hub_id: str
    source: Literal["hub"] = "hub"
    hub_revision: str | None = None
    model_type: str | None = None  # the config's, as given (no declaration knows it)
    context_length: int | None = Field(default=None, gt=0)
    tensors: TensorCount

    @property
    def total_params(self) -> int:
        return self.tensors.total

    @property
    def params_billion(self) -> float:
        return self.tensors.total / 1e9

    @property
    def parameter_count(self) -> int:
        return self.tensors.total

    @property
    def tower_params(self) -> int:
        return self.tensors.towers

    @property
    def largest_module_params(self) -> int:
        """The largest tensor: the least one module can hold (ZeRO-3 gathers a module at once)."""
        return self.tensors.largest_tensor
