"""A training step's peak: the live bytes at each moment that can hold it (issue 11).

Model states after a real optimizer step and the step's temporaries, the loss's logits, the
backward's working set of one layer, the recompute under checkpointing; on one card or on its share
of the model states under ZeRO. Calibrated on CPU with PyTorch 2.13 and transformers 5.24
(``benchmarks/accuracy.py``; numbers in ``benchmarks/ACCURACY.md``). The saved activations it
starts from are :mod:`bot.estimate.saved_activations`'. Pure Python; nothing here imports torch.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

from bot.estimate import hybrid_saved, methods, saved_activations
from bot.estimate.family_traits import FamilyTraits, traits_for
from bot.estimate.hybrid_saved import KERNEL_PATH, HybridPath
from bot.estimate.models import Architecture
from bot.estimate.saved_activations import (
    AttentionImpl,
    Precision,
    autocast_weight_copy_bytes,
    deepseek_moe_bytes,
    dense_mlp_bytes,
    first_layer_is_moe,
    measured_activations,
    norm_bytes,
    routed_moe_bytes,
)
from bot.estimate.savers import saved_on_card
from bot.estimate.setup import FULL_FINE_TUNE, OptimizerKind, Setup
from bot.estimate.sharding import WHOLE_MODEL, CardShare
from bot.estimate.value_type import value_type

__all__ = ["OptimizerKind", "StepPeak", "step_peak", "step_peak_bytes"]


# Model states after a real optimizer step, bytes per trainable parameter, and the optimizer step's
# temporaries on top of them (measured: benchmarks/ACCURACY.md).
# - mixed: bf16 weights 2 + bf16 grads 2 + fp32 master 4 + states; the step first casts the grads to
#   fp32 for the master copy (4 B/param, freed after the step).
# - amp: fp32 weights 4 + fp32 grads 4 + states (fp32).
# - bf16: bf16 weights 2 + bf16 grads 2 + states in bf16.
# - AdamW (torch.optim, default foreach=True): exp_avg and exp_avg_sq in the weights' dtype of the
#   optimizer (8 fp32, 4 bf16); ``_multi_tensor_adamw`` makes ``torch._foreach_sqrt(exp_avg_sqs)``, one
#   state-sized temporary (4 fp32, 2 bf16). The fused kernel (``fused=True``) makes none.
# - SGD with momentum: one momentum buffer (4 fp32, 2 bf16); foreach updates in place.
# - bitsandbytes AdamW8bit: two uint8 states (2) + one fp32 absmax per 256-value block per state
#   (8/256 = 0.031) + 2 × 256-entry fp32 quantization maps per tensor; tensors under 4096 values keep
#   32-bit states (``min_8bit_size``): ≈ 2.03 B/param on a large model.
# - bitsandbytes PagedAdamW8bit: AdamW8bit's states in paged (unified) memory, which is not the card's
#   to hold at the peak (``_paged_state_bytes``); the same temporaries.
# - Adafactor (torch.optim.Adafactor, foreach as on CUDA): the factored second moment, row + column
#   per 2-D weight (≈ 0 B/param; budgeted 0.01 fp32, 0.005 bf16); the foreach step makes about one
#   parameter-sized temporary per parameter in the state's dtype (its docs: "~ sizeof(params) more").
# - Lion (Chen et al. 2023, Program 1, per tensor as the reference runs it): one momentum; the
#   interpolated sign update is one tensor-sized temporary of the largest tensor only.
# - Muon (torch.optim.Muon, per 2-D tensor) for the hidden weights, AdamW for the rest
#   (``_state_bytes``): one momentum everywhere, AdamW's second moment on its share; AdamW's foreach
#   temporaries on its share are left out (under 1 % of a large model's step), and the Newton-Schulz
#   working set of the hidden matrix that needs the most (``muon_newton_schulz_bytes``).
_STATE_BYTES: dict[tuple[Precision, OptimizerKind], tuple[float, float, float]] = {
    # (model-state bytes per parameter, step temporaries per parameter, step temporaries per entry of
    # the largest tensor, for an optimizer that steps tensor by tensor)
    ("mixed", "adamw"): (16.0, 8.0, 0.0),
    ("mixed", "adamw_fused"): (16.0, 4.0, 0.0),
    ("mixed", "sgd"): (12.0, 4.0, 0.0),
    ("mixed", "adam8bit"): (10.03, 4.0, 0.0),
    ("mixed", "paged_adam8bit"): (10.03, 4.0, 0.0),
    ("mixed", "adafactor"): (8.01, 8.0, 0.0),
    ("mixed", "lion"): (12.0, 4.0, 4.0),
    ("mixed", "muon"): (12.0, 4.0, 0.0),
    ("amp", "adamw"): (16.0, 4.0, 0.0),
    ("amp", "adamw_fused"): (16.0, 0.0, 0.0),
    ("amp", "sgd"): (12.0, 0.0, 0.0),
    ("amp", "adam8bit"): (10.03, 0.0, 0.0),
    ("amp", "paged_adam8bit"): (10.03, 0.0, 0.0),
    ("amp", "adafactor"): (8.01, 4.0, 0.0),
    ("amp", "lion"): (12.0, 0.0, 4.0),
    ("amp", "muon"): (12.0, 0.0, 0.0),
    ("bf16", "adamw"): (8.0, 2.0, 0.0),
    ("bf16", "adamw_fused"): (8.0, 0.0, 0.0),
    ("bf16", "sgd"): (6.0, 0.0, 0.0),
    ("bf16", "adam8bit"): (6.03, 0.0, 0.0),
    ("bf16", "paged_adam8bit"): (6.03, 0.0, 0.0),
    ("bf16", "adafactor"): (4.005, 2.0, 0.0),
    ("bf16", "lion"): (6.0, 0.0, 2.0),
    ("bf16", "muon"): (6.0, 0.0, 0.0),
}


def model_state_bytes_per_param(precision: Precision, optimizer: OptimizerKind) -> float:
    return _STATE_BYTES[(precision, optimizer)][0]


def step_temporary_bytes_per_param(precision: Precision, optimizer: OptimizerKind) -> float:
    return _STATE_BYTES[(precision, optimizer)][1]


def step_temporary_bytes_per_largest_entry(precision: Precision, optimizer: OptimizerKind) -> float:
    return _STATE_BYTES[(precision, optimizer)][2]


def muon_adamw_share(arch: Architecture, parameters: int) -> float:
    """The share of the parameters Muon leaves to AdamW: the embeddings and the LM head (the norms and
    biases, well under 0.1 %, are left out)."""
    matrices = arch.vocab_size * arch.hidden_size * (1 if arch.tied_embeddings else 2)
    return min(1.0, matrices / parameters) if parameters else 0.0


def _state_bytes(
    arch: Architecture, parameters: int, precision: Precision, optimizer: OptimizerKind
) -> float:
    """Model-state bytes per parameter; Muon's with the model's own AdamW share (AdamW's second
    moment on it: 4 B fp32, 2 B bf16)."""
    states = model_state_bytes_per_param(precision, optimizer)
    if optimizer == "muon":
        states += (2 if precision == "bf16" else 4) * muon_adamw_share(arch, parameters)
    return states


def _paged_state_bytes(precision: Precision, optimizer: OptimizerKind) -> float:
    """Per parameter, the optimizer state kept in paged memory: PagedAdamW8bit's moments (the fp32
    master copy of mixed precision is not the optimizer's and stays on the card)."""
    if optimizer != "paged_adam8bit":
        return 0.0
    master = 4.0 if precision == "mixed" else 0.0
    return model_state_bytes_per_param(precision, optimizer) - 2 * weight_bytes_per_param(precision) - master


