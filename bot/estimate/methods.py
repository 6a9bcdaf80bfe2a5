"""How a model is trained: every parameter (the seed's full fine-tune), LoRA or QLoRA, and what each
method stores and saves that the full fine-tune does not.

- Adapters, as peft 0.21 creates them on a transformers 5 model (``LoraConfig(target_modules=
  "all-linear")``; counted against peft on the benchmark's small configs, tests/test_methods.py):
  every ``nn.Linear`` but the LM head gets A (r × d_in) and B (d_out × r) (Hu et al. 2021, "LoRA").
  transformers 5 fuses a MoE layer's experts into 3-D ``gate_up_proj`` and ``down_proj`` tensors;
  for the model types transformers converts from their v4 layout (``Experts.peft_converted``, where
  its conversion_mapping names mixtral or qwen2_moe; qwen2_moe itself not), peft adapts those tensors
  (``target_parameters``) with one A and B over every expert, at rank 2r for the fused gate and up,
  and the router's weight, and no longer targets the modules named like the v4 experts (the dense
  MLPs' and the shared experts' gate/up/down). Other MoE families keep their 3-D experts un-adapted,
  and their router unless it is an nn.Linear (``Experts.linear_router``); Qwen2-MoE's shared-expert
  gate (h -> 1) is adapted either way.
- The adapters are fp32 whatever the base's dtype (peft's ``autocast_adapter_dtype``), trained
  without a master copy: fp32 weights and gradients plus the optimizer's fp32 state.
- The base is frozen: its weights only, 16-bit (fp32 under amp) for LoRA; for QLoRA the linear
  layers in NF4 with double quantization, 4.127 bits per parameter (Dettmers et al. 2023, "QLoRA",
  section 2: 4 bits + 32/64 bits of first-level absmax per 64-value block quantized to 8 bits, + 32
  bits per 256 of those), and the embeddings, LM head, norms and routers left in 16-bit.

Pure Python; nothing here imports torch.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from functools import lru_cache
from typing import TYPE_CHECKING

from bot.estimate.models import Architecture
from bot.estimate.optimizers import CUSTOM_PART_KEY, Part, Precision, parts_for
from bot.estimate.value_type import value_type

# The family declarations (families, family_traits) are imported where a model's layers are counted,
# not with this module, which the request's options need at the bot's start (benchmarks/README.md).
if TYPE_CHECKING:
    from bot.estimate.family_traits import FamilyTraits
    from bot.estimate.request import EstimateRequest
    from bot.estimate.setup import Setup


class Method(StrEnum):
    """What a step trains: every parameter, LoRA adapters on a 16-bit base, or on an NF4 base."""

    FULL = "full"
    LORA = "lora"
    QLORA = "qlora"


class LoraTargets(StrEnum):
    """Which layers get adapters: peft's ``all-linear`` (every linear but the LM head, and a MoE
    layer's experts and router as peft adapts them), or the attention's projections only."""

    ALL_LINEAR = "all-linear"
    ATTENTION = "attention"


# NF4 with double quantization: 4 + 8/64 + 32/(64 × 256) bits per parameter (QLoRA, section 2).
NF4_BYTES_PER_PARAM = (4 + 8 / 64 + 32 / (64 * 256)) / 8


@value_type
class AdaptedLinear:
    """One kind of adapted weight: A is ``rank`` × ``d_in``, B ``d_out`` × ``rank``, ``copies`` in the
    model (a 3-D expert tensor is one copy per MoE layer, its rank r × experts); ``mixer`` is the
    layer kind whose mixer holds it ("" for the MLP side and the model's own linears); ``trained``
    False for one that runs under ``torch.no_grad`` (peft adapts it, no gradient ever reaches it)."""

    name: str
    d_in: int
    d_out: int
    rank: int
    copies: int
    mixer: str = ""
    trained: bool = True

    @property
    def params(self) -> int:
        return self.rank * (self.d_in + self.d_out) * self.copies


# peft's attention-only target list, as a recipe writes it: Llama's projection names, Phi-3's fused
# qkv_proj and MLA's (DeepSeek-V3); a family's own names are added from its declaration
# (``Family.attention_modules``). A linear of any mixer with one of these names is adapted (Kimi
# Linear's delta attention has q/k/v/o_proj too, and peft adapts them).
PEFT_ATTENTION_TARGETS = (
    "q_proj",
    "k_proj",
    "v_proj",
    "o_proj",
    "qkv_proj",
    "q_a_proj",
    "q_b_proj",
    "kv_a_proj_with_mqa",
    "kv_b_proj",
)
# On the model types whose Mamba mixers peft 0.21 refuses to adapt (their declaration's
# ``peft_refuses_mamba_out_proj``: tuners_utils._check_lora_target_modules_mamba raises "incompatible
# with Mamba-based models ... Please remove it from target_modules"), the bot's all-linear is what
# runs: peft's ``all-linear`` with ``exclude_modules=["out_proj"]`` (bot.measure.step.with_lora).
PEFT_MAMBA_EXCLUDED = ("out_proj",)
_MAMBA_KINDS = ("mamba", "attention_mamba", "mamba1")


def _traits(arch: Architecture) -> FamilyTraits:
    """The family's declaration (family_traits.traits_for; one without a declaration gets Llama's),
    imported here, where a model's layers are counted, not with this module (see above)."""
    from bot.estimate.family_traits import traits_for

    return traits_for(arch)


