"""What the hybrid layers save for backward (issue 20, point 3): Gated DeltaNet, the Mamba-2 mixer,
LFM2's short convolution and the sparse-attention indexer, per layer, on two paths.

- ``kernel`` (the default: what a GPU team runs): fla's chunked gated delta rule, mamba-ssm's fused
  ``mamba_split_conv1d_scan_combined`` and causal-conv1d, which transformers 5.24 calls when they
  are installed (``use_kernel_func_from_hub_with_fallback``, and the Mamba-2 mixers'
  ``cuda_kernels_forward`` in training). Modelled from what each ``torch.autograd.Function`` passes
  to ``ctx.save_for_backward`` (sources named at each term); **not measured** here (no GPU).
- ``fallback``: transformers' PyTorch code that runs on CPU (``torch_chunk_gated_delta_rule``, the
  mixers' ``torch_forward``, ``F.conv1d``), measured tensor by tensor with ``saved_tensors_hooks``
  (``benchmarks/hybrid_activations.py``; ratios in ``benchmarks/ACCURACY.md``). It keeps the chunked
  scan's intermediates in fp32, several times what the kernels keep.

The layers' norms, their linear inputs and their MLPs are the calibrated terms of
:mod:`bot.estimate.saved_activations`; the attention of a hybrid model's attention layers is that
module's too (read back from ``layer_saved_bytes``), so only the mixers are new here. Bytes per
token are for 16-bit activations (the kernels take bf16 inputs under autocast as well: fla's
``autocast_custom_fwd``, mamba-ssm's ``custom_fwd``). Pure Python; nothing here imports torch.
"""

from __future__ import annotations

from typing import Literal

from bot.estimate.families import family
from bot.estimate.family_traits import FamilyTraits
from bot.estimate.models import Architecture, LayerKind
from bot.estimate.setup import AttentionName, PrecisionName

HybridPath = Literal["kernel", "fallback"]
KERNEL_PATH: HybridPath = "kernel"
HYBRID_PATHS: tuple[HybridPath, ...] = ("kernel", "fallback")
MlpOf = Literal["dense", "moe", "none"]
# The layer kinds whose saved bytes depend on the path.
PATH_KINDS = frozenset({"linear_attention", "mamba", "attention_mamba", "conv", "mamba1"})

# fla's chunk_gated_delta_rule and transformers' torch_chunk_gated_delta_rule both chunk by 64 tokens.
DELTA_NET_CHUNK = 64
# transformers' Mamba-2 configs' chunk_size when a family declares none (Bamba, Granite 4, Mamba-2).
MAMBA_CHUNK = 256


def layer_mlp(arch: Architecture, index: int) -> MlpOf:
    """Layer ``index``'s MLP, as ``Architecture.moe_layers`` / ``dense_layers`` count them."""
    if index in arch.no_mlp_layers:
        return "none"
    moe = (
        arch.is_moe
        and index >= arch.first_k_dense_replace
        and (index + 1) % arch.interleave_moe_layer_step == 0
        and index not in arch.mlp_only_layers
    )
    return "moe" if moe else "dense"


def is_modelled_hybrid(arch: Architecture) -> bool:
    """Layers this module models: any layer kind other than plain attention, or an indexer."""
    return arch.is_hybrid