# Read by every step the judge asks for (the card count's, the largest batch's), the same for every
# answer about the model: kept for the few a session asks about.
@lru_cache(maxsize=64)
def largest_tensor_params(arch: Architecture) -> int:
    """The largest single parameter tensor: the embedding or LM head v × h, or one linear layer (a MoE
    layer's experts are one 3-D tensor per projection in transformers 5)."""
    candidates = [arch.vocab_size * arch.hidden_size]
    candidates += [d_in * d_out for _, d_in, d_out, _ in arch.linear_layers()]
    if arch.is_moe:
        candidates += [arch.experts * d_in * d_out for _, d_in, d_out in arch.expert_linears()]
    return max(candidates)


def muon_newton_schulz_bytes(arch: Architecture, precision: Precision) -> float:
    """The most one hidden matrix's Muon step holds at once (torch.optim.Muon, one tensor at a time):
    its Nesterov update in the state's dtype (u = 2 B in bf16, 4 on fp32 weights), its bf16 copy (none
    when the update is bf16 already), the iterate X and the next one (bf16), and the two bf16 Gram
    matrices of the shorter side m (X Xᵀ and b·A + c·A²): (u + 4 + (2 if fp32)) r c + 4 m² bytes for
    r × c. Measured on a 256 × 688 MLP weight: 1.32 MB in bf16, 2.05 MB on fp32 weights, as here."""
    per_entry = 6 if precision == "bf16" else 10
    return float(
        max(
            (
                per_entry * d_in * d_out + 4 * min(d_in, d_out) ** 2
                for _, d_in, d_out, _ in arch.linear_layers()
            ),
            default=0,
        )
    )