def _split_delta_net(
    arch: Architecture, t: FamilyTraits, name: str, d_in: int, d_out: int
) -> list[tuple[str, int, int]]:
    """A Gated DeltaNet declared with ``separate_linears`` (OLMo Hybrid's OlmoHybridGatedDeltaNet)
    keeps q, k, v, the output gate g and the a, b heads as linears of their own, where the counter
    lists Qwen3.5's in_proj_qkv / z / b / a: the same weights, more LoRA pairs."""
    if t.delta_net is None or not t.delta_net.separate_linears:
        return [(name, d_in, d_out)]
    k, v = arch.linear_key_dim, arch.linear_value_dim
    return {
        "in_proj_qkv": [("q_proj", d_in, k), ("k_proj", d_in, k), ("v_proj", d_in, v)],
        "in_proj_z": [("g_proj", d_in, d_out)],
        "in_proj_b": [("b_proj", d_in, d_out)],
        "in_proj_a": [("a_proj", d_in, d_out)],
        "out_proj": [("o_proj", d_in, d_out)],
    }.get(name, [(name, d_in, d_out)])


def _converted_moe(arch: Architecture) -> bool:
    """Whether peft converts the model's v4 expert names (its declaration's ``Experts.peft_converted``)."""
    return arch.is_moe and _traits(arch).peft_converted


def attention_target_names(arch: Architecture) -> frozenset[str]:
    """The module names ``lora_targets:attention`` adapts on this model (peft's list above, and the
    family's own names for its attention projections)."""
    return frozenset((*PEFT_ATTENTION_TARGETS, *_traits(arch).attention_modules.values()))


def _module_name(t: FamilyTraits, name: str) -> str:
    """The transformers module's name of what the counter names ``name``."""
    return {**t.attention_modules, **t.module_names}.get(name, name)


def _mixer_linears(arch: Architecture, targets: LoraTargets, rank: int) -> list[AdaptedLinear]:
    """Each layer kind's mixer linears peft adapts, on the layers of that kind only: under
    ``attention`` those named in peft's attention list, under ``all-linear`` every one (but the
    Mamba mixers' out_proj on the types peft refuses it on); Gemma 3n's key-value-sharing layers
    have no k/v_proj."""
    t = _traits(arch)
    wanted = attention_target_names(arch) if targets is LoraTargets.ATTENTION else None
    mamba_refused = t.peft_refuses_mamba_out_proj
    found: list[AdaptedLinear] = []
    for kind, copies in arch.mixer_counts.items():
        # Attention: each linear with its copies (Gemma 3n's and 4's K/V-sharing layers without
        # k/v_proj, Gemma 4's global and Mistral Large 4's MLA layers their own: decl).
        counted = arch.mixer_layer_linears(kind, copies)
        if kind == "linear_attention":
            counted = [
                (*split, n)
                for name, d_in, d_out, n in counted
                for split in _split_delta_net(arch, t, name, d_in, d_out)
            ]
        for name, d_in, d_out, n in counted:
            module = _module_name(t, name)
            if wanted is not None and module not in wanted:
                continue
            if mamba_refused and kind in _MAMBA_KINDS and module in PEFT_MAMBA_EXCLUDED:
                continue
            # Every Mamba-1 mixer (MambaMixer, FalconMambaMixer, JambaMambaMixer) multiplies by
            # ``self.dt_proj.weight`` itself, never calling the module: peft's dt_proj adapter never
            # runs (lora: measured, Mamba's model states 0.927 -> 1.000).
            idle = kind == "mamba1" and name == "dt_proj"
            found.append(AdaptedLinear(name, d_in, d_out, rank, n, kind, not idle))
    # decl2: Zamba2's shared blocks, adapted in every hybrid layer's module (the tied ones too).
    for name, d_in, d_out, n in arch.shared_block_linears(per_module=True):
        if wanted is None or name in wanted:
            found.append(AdaptedLinear(name, d_in, d_out, rank, n, "attention"))
    if wanted is None and arch.index_heads is not None and arch.index_head_dim is not None:
        # DeepSeek-V3.2's indexer (DeepseekV32Indexer): wq_b from the q latent, wk, weights_proj.
        # Its forward is ``@torch.no_grad()`` (DeepseekV32Indexer.forward, GlmMoeDsaIndexer.forward):
        # peft adapts these linears, but their adapters save nothing, get no gradient and no
        # optimizer state (lora: measured on both DSA families, saved 0.823 -> 0.98).
        heads, dim, h = arch.index_heads, arch.index_head_dim, arch.hidden_size
        for name, d_in, d_out in (
            ("indexer.wq_b", arch.q_lora_rank or 0, heads * dim),
            ("indexer.wk", h, dim),
            ("indexer.weights_proj", h, heads),
        ):
            found.append(AdaptedLinear(name, d_in, d_out, rank, arch.indexed_layers, "attention", False))
    return found