def delta_net_bytes(arch: Architecture, path: HybridPath, seq_len: int | None = None) -> float:
    """Gated DeltaNet (transformers ``Qwen3NextGatedDeltaNet``), bytes per token, from in_proj's
    output to out_proj's input. K = key heads × d_k, V = value heads × d_v, C = 2K + V (the conv's
    channels), Hv value heads, c = 64 the chunk.

    kernel: causal-conv1d's ``CausalConv1dFn`` saves its input x (2C; SiLU is fused, its output is
    not kept); fla's ``ChunkGatedDeltaRuleFunction`` (fla/ops/gated_delta_rule/chunk.py, with
    ``use_qk_l2norm_in_kernel``) saves the normalized q and k (2K each, grouped: fla repeats no
    head) and their fp32 rstd (4 per key head each), v's contiguous copy (2V), the fp32 chunk-cumsum
    of g (4Hv), beta (2Hv) and the WY matrix A [B, T, Hv, 64] in k's dtype (2·64·Hv); transformers'
    g = -exp(A_log) · softplus(a + dt_bias) keeps softplus' fp32 input and output (8Hv); fla's
    ``FusedRMSNormGated`` (fla/modules/fused_norm_gate.py) saves x, the gate z (2V each) and an fp32
    rstd per head (4Hv); out_proj keeps its input (2V).

    fallback (``torch_chunk_gated_delta_rule``, measured): the conv's input and its padded output
    (4C), q and k repeated to the value heads and cast to fp32 with their chunked products
    (32·Hv·d_k), v, beta·v, the solved values, each chunk's new values and the gated norm's tensors
    (30V), five fp32 c × c matrices per head and chunk (20·c·Hv), the per-head rstd, decays and
    gates (38Hv) and one fp32 state per chunk (4·Hv·d_k·d_v / c)."""
    if arch.linear_kda:
        return kda_bytes(arch, path, seq_len)
    hk, hv = arch.linear_key_heads or 0, arch.linear_value_heads or 0
    dk, dv = arch.linear_key_head_dim or 0, arch.linear_value_head_dim or 0
    key, value, conv, c = hk * dk, hv * dv, arch.linear_conv_dim, DELTA_NET_CHUNK
    if path == "kernel":
        return float(2 * conv + 4 * key + 8 * hk + 8 * value + (2 * c + 18) * hv)
    return float(4 * conv + 20 * c * hv + 30 * value + 32 * hv * dk + 38 * hv + 4 * hv * dk * dv / c)


