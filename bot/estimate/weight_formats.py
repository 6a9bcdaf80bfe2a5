"""The precisions a served model's weights can be kept in, and what each costs per parameter.

A quantized format packs the weights of the blocks' linear layers (attention, MLP, experts) and keeps
its scales beside them; embeddings, the LM head, norms and routers stay 16-bit, as AutoAWQ, GPTQ,
bitsandbytes and the FP8 checkpoints leave them (tensors.py counts their packed tensors the same
way). Each figure below is the format's bytes per quantized weight, scales included.

Pure Python; nothing here knows Discord or words.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from bot.estimate.tensors import Packing

# What a format quantizes: every linear layer of the blocks, or (gpt-oss's MXFP4 checkpoints) only
# the routed experts.
Scope = Literal["linears", "experts"]

# GPTQ and AWQ quantize in groups of 128 input weights, each with a 16-bit scale and a zero point of
# the weights' own width (AutoAWQ's q_group_size=128, GPTQ's group_size=128: qweight, scales, qzeros).
_GROUP = 128


class WeightFormat(StrEnum):
    """The weights' precision when served; ``stored``: as the checkpoint stores them."""

    BF16 = "bf16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"
    NF4 = "nf4"
    MXFP4 = "mxfp4"
    STORED = "stored"


BYTES_PER_WEIGHT: dict[WeightFormat, float] = {
    WeightFormat.BF16: 2.0,
    # FP8 E4M3, block-wise: one fp32 weight_scale_inv per 128 x 128 block (DeepSeek-V3's and
    # Qwen3-FP8's checkpoints, transformers' finegrained_fp8.py).
    WeightFormat.FP8: 1.0 + 4 / (128 * 128),
    # GPTQ/AWQ at 8 and 4 bits: the packed weight, plus a 16-bit scale and a zero point per group.
    WeightFormat.INT8: 1.0 + (2 + 1) / _GROUP,
    WeightFormat.INT4: 0.5 + (2 + 0.5) / _GROUP,
    # bitsandbytes NF4 with double quantization: 4 bits, an 8-bit absmax per block of 64 and an fp32
    # constant per 256 blocks, 4.127 bits (Dettmers et al. 2023, "QLoRA", section 2).
    WeightFormat.NF4: 0.5 + 1 / 64 + 4 / (64 * 256),
    # OCP Microscaling MXFP4: 4-bit E2M1 values with one E8M0 scale per block of 32 (gpt-oss's
    # *_blocks and *_scales tensors, transformers' integrations/mxfp4.py).
    WeightFormat.MXFP4: 0.5 + 1 / 32,
}

UNQUANTIZED_BYTES = 2.0  # embeddings, LM head, norms, routers and biases: bf16


def stored_format(packing: Packing | None) -> tuple[WeightFormat, Scope]:
    """The format a checkpoint packed as ``packing`` serves in, and what it packs: an unpacked (or
    unknown) checkpoint is served in bf16; gpt-oss's MXFP4 packs the experts only."""
    if packing == "fp8":
        return WeightFormat.FP8, "linears"
    if packing == "mxfp4":
        return WeightFormat.MXFP4, "experts"
    if packing in ("gptq", "awq", "bitsandbytes_4bit"):
        return (WeightFormat.NF4 if packing == "bitsandbytes_4bit" else WeightFormat.INT4), "linears"
    if packing == "bitsandbytes_8bit":
        return WeightFormat.INT8, "linears"
    return WeightFormat.BF16, "linears"