def has_attention_targets(arch: Architecture) -> bool:
    """Whether ``lora_targets:attention`` finds any module here (peft raises where it finds none:
    Mamba and Mamba-2 have no attention layer)."""
    return bool(_mixer_linears(arch, LoraTargets.ATTENTION, 1))


# Asked for by every term of a LoRA step (some 60 times an estimate), and the same for every answer
# about that model, rank and targets: kept for the few a session asks about.
@lru_cache(maxsize=64)
def adapted_linears(
    arch: Architecture, rank: int, targets: LoraTargets = LoraTargets.ALL_LINEAR
) -> tuple[AdaptedLinear, ...]:
    """The weights peft adapts (see the module's docstring), in the model's order: each mixer's on
    the layers of its kind, then the MLP side (dense MLPs, experts, routers) and Gemma 3n's own."""
    t = _traits(arch)
    found = _mixer_linears(arch, targets, rank)
    if targets is LoraTargets.ATTENTION:
        # peft matches target names as module-name suffixes (tuners_utils.check_target_module_exists):
        # a dense MLP linear named like an attention projection (GPT-2's c_proj) is adapted too.
        wanted = attention_target_names(arch)
        for width, layers in arch._dense_widths():
            found += [
                AdaptedLinear(n, i, o, rank, layers)
                for n, i, o in arch.dense_mlp_linears(width)
                if _module_name(t, n) in wanted
            ]
        return tuple(found)
    if arch.attention_experts:  # decl2: JetMoeMoA's router (an nn.Linear; its experts are none)
        found.append(
            AdaptedLinear("experts.router.layer", arch.hidden_size, arch.attention_experts, rank, arch.layers)
        )
    converted = _converted_moe(arch)
    h = arch.hidden_size
    if arch.dense_layers and not converted:
        for width, layers in arch._dense_widths():
            found += [AdaptedLinear(n, i, o, rank, layers) for n, i, o in arch.dense_mlp_linears(width)]
    if arch.moe_layers:
        moe = arch.moe_layers
        if converted:
            e, f = arch.experts, arch.expert_intermediate_size
            found += [
                AdaptedLinear("experts.gate_up_proj", h, 2 * f, 2 * rank * e, moe),
                AdaptedLinear("experts.down_proj", f, h, rank * e, moe),
                AdaptedLinear("gate", h, e, rank, moe),
            ]
        else:
            found += [AdaptedLinear(n, i, o, rank, moe) for n, i, o in arch.shared_expert_linears()]
            if t.linear_router:  # Llama 4's and PhiMoE's router is an nn.Linear; gpt-oss's is not
                found.append(AdaptedLinear("router", h, arch.experts, rank, moe))
        if arch.shared_expert_gate:  # Qwen2-MoE's nn.Linear h -> 1, named like no v4 expert
            found.append(AdaptedLinear("shared_expert_gate", h, 1, rank, moe))
    # Gemma 3n's AltUp, LAuReL and per-layer-input linears (the model's own, "per_layer"). In training
    # AltUp's ``correct`` multiplies by ``correction_coefs.weight.clamp(...)`` itself (F.linear), never
    # calling the module: peft's adapter there never runs (lora3: measured, no save, no gradient).
    found += [
        AdaptedLinear(n, i, o, rank, c, "per_layer", n != "altup.correction_coefs")
        for n, i, o, c in arch._per_layer_linears()
    ]
    return tuple(found)


def adapter_params(arch: Architecture, rank: int, targets: LoraTargets = LoraTargets.ALL_LINEAR) -> int:
    """The LoRA adapters' parameters: r × (d_in + d_out) per adapted weight."""
    return sum(linear.params for linear in adapted_linears(arch, rank, targets))


def idle_adapter_params(arch: Architecture, rank: int, targets: LoraTargets = LoraTargets.ALL_LINEAR) -> int:
    """The adapters no gradient reaches (``AdaptedLinear.trained`` False): their fp32 weights only."""
    return sum(linear.params for linear in adapted_linears(arch, rank, targets) if not linear.trained)


@lru_cache(maxsize=64)  # read by every QLoRA step, the same for every answer about the model
def quantized_params(arch: Architecture) -> int:
    """QLoRA's NF4 part: the linear layers bitsandbytes replaces (``nn.Linear``: attention, dense
    MLPs, shared experts); transformers 5's 3-D expert tensors are no linear layers and stay 16-bit,
    as do the embeddings, LM head, norms and routers (measured: benchmarks/accuracy_methods.py)."""
    return sum(
        d_in * d_out * copies
        for name, d_in, d_out, copies in arch.linear_layers()
        if not name.startswith("experts.")
    )