def kda_bytes(arch: Architecture, path: HybridPath, seq_len: int | None = None) -> float:
    """Kimi Delta Attention (transformers ``KimiLinearDeltaAttention``), bytes per token from the q,
    k, v projections' outputs to o_proj's input. H heads of d (keys and values alike), K = H·d,
    c = 64 the chunk. Both paths run transformers' torch forget gate (``KimiLinearForgetGate``: the
    fp32 g, exp(g), 1 + exp(g), softplus and its > 20 mask, 13K, after f_b_proj's input 2d), the
    sigmoid beta (2H), the low-rank output gate's inner input (2d), the fp32 gated RMSNorm
    (``KimiLinearRMSNormGated``: its fp32 input, normalized, weighted tensors and sigmoid(gate),
    16K + 4H) and o_proj's input (2K).

    kernel: causal-conv1d's ``CausalConv1dFn`` saves the concatenated q, k, v (6K; SiLU fused); fla's
    ``ChunkKDAFunction`` (fla/ops/kda/chunk.py, ``use_qk_l2norm_in_kernel``) the normalized q and k
    (4K) with their fp32 rstd (8H), v's contiguous copy (2K), the per-channel fp32 cumsum of g (4K),
    beta (2H), the fp32 intra-chunk scores Aqk (4cH) and the WY matrix Akk (2cH).

    fallback (``chunk_kimi_delta_attention``, measured): the conv's input and padded output (12K);
    the fp32 q and k and their l2 norms (8K + 8H); after ``F.pad`` to whole chunks of c (act: these
    per padded token, ``seq_len`` rounded up to c; measured at 200 tokens), fp32 v, beta and the
    chunked products (58K); three fp32 [c × d] products per token and head, the per-channel decay
    mask and the q·k and k·k products before their sums (12cK); the c × c scores (8cH); the
    sequential solve's row and block copies (4H(c² - 1)/3); and each chunk's fp32 state and last
    decay (4H(d² + d) / c)."""
    heads, d, c = arch.linear_key_heads or 0, arch.linear_key_head_dim or 0, DELTA_NET_CHUNK
    k = arch.linear_key_dim
    # The forget gate, f_b_proj's input, beta and the output gate's input, then what the layer
    # keeps after its scan (whole integers: the float sum is exact).
    shared = 13 * k + 2 * d + 2 * heads + 2 * d + kda_output_bytes(arch)
    if path == "kernel":
        return float(shared + 6 * k + 4 * k + 8 * heads + 2 * k + 4 * k + 2 * heads + 6 * c * heads)
    chunked = 58 * k + 12 * c * k + 8 * c * heads + 4 * heads * (c * c - 1) / 3 + 4 * heads * (d * d + d) / c
    padding = 1.0 if seq_len is None else -(-seq_len // c) * c / seq_len
    return float(shared + 12 * k + 8 * k + 8 * heads + chunked * padding)


def kda_output_bytes(arch: Architecture) -> float:
    """What a Kimi Delta Attention layer saves after its scan, bytes per token (in ``kda_bytes``'
    shared terms): the fp32 gated RMSNorm's tensors (16K + 4H) and o_proj's input (2K)."""
    heads, k = arch.linear_key_heads or 0, arch.linear_key_dim
    return float(16 * k + 4 * heads + 2 * k)


def kda_backward_bytes(arch: Architecture, batch_size: int, seq_len: int, path: HybridPath) -> float:
    """The torch fallback's Kimi Delta Attention in backward (``chunk_kimi_delta_attention``, one layer
    at a time), on top of what that layer saved: three fp32 tensors of the per-channel decay mask's
    shape [b, H, s/c, c, c, d] live at once, 12·c·K a padded token (the gradient of ``decay_mask``
    accumulated so far, one chunk's ``select_backward`` into a zeroed tensor of that shape, and their
    sum), and one chunk's fp32 q·k product (4c²K a sequence), once the last two chunks' products of
    the forward (8c²K) are freed (measured: 3 × 25,165,824 B at 512 × 2, benchmarks/ACCURACY.md).
    fla's ``ChunkKDAFunction`` backward makes gradients of the inputs' shapes and chunk states only,
    which the estimate leaves out: 0 on the kernel path."""
    if path == "kernel" or not arch.linear_kda or "linear_attention" not in arch.mixer_counts:
        return 0.0
    c, k = DELTA_NET_CHUNK, arch.linear_key_dim
    padded = -(-seq_len // c) * c
    return float(batch_size * (12 * c * k * padded - 4 * c * c * k))


def _delta_net_constants(arch: Architecture, path: HybridPath) -> tuple[float, float]:
    """(per sequence, per layer) bytes of the fallback's Gated DeltaNet: the conv's k - 1 padded
    columns 2C(k - 1); the chunk's c × c bool mask and exp(A_log) (8Hv). The kernels keep none."""
    if path == "kernel":
        return 0.0, 0.0
    hv = arch.linear_value_heads or 0
    pad = 2 * arch.linear_conv_dim * ((arch.linear_conv_kernel or 1) - 1)
    if arch.linear_kda:  # KDA's fallback keeps three c × c bool masks
        return float(pad), float(3 * DELTA_NET_CHUNK**2)
    return float(pad), float(DELTA_NET_CHUNK**2 + 8 * hv)


def mamba_chunk(arch: Architecture) -> int:
    """The Mamba-2 scan's chunk (the config class's default chunk_size, from the declaration)."""
    declared = family(arch.family)
    chunk = declared.mamba.chunk_size if declared is not None and declared.mamba is not None else None
    return chunk or MAMBA_CHUNK


def checkpointed_input_bytes(arch: Architecture, precision: PrecisionName) -> int:
    """Bytes per token and hidden unit a checkpointed layer keeps as its input: the compute dtype's,
    or fp32 where the family keeps its residual stream in fp32 (Mamba-2's residual_in_fp32;
    measured: 4h a block)."""
    declared = family(arch.family)
    if declared is not None and declared.mamba is not None and declared.mamba.residual_fp32:
        return 4
    if declared is not None and declared.mamba1 is not None and declared.mamba1.residual_fp32:
        return 4
    return 4 if precision == "amp" else 2


def mamba_bytes(arch: Architecture, path: HybridPath) -> float:
    """A Mamba-2 mixer (transformers ``Mamba2Mixer`` and its copies in Nemotron-H, Bamba, Granite 4,
    Falcon-H1), bytes per token from in_proj's output to out_proj. I = heads × head_dim (the inner
    width), G groups of B and C of state N, H heads, c the chunk.

    kernel: mamba-ssm's ``MambaSplitConv1dScanCombinedFn`` (mamba_ssm/ops/triton/ssd_combined.py),
    which runs the conv, the scan, the gated RMSNorm and out_proj in one function, saves in_proj's
    output zxbcdt (2(2I + 2GN + H)), the scan's output before the gate out_x (2I) and the norm's fp32
    rstd per group (4G); it recomputes the rest in backward.

    fallback (the mixers' ``torch_forward``, measured): zxbcdt, the conv's padded output (2(I + 2GN)),
    three fp32 c × c decay matrices per head (12·H·c), the fp32 x, dt·x, y and the gated norm's
    tensors (40I; 24I + 4I without the norm), B and C repeated to the heads in fp32 (20·H·N), the
    normalized output (2I), the chunk states (8·H·P·N / c) and the per-head dt and decays
    (20H + 4G)."""
    inner, heads = arch.mamba_inner_size, arch.mamba_heads or 1
    groups, state = arch.mamba_groups or 1, arch.mamba_state_size or 0
    zxbcdt = 2 * (2 * inner + 2 * groups * state + heads)
    if path == "kernel":
        return float(zxbcdt + 2 * inner + (4 * groups if arch.mamba_gated_norm else 0))
    c = mamba_chunk(arch)
    head_dim = inner // heads
    # Without the gated norm (Falcon-H1's mamba_rms_norm off) y · silu(z) keeps fewer fp32 tensors
    # (24I) and two 16-bit ones (4I) (measured).
    inner_terms = 42 * inner + 4 * groups if arch.mamba_gated_norm else 28 * inner
    return float(
        zxbcdt
        + 2 * arch.mamba_conv_dim
        + 12 * heads * c
        + inner_terms
        + 20 * heads * state
        + 8 * heads * head_dim * state / c
        + 20 * heads
    )


def mamba_forward_bytes(arch: Architecture, batch_size: int, seq_len: int, path: HybridPath) -> float:
    """A Mamba-2 mixer's forward that no gradient runs through (a layer ahead of LoRA's first
    adapter): the most it holds at once, freed when the mixer returns (lora). I the inner width,
    H heads, G groups of state N, c the chunk; the chunked tensors are padded to whole chunks.

    fallback (``torch_forward`` and its chunked scan, e.g. nemotron_h's ``mamba2_chunk_scan``, whose
    locals all live until it returns; the most is at ``C_times_states``; measured at three shapes,
    one of them padded): zxbcdt and the conv's output (2·conv_dim) per token; per padded token x's
    padded copy, D's residual, dt·x chunked, its contiguous copy, a sum, Y_diag and C_times_states
    (28I, fp32), B and C in fp32 padded and B's decay (12HN), the decay L, G = C·B and M = G·L
    (12·H·c); per sequence the chunk states with the initial one (4·I·N·(chunks + 2)).
    kernel (mamba-ssm's ``_mamba_chunk_scan_combined_fwd``, from its source, not measured):
    zxbcdt, the conv's output, dt and dA_cumsum in fp32 (8H), out, out_x and the gated norm's
    output (6I) per token; per padded token CB = C·B in fp32 (4·G·c); per sequence the chunk
    states in fp32 and passed on in 16 bits (6·I·N·chunks)."""
    inner, heads = arch.mamba_inner_size, arch.mamba_heads or 1
    groups, state = arch.mamba_groups or 1, arch.mamba_state_size or 0
    c = mamba_chunk(arch)
    chunks = -(-seq_len // c)
    zxbcdt = 2 * (2 * inner + 2 * groups * state + heads) + 2 * arch.mamba_conv_dim
    if path == "kernel":
        per_token = zxbcdt + 8 * heads + 6 * inner
        per_padded, per_sequence = 4 * groups * c, 6 * inner * state * chunks
    else:
        per_token = zxbcdt
        per_padded = 28 * inner + 12 * heads * state + 12 * heads * c
        per_sequence = 4 * inner * state * (chunks + 2)
    return float(batch_size * (seq_len * per_token + chunks * c * per_padded + per_sequence))


def _mamba_constants(arch: Architecture, path: HybridPath) -> tuple[float, float]:
    """(per sequence, per layer) bytes of the fallback's Mamba-2 mixer: the conv's padded columns and
    the initial chunk state (2·conv_dim·(k - 1) + 4·I·N); two c × c bool masks."""
    if path == "kernel":
        return 0.0, 0.0
    pad = 2 * arch.mamba_conv_dim * ((arch.mamba_conv_kernel or 1) - 1)
    initial_state = 4 * arch.mamba_inner_size * (arch.mamba_state_size or 0)
    return float(pad + initial_state), float(2 * mamba_chunk(arch) ** 2)


# mamba-ssm's selective scan keeps its fp32 state at the end of every chunk of this many tokens
# (selective_scan_fwd_kernel: kChunkSize = kNThreads × kNItems = 2048).
SELECTIVE_SCAN_CHUNK = 2048


def _mamba1_norms(arch: Architecture) -> tuple[bool, bool]:
    """(Jamba's RMSNorms with weights over dt, B and C; Falcon-Mamba's weightless ones), declared."""
    declared = family(arch.family)
    m = declared.mamba1 if declared is not None else None
    return (m is not None and m.dt_norms, m is not None and m.weightless_dt_norms)


def mamba1_bytes(arch: Architecture, path: HybridPath, batch_size: int = 1) -> float:
    """A Mamba-1 mixer (transformers ``MambaMixer``, ``FalconMambaMixer``, ``JambaMambaMixer``), bytes
    per token from in_proj's output to out_proj's input. I the inner width, N the state, R dt's rank.

    kernel, Mamba and Falcon-Mamba: mamba-ssm's ``MambaInnerFn`` (mamba_ssm/ops/selective_scan_interface.py,
    checkpoint_lvl 1: the conv's output and delta recomputed in backward), which runs conv, x_proj,
    dt_proj, the scan and out_proj in one function, saves in_proj's output xz (4I), x_proj's output
    x_dbl (2(R + 2N)), B's and C's contiguous copies (4N; Falcon-Mamba's normalized ones) and the
    scan's output before the gate (2I), and the fp32 chunk states (per sequence, below).
    kernel, Jamba (its norms sit between x_proj and the scan, so it calls the kernels apart):
    causal-conv1d's ``CausalConv1dFn`` saves its input, a view of in_proj's output (4I); x_proj its
    input, the conv's output (2I); the torch RMSNorms over dt, B, C (6w + 4 each); dt_proj's matmul
    the normalized dt (2R); ``SelectiveScanFn`` delta (2I), B's and C's contiguous copies (4N), the
    gate z's contiguous copy (2I) and its output before the gate (2I); out_proj its input (2I).

    fallback (``mamba_selective_scan``'s sequential loop, measured): in_proj's output (4I), the conv's
    padded output and SiLU's (4I), softplus' input and output (4I), exp's fp32 discrete A, the fp32
    discrete B and every step's fp32 state (12IN) and its 16-bit copy for the matmul with C (2IN),
    the fp32 x and scan output (8I), SiLU(z) (2I), out_proj's contiguous input (2I), x_proj's output
    (2(R + 2N)) and B in fp32 (4N); Falcon-Mamba's weightless norms (4w + 4 each) keep their fp32
    inputs, Jamba's (6w + 4) theirs and the 16-bit normalized tensor, and both then keep the
    normalized dt and C (2R + 2N) where x_proj's output was.

    x_proj's input is the conv output's transposed view, which one sequence passes as a matrix and
    a batch as a contiguous copy, the original kept too (by the scan): 2I more for b > 1 (measured),
    on both paths but the fused one."""
    inner, state, rank = arch.mamba_inner_size, arch.mamba_state_size or 0, arch.mamba_dt_rank or 0
    weighted, weightless = _mamba1_norms(arch)
    norms = 0.0
    if weighted:
        norms = 6 * (rank + 2 * state) + 12
    elif weightless:
        norms = 4 * (rank + 2 * state) + 12
    batched = 2 * inner if batch_size > 1 else 0
    if path == "kernel":
        if weighted:
            return float(14 * inner + 2 * rank + 4 * state + norms + batched)
        return float(6 * inner + 2 * rank + 8 * state)
    x_dbl = 2 * rank + 2 * state if weighted or weightless else 2 * (rank + 2 * state)
    return float(24 * inner + 14 * inner * state + 4 * state + x_dbl + norms + batched)


def _mamba1_constants(arch: Architecture, path: HybridPath, seq_len: int) -> tuple[float, float]:
    """(per sequence, per layer) bytes of a Mamba-1 mixer. Per layer: exp(A_log) and A = -exp(·) in
    fp32 (8IN) and D's fp32 copy (4I; the kernels also dt_proj's bias in fp32, 4I). Per sequence: the
    kernels' fp32 state at each 2048-token chunk's end (8IN a chunk: x's real and imaginary halves);
    the fallback's conv output keeps its k - 1 padded columns (2I(k - 1)) and the loop its 16-bit
    zero initial state but not the last state (2IN - 4IN)."""
    inner, state = arch.mamba_inner_size, arch.mamba_state_size or 0
    per_layer = 8 * inner * state + 4 * inner
    if path == "kernel":
        chunks = -(-seq_len // SELECTIVE_SCAN_CHUNK)
        return float(8 * inner * state * chunks), float(per_layer + 4 * inner)
    pad = 2 * inner * ((arch.mamba_conv_kernel or 1) - 1)
    return float(pad - 2 * inner * state), float(per_layer)


def scan_backward_bytes(arch: Architecture, batch_size: int, seq_len: int, path: HybridPath) -> float:
    """The torch fallback's Mamba-1 scan in backward (one layer at a time): four fp32 tensors of the
    discretized shape b × I × s × N live at once on top of what forward saved: the accumulated
    gradients of discrete A and of deltaB·u, one step's ``select_backward`` into a zeroed tensor of
    that shape, and the product exp's backward makes (measured: 4.3 of them). mamba-ssm's backward
    makes gradients of the inputs' shapes only (b × s × I), which the estimate leaves out."""
    if path == "kernel" or "mamba1" not in arch.mixer_counts:
        return 0.0
    return float(16 * batch_size * seq_len * arch.mamba_inner_size * (arch.mamba_state_size or 0))


def layers_of_kind(arch: Architecture, kind: LayerKind) -> list[int]:
    """The indices of the layers whose mixer is ``kind``, in the model's order."""
    return [i for i, found in enumerate(arch.layer_kinds or ()) if found == kind]


def last_scan_layer(arch: Architecture) -> int | None:
    """The last Mamba-1 layer: the first whose scan backward runs, with the most still saved."""
    scans = layers_of_kind(arch, "mamba1")
    return scans[-1] if scans else None


def scan_live_bytes(
    arch: Architecture,
    layers_saved: list[float],
    batch_size: int,
    seq_len: int,
    *,
    precision: PrecisionName,
    traits: FamilyTraits,
    path: HybridPath,
) -> float:
    """What is still saved when backward reaches the last Mamba-1 layer's fallback scan (lora,
    measured on Jamba: 26.1 MB live against 26.8 here at 512 tokens): every layer before it
    (``layers_saved``, as the step saves them) and that layer's input norm and mixer; the layers
    after it, the loss's tensors and its own MLP side were freed by their backward already. LoRA's
    adapter inputs in that mixer are left out (some 3 % of it on Jamba's small config)."""
    from bot.estimate.saved_activations import _norm_constant, norm_bytes

    last = last_scan_layer(arch)
    if path == "kernel" or last is None:
        return 0.0
    norm = norm_bytes(arch.hidden_size, 1, precision, traits.norm_style)
    per_token, per_sequence, per_layer = _mixer_terms(arch, "mamba1", batch_size, seq_len, norm, 1, path)
    mixer = (
        batch_size * (seq_len * per_token + per_sequence)
        + per_layer
        + _norm_constant(arch.hidden_size, traits.norm_style)
    )
    return float(sum(layers_saved[:last]) + mixer)


def params_through_scan(arch: Architecture) -> int:
    """The parameters whose gradients backward has not made yet at the last Mamba-1 layer's scan:
    the embedding (untied), every layer before it, and that layer's input norm and mixer."""
    last = last_scan_layer(arch)
    if last is None:
        return 0
    norm = arch._norm_params()
    kinds = arch.layer_kinds or ()
    mlp = {"none": 0, "dense": arch._dense_mlp_params(), "moe": arch._moe_params(arch.experts)}
    before = sum(
        arch.norms_per_layer * norm + arch._mixer_params(kinds[i]) + mlp[layer_mlp(arch, i)]
        for i in range(last)
    )
    embedding = 0 if arch.tied_embeddings else arch.vocab_size * arch.hidden_size
    return embedding + before + norm + arch._mixer_params("mamba1")


def short_conv_bytes(arch: Architecture) -> float:
    """LFM2's short convolution (transformers ``Lfm2ShortConv``), bytes per token, on both paths:
    in_proj's output B, C, x (6h), B·x, the conv's input (2h: causal-conv1d's ``CausalConv1dFn``
    saves it, as ``F.conv1d`` does), the conv's output that C multiplies (2h) and out_proj's
    contiguous input (2h)."""
    return float(12 * arch.hidden_size)


def _short_conv_constants(arch: Architecture, path: HybridPath) -> tuple[float, float]:
    """The fallback's ``F.conv1d`` output keeps its k - 1 padded columns (2h(k - 1) per sequence)."""
    if path == "kernel":
        return 0.0, 0.0
    return float(2 * arch.hidden_size * ((arch.conv_kernel or 1) - 1)), 0.0


def indexer_mask_bytes_per_token(arch: Architecture, seq_len: int, precision: PrecisionName) -> float:
    """DeepSeek-V3.2's sparse attention in transformers 5.24 (``DeepseekV32Indexer``): the indexer runs
    under ``torch.no_grad`` and saves nothing, but its top-k becomes an additive b × s × s mask in the
    compute dtype that SDPA keeps for backward (measured: 2·s² bytes per layer and sequence; CUDA's
    memory-efficient SDPA saves its attn_bias too), in every attention layer. Per token: s × dtype."""
    if arch.index_heads is None:
        return 0.0
    return float((4 if precision == "amp" else 2) * seq_len)


def indexer_scores_bytes(arch: Architecture, batch_size: int, seq_len: int) -> float:
    """The indexer's forward transient as transformers 5.24 computes it (``DeepseekV32Indexer``, the
    same ATen ops on a GPU as on the CPU): ``torch.matmul(q.float(), k.transpose(-1, -2).float()
    .unsqueeze(1))`` broadcasts the one fp32 key head over every query position. For a batch of
    sequences matmul copies it out to [b, s, D, s] before its bmm writes the fp32 scores
    [b, s, H, s]: 4(D + H) bytes per b·s² element at once (measured: the CPU forward's peak is at
    that bmm); one sequence's keys are a single matrix, which matmul multiplies without a copy.
    Then the scores and their scaled copy (8H) before the ReLU. The larger of the two.

    A kernel path (DeepSeek's DeepGEMM ``fp8_mqa_logits`` with FlashMLA's sparse attention) would
    write only the head-summed fp32 logits [b, s, s] (4 bytes per element) and keep the top-k
    indices instead of the mask; transformers runs no such indexer kernel, so the figure is its path."""
    if arch.index_heads is None:
        return 0.0
    heads, dim = arch.index_heads, arch.index_head_dim or 0
    broadcast = dim + heads if batch_size > 1 else 0
    return float(4 * max(broadcast, 2 * heads) * batch_size * seq_len * seq_len)


def gated_attention_bytes(arch: Architecture) -> float:
    """Qwen3-Next's and Qwen3.5's output gate on attention (``attn_output * sigmoid(gate)``), on top
    of SDPA's output: the sigmoid's output, the output's contiguous copy it multiplies, and the
    product, o_proj's input (2q each; measured)."""
    return float(6 * arch.q_dim) if arch.attention_output_gate else 0.0


def shared_expert_gate_bytes(arch: Architecture) -> float:
    """Qwen3-Next's shared expert scaled by sigmoid(shared_expert_gate(x)) (a 16-bit h -> 1 linear):
    the shared expert's output and the sigmoid's output that multiply (2h + 2; measured)."""
    return float(2 * arch.hidden_size + 2) if arch.shared_expert_gate else 0.0


def _per_token_and_constant(total_at: tuple[float, float]) -> tuple[float, float]:
    """Split a figure affine in the tokens (at 1 and 2 sequences) into per sequence and constant."""
    one, two = total_at
    return two - one, 2 * one - two


def _mixer_terms(
    arch: Architecture, kind: str, b: int, s: int, norm: float, attention_inputs: int, path: HybridPath
) -> tuple[float, float, float]:
    """A mixer of ``kind`` with its input norm (``norm`` per token) and its 16-bit linear input (an
    attention's ``attention_inputs`` of them): per token, per sequence, per layer."""
    h = arch.hidden_size
    per_token, per_sequence, per_layer = float(norm + 2 * h), 0.0, 0.0
    if kind in ("attention", "attention_mamba"):
        per_token += 2 * h * (attention_inputs - 1)
    if kind in ("mamba", "attention_mamba"):
        per_token += mamba_bytes(arch, path)
        per_sequence, per_layer = _mamba_constants(arch, path)
    elif kind == "mamba1":
        per_token += mamba1_bytes(arch, path, b)
        per_sequence, per_layer = _mamba1_constants(arch, path, s)
    elif kind == "linear_attention":
        per_token += delta_net_bytes(arch, path, s)
        per_sequence, per_layer = _delta_net_constants(arch, path)
    elif kind == "conv":
        per_token += short_conv_bytes(arch)
        per_sequence, per_layer = _short_conv_constants(arch, path)
    return per_token, per_sequence, per_layer


def hybrid_layers_saved_bytes(
    arch: Architecture,
    batch_size: int,
    seq_len: int,
    *,
    attention: AttentionName,
    precision: PrecisionName,
    traits: FamilyTraits,
    path: HybridPath = KERNEL_PATH,
) -> list[float]:
    """Each layer's saved bytes, in the model's order: its norm and linear input before the mixer,
    the mixer of its kind, and its MLP side (norm, input, dense or MoE MLP, or none)."""
    from bot.estimate.saved_activations import _norm_constant, dense_mlp_bytes, layer_saved_bytes, norm_bytes

    s, b, h = seq_len, batch_size, arch.hidden_size
    amp = precision == "amp"
    norm = norm_bytes(h, 1, precision, traits.norm_style)
    norm_constant = _norm_constant(h, traits.norm_style)  # Gemma-style norms keep 1 + weight in fp32

    def calibrated(moe: bool) -> tuple[float, float]:
        """The calibrated attention layer of this shape, per sequence of s tokens and constant."""
        return _per_token_and_constant(
            tuple(  # type: ignore[arg-type]
                layer_saved_bytes(
                    arch, n, s, attention=attention, precision=precision, traits=traits, moe_layer=moe
                )
                for n in (1, 2)
            )
        )

    dense_seq, dense_const = calibrated(False)
    attention_inputs = (1 if arch.fused_qkv else 3) if amp else 1
    dense_inputs = (1 if arch.fused_gate_up else 2) if amp else 1
    # The attention alone: the calibrated layer less its norms, linear inputs and dense MLP.
    dense_side = norm + 2 * h * dense_inputs + dense_mlp_bytes(arch)
    inputs = 2 * h * (attention_inputs + dense_inputs)
    attention_seq = (
        dense_seq
        - s * (arch.norms_per_layer * norm + inputs + dense_mlp_bytes(arch))
        + s * gated_attention_bytes(arch)
        + s * indexer_mask_bytes_per_token(arch, s, precision)
    )
    # The calibrated attention's own constants (QK-norm's weights), without its norms'.
    attention_const = dense_const - arch.norms_per_layer * norm_constant
    mlp_side: dict[MlpOf, tuple[float, float]] = {
        "none": (0.0, 0.0),
        "dense": (s * dense_side, norm_constant),
    }
    if arch.is_moe:
        moe_seq, moe_const = calibrated(True)
        mlp_side["moe"] = (
            s * (dense_side + shared_expert_gate_bytes(arch)) + moe_seq - dense_seq,
            norm_constant + moe_const - dense_const,
        )
    mixers = {  # per token, per sequence, per layer
        kind: _mixer_terms(arch, kind, b, s, norm, attention_inputs, path)
        for kind in set(arch.layer_kinds or ("attention",))
        if kind != "none"
    }
    found: list[float] = []
    for index in range(arch.layers):
        kind = arch.layer_kinds[index] if arch.layer_kinds else "attention"
        mlp_seq, mlp_const = mlp_side[layer_mlp(arch, index)]
        total = b * mlp_seq + mlp_const
        if kind != "none":
            per_token, per_sequence, per_layer = mixers[kind]
            total += b * (s * per_token + per_sequence) + per_layer + norm_constant
            if kind in ("attention", "attention_mamba"):
                total += b * attention_seq + attention_const
        found.append(float(total))
    return found


# The sequence length the answers' "fallback saves N× as much" is stated at.
RATIO_SEQ_LEN = 4096


def fallback_ratio(arch: Architecture, traits: FamilyTraits, seq_len: int = RATIO_SEQ_LEN) -> float:
    """How much more the torch fallback saves than the kernels in the layers whose path differs (one
    sequence of ``seq_len``, 16-bit weights, SDPA): what Details says beside the kernel path."""
    paths = {
        path: sum(
            bytes_
            for bytes_, kind in zip(
                hybrid_layers_saved_bytes(
                    arch, 1, seq_len, attention="sdpa", precision="mixed", traits=traits, path=path
                ),
                arch.layer_kinds,
                strict=True,
            )
            if kind in PATH_KINDS
        )
        for path in HYBRID_PATHS
    }
    return paths["fallback"] / paths["kernel"] if paths["kernel"] else 1.0


def has_kernel_layers(arch: Architecture) -> bool:
    """Layers whose saved bytes depend on the path (a GPU kernel or the torch fallback)."""
    return any(kind in PATH_KINDS for kind in arch.layer_kinds)