def gradient_bytes_per_param(precision: Precision) -> float:
    return 4.0 if precision == "amp" else 2.0


def weight_bytes_per_param(precision: Precision) -> float:
    return 4.0 if precision == "amp" else 2.0


def _layer_backward_working_bytes(
    arch: Architecture,
    batch_size: int,
    seq_len: int,
    attention: AttentionImpl,
    precision: Precision,
    traits: FamilyTraits | None = None,
    *,
    moe_layer: bool = False,
) -> float:
    """What the backward pass of one layer's attention adds on top of that layer's saved tensors, net of
    what it has already freed (the layer's MLP and post-attention norm). Eager: the bf16 gradient of
    the probabilities, its fp32 copy and the softmax's fp32 gradient, 6·a·s per token, and the residual
    gradient 4h (6h under autocast). SDPA: the gradients of Q, K, V and the output, 4q + 4kv, and the
    residual gradient 4h (measured: benchmarks/ACCURACY.md)."""
    s, b = seq_len, batch_size
    h, q, kv, a = arch.hidden_size, arch.q_dim, arch.kv_dim, arch.attention_heads
    residual = 6 * h if precision == "amp" else 4 * h
    if arch.is_mla and attention == "eager":
        # MLA (measured at 1024 × 2, benchmarks/ACCURACY.md section 4): the softmax's backward makes
        # 8·a·s + 4h of temporaries, as Llama's; by then that layer's MLP side (post-attention norm,
        # router, experts, shared experts; ``moe_layer`` says which kind of layer) is freed, and so
        # are the probabilities 2·a·s, V's copy and o_proj's input 2·a·d_v each.
        d_v = arch.v_head_dim or arch.qk_head_dim
        mlp_side = _mlp_side_bytes(arch, precision, traits or traits_for(arch), moe_layer)
        return float(s * b * max(0, 6 * a * s + residual - 4 * a * d_v - mlp_side))
    if attention == "eager":
        # The layer's MLP side freed by then: a dense MLP's gate, up, act, product 8f, or a MoE
        # layer's router and k active experts at the expert's width, as the MLA branch above frees
        # them (Qwen3-30B-A3B's dense intermediate_size, 6144, is 8 × its experts' 768). gpt-oss keeps
        # 8f per active expert: its sinks' softmax terms below were fitted with it.
        t = traits or traits_for(arch)
        if moe_layer and t.clamped_swiglu:
            mlp = 8 * arch.expert_intermediate_size * arch.experts_per_token
        elif moe_layer:
            mlp = routed_moe_bytes(arch, precision, t)
        else:
            mlp = dense_mlp_bytes(arch)
        # With attention sinks (gpt-oss) the softmax runs in the scores' dtype and its gradients are
        # smaller: 2.5·a·s (bf16) and 4·a·s (autocast), fitted on the measured peaks at s = 1024
        # rather than derived tensor by tensor.
        sinks = a * s * (8 if precision == "amp" else 5) // 2
        scores = sinks if t.attention_sinks and not t.sink_scaling else 6 * a * s
        return float(s * b * max(0, scores + residual - mlp - 8 * h))
    if traits is not None and traits.per_layer_parts:
        # act: Gemma 3n's residual is AltUp's stack of A streams: the gradients of the layer's input,
        # predictions and corrected stacks and one more live at once (measured: 4 × 2Ah).
        residual = 4 * arch.altup_inputs * (residual // 2)
    # MLA: q_dim and kv_dim are both a·d_qk, the padded width of V and of the output.
    return float(s * b * (4 * q + 4 * kv + residual))


def _mlp_side_bytes(arch: Architecture, precision: Precision, traits: FamilyTraits, moe_layer: bool) -> int:
    """Per token: what one layer's post-attention norm and MLP save (DeepSeek-V3's MoE, or a gated MLP)."""
    h = arch.hidden_size
    norm = norm_bytes(h, 1, precision, traits.norm_style)
    if moe_layer and traits.deepseek_moe:
        return norm + deepseek_moe_bytes(arch, precision, traits)
    return norm + 2 * h * (2 if precision == "amp" else 1) + dense_mlp_bytes(arch)


def _kv_store_layers(arch: Architecture) -> int:
    """Gemma 3n: the layers that store their keys and values for the K/V-sharing ones, the last
    unshared layer of each attention kind (Gemma3nTextConfig.kv_sharing_modes), none without sharing."""
    if not arch.kv_shared_layers:
        return 0
    return (arch.sliding_window_layers > 0) + (arch.sliding_window_layers < arch.attention_layers)


def _layer_params(arch: Architecture, index: int, *, mixer: bool = True) -> int:
    """Layer ``index``'s linear weights (its mixer's, unless ``mixer`` is False, and its MLP's: a MoE
    layer's every routed expert, the shared experts and the router), norms and biases left out."""
    kind = arch.layer_kinds[index] if arch.layer_kinds else "attention"
    params = sum(i * o for _, i, o in arch.mixer_linears(kind)) if mixer and kind != "none" else 0
    mlp = hybrid_saved.layer_mlp(arch, index)
    if mlp == "moe":
        params += arch.experts * sum(i * o for _, i, o in arch.expert_linears())
        params += sum(i * o for _, i, o in arch.shared_expert_linears()) + arch.hidden_size * arch.experts
    elif mlp == "dense":
        params += sum(i * o for _, i, o in arch.dense_mlp_linears())
    return params


def _mlp_and_o_params(arch: Architecture, *, moe_layer: bool) -> int:
    """The parameters whose gradients exist while the last layer's attention backward runs: that
    layer's o_proj and MLP. A MoE layer's MLP is every routed expert at the expert's width (transformers
    5 keeps them as one module, so all E get gradients; measured for MLA, benchmarks/ACCURACY.md
    section 4), the shared experts and the router; a dense layer's its gated MLP."""
    h = arch.hidden_size
    o_proj = h * arch.o_dim
    if moe_layer:
        routed = arch.experts * sum(i * o for _, i, o in arch.expert_linears())
        shared = sum(i * o for _, i, o in arch.shared_expert_linears())
        return routed + shared + h * arch.experts + o_proj
    return sum(i * o for _, i, o in arch.dense_mlp_linears()) + o_proj


@value_type
class StepPeak:
    """The live bytes at each moment that can hold a step's peak, and the highest of them."""

    moments: dict[str, float]
    model_states_bytes: float
    saved_bytes: float

    @property
    def peak_bytes(self) -> float:
        return max(self.moments.values())

    @property
    def moment(self) -> str:
        """Where the peak is: ``loss forward``, ``loss backward``, ``eager attention backward``,
        ``recompute`` or ``optimizer step``."""
        return max(self.moments, key=lambda name: self.moments[name])

    @property
    def transients_bytes(self) -> float:
        """What the peak adds to the seed's V = M + A (model states + saved activations)."""
        return self.peak_bytes - self.model_states_bytes - self.saved_bytes


def step_peak_bytes(
    arch: Architecture,
    parameters: int,
    batch_size: int,
    seq_len: int,
    *,
    setup: Setup = FULL_FINE_TUNE,
    traits: FamilyTraits | None = None,
    hybrid_path: HybridPath = KERNEL_PATH,
) -> float:
    """The highest live bytes of one steady-state step (see ``step_peak``)."""
    return step_peak(
        arch, parameters, batch_size, seq_len, setup=setup, traits=traits, hybrid_path=hybrid_path
    ).peak_bytes


def step_peak(
    arch: Architecture,
    parameters: int,
    batch_size: int,
    seq_len: int,
    *,
    setup: Setup = FULL_FINE_TUNE,
    traits: FamilyTraits | None = None,
    share: CardShare = WHOLE_MODEL,
    hybrid_path: HybridPath = KERNEL_PATH,
) -> StepPeak:
    """The highest live bytes of one steady-state step (gradients freed before it, set_to_none), on
    one card holding ``share`` of the model states.

    The largest of:
    - the loss in forward: states without gradients + saved activations (+ weight copies, held
      tensors) + the bf16 logits and their fp32 copy;
    - the loss in backward: the same + the two fp32 logit gradients instead;
    - without checkpointing, eager attention's backward in the last layer: the same, less that layer's
      MLP and norms, the final norm and the log-softmax (freed by then), + the gradients of the LM head
      and of that layer's MLP and o_proj, + the softmax's gradients (``_layer_backward_working_bytes``);
    - under checkpointing, the first layer's backward, the last one run: states without gradients +
      every gradient but the embedding's + that layer's checkpointed input, the held tensors, the token
      ids + the layer recomputed in full (+ its weight copies under autocast) + its backward's working
      set;
    - the optimizer step: the model states with gradients + the step's temporaries.

    Measured on one process holding the whole model. Sharded by ZeRO (``share``), a card holds its
    fraction of the weights, gradients and optimizer state (Rajbhandari et al. 2020, section 5), and
    steps only its own shard, so the temporaries follow the optimizer state's fraction; what backward
    makes of one layer (its working set, eager attention's last-layer gradients) and all activations
    stay whole on every card.

    The savers (:mod:`bot.estimate.savers`) change the moments so: offloaded or paged optimizer state
    is not on the card (an offloaded step runs on the host, with no temporaries on the card); with
    the optimizer in backward no moment holds more than one tensor's gradient (the largest, with its
    step's temporaries) and the optimizer step is that tensor's; offloaded activations and a chunked
    loss keep less saved and smaller loss transients (``saved_on_card``); with gradient accumulation
    the accumulated gradients live through the next micro-batch's forward and backward.

    Under LoRA or QLoRA (``setup.adapters``) ``parameters`` is the frozen base, which holds its
    weights only (:func:`methods.frozen_base_bytes`); the adapters train, in fp32 without a master
    copy (peft), so their states are the fp32 (``amp``) figures; no gradient reaches the LM head or
    a frozen MLP, and QLoRA dequantizes one linear's weight at a time (its workspace).
    """
    t = traits or traits_for(arch)
    if t.compressed_layers and setup.attention != "eager":
        # act: DeepSeek-V4's sink attention runs eager only in transformers 5.24 (its causal mask held
        # under checkpointing, eager's backward moment).
        setup = dataclasses.replace(setup, attention="eager")
    savers = setup.savers
    attention, precision, checkpointing = setup.attention, setup.precision, setup.checkpointing
    optimizer = setup.optimizer
    acts = measured_activations(arch, batch_size, seq_len, setup=setup, traits=t, hybrid_path=hybrid_path)
    acts = saved_on_card(acts, arch, savers)
    sb, h, v = seq_len * batch_size, arch.hidden_size, arch.vocab_size
    trained_precision: Precision = "amp" if setup.adapters else precision  # peft's fp32 adapters
    n = methods.adapter_params(arch, setup.lora_rank, setup.lora_targets) if setup.adapters else parameters
    frozen = methods.frozen_base_bytes(arch, parameters, setup) if setup.adapters else 0.0
    if setup.adapters:  # adapters under torch.no_grad (the DSA indexer's) keep their fp32 weights only
        idle = methods.idle_adapter_params(arch, setup.lora_rank, setup.lora_targets)
        n, frozen = n - idle, frozen + weight_bytes_per_param("amp") * idle
    grad_bytes = gradient_bytes_per_param(trained_precision)
    weight_bytes = weight_bytes_per_param(trained_precision)
    # Muon's AdamW share is the embeddings' and the head's: a full fine-tune's (adapters are 2-D).
    state_bytes = (
        model_state_bytes_per_param(trained_precision, optimizer)
        if setup.adapters
        else _state_bytes(arch, n, precision, optimizer)
    )
    optimizer_bytes = state_bytes - weight_bytes - grad_bytes  # the fp32 master copy and the states
    # What the card holds of them: none offloaded, the paged moments paged out.
    paged = _paged_state_bytes(trained_precision, optimizer)
    host_optimizer = optimizer_bytes if savers.optimizer_offloaded else paged
    held_grad_bytes = 0.0 if savers.optimizer_in_backward else grad_bytes
    # The card's share (the whole model on one card: exactly as measured); a frozen base is
    # sharded as weights.
    states = (
        weight_bytes * share.weights
        + held_grad_bytes * share.gradients
        + (optimizer_bytes - host_optimizer) * share.optimizer
    ) * n + frozen * share.weights
    card_grad_bytes = held_grad_bytes * share.gradients  # per parameter of the model, on this card
    without_grads = states - card_grad_bytes * n
    base = without_grads + acts.saved_bytes + acts.weight_copy_bytes + acts.held_bytes
    base += methods.dequantization_bytes(arch, setup)
    # The gradients that live through forward and backward: accumulated ones from the second
    # micro-batch on; under the optimizer in backward the one tensor being stepped (under LoRA, at
    # most all of the adapters, which are small).
    in_flight = 0.0
    largest = n if setup.adapters else largest_tensor_params(arch)
    temporaries = step_temporary_bytes_per_param(trained_precision, optimizer)
    largest_temporaries = step_temporary_bytes_per_largest_entry(trained_precision, optimizer) * largest
    if optimizer == "muon" and not setup.adapters:
        largest_temporaries = muon_newton_schulz_bytes(arch, precision)
    if savers.optimizer_offloaded:
        temporaries = largest_temporaries = 0.0  # the step runs on the host (ZeRO-Offload's CPU Adam)
    if savers.optimizer_in_backward:
        in_flight = grad_bytes * largest + temporaries * largest + largest_temporaries
    elif savers.grad_accum > 1:
        base += card_grad_bytes * n
    # The first layer's kind (dense under first_k_dense_replace) for the recompute, the last one's for
    # eager attention's backward.
    first_is_moe = first_layer_is_moe(arch)
    last_is_moe = arch.moe_layers > 0 and arch.layers % arch.interleave_moe_layer_step == 0
    working = _layer_backward_working_bytes(
        arch,
        batch_size,
        seq_len,
        attention,
        precision,
        t,
        moe_layer=first_is_moe if checkpointing else last_is_moe,
    )
    moments = {
        "loss forward": base + acts.loss_forward_bytes,
        # Under the optimizer in backward the LM head's gradient is made here and stepped at once.
        "loss backward": base + acts.loss_backward_bytes + in_flight,
        "optimizer step": states + temporaries * share.optimizer * n + largest_temporaries,
    }
    if savers.optimizer_in_backward:
        # No step after backward: each tensor steps as its gradient is made, inside the moments below.
        moments["optimizer step"] = states + in_flight
    # DeepSeek-V3.2's indexer; DeepSeek-V4's keeps its scores' inputs, counted as saved (act).
    indexer_scores = (
        0.0 if t.compressed_layers else hybrid_saved.indexer_scores_bytes(arch, batch_size, seq_len)
    )
    if indexer_scores and not checkpointing:
        # hybact: the last layer's sparse-attention indexer scores every key in fp32 in forward, on
        # top of what the layers before it saved (bot.estimate.hybrid_saved.indexer_scores_bytes).
        # At the last layer's indexer only the layers before it have saved their tensors.
        before_last = base - acts.saved_bytes + acts.per_layer_bytes * (arch.layers - 1)
        moments["indexer forward"] = before_last + indexer_scores
    # hybact: the torch fallback's Mamba-1 scan in backward (bot.estimate.hybrid_saved).
    scan_backward = hybrid_saved.scan_backward_bytes(arch, batch_size, seq_len, hybrid_path)
    if scan_backward and not checkpointing:
        # lora: at the last Mamba-1 layer's scan the layers after it, the loss and that layer's MLP
        # have freed what they saved and made their gradients (all of LoRA's: they are small).
        # Measured on Jamba at 512 tokens: the step's base with every saved tensor was 1.21x a LoRA
        # step's and 1.12x a full fine-tune's.
        made = n if setup.adapters else n - hybrid_saved.params_through_scan(arch)
        if savers.optimizer_in_backward:
            grads_made = in_flight
        else:
            grads_made = 0.0 if savers.grad_accum > 1 else card_grad_bytes * max(0, made)
        live = min(acts.scan_live_bytes, acts.saved_bytes)
        moments["scan backward"] = base - acts.saved_bytes + live + grads_made + scan_backward
    # act: the torch fallback's Kimi Delta Attention in backward (bot.estimate.hybrid_saved): the
    # last KDA layer's (the first one's under checkpointing, rebuilt last) saved tensors less its MLP
    # side and its output's, with the fp32 gradients of its chunked products.
    kda_working = hybrid_saved.kda_backward_bytes(arch, batch_size, seq_len, hybrid_path)
    if kda_working:
        per_layer = hybrid_saved.hybrid_layers_saved_bytes(
            arch, batch_size, seq_len, attention=attention, precision=precision, traits=t, path=hybrid_path
        )
        kda_layers = hybrid_saved.layers_of_kind(arch, "linear_attention")
        index = kda_layers[0] if checkpointing else kda_layers[-1]
        mlp = hybrid_saved.layer_mlp(arch, index)
        mlp_side = _mlp_side_bytes(arch, precision, t, mlp == "moe") if mlp != "none" else 0
        freed = sb * (mlp_side + hybrid_saved.kda_output_bytes(arch))
        kda_layer = per_layer[index] - freed + kda_working  # read under checkpointing below too
        if not checkpointing:
            # The gradients made by then: the LM head's, the layers' after it, its MLP's and o_proj's.
            after = sum(_layer_params(arch, i) for i in range(index + 1, arch.layers))
            own = _layer_params(arch, index, mixer=False) + h * arch.linear_key_dim  # MLP, o_proj
            grads = grad_bytes * (v * h + after + own)
            if setup.adapters or savers.grad_accum > 1:
                grads = 0.0  # none reach a frozen base; accumulated ones are in base already
            if savers.optimizer_in_backward:
                grads = in_flight
            kda_before = base - acts.saved_bytes + sum(per_layer[:index]) + grads
            moments["kda backward"] = kda_before + kda_layer
    mamba_kinds = ("mamba", "attention_mamba")
    if not checkpointing and setup.adapters and any(k in mamba_kinds for k in arch.layer_kinds):
        first_adapted = methods.first_adapted_layer(
            arch, setup.lora_targets, lambda i: hybrid_saved.layer_mlp(arch, i)
        )
        if any(k in mamba_kinds for k in arch.layer_kinds[:first_adapted]):
            # lora: a Mamba-2 layer ahead of the first adapter saves nothing, but its forward still
            # holds its scan's working set, with only the embedding's output before it (measured on
            # Nemotron-H under lora_targets:attention: 2.17x the estimate without this moment).
            mamba_forward = hybrid_saved.mamba_forward_bytes(arch, batch_size, seq_len, hybrid_path)
            moments["mixer forward"] = base - acts.saved_bytes + 2 * sb * h + mamba_forward
    if checkpointing:
        compute_bytes = 4 if precision == "amp" else 2
        # A DeepSeek layer's MLP copies are freed once its MLP's backward has run (measured).
        layer_copies = (
            autocast_weight_copy_bytes(arch, moe_layer=first_is_moe, traits=t, with_mlp=False)
            if precision == "amp"
            else 0.0
        )
        # Every gradient but the embedding's exists by then (all of them when accumulated); under the
        # optimizer in backward, only the tensor in flight.
        grads_by_then = card_grad_bytes * (n if savers.grad_accum > 1 or setup.adapters else n - v * h)
        before_layer = (
            without_grads
            + (in_flight if savers.optimizer_in_backward else grads_by_then)
            + compute_bytes * sb * h * (arch.altup_inputs if t.per_layer_parts else 1)  # act: AltUp's stack
            + acts.held_bytes
            + 16 * sb
        )
        moments["recompute"] = before_layer + acts.recompute_bytes + layer_copies + working + scan_backward
        if kda_working:
            moments["kda backward"] = before_layer + layer_copies + kda_layer
        if t.per_layer_parts:
            # act: Gemma 3n's first layer rebuilt with the tensors saved before the layers still held
            # (its per-layer inputs, AltUp's streams), and in each layer that stores its K and V for
            # the sharing layers (the last unshared one of each attention kind, "store" in
            # Gemma3nTextConfig.kv_sharing_modes) the rebuilt K and V that the rebuild writes back into
            # shared_kv_states, alive to the end of backward with the graph they hang from (measured):
            # its input, AltUp's router and prediction coefficients, the router norm and
            # input_layernorm, k/v_proj's input, k_norm and v_norm.
            before, _ = saved_activations.per_layer_parts_outside(arch, precision, end=False)
            streams, kv, g = arch.altup_inputs, arch.kv_dim, arch.kv_heads
            held_kv = (
                2 * saved_activations.altup_norm_bytes(h, 1)
                + 4 * h
                + 6 * streams
                + 2 * streams * streams
                + saved_activations.altup_norm_bytes(kv, g)
                + saved_activations.altup_norm_bytes(kv, g, scaled=False)
                + compute_bytes * streams * h
            )
            moments["recompute"] += sb * (before + _kv_store_layers(arch) * held_kv)
            # act: Gemma 3n's checkpointed inputs are AltUp's stacks (2Ah each), and its layer rebuilt
            # large: its last layer's backward, with every layer's input still held, the tensors saved
            # before the layers and the final stack, and the LM head's gradient, can pass the first's.
            last = saved_activations.per_layer_parts_layers(
                arch, batch_size, seq_len, attention=attention, precision=precision, setup=setup
            )[-1]
            kept = sb * (before + compute_bytes * streams * h)
            lm_head = 0.0 if setup.adapters else card_grad_bytes * v * h
            moments["recompute last"] = (
                without_grads
                + acts.saved_bytes
                - acts.outside_layers_bytes
                + kept
                + acts.held_bytes
                + lm_head
                + last
                + working
            )
        if indexer_scores:
            # hybact: the recomputed first layer's indexer scores again, before its attention.
            moments["indexer forward"] = before_layer + layer_copies + indexer_scores
        if setup.adapters:
            moments["recompute"] += sb * methods.lora_backward_working_bytes(
                arch, setup.lora_rank, setup.lora_targets
            )
    elif attention == "eager":
        mlp_and_o = _mlp_and_o_params(arch, moe_layer=last_is_moe)
        # The final norm's saved tensors and the log-softmax (not saved under a chunked loss).
        freed = sb * (8 * h + (0 if savers.chunked_loss else 4 * v))
        # Under LoRA no gradient reaches the LM head or the frozen MLP (the adapters' are small).
        grads = in_flight if savers.optimizer_in_backward else grad_bytes * (v * h + mlp_and_o)
        if setup.adapters and not savers.optimizer_in_backward:
            grads = 0.0
        if savers.grad_accum > 1 and not savers.optimizer_in_backward:
            grads = 0.0  # already in base: every gradient, accumulated
        moments["eager attention backward"] = base - freed + grads + working
    return StepPeak(moments=moments, model_states_bytes=states, saved_bytes=acts.saved_bytes)