def qlora_base_bytes(arch: Architecture | None, params: int, compute_bytes: float = 2.0) -> float:
    """The frozen base under QLoRA: NF4 linears plus the rest in 16-bit (without a shape to tell
    them apart, all of it NF4)."""
    if arch is None:
        return params * NF4_BYTES_PER_PARAM
    quantized = min(params, quantized_params(arch))
    return quantized * NF4_BYTES_PER_PARAM + (params - quantized) * compute_bytes


def frozen_base_bytes(arch: Architecture | None, params: int, setup: Setup) -> float:
    """The frozen base's weights: 16-bit for LoRA (fp32 under amp), NF4 linears for QLoRA."""
    if setup.method is Method.QLORA:
        return qlora_base_bytes(arch, params)
    return params * (4.0 if setup.precision == "amp" else 2.0)


def dequantization_bytes(arch: Architecture, setup: Setup) -> float:
    """QLoRA's workspace: bitsandbytes dequantizes one NF4 weight to bf16 for its matmul (in forward,
    and again in backward) and frees it after: the largest linear's weight, 2 bytes per parameter."""
    if setup.method is not Method.QLORA:
        return 0.0
    return 2.0 * _largest_linear_params(arch)


@lru_cache(maxsize=64)  # read by every QLoRA step, the same for every answer about the model
def _largest_linear_params(arch: Architecture) -> int:
    return max((d_in * d_out for _, d_in, d_out, _ in arch.linear_layers()), default=0)


# --- what a LoRA step saves beside the full fine-tune's activations --------------------------------
# Measured against peft 0.21 on CPU (benchmarks/accuracy_methods.py; ACCURACY.md, "Methods"). With the
# base frozen, autograd no longer saves what only a base weight's gradient needs: each linear's 16-bit
# input, a norm's normalized tensor (its weight's gradient), down_proj's input (the MLP's product),
# o_proj's input where attention does not keep it itself (eager, or a contiguous copy), and the first
# layer's input norm, whose input and weight both need no gradient. Each adapted linear saves what its
# A and B need: peft casts the input to the adapters' fp32 (4·d_in; under autocast A's bf16 copy,
# 2·d_in) and A's output (4r; 2r). A MoE layer's 3-D experts and router (peft's ParamWrapper) run on
# the merged weight W + BA, which grouped_mm saves: one copy of every expert's weight per layer, in
# the base's dtype, and bf16 copies of the expert adapters (live from forward to backward).


def _normalized_bytes(width: int, precision: str, norm_style: str) -> int:
    """The normalized tensor a norm saves for its weight's gradient: Llama's 16-bit one, else fp32."""
    return 2 * width if norm_style == "llama" and precision != "amp" else 4 * width


def _linear_input_saves(
    arch: Architecture, precision: str, moe: bool, traits: FamilyTraits
) -> tuple[int, int]:
    """How many 16-bit linear inputs of width h a full fine-tune's layer saves (saved_activations'
    ``attention_inputs``, ``mlp_inputs``), and which a frozen base no longer needs."""
    amp = precision == "amp"
    attention = (1 if arch.fused_qkv else 3) if amp else 1
    if arch.is_mla:
        attention = 2 if amp else 1
    if moe and _converted_moe(arch):
        return attention, 0  # the router and the experts run on their merged, trained weights
    mlp = (1 if moe or arch.fused_gate_up else 2) if amp else 1
    if moe and traits.deepseek_moe:
        mlp = 0
    return attention, mlp


def lora_layer_delta(
    arch: Architecture,
    precision: str,
    attention: str,
    rank: int,
    targets: LoraTargets,
    *,
    moe: bool,
    mixer: str = "attention",
    mlp: bool = True,
    fallback: bool = False,
) -> tuple[int, int]:
    """What one decoder layer (its mixer of kind ``mixer``, "none" for Nemotron-H's MLP-only blocks;
    ``mlp`` False for a block without an MLP; ``fallback``: a hybrid mixer on the torch fallback)
    saves under LoRA beyond (or short of) the full fine-tune's layer: (bytes per token, bytes per
    layer independent of the tokens)."""
    t = _traits(arch)
    h, amp = arch.hidden_size, precision == "amp"
    attention_saves, mlp_saves = _linear_input_saves(arch, precision, moe, t)
    removed = 2 * h * ((attention_saves if mixer != "none" else 0) + (mlp_saves if mlp else 0))
    removed += arch.norms_per_layer * _normalized_bytes(h, precision, t.norm_style)
    attends = mixer in ("attention", "attention_mamba")
    if t.qk_norm and attends:
        removed += _normalized_bytes(arch.q_dim, "mixed", t.norm_style)
        removed += _normalized_bytes(arch.kv_dim, "mixed", t.norm_style)
    if attends and arch.is_mla:
        removed += 2 * arch.attention_heads * (arch.v_head_dim or arch.qk_head_dim)  # o_proj's copy
        # The latent norms' 16-bit normalized tensors and q_b_proj's / kv_b_proj's 16-bit inputs
        # (saved_activations._mla_attention_bytes): only the frozen weights' gradients needed them
        # (lora: measured on DeepSeek-V3.2's layers, tensor by tensor).
        removed += 4 * ((arch.q_lora_rank or 0) + (arch.kv_lora_rank or 0))
    elif attends and (attention == "eager" or t.rope_cat):
        removed += 2 * arch.o_dim
    if mixer in ("mamba", "attention_mamba") and fallback:
        # The torch fallback (Mamba2Mixer.torch_forward) no longer saves what only frozen weights'
        # gradients needed: out_proj's 16-bit input (2I), D's padded fp32 input (4I), the gated
        # norm's fp32 normalized tensor (4I) and dt's fp32 copy for dt_bias (4H) (lora: measured on
        # Mamba-2, per layer 0.927 -> 1.0). The kernel (MambaSplitConv1dScanCombinedFn) saves the
        # same tensors whatever needs a gradient.
        inner = arch.mamba_inner_size
        removed += 6 * inner + 4 * inner * arch.mamba_gated_norm + 4 * (arch.mamba_heads or 0)
    if mixer == "linear_attention":
        # Gated DeltaNet's frozen out_proj no longer saves its 16-bit input (2V), nor dt_bias's
        # softplus (4 per value head, fp32); on the fallback its torch gated RMSNorm no longer keeps
        # the 16-bit normalized tensor (2V; fla's fused norm saves the same either way) (lora:
        # measured on Qwen3.5-MoE).
        v = arch.linear_value_dim
        removed += 2 * v + 4 * (arch.linear_value_heads or 0) + (2 * v if fallback else 0)
    removed_per_layer = 0
    if mixer == "mamba1":
        # MambaMixer's frozen x_proj and out_proj no longer save their 16-bit inputs (2I each) where
        # they run as modules (the fallback; Jamba's kernels, called apart; mamba-ssm's fused
        # MambaInnerFn takes their weights and saves the same either way), nor A_log's exp (4·I·N,
        # fp32) its gradient needed (lora: measured on Mamba, per layer 1.00). Jamba's mixer
        # (mamba_dt_norms, its declaration's Mamba1.dt_norms, which the count reads) runs apart.
        removed += 4 * arch.mamba_inner_size if fallback or arch.mamba_dt_norms else 0
        removed_per_layer = 4 * arch.mamba_inner_size * (arch.mamba_state_size or 0)
    converted = moe and _converted_moe(arch)
    experts_adapted = converted and targets is LoraTargets.ALL_LINEAR
    if not mlp:
        pass
    elif not moe:
        removed += 2 * arch.intermediate_size  # down_proj's input, the MLP's product
    elif not experts_adapted and not t.dense_experts:
        # Frozen grouped experts keep neither what only their weights' gradients need (each routed
        # token's gathered input, down_proj's input: 2h + 2f, fp32 under amp) nor, when converted
        # types leave the router frozen too, the router's input (DeepSeek's an fp32 copy).
        e = 4 if amp else 2
        removed += arch.experts_per_token * e * (h + arch.expert_intermediate_size)
        if converted:
            removed += ((2 if amp else 4) if t.deepseek_moe else 2) * h
    frozen_shared = converted or targets is LoraTargets.ATTENTION
    if mlp and moe and arch.shared_experts and frozen_shared:  # the frozen shared experts: input, product
        removed += (4 if amp else 2) * h * (1 if t.deepseek_moe else 0) + 2 * arch.shared_intermediate_size
    in_bytes, a_bytes = (2, 2) if amp else (4, 4)
    added, constant = 0, -removed_per_layer
    for linear in adapted_linears(arch, rank, targets):
        if not linear.trained:
            continue  # under torch.no_grad: nothing saved for it
        if linear.mixer:
            if linear.mixer != mixer:
                continue  # another kind of layer's mixer, or the model's own (Gemma 3n's per-layer)
        elif not mlp or _moe_side(linear.name) != moe:
            continue  # a linear of the other kind of layer, or of an MLP this block has not
        if converted and linear.name.startswith(("experts.", "gate")):
            # The merged weight, in the base's dtype, saved by grouped_mm (or the router's F.linear).
            width = linear.d_in * linear.d_out * (arch.experts if linear.name.startswith("experts.") else 1)
            constant += (4 if amp else 2) * width
            continue
        added += in_bytes * linear.d_in + a_bytes * linear.rank
    return added - removed, constant


# Gemma 3n's linears inside a decoder layer (Gemma3nTextDecoderLayer) and how often each runs in it:
# AltUp's router twice (``predict`` and ``correct``); the model's own projections run outside the layers.
_PER_LAYER_CALLS = {
    "altup.modality_router": 2,
    "altup.prediction_coefs": 1,
    "laurel.linear_left": 1,
    "laurel.linear_right": 1,
    "per_layer_input_gate": 1,
    "per_layer_projection": 1,
}


def _streams_adapted(arch: Architecture, rank: int, targets: LoraTargets) -> bool:
    """Whether Gemma 3n's own linears (AltUp's, LAuReL's, the per-layer inputs') carry adapters: without
    them (``lora_targets:attention``) nothing before the first layer's q_proj needs a gradient."""
    return any(x.trained and x.mixer == "per_layer" for x in adapted_linears(arch, rank, targets))


def per_layer_parts_lora_delta(
    arch: Architecture,
    precision: str,
    rank: int,
    targets: LoraTargets,
    *,
    width: int,
    shares_kv: bool,
    first: bool = False,
) -> int:
    """lora3: what one Gemma 3n decoder layer (transformers 5.24 ``Gemma3nTextDecoderLayer``; MLP of
    ``width``, ``shares_kv`` without k/v_proj) saves under LoRA beyond (or short of) its full
    fine-tune (``saved_activations.per_layer_parts_layer``), bytes per token; measured tensor by tensor
    against peft 0.21 (benchmarks/ACCURACY.md, "Gemma 3n LoRA"). Its layer is not Llama's: what only
    a frozen weight's gradient needed is no longer saved,

    - the fp32 normalized tensor of its eight h-wide scaled norms, q_norm's and k_norm's (4 B each);
    - ``correct``'s ``F.linear`` input (the modalities, 2A; the clamped weight stays, their gradient
      needs it) and ``scale_corrected_output``'s input (correct_output_scale's gradient; 2h, 4h amp);
    - the 16-bit linear inputs: one shared by q/k/v and linear_left, one by gate and up, the router's
      two (2h each), prediction_coefs' 2A, linear_right's 2r, the per-layer gate's 2h and projection's
      2p, down_proj's 2f; under autocast each linear's own 16-bit copy instead (o_proj's excepted:
      SDPA's output is kept anyway);

    and each adapted linear run saves peft's fp32 input cast (4·d_in) and A's output (4r); under
    autocast lora_A's own 16-bit copy (2·d_in) and A's 16-bit output (2r). In the ``first`` layer with
    the streams frozen (attention-only adapters, no checkpointing: see
    :func:`per_layer_parts_outside_lora`) what runs before q_proj saves nothing: the router norm
    and input_layernorm (4h + 8 each; under autocast the fp32 stack 4Ah + 8), ``predict``'s tanh 4A, its
    coefficients 2A² and stack 2Ah, LAuReL's norm 4h + 8 (measured: 3,150 B a token at 512)."""
    h, q, kv, n = arch.hidden_size, arch.q_dim, arch.kv_dim, arch.altup_inputs
    r, p, amp = arch.laurel_rank, arch.per_layer_input_size, precision == "amp"
    kv_names = ("k_proj", "v_proj")
    removed = 32 * h + 4 * q + (0 if shares_kv else 4 * kv) + 2 * n + (4 if amp else 2) * h
    # Each linear run in the layer and its input width; the attention and MLP linears run once.
    runs = {
        name: (_PER_LAYER_CALLS[name], d_in)
        for name, d_in, _, _ in arch._per_layer_linears()
        if name in _PER_LAYER_CALLS
    }
    runs.update({name: (1, d_in) for name, d_in, _ in arch.attention_linears()})
    runs.update({name: (1, d_in) for name, d_in, _ in arch.dense_mlp_linears(width)})
    if shares_kv:
        runs = {name: run for name, run in runs.items() if name not in kv_names}
    if amp:
        own = {name: run for name, run in runs.items() if name != "o_proj"}
        removed += sum(2 * calls * d_in for calls, d_in in own.values())
    else:
        removed += 2 * (2 * h + n + h + r + h + width + h + p)
    if first and not _streams_adapted(arch, rank, targets):
        removed += 2 * ((4 * n if amp else 4) * h + 8) + 4 * n + 2 * n * n + 2 * n * h + 4 * h + 8
    # The adapted ones (each name once: the MLP's are listed by width).
    adapted = {x.name for x in adapted_linears(arch, rank, targets) if x.trained and x.name in runs}
    added = sum(
        calls * ((2 if amp else 4) * d_in + (2 if amp else 4) * rank)
        for name, (calls, d_in) in runs.items()
        if name in adapted
    )
    return added - removed


def per_layer_parts_outside_lora(
    arch: Architecture,
    precision: str,
    rank: int,
    targets: LoraTargets,
    before_layers: float,
    checkpointing: bool,
) -> int:
    """lora3: Gemma 3n outside its layers under LoRA (transformers 5.24 ``Gemma3nTextModel.forward``),
    bytes per token beyond its full fine-tune (measured as :func:`per_layer_parts_lora_delta`): the
    token ids of both embeddings (16), the per-layer norm's normalized [L, p] (4Lp), the final norm's
    (4h) and the LM head's input (2h) are no longer saved, nor the frozen embeddings' magnitude (2; 4h + 4
    under autocast) and per_layer_model_projection's 16-bit input (2h; under autocast each projection's
    own copy); each adapted projection (the per-layer inputs', AltUp's A - 1 into and out of the
    streams) saves its fp32 input and A's output, 4h + 4r (autocast: its own 16-bit copy, 2h + 2r).
    ``before_layers``: what the full fine-tune saves before the layers, bytes per token. Under
    checkpointing peft makes the embeddings' output require a gradient (``enable_input_require_grads``,
    for the checkpointed layers), so the streams are never frozen there (measured: attention-only,
    checkpointed, 1.22 before this)."""
    h, layers, p, amp = arch.hidden_size, arch.layers, arch.per_layer_input_size, precision == "amp"
    outside = ("per_layer_model_projection", "altup_projections", "altup_unembed_projections")
    removed = 16 + 4 * layers * p + 4 * h + 2 * h + (4 * h + 4 if amp else 2 + 2 * h)
    if not _streams_adapted(arch, rank, targets) and not checkpointing:
        # Attention-only: nothing before the layers needs a gradient, none of what the full fine-tune
        # saves there is kept (saved_activations.per_layer_parts_outside's first part; measured).
        removed = 4 * h + 2 * h + int(before_layers)
    elif amp:
        removed += sum(2 * d_in * n for name, d_in, _, n in arch._per_layer_linears() if name in outside)
    added = sum(
        linear.copies * ((2 * linear.d_in + 2 * rank) if amp else (4 * linear.d_in + 4 * rank))
        for linear in adapted_linears(arch, rank, targets)
        if linear.trained and linear.name in outside
    )
    return added - removed


def first_adapted_layer(arch: Architecture, targets: LoraTargets, mlp_of: Callable[[int], str]) -> int:
    """The first layer holding an adapter (``mlp_of``: a layer's MLP, "dense", "moe" or "none").
    Nothing before it needs a gradient, so autograd saves nothing there: a hybrid's Mamba layers
    ahead of its first attention layer under ``lora_targets:attention`` (measured on Nemotron-H)."""
    adapted = adapted_linears(arch, 1, targets)
    mixers = {linear.mixer for linear in adapted if linear.mixer}
    mlp_sides = {_moe_side(linear.name) for linear in adapted if not linear.mixer}
    for index in range(arch.layers):
        kind = arch.layer_kinds[index] if arch.layer_kinds else "attention"
        mlp = mlp_of(index)
        if kind in mixers or (mlp != "none" and (mlp == "moe") in mlp_sides):
            return index
    return arch.layers


def _moe_side(name: str) -> bool:
    """A MoE layer's adapted weight (experts, shared experts, router), not a dense MLP's."""
    return name.startswith(("experts.", "shared_experts.")) or name in _MOE_ROUTING


_MOE_ROUTING = ("gate", "router", "shared_expert_gate")  # the routers, Qwen2-MoE's shared-expert gate


def lora_outside_delta(arch: Architecture, precision: str, checkpointing: bool) -> int:
    """Outside the layers under LoRA, bytes per token: the final norm's normalized tensor, the LM
    head's 16-bit input and the embedding's token ids are no longer saved, nor (without
    checkpointing) the rest of the first layer's input norm (its fp32 input and rsqrt, 4h + 4; its
    normalized tensor is in :func:`lora_layer_delta`)."""
    t = _traits(arch)
    h = arch.hidden_size
    removed = _normalized_bytes(h, precision, t.norm_style) + 2 * h + 8
    if not checkpointing:
        removed += 4 * h + 4
    return -removed


def lora_outside_constant(arch: Architecture, checkpointing: bool) -> int:
    """Gemma's first input norm no longer keeps its fp32 ``1 + weight`` (no gradient reaches it)."""
    return -4 * arch.hidden_size if _traits(arch).norm_style == "gemma" and not checkpointing else 0


def adapter_weight_copy_bytes(arch: Architecture, precision: str, rank: int, targets: LoraTargets) -> float:
    """peft's bf16 copies of a converted MoE layer's expert adapters, cast to the base's dtype to
    build the merged weight, alive from forward to backward (16-bit bases; under amp the fp32 base
    takes the fp32 adapters as they are)."""
    if precision == "amp" or not _converted_moe(arch) or targets is LoraTargets.ATTENTION:
        return 0.0
    experts = sum(x.params for x in adapted_linears(arch, rank, targets) if x.name.startswith("experts."))
    return 2.0 * experts


# --- the model states of a method ------------------------------------------------------------------

# Without a preset's layers to count them, the adapters are budgeted at the upper end of the usual
# "well under 1 % of the parameters" (the seed's rule of thumb).
LORA_TRAINABLE_FRACTION = 0.01
# Without layers to tell the linears from the rest, QLoRA's base by the same rule of thumb: NF4 with
# double quantization, 4.127 bits, rounded up to 0.52 B/param for the 16-bit parts it cannot see.
QLORA_RULE_OF_THUMB = 0.52
LORA_BASE_KEY = "part.frozen_base16"
QLORA_BASE_KEY = "part.frozen_base_nf4"
# The frozen bases of the rules of thumb, which every answer about a size shows: LoRA's 16-bit base
# (fp32 under amp) and QLoRA's at 0.52 B/param.
_LORA_BASE16 = Part(LORA_BASE_KEY, "weights", 2.0, frozen=True)
_LORA_BASE32 = Part(LORA_BASE_KEY, "weights", 4.0, frozen=True)
_QLORA_RULE_OF_THUMB_BASE = Part(QLORA_BASE_KEY, "weights", QLORA_RULE_OF_THUMB, frozen=True)


@value_type
class MethodStates:
    """What LoRA or QLoRA trains and keeps frozen: the adapters (``trained_billion``, each storing
    ``parts``: fp32 weights and gradients and the optimizer's fp32 state, as peft trains them) and
    the base (``frozen_billion``, each storing ``frozen``: its weights only, and with them the fp32
    weights of the adapters no gradient reaches, ``AdaptedLinear.trained`` False)."""

    rank: int | None  # None: no layers to count, the 1 % rule
    trained_billion: float
    frozen_billion: float
    parts: tuple[Part, ...]
    frozen: Part
    bytes_per_param: float  # an adapter parameter's: its parts' sum

    @property
    def model_states_gb(self) -> float:
        return self.trained_billion * self.bytes_per_param + self.frozen_billion * self.frozen.bytes_per_param


def adapter_states(request: EstimateRequest) -> tuple[MethodStates, MethodStates]:
    """The model states under LoRA and under QLoRA, in that order: the same adapters, on a 16-bit and
    on an NF4 base. The answer's hints show both, and a LoRA or QLoRA request's own is one of them
    (:func:`states_of`), so they are worked out together, once.

    With a preset's layers: peft's adapters counted and trained in fp32, the NF4 linears counted.
    With a size only (``params``): the rules of thumb, adapters at 1 % of N costing the optimizer's
    B, and QLoRA's base at 0.52 B/param."""
    arch = request.architecture if request.params is None else None
    base = request.params_billion
    idle = 0.0  # adapters no gradient reaches: fp32 weights only, kept with the frozen weights
    if arch is not None:
        rank: int | None = request.lora_rank
        adapters = adapter_params(arch, request.lora_rank, request.lora_targets) / 1e9
        # lora3: as the step's peak counts them (step_peak; measured on GLM-5, states 1.000).
        idle = idle_adapter_params(arch, request.lora_rank, request.lora_targets) / 1e9
        adapters -= idle
    else:
        rank, adapters = None, base * LORA_TRAINABLE_FRACTION
    idle_per_param = 4.0 * idle / base if base else 0.0  # the idle adapters' fp32 weights, over the base
    if request.bytes_per_param is not None:
        parts: tuple[Part, ...] = (Part(CUSTOM_PART_KEY, "optimizer", request.bytes_per_param),)
    elif arch is not None:
        parts = parts_for(request.optimizer, _AMP)  # peft's fp32 adapters, no master copy
    else:
        parts = parts_for(request.optimizer, request.precision)  # the rule of thumb: the seed's B
    adapter_bytes = sum(part.bytes_per_param for part in parts)  # both methods' B, added up once
    lora_base = _LORA_BASE32 if request.precision is _AMP else _LORA_BASE16
    if arch is None:  # the rules of thumb: nothing idle, the usual bases
        lora_frozen, qlora_frozen = lora_base, _QLORA_RULE_OF_THUMB_BASE
    else:
        per_param = round(qlora_base_bytes(arch, round(base * 1e9)) / (base * 1e9), 3)  # a readable B
        lora_frozen = Part(LORA_BASE_KEY, "weights", lora_base.bytes_per_param + idle_per_param, frozen=True)
        qlora_frozen = Part(QLORA_BASE_KEY, "weights", per_param + idle_per_param, frozen=True)
    return (
        MethodStates(rank, adapters, base, parts, lora_frozen, adapter_bytes),
        MethodStates(rank, adapters, base, parts, qlora_frozen, adapter_bytes),
    )


def states_of(method: Method, states: tuple[MethodStates, MethodStates]) -> MethodStates | None:
    """``method``'s of :func:`adapter_states`' pair; None for the full fine-tune (the seed's)."""
    if method is _FULL:
        return None
    return states[1] if method is _QLORA else states[0]


# Read on every answer: enum members as module constants (bot/README.md, "Code on every answer's path").
_FULL, _QLORA, _AMP = Method.FULL, Method.QLORA, Precision.AMP


def lora_backward_working_bytes(arch: Architecture, rank: int, targets: LoraTargets) -> int:
    """Per token, what a LoRA layer's backward holds beyond the full fine-tune's working set: the
    widest adapted linear's input gradient in fp32 (A's backward, 4·d_in) and its 16-bit cast back
    to the base's dtype (2·d_in), fitted on the recompute of Qwen3 and Llama at 512 × 2 (measured:
    benchmarks/accuracy_methods.py)."""
    widest = max(
        (x.d_in for x in adapted_linears(arch, rank, targets) if x.rank == rank and x.trained), default=0
    )
    return 6 * widest
