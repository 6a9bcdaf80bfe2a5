"""Every model family the bot knows, each declared once: how its ``config.json`` reads, what its layers
hold, and what its forward keeps.

A :class:`Family` says which config fields give each of the counter's inputs and what transformers
assumes when a field is absent (its ``configuration_*.py`` of the pinned 5.24), where the family
puts biases and norms, what its MLP is (gated, plain, a mixture of experts and the fields that
size it), and the traits of its forward that the calibrated activation formulas read. The Hub
reader (``bot.estimate.hub``), the presets' family (``bot.estimate.models``), ``vram-bot measure``
(``bot.measure``) and the accuracy benchmark all read these declarations; a ``model_type`` without
one is refused rather than counted as if it were Llama (``ConfigProblem("undeclared_family")``).

Adding a family: one :class:`Family` below, and its coverage row
(``tests/test_family_coverage.py`` builds every transformers causal LM on the meta device and
holds the declared ones to its count within 0.1 %). Its small config for measuring on CPU follows
from the declaration (``bot.measure.families.small_config``: the shared small shape in the fields
the declaration names, its experts, MLA, sliding window and one layer of each hybrid kind); give
``small`` only the fields that derivation cannot know (``tests/test_small_configs.py`` builds each
one with transformers and holds it to the estimator's count).

Pure data: no torch, no transformers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field, replace
from functools import cache
from types import MappingProxyType
from typing import Literal

from bot.estimate.models import LayerKind  # the mixer of one hybrid layer, as Architecture holds it
from bot.estimate.value_type import value_type

# A fact that is the same for the whole family (True/False), or the config field that switches it
# (the family's default applies when the field is absent).
Switch = bool | str


@value_type
class Experts:
    """A mixture-of-experts MLP: the fields that size it, and what each MoE layer holds besides the
    routed experts (a router of h × experts)."""

    count: tuple[str, ...]  # routed experts per MoE layer (the first field the config has)
    active: str = "num_experts_per_tok"  # experts each token is routed to
    # An expert's width; None: intermediate_size is every expert's (Mixtral, gpt-oss).
    width: str | None = "moe_intermediate_size"
    # Shared experts: the field of their number (one MLP of number × an expert's width), or a
    # constant (Llama 4 always has one).
    shared: str | int = 0
    # Qwen2-MoE: the shared expert has its own width, and a sigmoid gate h -> 1 in front.
    shared_width: str | None = None
    shared_gate: bool = False
    first_dense: str | None = None  # the first k layers keep a dense MLP (DeepSeek-V3)
    step: str | None = None  # MoE on layers i with (i + 1) % step == 0 (Qwen's decoder_sparse_step)
    dense_list: str | None = None  # layers listed keep a dense MLP (Qwen's mlp_only_layers)
    # A per-layer list of MLP kinds and the kind that is dense (Cohere 2 MoE's mlp_layer_types).
    kinds: tuple[str, str] | None = None
    # ERNIE 4.5: MoE on layers start <= i <= end with (i + 1) % interval == 0 (the three fields).
    span: tuple[str, str, str] | None = None
    # Jamba: MoE on layers i with i % period == offset (the two fields).
    period: tuple[str, str] | None = None
    router_bias: bool = False  # gpt-oss: the router is a Linear with bias
    correction_bias: Switch = False  # DeepSeek-V3's e_score_correction_bias per expert
    expert_bias: bool = False  # gpt-oss: biases on every expert's projections
    fused_gate_up: bool = False  # the experts' gate and up as one 3-D gate_up_proj (LoRA's names)
    # peft 0.21 maps the v4 expert names onto this model type's transformers 5 layout (transformers
    # conversion_mapping._MODEL_TO_CONVERSION_PATTERN names mixtral or qwen2_moe, peft's
    # transformers_weight_conversion): "all-linear" adapts the 3-D experts and the router's weight,
    # and no module named gate_proj, up_proj or down_proj (the dense and shared MLPs').
    peft_converted: bool = False
    # The router is an nn.Linear, adapted where peft does not convert (Llama4Router, PhiMoE's router).
    linear_router: bool = False
    # Kimi Linear: first_dense only decides when the config has no ``kinds`` list (its class derives
    # the list from first_k_dense_replace then).
    first_dense_unless_listed: bool = False
    # The first layers dense where the config has no ``kinds`` list, by the config class's constant
    # (Glm4MoeLiteConfig: ["dense"] + ["sparse"] * ...; issue 20, point 4: a missing list is not all-MoE).
    unlisted_dense: int = 0
    # Hunyuan MoE: the MoE block is built also when the config has one routed expert (its default).
    one_expert_block: bool = False
    # decl: Gemma 4's MoE block is built only when this switch is on (enable_moe_block), its router
    # has learned scales (Gemma4TextRouter: scale of h, per_expert_scale), and each MoE layer has
    # this many norms more (post_feedforward_layernorm_1/_2, pre_feedforward_layernorm_2).
    enabled_by: str | None = None
    router_scales: bool = False
    norms: int = 0


# How a family's norms run, for what they save (bot.estimate.saved_activations.norm_bytes). "layernorm",
# torch's native LayerNorm, is not declared: it follows from norm_parameters "weight_bias"
# (bot.estimate.family_traits).
NormStyle = Literal["llama", "gemma", "fp32", "layernorm", "cohere", "weightless", "fp32_layernorm"]
# An MLP activation written out in Python saves more than its input (Apertus' xIELU, Phi's
# gelu_new); "native" is a C++ one (SiLU, GELU, ReLU²) whose input alone is counted.
MlpActivation = Literal["native", "xielu", "gelu_python"]

# What the layer's MLP is: the model's (dense or MoE as its experts say), dense, MoE, or none.
MlpKind = Literal["default", "dense", "moe", "none"]


@value_type
class LayerKinds:
    """Where a hybrid family's config says each layer's kind, and what its words mean (the config
    classes of transformers 5.24, after their legacy remapping: remap_legacy_layer_types)."""

    # The per-layer list or pattern string, the first the config has (Nemotron-H's
    # hybrid_override_pattern is a string of one letter a layer).
    fields: tuple[str, ...]
    words: Mapping[str, tuple[LayerKind, MlpKind]]
    default: LayerKind  # every layer's kind when the config names none
    default_mlp: MlpKind = "default"
    # A list of the layer indices of one kind, the others being the default's (Bamba's
    # attn_layer_indices, LFM2's full_attn_idxs: attention).
    indices: tuple[str, LayerKind] | None = None
    # Every n-th layer of a kind, by a field and its default (Qwen3-Next's full_attention_interval;
    # None: a constant n).
    every: tuple[str | None, int, LayerKind] | None = None
    # Kimi Linear: that kind on layers i > 0 with i % n == 0 (not (i + 1) % n == 0).
    every_after_first: bool = False
    # Nemotron-H: the list is the model (num_hidden_layers is ignored when the list is given).
    list_is_layers: bool = False
    # Jamba: layers i with i % period == offset are of a kind (the period's and offset's fields).
    period: tuple[str, str, LayerKind] | None = None


@value_type
class Mamba:
    """A Mamba-2 mixer's config fields (Dao & Gu 2024, "Transformers are SSMs"; transformers'
    Mamba2Mixer): inner width expand × h (or a field, or heads × head_dim), groups of B and C of the
    state size, a depthwise conv over x, B and C, per-head dt_bias, A_log and D."""

    heads: str
    head_dim: str
    groups: str
    state: str
    conv: str
    expand: str | None = None  # the inner width is int(expand × hidden)
    width: str | None = None  # ... unless this field is set (Falcon-H1's mamba_d_ssm)
    width_from_heads: bool = False  # Nemotron-H: heads × head_dim
    conv_bias: Switch = True
    in_bias: Switch = False  # in_proj's bias
    out_bias: Switch = False  # out_proj's bias (Falcon-H1's projectors_bias)
    gated_norm: Switch = True  # the gated RMSNorm over the inner width (Falcon-H1's mamba_rms_norm)
    # The torch fallback's scan chunk: the config class's chunk_size default (hybact: the fallback's
    # saved bytes, bot.estimate.hybrid_saved; None: 256).
    chunk_size: int | None = None
    # Mamba2Model keeps the residual stream in fp32 (Mamba2Config.residual_in_fp32, True by default):
    # what a checkpointed block keeps as its input (hybact).
    residual_fp32: bool = False


@value_type
class DeltaNet:
    """Gated DeltaNet linear attention (Yang et al. 2025; transformers' Qwen3NextGatedDeltaNet): its
    config fields."""

    key_heads: str = "linear_num_key_heads"
    value_heads: str = "linear_num_value_heads"
    key_dim: str = "linear_key_head_dim"
    value_dim: str = "linear_value_head_dim"
    conv: str = "linear_conv_kernel_dim"
    fused: bool = True  # in_proj_qkvz and in_proj_ba (Qwen3-Next); Qwen3.5 splits qkv, z, b, a
    # OLMo Hybrid (OlmoHybridGatedDeltaNet): q, k, v, the output gate g and the a, b heads as linears
    # of their own, where Qwen3.5 has in_proj_qkv / z / b / a: the same weights, more LoRA pairs.
    separate_linears: bool = False
    # Kimi Delta Attention (Kimi Linear): q, k, v apart, a per-channel decay from a low-rank forget
    # gate (f_a, f_b, dt_bias per channel) and a low-rank output gate (g_a, g_b) for z and a.
    kda: bool = False


@value_type
class ShortConv:
    """LFM2's short convolution block: in_proj h -> 3h (B, C, x), a depthwise conv of ``kernel``
    taps, out_proj h -> h (transformers' Lfm2ShortConv)."""

    kernel: str = "conv_L_cache"
    bias: Switch = "conv_bias"


@value_type
class Indexer:
    """DeepSeek-V3.2's lightning indexer of its sparse attention (DSA): wq_b from the q latent to
    heads × head_dim, wk h -> head_dim with a LayerNorm, weights_proj h -> heads (transformers'
    DeepseekV32Indexer)."""

    heads: str = "index_n_heads"
    head_dim: str = "index_head_dim"
    # GLM-5: a per-layer list, and the word of the layers that run their own indexer (the others
    # reuse the previous one's top-k); None: every layer has one.
    layers: tuple[str, str] | None = None
    # decl: Mistral Large 4's indexer reads its queries from the normalized hidden state (there is
    # no q latent), with a softmax scale and bias per head (MistralLarge4TextIndexer).
    query_from_hidden: bool = False


@value_type
class PerLayer:
    """Gemma 3n's parts beside each decoder layer (transformers' Gemma3nTextDecoderLayer and
    Gemma3nTextModel): a per-layer MLP width, AltUp's parallel predictions (Baykal et al. 2023), a
    low-rank LAuReL residual (Menghani et al. 2024), per-layer input embeddings, and the last layers
    reusing earlier layers' keys and values (no k/v projections and no cache of their own)."""

    widths: bool = True  # intermediate_size may be a list of one width a layer
    altup: str | None = "altup_num_inputs"  # None: no AltUp (Gemma 4)
    laurel: str | None = "laurel_rank"  # None: no LAuReL (Gemma 4)
    input_width: str = "hidden_size_per_layer_input"
    input_vocab: str = "vocab_size_per_layer_input"
    kv_shared: str = "num_kv_shared_layers"
    # act: each layer's activation sparsity (Gemma3nTextMLP._gaussian_topk where > 0); absent, the
    # config class's default: the first 10 layers at 0.95 when there are more than 10.
    sparsity: str = "activation_sparsity_pattern"
    input_optional: bool = False  # decl: Gemma 4 builds no per-layer inputs when their width is 0
    inputs: bool = True  # decl: Gemma 4 unified has no per-layer inputs whatever a config writes


@value_type
class GlobalAttention:
    """decl: Gemma 4's full-attention layers (Gemma4TextAttention, Gemma4TextConfig.__post_init__):
    their own head width (global_head_dim, 512 when absent) and, where attention_k_eq_v, their own K/V
    heads (num_global_key_value_heads) and no v_proj (the keys are the values); or, where the config
    writes it, transformers' per_layer_config of each layer's head_dim and num_key_value_heads (which
    then decides alone). The layers sharing keys and values get a double-wide MLP by double_wide."""

    head_dim: str = "global_head_dim"
    default_head_dim: int = 512
    kv_heads: str = "num_global_key_value_heads"
    k_eq_v: str = "attention_k_eq_v"
    overrides: str = "per_layer_config"
    double_wide: str = "use_double_wide_mlp"
    # Gemma4TextConfig without layer_types: every 6th layer full (i + 1) % 6 == 0, and the last.
    full_every: int = 6


@value_type
class FalconLayout:
    """decl: Falcon's layer by its switches (modeling_falcon.py: FalconAttention, FalconDecoderLayer):
    the new decoder architecture has num_kv_heads K/V heads and, in parallel, two LayerNorms (or
    num_ln_in_parallel_attn); the old one one K/V head by multi_query (else as many as the queries),
    one LayerNorm in parallel, two otherwise."""

    new_architecture: str = "new_decoder_architecture"
    multi_query: str = "multi_query"
    parallel: str = "parallel_attn"
    norms_in_parallel: str = "num_ln_in_parallel_attn"


@value_type
class MlaVariants:
    """decl: Mistral Large 4's MLA layers (MistralLarge4TextConfig.__post_init__): no_rope_layers (1 a
    layer with RoPE, 0 without; by default every no_rope_layer_interval-th layer without), and
    kv_source_layers (each layer's source of its latent: itself, or an earlier layer it shares);
    where indexer_types is absent, the indexer's layers by index_topk_pattern ("F" full, "S" shared)
    or by index_topk_freq and index_skip_topk_offset."""

    rope_list: str = "no_rope_layers"
    rope_interval: str = "no_rope_layer_interval"
    default_interval: int = 4
    kv_sources: str = "kv_source_layers"
    index_pattern: str = "index_topk_pattern"
    index_freq: tuple[str, int] = ("index_topk_freq", 1)
    index_offset: tuple[str, int] = ("index_skip_topk_offset", 2)


@value_type
class Mamba1:
    """A Mamba-1 mixer's config fields (Gu & Dao 2023, "Mamba"; transformers' MambaMixer): in_proj
    h -> 2 × inner (x and the gate), a depthwise conv over x, x_proj inner -> dt_rank + 2 × state
    (dt, B, C), dt_proj dt_rank -> inner with a bias, A_log of inner × state, D, out_proj."""

    state: str
    conv: str
    dt_rank: str  # a number, or "auto": ceil(hidden / 16) (MambaConfig)
    expand: str
    width: str | None = None  # the inner width when the config writes it (Mamba's intermediate_size)
    conv_bias: Switch = True
    bias: Switch = False  # in_proj's and out_proj's biases
    dt_norms: bool = False  # Jamba: RMSNorms over dt (dt_rank), B and C (state each)
    # hybact: Falcon-Mamba's weightless RMSNorms over dt, B and C (no parameter, but saved tensors).
    weightless_dt_norms: bool = False
    residual_fp32: bool = False  # hybact: MambaConfig's residual_in_fp32 (the blocks' inputs in fp32)


@value_type
class SlidingLayers:
    """Which layers use the sliding window when a config sets ``sliding_window`` but no
    ``layer_types``, as the family's config class of transformers 5.24 decides (its cache then slides
    those layers: cache_utils.get_layer_types_and_kwargs)."""

    window: int | None  # sliding_window when the config leaves it out (Mistral's 4096; None: no window)
    switch: str | None = None  # the window is used only when this field is true (Qwen2's use_sliding_window)
    # ... and then only on the layers i >= this field, by its default (Qwen2's max_window_layers, 28).
    from_layer: tuple[str, int] | None = None
    # Every n-th layer full attention, the others sliding: n's field (None: a constant) and its
    # default (Gemma 2: every 2nd; Gemma 3: sliding_window_pattern, 6); None: every layer slides.
    full_every: tuple[str | None, int] | None = None
    full_first: bool = False  # the full layers are i % n == 0 (CWM, Granite SWA), not (i + 1) % n == 0


@value_type
class NestedFields:
    """Fields a checkpoint's config keeps in a sub-dict, which the config class lifts over its own
    (Kimi Linear's linear_attn_config: KimiLinearConfig.__post_init__): each ``lifted`` key sets a
    field where the sub-dict gives it, and, where the config has no layer_types, the sub-dict's
    lists of 1-indexed layer numbers give each layer's word (``layer_lists``: list -> word)."""

    name: str
    lifted: Mapping[str, str]
    layer_lists: Mapping[str, str] = field(default_factory=dict)


@value_type
class CompressedAttention:
    """DeepSeek-V4's attention (transformers' DeepseekV4Attention, DeepSeek-V4 report section 2.3):
    every layer attends over a sliding window of one shared K=V head (kv_proj h -> head_dim) with
    low-rank queries (q_a -> q_b) and a grouped low-rank output (o_a per group, o_b), plus one sink
    logit per head; a compressed-sparse layer (CSA) adds a compressor of every ``rate`` tokens into
    one entry (two overlapping series: kv and gate of 2 × head_dim) and a lightning indexer over its
    own compressed keys, a heavily-compressed layer (HCA) a compressor alone (kv and gate of
    head_dim). Around every block, ``hc_mult`` residual streams mixed by hyper-connections (mHC)."""

    # layer_types' words (DEEPSEEK_V4_LAYER_TYPES) and the legacy per-layer compress_ratios (0/4/128).
    sliding: str = "sliding_attention"
    sparse: str = "compressed_sparse_attention"
    heavy: str = "heavily_compressed_attention"
    legacy_ratios: str = "compress_ratios"
    rates: str = "compress_rates"  # {word: rate}; legacy compress_rate_csa / compress_rate_hca
    default_rates: tuple[int, int] = (4, 128)  # DeepseekV4Config.default_compress_rates
    streams: str = "hc_mult"
    # act: the Sinkhorn iterations on each hyper-connection's mixing matrix (DeepseekV4Config: 20).
    sinkhorn: str = "hc_sinkhorn_iters"
    default_sinkhorn: int = 20
    groups: str = "o_groups"
    group_rank: str = "o_lora_rank"
    # decl2: mlp_layer_types' words (DEEPSEEK_V4_MLP_LAYER_TYPES); without the list, the first
    # num_hash_layers (legacy; default 3) are hash-routed (DeepseekV4Config.__post_init__).
    mlp_kinds: str = "mlp_layer_types"
    hash_routed: str = "hash_moe"
    routed: str = "moe"
    legacy_hash_layers: str = "num_hash_layers"
    default_hash_layers: int = 3


# Zamba2Config's layers_block_type when a config gives none: 54 layers, 9 of them hybrid.
_ZAMBA2_DEFAULT_KINDS = (
    ("linear_attention",)
    + (("linear_attention",) * 5 + ("hybrid",)) * 7
    + ("linear_attention",) * 4
    + ("hybrid",)
    + ("linear_attention",) * 3
    + ("hybrid",)
    + ("linear_attention",) * 2
)


@value_type
class SharedBlocks:
    """decl2: Zamba2's shared transformer blocks (transformers' Zamba2HybridLayer): every layer is a
    Mamba-2 block; a hybrid layer also runs one of ``num_mem_blocks`` shared blocks (cycled: their
    weights counted once) of attention over the concatenated [hidden; embeddings] (2h wide, heads of
    2h / heads) and a gated MLP, with its own projection h -> h and its own low-rank adapters
    (Zamba2MLP's on gate_up, Zamba2Attention's on q, k, v when use_shared_attention_adapter)."""

    kinds: str = "layers_block_type"
    word: str = "hybrid"
    default_kinds: tuple[str, ...] = _ZAMBA2_DEFAULT_KINDS
    blocks: str = "num_mem_blocks"
    rank: str = "adapter_rank"
    attention_adapters: str = "use_shared_attention_adapter"
    bias: str = "add_bias_linear"  # the shared MLP's biases


@value_type
class Family:
    """One transformers ``model_type`` (and the names it is also saved under), as the counter reads it."""

    model_type: str
    also: tuple[str, ...] = ()  # model_types transformers builds with the same classes
    # The config's defaults for the fields read, where the class's differ from the common ones below
    # (checked against configuration_<family>.py of transformers 5.24).
    defaults: Mapping[str, object] = field(default_factory=dict)
    # Field names the family spells otherwise, the first the config has (Llama 4: the dense width is
    # intermediate_size_mlp).
    names: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    tied_by_default: bool = False  # tie_word_embeddings when the config leaves it out
    # Attention.
    qkv_bias: Switch = "attention_bias"
    o_bias: Switch = "attention_bias"
    qk_norm: Switch = False  # RMSNorm weights on queries and keys
    # "head": one head_dim-wide norm for every head (Qwen3); "projection": over all of q and all of
    # k (OLMo 2: heads × head_dim and kv_heads × head_dim).
    qk_norm_scope: Literal["head", "projection"] = "head"
    qk_norm_bias: bool = False  # decl2: Persimmon's q/k LayerNorms have biases too
    attention_experts: bool = False  # decl2: JetMoE's mixture of attention, one expert per MoE expert
    attention_sinks: bool = False  # gpt-oss: one learned logit per head
    fused_qkv: bool = False  # one qkv_proj (Phi-3)
    # The attention's modules named otherwise than Llama's (q/k/v/o_proj, qkv_proj), by the counter's
    # name: what a LoRA recipe targeting the attention lists (Phi's dense, GPT-NeoX's query_key_value).
    attention_modules: Mapping[str, str] = field(default_factory=dict)
    # Modules named otherwise than the counter names them where peft's attention list then misses
    # them, by the counter's name (LFM2's attention calls its output projection out_proj), or then
    # matches them (GPT-2's MLP calls its down_proj c_proj, as its attention's output).
    module_names: Mapping[str, str] = field(default_factory=dict)
    mla: bool = False  # Multi-head Latent Attention (DeepSeek-V3): q/kv LoRA ranks and head dims
    # Norms.
    norms_per_layer: int = 2
    post_norms: Switch = False  # two more norms per layer (HyperCLOVA X's use_post_norm)
    norm_parameters: Literal["weight", "weight_bias", "none"] = "weight"  # see Architecture
    lm_head_bias: Switch = False
    # The dense MLP: gated (gate, up, down: Llama) or plain (up, down: GPT-2, Apertus, StarCoder 2).
    gated_mlp: bool = True
    mlp_bias: Switch = False
    fused_gate_up: bool = False  # one gate_up_proj (Phi-3)
    activation_params: int = 0  # learned scalars of the MLP's activation (Apertus' xIELU: 2)
    experts: Experts | None = None
    multi_token_prediction: bool = False  # num_nextn_predict_layers: recorded, never counted
    # Switches of the config class whose layers the counter does not model: a config that turns
    # one on is refused (undeclared_family) rather than miscounted.
    unsupported: tuple[str, ...] = ()
    # The vendor's "active per token" embeddings (see Architecture.active_embeddings).
    active_embeddings: Literal["both", "output", "none"] = "both"
    # The preset keys (bot/data/models.toml) of this family, by prefix; a preset with experts of a
    # dense family's prefix is "<model_type>_moe" (Qwen3 -> Qwen3-MoE; see preset_family).
    preset_prefixes: tuple[str, ...] = ()
    # Whether the activation formulas (bot.estimate.saved_activations, step_peak) were checked against
    # this family's real steps (benchmarks/accuracy.py: saved within 5 %, the peak within 10 %). A
    # family without it gets no activation estimate: its answers ask for `activations`.
    activations_measured: bool = False
    # What the forward keeps, where measured: the traits the calibrated formulas read. They read them
    # through bot.estimate.family_traits.FamilyTraits, which is this declaration with the few traits
    # that depend on the architecture resolved: a new trait is one field here, read as traits.<field>.
    norm_style: NormStyle = "llama"
    # Bytes per routed token-expert pair of the routing weight the experts' output is scaled by:
    # Mixtral keeps the fp32 softmax, Qwen3-MoE and gpt-oss cast it to the hidden dtype.
    router_weight_bytes: int = 4
    rope_tables: int = 1  # Gemma 3: one RoPE table pair for local and one for global layers
    # gpt-oss' experts' clamped SwiGLU (interleaved gate/up, sigmoid, clamp, up + 1) and
    # top-k-then-softmax router; it keeps cos/sin d/2 wide (it rotates the two halves), the others d.
    clamped_swiglu: bool = False
    rope_half_width: bool = False
    # RoPE written as cat(rotated part, passed part) (GLM-4.5, Phi-3): Q and K are new head-major
    # tensors, so SDPA's output comes back head-major and o_proj's input is a contiguous copy (2q).
    rope_cat: bool = False
    partial_rope: bool = False  # GLM-4.5 rotates half of each head: its RoPE tables are d/2 wide
    # Gemma 2 caps the attention scores (eager: their tanh, 2·a·s, is saved) and the logits (the tanh
    # of the bf16 logits, 2v, is saved) with tanh.
    softcapping: bool = False
    # Llama 4 (transformers ``Llama4TextMoe``): every token goes through every expert, scaled by a
    # sigmoid score that is 0 for the experts it was not routed to; and its eager attention keeps
    # the softmax in the compute dtype (no fp32 copy).
    dense_experts: bool = False
    compute_dtype_softmax: bool = False
    complex_rope: bool = False  # Llama 4's RoPE table is one complex64 tensor (freqs_cis) in every precision
    # famact (issue 20, points 3/5): what the refused dense and MoE families' forwards keep
    # (bot.estimate.family_traits; measured: benchmarks/ACCURACY.md, "Activations of the declared
    # families"). A parallel block (Cohere, Phi) feeds attention and MLP one normalized input.
    parallel_block: bool = False
    mlp_activation: MlpActivation = "native"
    embedding_norm: bool = False  # nanochat normalizes the embeddings before the first layer
    weightless_qk_norm: bool = False  # ... and Q and K, with no weights to count
    logit_softcapping: bool = False  # the tanh of the capped logits, without capped attention scores
    # RoPE's cos/sin re-interleaved in every layer, a copy each layer saves (ERNIE 4.5: fp32 tables;
    # Helium: in the compute dtype); ERNIE 4.5's router runs in fp32 with autocast off.
    rope_per_layer: Literal["none", "fp32", "compute"] = "none"
    fp32_router: bool = False
    # Under autocast, the shared expert's linears that cast the layer's fp32 input each on their own
    # (Qwen2-MoE, Cohere 2 MoE: gate and up, 2).
    shared_expert_casts: int = 0
    # famact (issue 20, point 3/5, this round): more of what the forwards keep (measured:
    # benchmarks/ACCURACY.md, "Activations of the declared families, part two").
    # DeepSeek's MoE layer where the counter's Experts do not say it: "sigmoid" is DeepSeek-V3's
    # (transformers DeepseekV3MoE's copies with the correction bias a buffer: GLM-4.7-Flash's
    # glm4_moe_lite, EXAONE MoE, Solar Open), "softmax" DeepSeek-V2's (DeepseekV2TopkRouter: an fp32
    # softmax on the fp32 input, no renormalised top-k); "auto": by the correction bias, as before.
    deepseek_moe_layer: Literal["auto", "sigmoid", "softmax"] = "auto"
    # The router is an fp32 nn.Linear fed hidden_states.float() (Hunyuan MoE's HunYuanMoEV1Gate).
    fp32_router_input: bool = False
    # Dropouts on the attention's and the MLP's outputs (Seed-OSS' residual_dropout, 0.1 by default):
    # in training each keeps its 16-bit mask of the hidden width.
    residual_dropout_masks: int = 0
    # The rotated share of each head where it is not all (StableLM, GPT-NeoX: 0.25): RoPE's tables.
    rotary_fraction: float = 1.0
    # Q and K normalized after RoPE (Hunyuan V1): under autocast the rotated fp32 Q and K are the
    # norms' input, and their normalized output is fp32 too.
    qk_norm_after_rope: bool = False
    # GPT-NeoX's parallel residual (use_parallel_residual): two LayerNorms of the same residual x, whose
    # one storage the second norm's saved input shares.
    norms_share_input: bool = False
    # Norms of a linear layer's 16-bit output (GLM-4's post_self_attn_layernorm and post_mlp_layernorm):
    # under autocast they save a 16-bit input's terms, not the fp32 residual's.
    norms_of_outputs: int = 0
    # Granite SWA's sinks (granite_swa's eager_attention_forward): the output scaled by
    # sigmoid(logsumexp(scores) - sink) after an ordinary fp32 softmax, not gpt-oss' extra column.
    sink_scaling: bool = False
    # Sliding-window attention: which layers slide when the config has no layer_types (None: none do).
    sliding: SlidingLayers | None = None
    takes_layer_types: bool = False  # the config class takes a per-layer attention list
    # transformers 5.24 runs the family's attention with SDPA; False: eager only (Gemma 2's capped
    # scores, attention sinks, Mamba-2 without attention), so a measurement builds it eager.
    runs_sdpa: bool = True
    # Fields of the real models' configs that change what the step computes, not what it holds
    # (Qwen3-MoE's checkpoints renormalise the top-k routing weights).
    measure_fields: Mapping[str, object] = field(default_factory=dict)
    # The small config every measuring path builds (bot.measure.families.small_config) is derived
    # from this declaration: the shared small shape in the family's own field names, its experts,
    # latent attention, sliding window and hybrid layers. These fields are laid over it, only where
    # the derivation alone would not build or would not be the model measured.
    small: Mapping[str, object] = field(default_factory=dict)
    # Hybrid layers (issue 20, point 3): where each layer's kind is read, and the mixers' fields.
    layer_kinds: LayerKinds | None = None
    mamba: Mamba | None = None
    # peft 0.21 refuses to adapt this model type's Mamba mixers' out_proj and conv1d
    # (tuners_utils._check_lora_target_modules_mamba): its all-linear runs without out_proj
    # (bot.estimate.methods.PEFT_MAMBA_EXCLUDED; bot.measure.step.with_lora).
    peft_refuses_mamba_out_proj: bool = False
    delta_net: DeltaNet | None = None
    short_conv: ShortConv | None = None
    indexer: Indexer | None = None
    attention_output_gate: bool = False  # Qwen3-Next: q_proj doubles, a sigmoid gate on the output
    # LFM2: the MLP's width is 2/3 of intermediate_size × block_ffn_dim_multiplier, rounded up to
    # block_multiple_of, when block_auto_adjust_ff_dim (Lfm2MLP).
    ffn_auto_adjust: bool = False
    # The frontier block below (issue 20, point 3): Mamba-1 mixers, and Gemma 3n's per-layer parts.
    mamba1: Mamba1 | None = None
    per_layer: PerLayer | None = None
    compressed_attention: CompressedAttention | None = None  # DeepSeek-V4
    shared_blocks: SharedBlocks | None = None  # decl2: Zamba2
    nested: NestedFields | None = None  # Kimi Linear's linear_attn_config
    # Fields a config may write as one value a layer (Hunyuan-A13B's moe_topk, num_experts, ...),
    # which the family's classes read as one value: a list of equal values is that value, a list that
    # varies is refused (undeclared_family "... varying by layer").
    uniform_lists: tuple[str, ...] = ()
    # decl (issue 20): Gemma 4's global layers, Mistral Large 4's MLA layers without RoPE or sharing a
    # latent, and the learned scales of the latter's attention softmax (MistralLarge4TextSoftmaxScaling)
    # and RoPE frequencies (MistralLarge4TextRotaryEmbedding.alpha, qk_rope_head_dim / 2).
    global_attention: GlobalAttention | None = None
    mla_variants: MlaVariants | None = None
    softmax_scaling: bool = False
    learned_rope_scale: bool = False
    # Gemma 4's layer_scalar: one persistent buffer a layer, which its checkpoints hold.
    layer_scalar: bool = False
    # decl (classic causal LMs): the dense MLP's width as a multiple of the hidden size where the config
    # leaves it null (GPT-2's n_inner: 4h), and a learned table of absolute positions (its rows' field
    # and the rows added to it: OPT's offset of 2).
    mlp_ratio: int | None = None
    position_table: tuple[str, int] | None = None
    embedding_layernorm: bool = False  # BLOOM's word_embeddings_layernorm (a norm of the hidden size)
    multi_query: str | None = None  # the switch of one K/V head for all queries (GPT-BigCode's multi_query)
    falcon_layout: FalconLayout | None = None
    # Fields the family's classes do not read, whose value must be what they build instead (a field's
    # name: that field's value; a number): Hunyuan's experts are intermediate_size wide whatever
    # moe_intermediate_size says, and it builds one shared MLP whatever num_shared_expert says.
    built_as: Mapping[str, str | int] = field(default_factory=dict)

    # mm: transformers builds the text model as a causal LM of its own; False: only inside its
    # multimodal class (the Qwen-VL and GLM-4V text models), so no small config is built for it alone
    # (the coverage test holds the whole multimodal model to its build).
    standalone: bool = True

    def default(self, name: str) -> object:
        return self.defaults.get(name, COMMON_DEFAULTS.get(name))

    @property
    def slides_by_default(self) -> bool:
        """Whether the config class slides some layers when the config names none (Mistral, Gemma 2)."""
        rule = self.sliding
        return self.takes_layer_types or (rule is not None and rule.window is not None and not rule.switch)

    def name(self, key: str) -> tuple[str, ...]:
        return self.names.get(key, (key,))


@value_type
class Multimodal:
    """A multimodal ``model_type``: its text model's family and, where declared, its towers and
    projectors (counted from the config too); without towers the text model alone is counted."""

    model_type: str
    text_model_type: str  # text_config's model_type when it leaves it out
    # Where the tying of the LM head is decided, and its default there: the top-level config (the
    # ForConditionalGeneration class ties by its own config) or the text config.
    tie_at_top: bool = False
    tied_by_default: bool = False
    # The vision (and audio) towers and projectors counted from the config's sub-configs (Tower: the
    # mm block at the end); () counts the text model alone (its towers from the repo's tensors).
    towers: tuple[Tower, ...] = ()
    # Tied when the top level or the text config says so (transformers' pre-v5 configs kept the
    # tying in text_config: Qwen2-VL, Qwen2.5-VL, GLM-4V); flat: a config without text_config keeps
    # the text model's fields at the top level (Qwen2-VL's and Qwen2.5-VL's published repos).
    tie_either: bool = False
    flat_text: bool = False


# What the common config fields mean when a config leaves them out (PretrainedConfig; a family's
# class may say otherwise in its defaults).
COMMON_DEFAULTS: Mapping[str, object] = MappingProxyType({"attention_bias": False, "mlp_bias": False})

_DEEPSEEK_EXPERTS = Experts(
    count=("n_routed_experts",),
    shared="n_shared_experts",
    first_dense="first_k_dense_replace",
    correction_bias=True,
    peft_converted=True,
)

# Qwen2 and Qwen3 slide the layers from max_window_layers on, and only with use_sliding_window.
_QWEN_SLIDING = SlidingLayers(4096, switch="use_sliding_window", from_layer=("max_window_layers", 28))
_EVERY_LAYER = SlidingLayers(None)  # Mixtral, Phi-3, ...: a sliding_window given slides every layer
_ALTERNATING = SlidingLayers(4096, full_every=(None, 2))  # Gemma 2: sliding, full, sliding, ...
_EVERY_4TH_FULL = SlidingLayers(4096, full_every=("sliding_window_pattern", 4))  # Cohere 2, EXAONE 4

FAMILIES: tuple[Family, ...] = (
    Family("llama", activations_measured=True, preset_prefixes=("llama",)),
    Family(
        "mistral",
        activations_measured=True,
        qkv_bias=False,
        o_bias=False,
        sliding=SlidingLayers(4096),  # MistralConfig: every layer slides, a 4096 window by default
        preset_prefixes=("mistral",),
    ),
    Family(
        "qwen2",
        activations_measured=True,
        qkv_bias=True,
        o_bias=False,
        sliding=_QWEN_SLIDING,
        preset_prefixes=("qwen2.5",),
    ),
    Family(
        "qwen3",
        activations_measured=True,
        qk_norm=True,
        router_weight_bytes=2,
        sliding=_QWEN_SLIDING,
        preset_prefixes=("qwen3",),
    ),
    Family(
        "qwen3_moe",
        activations_measured=True,
        qk_norm=True,
        experts=Experts(
            count=("num_experts", "num_local_experts"),
            step="decoder_sparse_step",
            dense_list="mlp_only_layers",
            peft_converted=True,
        ),
        router_weight_bytes=2,
        sliding=SlidingLayers(4096, switch="use_sliding_window"),  # every layer, no layer_types
        measure_fields=MappingProxyType({"norm_topk_prob": True}),
    ),
    Family(
        "mixtral",
        activations_measured=True,
        qkv_bias=False,
        o_bias=False,
        experts=Experts(count=("num_local_experts",), width=None, peft_converted=True),
        sliding=_EVERY_LAYER,
        preset_prefixes=("mixtral",),
    ),
    Family("gemma", tied_by_default=True, norm_style="gemma", activations_measured=True),  # famact
    Family(
        "gemma2",
        activations_measured=True,
        tied_by_default=True,
        norms_per_layer=4,
        norm_style="gemma",
        softcapping=True,
        sliding=_ALTERNATING,
        runs_sdpa=False,
        takes_layer_types=True,
        preset_prefixes=("gemma-2",),
    ),
    Family(
        "gemma3_text",
        activations_measured=True,
        tied_by_default=True,
        norms_per_layer=4,
        qk_norm=True,
        norm_style="gemma",
        sliding=SlidingLayers(4096, full_every=("sliding_window_pattern", 6)),
        rope_tables=2,
        takes_layer_types=True,
        preset_prefixes=("gemma-3",),
    ),
    Family(
        "phi3",
        activations_measured=True,
        qkv_bias=False,
        o_bias=False,
        fused_qkv=True,
        fused_gate_up=True,
        rope_cat=True,
        sliding=_EVERY_LAYER,
        preset_prefixes=("phi",),
    ),
    Family(
        "deepseek_v3",
        activations_measured=True,
        also=("kimi_k2",),
        mla=True,
        experts=_DEEPSEEK_EXPERTS,
        multi_token_prediction=True,
        small=MappingProxyType({"n_group": 1, "topk_group": 1}),  # one group of the 4 small experts
        preset_prefixes=("deepseek", "kimi"),
    ),
    Family(
        "gpt_oss",
        activations_measured=True,
        defaults=MappingProxyType({"attention_bias": True}),
        attention_sinks=True,
        experts=Experts(
            count=("num_local_experts",), width=None, router_bias=True, expert_bias=True, fused_gate_up=True
        ),
        active_embeddings="output",
        norm_style="fp32",
        router_weight_bytes=2,
        clamped_swiglu=True,
        rope_half_width=True,
        runs_sdpa=False,
        takes_layer_types=True,
        sliding=SlidingLayers(128, full_every=(None, 2)),
        preset_prefixes=("gpt-oss",),
    ),
    Family(
        "glm4_moe",
        activations_measured=True,
        o_bias=False,
        qk_norm="use_qk_norm",
        experts=_DEEPSEEK_EXPERTS,
        multi_token_prediction=True,
        active_embeddings="none",
        rope_cat=True,
        partial_rope=True,
        # GLM-4.5's own switches, which the class defaults leave off.
        small=MappingProxyType({"attention_bias": True, "use_qk_norm": True, "partial_rotary_factor": 0.5}),
        preset_prefixes=("glm-4.5",),
    ),
    Family(
        "llama4_text",
        activations_measured=True,
        qkv_bias=False,
        o_bias=False,
        names=MappingProxyType({"intermediate_size": ("intermediate_size_mlp",)}),
        # Llama 4 names its widths the other way round: intermediate_size is an expert's.
        experts=Experts(
            count=("num_local_experts",),
            width="intermediate_size",
            shared=1,
            step="interleave_moe_layer_step",
            fused_gate_up=True,
            linear_router=True,
        ),
        dense_experts=True,
        compute_dtype_softmax=True,
        complex_rope=True,
        # Top-1 routing as Llama 4's; without Scout's weightless QK-norm (Maverick has none), whose
        # layers the estimate leaves out (benchmarks/ACCURACY.md, section 4).
        small=MappingProxyType({"num_experts_per_tok": 1, "use_qk_norm": False}),
        preset_prefixes=("llama-4",),
    ),
)


# The families after the presets' (issue 20), each held to its meta-device build by the coverage test.
# ERNIE 4.5: use_bias puts biases on q/k/v/o, the MLP and the LM head.
_ERNIE = Family(
    "ernie4_5",
    activations_measured=True,
    tied_by_default=True,
    qkv_bias="use_bias",
    o_bias="use_bias",
    mlp_bias="use_bias",
    lm_head_bias="use_bias",
    rope_per_layer="fp32",
)
FAMILIES += (
    _ERNIE,
    replace(
        _ERNIE,
        model_type="ernie4_5_moe",
        fp32_router=True,
        experts=Experts(
            count=("moe_num_experts", "num_experts"),
            active="moe_k",
            shared="moe_num_shared_experts",
            span=("moe_layer_start_index", "moe_layer_end_index", "moe_layer_interval"),
            correction_bias=True,  # moe_statics.e_score_correction_bias
            fused_gate_up=True,
            peft_converted=True,
        ),
        defaults=MappingProxyType(
            {"moe_layer_start_index": 1, "moe_layer_end_index": -1, "moe_layer_interval": 1}
        ),
    ),
    # Apertus: a plain up/down MLP under xIELU, whose alpha_p and alpha_n are learned; QK-norm.
    Family(
        "apertus",
        activations_measured=True,
        gated_mlp=False,
        activation_params=2,
        qk_norm=True,
        mlp_activation="xielu",
    ),
    Family("arcee", activations_measured=True, gated_mlp=False, mlp_bias="mlp_bias"),  # ReLU² up/down
    # nanochat: weightless RMSNorm (on the embeddings too, and on Q and K), ReLU² MLP, capped logits.
    Family(
        "nanochat",
        activations_measured=True,
        gated_mlp=False,
        norm_parameters="none",
        norm_style="weightless",
        weightless_qk_norm=True,
        embedding_norm=True,
        logit_softcapping=True,
    ),
    # Cohere: one LayerNorm (no bias) per layer before parallel attention and MLP; QK-norm of every
    # head's own weights.
    Family(
        "cohere",
        tied_by_default=True,
        norms_per_layer=1,
        qk_norm="use_qk_norm",
        qk_norm_scope="projection",
        norm_style="cohere",
        parallel_block=True,
        activations_measured=True,
    ),
    Family(
        "cohere2",
        tied_by_default=True,
        norms_per_layer=1,
        sliding=_EVERY_4TH_FULL,
        takes_layer_types=True,
        norm_style="cohere",
        parallel_block=True,
        activations_measured=True,
    ),
    Family(
        "cohere2_moe",
        tied_by_default=True,
        norms_per_layer=1,
        norm_style="cohere",
        parallel_block=True,
        activations_measured=True,
        shared_expert_casts=2,
        # An expert's width is intermediate_size; the dense layers' prefix_dense_intermediate_size.
        names=MappingProxyType(
            {"intermediate_size": ("prefix_dense_intermediate_size", "intermediate_size")}
        ),
        experts=Experts(
            count=("num_experts",),
            width="intermediate_size",
            shared="num_shared_experts",
            kinds=("mlp_layer_types", "dense"),
            # Cohere2MoeConfig without mlp_layer_types: the first first_k_dense_replace dense (0).
            first_dense="first_k_dense_replace",
            first_dense_unless_listed=True,
            fused_gate_up=True,
            peft_converted=True,
        ),
        takes_layer_types=True,
    ),
    # LayerNorm without weights, on the fp32 input (F.layer_norm(x.float())).
    Family("olmo", activations_measured=True, norm_parameters="none", norm_style="fp32_layernorm"),
    Family(
        "olmo2",
        activations_measured=True,
        norm_style="fp32",
        preset_prefixes=("olmo-2",),
        qk_norm=True,
        qk_norm_scope="projection",
    ),
    Family(
        "olmo3",
        activations_measured=True,
        norm_style="fp32",
        preset_prefixes=("olmo-3",),
        qk_norm=True,
        qk_norm_scope="projection",
        sliding=SlidingLayers(4096, full_every=(None, 4)),
        takes_layer_types=True,
    ),
    Family(
        "olmoe",
        activations_measured=True,
        qk_norm=True,
        qk_norm_scope="projection",
        experts=Experts(
            count=("num_experts", "num_local_experts"), width=None, fused_gate_up=True, peft_converted=True
        ),
    ),
    Family(
        "smollm3",
        activations_measured=True,
        tied_by_default=True,
        mlp_bias="mlp_bias",
        preset_prefixes=("smollm3",),
    ),
    Family("granite", activations_measured=True, mlp_bias="mlp_bias"),
    Family(
        "granitemoe",
        activations_measured=True,
        experts=Experts(count=("num_local_experts",), width=None, fused_gate_up=True),
    ),
    Family(
        "granitemoeshared",
        activations_measured=True,
        fused_gate_up=True,  # the shared MLP's input_linear (GraniteMoeSharedMLP); no dense layers
        experts=Experts(
            count=("num_local_experts",),
            width=None,
            shared_width="shared_intermediate_size",
            fused_gate_up=True,
        ),
    ),
    Family(
        "qwen2_moe",
        qkv_bias="qkv_bias",
        o_bias=False,
        defaults=MappingProxyType({"qkv_bias": True}),  # Qwen2-MoE configs on the Hub leave it out
        experts=Experts(
            count=("num_experts", "num_local_experts"),
            shared_width="shared_expert_intermediate_size",
            shared_gate=True,
            step="decoder_sparse_step",
            dense_list="mlp_only_layers",
            fused_gate_up=True,
        ),
        # Qwen2MoeConfig slides the odd layers below max_window_layers, a rule not modelled here.
        unsupported=("use_sliding_window",),
        activations_measured=True,
        router_weight_bytes=2,
        shared_expert_casts=2,
    ),
    Family(
        "starcoder2",
        activations_measured=True,
        tied_by_default=True,
        gated_mlp=False,
        qkv_bias="use_bias",
        o_bias="use_bias",
        mlp_bias="use_bias",
        norm_parameters="weight_bias",
        defaults=MappingProxyType({"use_bias": True}),
        sliding=_EVERY_LAYER,
    ),
    Family(
        "stablelm",
        qkv_bias="use_qkv_bias",
        o_bias=False,
        norm_parameters="weight_bias",
        unsupported=("qk_layernorm", "use_parallel_residual"),
        # famact: RoPE on the first quarter of each head, cat(rotated, passed) (StableLmAttention).
        rope_cat=True,
        rotary_fraction=0.25,
        activations_measured=True,  # famact: benchmarks/accuracy.py
    ),
    # Phi-1/2: one LayerNorm per layer before parallel attention and MLP, biases everywhere.
    Family(
        "phi",
        norms_per_layer=1,
        norm_parameters="weight_bias",
        qkv_bias=True,
        o_bias=True,
        gated_mlp=False,
        mlp_bias=True,
        lm_head_bias=True,
        unsupported=("qk_layernorm",),
        activations_measured=True,
        parallel_block=True,
        mlp_activation="gelu_python",
        rope_cat=True,  # partial rotary: cat(rotated, passed) per head
        partial_rope=True,
        attention_modules=MappingProxyType({"o_proj": "dense"}),  # PhiAttention
    ),
    Family(
        "gpt_neox",
        fused_qkv=True,
        attention_modules=MappingProxyType({"qkv_proj": "query_key_value", "o_proj": "dense"}),
        gated_mlp=False,
        mlp_bias=True,
        norm_parameters="weight_bias",
        defaults=MappingProxyType({"attention_bias": True}),
        # No grouped-query attention: GPTNeoXConfig has no num_key_value_heads (a stray one is ignored).
        names=MappingProxyType({"num_key_value_heads": ("num_attention_heads",)}),
        # famact: x + attn(ln1(x)) + mlp(ln2(x)) (use_parallel_residual, on by default); RoPE on the
        # first quarter of each head (rotary_pct 0.25), cat(rotated, passed) (GPTNeoXAttention).
        norms_share_input=True,
        activations_measured=True,  # famact: benchmarks/accuracy.py
        rope_cat=True,
        rotary_fraction=0.25,
    ),
    # Helium: an RMSNorm multiplying its weight in fp32, RoPE re-interleaved in every layer.
    Family(
        "helium", activations_measured=True, mlp_bias="mlp_bias", norm_style="fp32", rope_per_layer="compute"
    ),
    Family("internlm3", activations_measured=True, mlp_bias="mlp_bias"),
    # famact: GLM and GLM-4 rotate half of each head, interleaved: each layer re-interleaves cos/sin
    # (its own copies) and concatenates the rotated and passed halves (modeling_glm.py).
    Family(
        "glm",
        activations_measured=True,  # famact: benchmarks/accuracy.py
        o_bias=False,
        fused_gate_up=True,
        defaults=MappingProxyType({"attention_bias": True}),
        rope_cat=True,
        partial_rope=True,
        rope_per_layer="compute",
    ),
    Family(
        "glm4",
        o_bias=False,
        fused_gate_up=True,
        norms_per_layer=4,
        norms_of_outputs=2,
        activations_measured=True,  # famact: benchmarks/accuracy.py
        defaults=MappingProxyType({"attention_bias": True}),
        rope_cat=True,
        partial_rope=True,
        rope_per_layer="compute",
    ),
    Family(
        "seed_oss",
        o_bias="attention_out_bias",
        mlp_bias="mlp_bias",
        defaults=MappingProxyType({"attention_bias": True}),
        residual_dropout_masks=2,  # famact: SeedOssAttention's and SeedOssMLP's residual_dropout
        activations_measured=True,  # famact: benchmarks/accuracy.py
    ),
    Family(
        "exaone4",
        activations_measured=True,
        qkv_bias=False,
        o_bias=False,
        qk_norm=True,
        sliding=_EVERY_4TH_FULL,
        takes_layer_types=True,
    ),
    Family("ministral3", activations_measured=True, qkv_bias=False, o_bias=False, sliding=_EVERY_LAYER),
    Family(
        "hyperclovax",
        activations_measured=True,
        mlp_bias="mlp_bias",
        post_norms="use_post_norm",
        defaults=MappingProxyType({"use_post_norm": True}),
    ),
    Family(
        "mellum",
        activations_measured=True,
        qk_norm=True,
        experts=Experts(
            count=("num_local_experts",),
            kinds=("mlp_layer_types", "dense"),
            fused_gate_up=True,
            peft_converted=True,
        ),
        takes_layer_types=True,
    ),
    Family(
        "vaultgemma",
        tied_by_default=True,
        norm_style="gemma",
        softcapping=True,  # famact: Gemma 2's capped scores and logits (VaultGemmaConfig's defaults)
        activations_measured=True,  # famact: benchmarks/accuracy.py
        sliding=_ALTERNATING,
        takes_layer_types=True,
        runs_sdpa=False,
    ),
    Family(
        "phimoe",
        activations_measured=True,  # famact: benchmarks/accuracy.py
        norm_parameters="weight_bias",
        lm_head_bias="lm_head_bias",
        experts=Experts(count=("num_local_experts",), width=None, fused_gate_up=True, linear_router=True),
        sliding=_EVERY_LAYER,
    ),
    Family(
        "minimax_m2",
        preset_prefixes=("minimax-m2",),
        activations_measured=True,
        active_embeddings="none",  # MiniMax counts "10B active" without the embeddings
        qkv_bias=False,
        o_bias=False,
        qk_norm=True,
        qk_norm_scope="projection",
        # e_score_correction_bias: a persistent buffer of one value per expert (the checkpoint holds it).
        experts=Experts(
            count=("num_local_experts",),
            width=None,
            fused_gate_up=True,
            correction_bias=True,
            peft_converted=True,
        ),
    ),
)

_LIKE = {f.model_type: f for f in FAMILIES}
_GRANITE_SLIDING = SlidingLayers(128, full_every=(None, 4), full_first=True)
# Their config classes make the first layer dense when mlp_layer_types is left out: the small
# config lists its two layers' kinds.
_EVERY_LAYER_MOE = MappingProxyType({"num_hidden_layers": 2, "mlp_layer_types": ["sparse", "sparse"]})
FAMILIES += (
    Family("iquestcoder", activations_measured=True, mlp_bias="mlp_bias"),  # built as Llama
    Family(
        "cwm",
        activations_measured=True,
        qkv_bias=False,
        o_bias=False,
        mlp_bias="mlp_bias",
        sliding=SlidingLayers(8192, full_every=(None, 4), full_first=True),
        takes_layer_types=True,
    ),
    # Sarvam's MLA model is DeepSeek-V3's classes, its MoE model GLM-4.5's, under configs of their own.
    replace(_LIKE["deepseek_v3"], model_type="sarvam_mla", also=(), preset_prefixes=()),
    replace(
        _LIKE["glm4_moe"],
        model_type="sarvam_moe",
        preset_prefixes=(),
        activations_measured=True,  # famact: benchmarks/accuracy.py
        experts=replace(_DEEPSEEK_EXPERTS, peft_converted=False),  # transformers converts no sarvam_moe
    ),
    # Granite's sliding-window variants: one learned sink logit per head.
    Family(
        "granite_swa",
        tied_by_default=True,
        attention_sinks=True,
        sink_scaling=True,
        activations_measured=True,  # famact: benchmarks/accuracy.py
        runs_sdpa=False,
        mlp_bias="mlp_bias",
        sliding=_GRANITE_SLIDING,
        takes_layer_types=True,
    ),
    Family(
        "granitemoe_swa",
        attention_sinks=True,
        sink_scaling=True,
        activations_measured=True,  # famact: benchmarks/accuracy.py
        runs_sdpa=False,
        fused_gate_up=True,  # the shared MLP's input_linear (GraniteMoeSharedMLP); no dense layers
        experts=Experts(
            count=("num_local_experts",),
            width=None,
            shared_width="shared_intermediate_size",
            fused_gate_up=True,
        ),
        sliding=_GRANITE_SLIDING,
        takes_layer_types=True,
    ),
    # Solar Open: every layer MoE with a shared expert; no dense width.
    Family(
        "solar_open",
        names=MappingProxyType({"intermediate_size": ("intermediate_size", "moe_intermediate_size")}),
        experts=Experts(
            count=("n_routed_experts",), shared="n_shared_experts", fused_gate_up=True, peft_converted=True
        ),
        deepseek_moe_layer="sigmoid",  # famact: SolarOpenMoE is DeepSeek-V3's layer
        activations_measured=True,  # famact: benchmarks/accuracy.py
    ),
    Family(
        "youtu", activations_measured=True, tied_by_default=True, qkv_bias=False, o_bias=False, mla=True
    ),  # dense MLA
    Family(
        "glm4_moe_lite",
        qkv_bias=False,
        o_bias=False,
        mla=True,
        experts=Experts(
            count=("n_routed_experts",),
            shared="n_shared_experts",
            kinds=("mlp_layer_types", "dense"),
            unlisted_dense=1,  # Glm4MoeLiteConfig without mlp_layer_types: the first layer dense
            fused_gate_up=True,
            peft_converted=True,
        ),
        small=_EVERY_LAYER_MOE,
        deepseek_moe_layer="sigmoid",  # famact: Glm4MoeLiteMoE is DeepSeek-V3's layer
        activations_measured=True,  # famact: benchmarks/accuracy.py
    ),
    Family(
        "deepseek_v2",
        qkv_bias=False,
        o_bias=False,
        mla=True,
        experts=Experts(
            count=("n_routed_experts",),
            shared="n_shared_experts",
            first_dense="first_k_dense_replace",
            fused_gate_up=True,
            peft_converted=True,
        ),
        deepseek_moe_layer="softmax",  # famact: DeepseekV2Moe with its softmax router
        activations_measured=True,  # famact: benchmarks/accuracy.py
    ),
    Family(
        "flex_olmo",
        norm_style="fp32",  # famact: OLMo 2's RMSNorm (weight × the fp32 normalized tensor)
        activations_measured=True,  # famact: benchmarks/accuracy.py
        qk_norm=True,
        qk_norm_scope="projection",
        experts=Experts(
            count=("num_experts", "num_local_experts"), width=None, fused_gate_up=True, peft_converted=True
        ),
    ),
    Family(
        "jais2",
        activations_measured=True,
        gated_mlp=False,
        mlp_bias="mlp_bias",
        norm_parameters="weight_bias",
        defaults=MappingProxyType({"attention_bias": True, "mlp_bias": True}),
    ),
)

FAMILIES += (
    Family("exaone", activations_measured=True, mlp_bias="mlp_bias"),  # built as Llama
    Family(
        "exaone_moe",
        qkv_bias=False,
        o_bias=False,
        qk_norm=True,
        experts=Experts(
            count=("num_experts",),
            shared="num_shared_experts",
            kinds=("mlp_layer_types", "dense"),
            # ExaoneMoeConfig without mlp_layer_types: the first first_k_dense_replace (1) dense.
            first_dense="first_k_dense_replace",
            first_dense_unless_listed=True,
            fused_gate_up=True,
            peft_converted=True,
        ),
        defaults=MappingProxyType({"first_k_dense_replace": 1}),
        sliding=_EVERY_4TH_FULL,
        takes_layer_types=True,
        small=_EVERY_LAYER_MOE,
        deepseek_moe_layer="sigmoid",  # famact: ExaoneMoeSparseMoEBlock is DeepSeek-V3's layer
        activations_measured=True,  # famact: benchmarks/accuracy.py
    ),
)

# The hybrid families (issue 20, point 3): layers that keep a fixed-size state per sequence.
# Qwen3-Next and Qwen3.5: Gated DeltaNet layers with every n-th layer gated full attention.
_QWEN_LINEAR = LayerKinds(
    fields=("layer_types",),
    words=MappingProxyType(
        {"linear_attention": ("linear_attention", "default"), "full_attention": ("attention", "default")}
    ),
    default="linear_attention",
    every=("full_attention_interval", 4, "attention"),
)
_QWEN_NEXT_EXPERTS = Experts(
    count=("num_experts",),
    shared_width="shared_expert_intermediate_size",
    shared_gate=True,
    step="decoder_sparse_step",
    dense_list="mlp_only_layers",
    fused_gate_up=True,
    peft_converted=True,
)
# Granite 4, Bamba: "mamba"/"attention" (their legacy words) or "linear_attention"/"full_attention".
_MAMBA_OR_ATTENTION: Mapping[str, tuple[LayerKind, MlpKind]] = MappingProxyType(
    {
        "mamba": ("mamba", "default"),
        "linear_attention": ("mamba", "default"),
        "attention": ("attention", "default"),
        "full_attention": ("attention", "default"),
    }
)
_GRANITE_MAMBA = Mamba(
    heads="mamba_n_heads",
    head_dim="mamba_d_head",
    groups="mamba_n_groups",
    state="mamba_d_state",
    conv="mamba_d_conv",
    expand="mamba_expand",
    conv_bias="mamba_conv_bias",
    in_bias="mamba_proj_bias",
    out_bias="mamba_proj_bias",
)
_QWEN_HYBRID = Family(
    "qwen3_5_text",
    qk_norm=True,
    norm_style="gemma",  # hybact: Qwen3NextRMSNorm scales by 1 + weight in fp32, as Gemma's
    activations_measured=True,  # hybact: benchmarks/hybrid_activations.py
    attention_output_gate=True,
    layer_kinds=_QWEN_LINEAR,
    delta_net=DeltaNet(fused=False),
    router_weight_bytes=2,
)
FAMILIES += (
    replace(
        _QWEN_HYBRID,
        model_type="qwen3_next",
        experts=_QWEN_NEXT_EXPERTS,
        delta_net=DeltaNet(),
        preset_prefixes=("qwen3-next",),
    ),
    replace(_QWEN_HYBRID, preset_prefixes=("qwen3.5",)),
    replace(
        _QWEN_HYBRID,
        model_type="qwen3_5_moe_text",
        # Every layer MoE: no dense width (Qwen3_5MoeTextConfig has no intermediate_size).
        names=MappingProxyType({"intermediate_size": ("intermediate_size", "moe_intermediate_size")}),
        experts=replace(_QWEN_NEXT_EXPERTS, peft_converted=False),  # transformers converts no qwen3_5_moe
        preset_prefixes=("qwen3.5-35b-a3b", "qwen3.5-122b-a10b", "qwen3.5-397b-a17b"),
    ),
    # Nemotron-H: each block one mixer (Mamba-2 or attention) or one MLP (ReLU², up/down) or MoE.
    Family(
        "nemotron_h",
        norms_per_layer=1,
        peft_refuses_mamba_out_proj=True,
        norm_style="fp32",  # hybact: NemotronHRMSNorm multiplies the fp32 normalized input
        activations_measured=True,  # hybact: benchmarks/hybrid_activations.py
        gated_mlp=False,
        experts=Experts(
            count=("n_routed_experts",),
            shared_width="moe_shared_expert_intermediate_size",
            # decl: the router's e_score_correction_bias, a buffer its checkpoints hold (as DeepSeek-V3's).
            correction_bias=True,
        ),
        layer_kinds=LayerKinds(
            fields=("layers_block_type", "layer_types", "hybrid_override_pattern"),
            words=MappingProxyType(
                {
                    "linear_attention": ("mamba", "none"),
                    "mamba": ("mamba", "none"),
                    "M": ("mamba", "none"),
                    "full_attention": ("attention", "none"),
                    "attention": ("attention", "none"),
                    "*": ("attention", "none"),
                    "mlp": ("none", "dense"),
                    "-": ("none", "dense"),
                    "moe": ("none", "moe"),
                    "E": ("none", "moe"),
                }
            ),
            default="mamba",
            list_is_layers=True,
        ),
        mamba=Mamba(
            heads="mamba_num_heads",
            head_dim="mamba_head_dim",
            groups="n_groups",
            state="ssm_state_size",
            conv="conv_kernel",
            width_from_heads=True,
            conv_bias="use_conv_bias",
            in_bias="use_bias",
            out_bias="use_bias",
            chunk_size=128,  # NemotronHConfig.chunk_size
        ),
        # A latent MoE (Nemotron 3 Super) and the shared expert's biases are not modelled.
        unsupported=("moe_latent_size", "mlp_bias"),
        multi_token_prediction=True,
        preset_prefixes=("nemotron-h", "nemotron-3"),
    ),
    # Granite 4: every layer Mamba-2 or attention, a MoE and a shared gated MLP (the dense models:
    # num_local_experts 0, the shared MLP alone, of shared_intermediate_size).
    Family(
        "granitemoehybrid",
        activations_measured=True,  # hybact: benchmarks/hybrid_activations.py
        names=MappingProxyType({"intermediate_size": ("shared_intermediate_size",)}),
        fused_gate_up=True,
        experts=Experts(
            count=("num_local_experts",),
            width="intermediate_size",
            shared_width="shared_intermediate_size",
            fused_gate_up=True,
        ),
        layer_kinds=LayerKinds(
            fields=("layer_types", "layers_block_type"), words=_MAMBA_OR_ATTENTION, default="mamba"
        ),
        mamba=_GRANITE_MAMBA,
        preset_prefixes=("granite-4",),
    ),
    # Falcon-H1: attention and Mamba-2 side by side in every layer, then a gated MLP.
    Family(
        "falcon_h1",
        activations_measured=True,  # hybact: benchmarks/hybrid_activations.py
        peft_refuses_mamba_out_proj=True,
        mlp_bias="mlp_bias",
        defaults=MappingProxyType({"mamba_rms_norm": False}),  # FalconH1Config's default
        layer_kinds=LayerKinds(fields=(), words=MappingProxyType({}), default="attention_mamba"),
        mamba=replace(
            _GRANITE_MAMBA, width="mamba_d_ssm", out_bias="projectors_bias", gated_norm="mamba_rms_norm"
        ),
    ),
    Family(
        "bamba",
        activations_measured=True,  # hybact: benchmarks/hybrid_activations.py
        # hybact: BambaConfig rotates half of each head (partial_rotary_factor 0.5), by concatenation.
        rope_cat=True,
        partial_rope=True,
        mlp_bias="mlp_bias",
        layer_kinds=LayerKinds(
            fields=("layers_block_type",),
            words=_MAMBA_OR_ATTENTION,
            default="mamba",
            indices=("attn_layer_indices", "attention"),
        ),
        mamba=_GRANITE_MAMBA,
    ),
    # Mamba-2: Mamba-2 blocks alone (one norm each, no attention, no MLP); the attention and MLP
    # fields the counter requires are given values no layer reads.
    Family(
        "mamba2",
        activations_measured=True,  # hybact: benchmarks/hybrid_activations.py
        peft_refuses_mamba_out_proj=True,
        norms_per_layer=1,
        runs_sdpa=False,
        defaults=MappingProxyType({"num_attention_heads": 1, "intermediate_size": 1}),
        layer_kinds=LayerKinds(fields=(), words=MappingProxyType({}), default="mamba", default_mlp="none"),
        mamba=Mamba(
            heads="num_heads",
            head_dim="head_dim",
            groups="n_groups",
            state="state_size",
            conv="conv_kernel",
            expand="expand",
            residual_fp32=True,
            conv_bias="use_conv_bias",
            in_bias="use_bias",
            out_bias="use_bias",
        ),
    ),
    # LFM2: short-convolution layers and attention layers (QK-norm), each with a gated MLP.
    Family(
        "lfm2",
        activations_measured=True,  # hybact: benchmarks/hybrid_activations.py
        tied_by_default=True,
        module_names=MappingProxyType({"o_proj": "out_proj"}),  # Lfm2Attention (and LFM2-MoE's)
        qkv_bias=False,
        o_bias=False,
        qk_norm=True,
        ffn_auto_adjust=True,
        layer_kinds=LayerKinds(
            fields=("layer_types",),
            words=MappingProxyType({"full_attention": ("attention", "default"), "conv": ("conv", "default")}),
            default="conv",
            indices=("full_attn_idxs", "attention"),
        ),
        short_conv=ShortConv(),
        preset_prefixes=("lfm2",),
    ),
    # DeepSeek-V3.2: DeepSeek-V3 with the lightning indexer of its sparse attention in every layer.
    replace(
        _LIKE["deepseek_v3"],
        model_type="deepseek_v32",
        also=(),
        indexer=Indexer(),
        # DeepseekV32Config without mlp_layer_types: the first first_k_dense_replace (3) dense; with
        # it, the list alone (its decoder layer reads only the list).
        experts=replace(
            _DEEPSEEK_EXPERTS, kinds=("mlp_layer_types", "dense"), first_dense_unless_listed=True
        ),
        defaults=MappingProxyType({"first_k_dense_replace": 3}),
        preset_prefixes=("deepseek-v3.2",),
    ),
)
_LIKE = {f.model_type: f for f in FAMILIES}
# GLM-5: DeepSeek-V3.2's layers, the indexer only in the layers indexer_types calls "full".
FAMILIES += (
    replace(
        _LIKE["deepseek_v32"],
        model_type="glm_moe_dsa",
        indexer=Indexer(layers=("indexer_types", "full")),
        multi_token_prediction=True,
        preset_prefixes=(),
    ),
)

MULTIMODAL: tuple[Multimodal, ...] = (
    Multimodal("gemma3", "gemma3_text"),
    Multimodal("llama4", "llama4_text"),
    Multimodal("mistral3", "mistral", tie_at_top=True, tied_by_default=True),
    Multimodal("qwen3_5", "qwen3_5_text"),
    Multimodal("qwen3_5_moe", "qwen3_5_moe_text"),
)

# --- Families that answered only from their tensors before (issue 20) ---------------------------------------
_LIKE = {f.model_type: f for f in FAMILIES}
# Mamba-1 alone: one norm and one mixer a block, no attention, no MLP (MambaBlock); the attention
# and MLP fields the counter requires are given values no layer reads.
_MAMBA1_MIXER = Mamba1(
    state="state_size",
    conv="conv_kernel",
    dt_rank="time_step_rank",
    expand="expand",
    width="intermediate_size",
    conv_bias="use_conv_bias",
    bias="use_bias",
    residual_fp32=True,
)
_MAMBA1_ONLY = Family(
    "mamba",
    activations_measured=True,  # hybact: benchmarks/hybrid_activations.py (and Falcon-Mamba)
    peft_refuses_mamba_out_proj=True,  # and Falcon-Mamba's
    runs_sdpa=False,  # no attention for SDPA to run: transformers refuses to build it with SDPA
    tied_by_default=True,
    norms_per_layer=1,
    defaults=MappingProxyType({"num_attention_heads": 1, "intermediate_size": 1}),
    layer_kinds=LayerKinds(fields=(), words=MappingProxyType({}), default="mamba1", default_mlp="none"),
    mamba1=_MAMBA1_MIXER,
)
FAMILIES += (
    # Gemma 3n's text model: Gemma 3's attention (QK-norm, 5 sliding : 1 global) and four norms a
    # layer, with its per-layer parts (PerLayer); the towers are counted from the repo's tensors.
    replace(
        _LIKE["gemma3_text"],
        model_type="gemma3n_text",
        activations_measured=True,  # act: benchmarks/hybrid_activations.py
        per_layer=PerLayer(),
        preset_prefixes=("gemma-3n",),
        # Gemma3nTextConfig's defaults of its per-layer parts (a config.json may leave them out).
        defaults=MappingProxyType(
            {
                **_LIKE["gemma3_text"].defaults,
                "altup_num_inputs": 4,
                "laurel_rank": 64,
                "hidden_size_per_layer_input": 256,
                "vocab_size_per_layer_input": 262_144,
                "num_kv_shared_layers": 15,
            }
        ),
        # Its config class wants a list of each layer's sparsity as long as the layers.
        small=MappingProxyType(
            {
                "num_hidden_layers": 4,
                "layer_types": ["sliding_attention", "full_attention"] * 2,
                "activation_sparsity_pattern": [0.0] * 4,
            }
        ),
    ),
    _MAMBA1_ONLY,
    # Falcon-Mamba: Mamba-1 with weightless RMSNorms on dt, B and C (no parameters more).
    replace(
        _MAMBA1_ONLY,
        model_type="falcon_mamba",
        mamba1=replace(_MAMBA1_MIXER, weightless_dt_norms=True),  # hybact
    ),
    # Jamba: Mamba-1 layers with attention every attn_layer_period-th layer (from attn_layer_offset),
    # MoE every expert_layer_period-th (from expert_layer_offset), a gated MLP elsewhere.
    Family(
        "jamba",
        activations_measured=True,  # hybact: benchmarks/hybrid_activations.py
        qkv_bias=False,
        o_bias=False,
        layer_kinds=LayerKinds(
            fields=(),
            words=MappingProxyType({}),
            default="mamba1",
            period=("attn_layer_period", "attn_layer_offset", "attention"),
        ),
        mamba1=Mamba1(
            state="mamba_d_state",
            conv="mamba_d_conv",
            dt_rank="mamba_dt_rank",
            expand="mamba_expand",
            conv_bias="mamba_conv_bias",
            bias="mamba_proj_bias",
            dt_norms=True,
        ),
        experts=Experts(
            count=("num_experts",),
            width=None,
            period=("expert_layer_period", "expert_layer_offset"),
            fused_gate_up=True,
        ),
        # Small: attention and experts on every other layer, of four.
        small=MappingProxyType(
            {
                "num_hidden_layers": 4,
                "attn_layer_period": 2,
                "attn_layer_offset": 1,
                "expert_layer_period": 2,
                "expert_layer_offset": 1,
            }
        ),
        defaults=MappingProxyType(
            {
                "attn_layer_period": 8,
                "attn_layer_offset": 4,
                "expert_layer_period": 2,
                "expert_layer_offset": 1,
            }
        ),
    ),
    # LFM2-MoE: LFM2's layers (no MLP auto-adjust), the first num_dense_layers dense, then MoE; its
    # expert_bias is a buffer, not a parameter.
    replace(
        _LIKE["lfm2"],
        model_type="lfm2_moe",
        ffn_auto_adjust=False,
        experts=Experts(count=("num_experts",), first_dense="num_dense_layers", fused_gate_up=True),
        preset_prefixes=(),
        # Its config class builds no default layer_types: one dense conv layer, then MoE.
        small=MappingProxyType(
            {"num_hidden_layers": 3, "layer_types": ["conv", "full_attention", "conv"], "num_dense_layers": 1}
        ),
    ),
)
# OLMo Hybrid: Gated DeltaNet layers (q, k, v, gate, a, b as separate projections: Qwen3.5's
# unfused layout) with every fourth layer OLMo 3's attention (QK-norm over the whole projection,
# post-norms); two norms a layer either way.
FAMILIES += (
    Family(
        "olmo_hybrid",
        activations_measured=True,  # hybact: benchmarks/hybrid_activations.py
        norm_style="fp32",
        qk_norm=True,
        qk_norm_scope="projection",
        layer_kinds=_QWEN_LINEAR,
        delta_net=DeltaNet(fused=False, separate_linears=True),
    ),
)
MULTIMODAL += (Multimodal("gemma3n", "gemma3n_text"),)
# Hunyuan V1 (transformers' HunYuanDenseV1 / HunYuanMoEV1): Llama's layers with a head_dim-wide
# RMSNorm on queries and keys (applied after RoPE: no parameter more). The MoE layer is a router
# (h x num_experts, no bias), num_experts routed experts of intermediate_size in one 3-D
# gate_up_proj, and one shared MLP of intermediate_size, in every layer and also with one expert.
_HUNYUAN_DENSE = Family(
    "hunyuan_v1_dense",
    qk_norm=True,
    qk_norm_after_rope=True,
    activations_measured=True,  # famact: benchmarks/accuracy.py (the MoE too)
)
FAMILIES += (
    _HUNYUAN_DENSE,
    replace(
        _HUNYUAN_DENSE,
        model_type="hunyuan_v1_moe",
        experts=Experts(
            count=("num_experts",),
            active="moe_topk",
            width=None,
            shared=1,
            fused_gate_up=True,
            one_expert_block=True,
            peft_converted=True,  # conversion_mapping maps hunyuan_v1_moe to qwen2_moe's pattern
        ),
        # Hunyuan-A13B's config.json writes these per layer (HunYuanMoEV1Gate reads moe_topk per layer;
        # the parameters do not depend on it).
        uniform_lists=("moe_topk", "num_experts", "moe_intermediate_size", "num_shared_expert"),
        built_as=MappingProxyType({"moe_intermediate_size": "intermediate_size", "num_shared_expert": 1}),
        # famact: its fp32 gate on hidden_states.float(); under autocast the shared MLP's gate and
        # up cast their input each.
        fp32_router_input=True,
        shared_expert_casts=2,
    ),
)

# Kimi Linear (transformers' KimiLinear): Kimi Delta Attention layers (the same state as Gated
# DeltaNet's, with as many key as value heads) and DeepSeek-V3's MLA every fourth layer; DeepSeek-V3's
# MoE (its correction bias a buffer, not a parameter) except on the layers mlp_layer_types calls
# "dense". The checkpoints' linear_attn_config (1-indexed layer lists, the KDA heads' fields) is
# read as KimiLinearConfig.__post_init__ reads it.
FAMILIES += (
    replace(
        _LIKE["deepseek_v3"],
        model_type="kimi_linear",
        also=(),
        activations_measured=True,  # act: benchmarks/hybrid_activations.py
        multi_token_prediction=False,
        deepseek_moe_layer="sigmoid",  # act: KimiLinearMoE is DeepSeek-V3's layer (bias a buffer)
        experts=Experts(
            # The names transformers saves under (KimiLinearConfig.attribute_map), as the checkpoints do.
            count=("num_experts", "num_local_experts"),
            active="num_experts_per_token",
            shared="num_shared_experts",
            kinds=("mlp_layer_types", "dense"),
            first_dense="first_k_dense_replace",
            first_dense_unless_listed=True,
            fused_gate_up=True,
        ),
        # KimiLinearConfig's defaults of the fields read (a config.json may leave them out).
        defaults=MappingProxyType(
            {
                "first_k_dense_replace": 1,
                "num_shared_experts": 1,
                "kv_lora_rank": 512,
                "qk_rope_head_dim": 64,
                "qk_nope_head_dim": 128,
                "v_head_dim": 128,
                "linear_head_dim": 128,
                "linear_num_heads": 32,
                "linear_conv_kernel_dim": 4,
            }
        ),
        layer_kinds=LayerKinds(
            fields=("layer_types",),
            words=MappingProxyType(
                {
                    "linear_attention": ("linear_attention", "default"),
                    "full_attention": ("attention", "default"),
                }
            ),
            default="linear_attention",
            # KimiLinearConfig without layer_types (nor linear_attn_config's lists): MLA on layers
            # 4, 8, 12, ... (i and i % 4 == 0).
            every=(None, 4, "attention"),
            every_after_first=True,
        ),
        nested=NestedFields(
            "linear_attn_config",
            lifted=MappingProxyType(
                {
                    "head_dim": "linear_head_dim",
                    "num_heads": "linear_num_heads",
                    "short_conv_kernel_size": "linear_conv_kernel_dim",
                }
            ),
            layer_lists=MappingProxyType(
                {"full_attn_layers": "full_attention", "kda_layers": "linear_attention"}
            ),
        ),
        delta_net=DeltaNet(
            key_heads="linear_num_heads",
            value_heads="linear_num_heads",
            key_dim="linear_head_dim",
            value_dim="linear_head_dim",
            fused=False,
            kda=True,
        ),
        preset_prefixes=(),
    ),
)

# --- DeepSeek-V4 (issue 20) ---------------------------------------------------------------------------------
# DeepSeek-V4 (transformers' DeepseekV4ForCausalLM): every layer MoE (a router of h × experts, hash-
# routed or top-k: the same parameters, the hash table and the correction bias are buffers), the
# routed experts in one 3-D gate_up_proj, and one shared MLP of an expert's width whatever
# n_shared_experts says (DeepseekV4MLP reads intermediate_size, mapped to moe_intermediate_size);
# its attention and hyper-connections are CompressedAttention's. Linears without biases (attention_bias
# is not read); the shared MLP's mlp_bias is refused, not modelled.
FAMILIES += (
    Family(
        "deepseek_v4",
        activations_measured=True,  # act: benchmarks/hybrid_activations.py
        runs_sdpa=False,  # its sinks: transformers 5.24 refuses SDPA for it (act)
        preset_prefixes=("deepseek-v4",),
        qkv_bias=False,
        o_bias=False,
        attention_sinks=True,
        # One K=V head whatever num_key_value_heads says (DeepseekV4Attention does not read it).
        names=MappingProxyType(
            {"intermediate_size": ("moe_intermediate_size",), "num_key_value_heads": ("num_attention_heads",)}
        ),
        experts=Experts(
            count=("n_routed_experts", "num_local_experts"),
            shared=1,
            fused_gate_up=True,
            one_expert_block=True,
            # decl2: a persistent buffer of the top-k routers (not the hash-routed layers'), which the
            # checkpoints hold, as DeepSeek-V3's.
            correction_bias=True,
        ),
        compressed_attention=CompressedAttention(),
        unsupported=("mlp_bias",),
        # DeepseekV4Config's defaults of the fields read (a config.json may leave them out).
        defaults=MappingProxyType(
            {
                "head_dim": 512,
                "q_lora_rank": 1024,
                "o_groups": 8,
                "o_lora_rank": 1024,
                "hc_mult": 4,
                "sliding_window": 128,
                "index_n_heads": 64,
                "index_head_dim": 128,
                "n_routed_experts": 256,
                "num_experts_per_tok": 6,
                "moe_intermediate_size": 2048,
            }
        ),
        # Small: one layer of each kind, two streams, rates that leave tokens in the buffers.
        small=MappingProxyType(
            {
                "intermediate_size": 344,  # the shared small shape's expert width (bot.measure.families)
                "moe_intermediate_size": 344,
                "num_hidden_layers": 3,
                "layer_types": [
                    "sliding_attention",
                    "compressed_sparse_attention",
                    "heavily_compressed_attention",
                ],
                "mlp_layer_types": ["hash_moe", "moe", "moe"],
                "compress_rates": {"compressed_sparse_attention": 3, "heavily_compressed_attention": 16},
                "q_lora_rank": 96,
                "o_groups": 2,
                "o_lora_rank": 32,
                "hc_mult": 2,
                "hc_sinkhorn_iters": 3,
                "index_n_heads": 2,
                "index_head_dim": 16,
                "index_topk": 4,
                "sliding_window": 4096,
            }
        ),
    ),
)

# The lookups by model_type, filled at the end of this module from every declaration in it (each
# block below only adds to FAMILIES and MULTIMODAL).
_BY_TYPE: dict[str, Family] = {}
_MULTIMODAL: dict[str, Multimodal] = {}


def family(model_type: str | None) -> Family | None:
    """The declaration of ``model_type`` (a text model's), or None when the bot has none."""
    return _BY_TYPE.get(model_type or "")


def multimodal(model_type: str | None) -> Multimodal | None:
    return _MULTIMODAL.get(model_type or "")


def declared_model_types() -> frozenset[str]:
    """Every model_type the counter reads: the text families and the multimodal ones around them."""
    return frozenset(_BY_TYPE) | frozenset(_MULTIMODAL)


@cache  # Architecture.family asks it for a preset's family at every look
def preset_family(key: str, is_moe: bool) -> Family | None:
    """The family of a preset by its key's prefix (the longest that matches: "llama-4" before
    "llama"); a preset with experts of a dense family's prefix is its MoE family (Qwen3 -> Qwen3-MoE)."""
    found = [(len(p), f) for f in FAMILIES for p in f.preset_prefixes if key.startswith(p)]
    if not found:
        return None
    chosen = max(found, key=lambda hit: hit[0])[1]
    if is_moe and chosen.experts is None:
        return _BY_TYPE.get(f"{chosen.model_type}_moe", chosen)
    return chosen


__all__ = [
    "COMMON_DEFAULTS",
    "FAMILIES",
    "MULTIMODAL",
    "CompressedAttention",
    "DeltaNet",
    "Experts",
    "FalconLayout",
    "Family",
    "GlobalAttention",
    "Indexer",
    "LayerKind",
    "LayerKinds",
    "Mamba",
    "Mamba1",
    "MlaVariants",
    "MlpActivation",
    "MlpKind",
    "Multimodal",
    "NestedFields",
    "NormStyle",
    "PerLayer",
    "ShortConv",
    "SlidingLayers",
    "Switch",
    "declared_model_types",
    "family",
    "multimodal",
    "preset_family",
]

# --- Multimodal wrappers ------------------------------------------------------------------------------------
# Issue 20, point 3: the multimodal repos counted whole from their config.json, the text model by its
# declared family and each tower and projector by a :class:`Tower` read from its sub-config (the
# classes of transformers 5.24, modeling_<type>.py, named at each declaration). The towers are
# frozen by default (bot.estimate.request.frozen_params), the projectors trained with the text model.

# What one part of a tower or projector holds. Its dimensions are named: "width" (the tower's),
# "mlp" (its MLP's width), "merged" (width × the patch merger's factor, the merger's input), "patch"
# (channels × temporal × patch², a patch embedding's input), "grid" ((image_size // patch_size)²,
# a learned position table's rows; "grid_cls" one more, CLIP's class token's), "features" (width ×
# the layers the top level's vision_feature_layer feeds the projector), "text" (the text model's
# hidden size), or a field of the tower's config ("top.<field>": of the multimodal config itself).
PieceKind = Literal["linear", "norm", "gated_mlp", "table"]


@value_type
class Piece:
    """A linear (in, out; a convolution counts as its flattened linear), a norm (its width; with a
    bias: LayerNorm, without: RMSNorm), a gated MLP (width, inner width: gate, up, down) or a learned
    table (the product of its dims)."""

    kind: PieceKind
    dims: tuple[str, ...]
    bias: Switch = True  # or the field that switches it ("top.<field>": the multimodal config's)
    # A list field of the tower's config whose length repeats the piece (Qwen3-VL's deepstack mergers).
    times: str | None = None
    when: str | None = None  # a switch field: the piece is built only when it is true (SigLIP's head)


def linear(
    inp: str, out: str, bias: Switch = True, times: str | None = None, when: str | None = None
) -> Piece:
    return Piece("linear", (inp, out), bias, times, when)


def norm(dim: str = "width", bias: Switch = True, times: str | None = None, when: str | None = None) -> Piece:
    return Piece("norm", (dim,), bias, times, when)


@value_type
class Tower:
    """A vision (or audio) encoder of ViT blocks (Dosovitskiy et al. 2021) read from a sub-config:
    ``head`` (patch embedding, position table), ``depth`` blocks of two norms, a fused qkv and an
    output projection and an MLP, ``tail`` (final norms; counted with the tower), and ``projector``
    (the merger to the text model's width: trained with the text model)."""

    config: str = "vision_config"
    part: Literal["vision", "audio"] = "vision"
    width: str = "hidden_size"
    depth: str = "depth"
    mlp: str = "intermediate_size"  # the MLP's inner width, a field ...
    mlp_ratio: str | None = None  # ... or int(width × this field) (Qwen2-VL's mlp_ratio)
    merge: str = "spatial_merge_size"  # the patch merger's factor per side (merged = width × merge²)
    channels: str = "in_channels"
    patch: str = "patch_size"
    temporal: str | None = "temporal_patch_size"  # a video patch's frames (a Conv3d's depth)
    norm_bias: bool = True  # LayerNorm (weight and bias) or RMSNorm (weight)
    qkv_bias: Switch = True
    o_bias: bool = True
    gated_mlp: bool = False
    mlp_bias: bool = True
    head: tuple[Piece, ...] = ()
    tail: tuple[Piece, ...] = ()
    projector: tuple[Piece, ...] = ()
    # The sub-config class's defaults of the fields read (a config.json may leave them out).
    defaults: Mapping[str, object] = field(default_factory=dict)


# Qwen2-VL (modeling_qwen2_vl.py: Qwen2VisionTransformerPretrainedModel): a Conv3d patch embedding
# without bias, LayerNorm blocks with biases everywhere and a plain MLP of mlp_ratio × embed_dim,
# the PatchMerger (LayerNorm, two linears) to hidden_size, the text model's width.
_QWEN2_VL_TOWER = Tower(
    width="embed_dim",
    mlp_ratio="mlp_ratio",
    head=(linear("patch", "width", bias=False),),
    projector=(norm(), linear("merged", "merged"), linear("merged", "hidden_size")),
    defaults=MappingProxyType(
        {
            "depth": 32,
            "embed_dim": 1280,
            "hidden_size": 3584,
            "mlp_ratio": 4,
            "in_channels": 3,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
        }
    ),
)
# Qwen2.5-VL (modeling_qwen2_5_vl.py): RMSNorm blocks, a gated MLP with biases, the merger's norm an
# RMSNorm, to out_hidden_size.
_QWEN2_5_VL_TOWER = Tower(
    norm_bias=False,
    gated_mlp=True,
    head=(linear("patch", "width", bias=False),),
    projector=(norm(bias=False), linear("merged", "merged"), linear("merged", "out_hidden_size")),
    defaults=MappingProxyType(
        {
            "depth": 32,
            "hidden_size": 3584,
            "intermediate_size": 3420,
            "in_channels": 3,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "out_hidden_size": 3584,
        }
    ),
)
# Qwen3-VL (modeling_qwen3_vl.py): a patch embedding with bias, a learned position table of
# num_position_embeddings, LayerNorm blocks with a plain MLP, the merger and one deepstack merger
# (its norm over the merged width) per deepstack_visual_indexes entry.
_QWEN3_VL_TOWER = Tower(
    head=(linear("patch", "width"), Piece("table", ("num_position_embeddings", "width"))),
    projector=(
        norm(),
        linear("merged", "merged"),
        linear("merged", "out_hidden_size"),
        norm("merged", times="deepstack_visual_indexes"),
        linear("merged", "merged", times="deepstack_visual_indexes"),
        linear("merged", "out_hidden_size", times="deepstack_visual_indexes"),
    ),
    defaults=MappingProxyType(
        {
            "depth": 27,
            "hidden_size": 1152,
            "intermediate_size": 4304,
            "in_channels": 3,
            "patch_size": 16,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "out_hidden_size": 3584,
            "num_position_embeddings": 2304,
            "deepstack_visual_indexes": [8, 16, 24],
        }
    ),
)
# GLM-4V (modeling_glm4v.py: Glm4vVisionModel): a learned position table of the image's grid, RMSNorm
# blocks (qkv's bias by attention_bias, none elsewhere) whose gated MLP is out_hidden_size wide; after
# the blocks an RMSNorm, a Conv2d of merge × merge to out_hidden_size and another RMSNorm; the merger:
# a linear, a LayerNorm and a gated MLP of intermediate_size.
_GLM4V_TOWER = Tower(
    mlp="out_hidden_size",
    norm_bias=False,
    qkv_bias="attention_bias",
    o_bias=False,
    gated_mlp=True,
    mlp_bias=False,
    head=(Piece("table", ("grid", "width")), linear("patch", "width")),
    tail=(norm(bias=False), linear("merged", "out_hidden_size"), norm(bias=False)),
    projector=(
        linear("out_hidden_size", "out_hidden_size", bias=False),
        norm("out_hidden_size"),
        Piece("gated_mlp", ("out_hidden_size", "intermediate_size"), bias=False),
    ),
    defaults=MappingProxyType(
        {
            "depth": 24,
            "hidden_size": 1536,
            "attention_bias": False,
            "in_channels": 3,
            "image_size": 336,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "out_hidden_size": 4096,
            "intermediate_size": 13696,
        }
    ),
)

# Kimi K2.5 (modeling_kimi_k25.py): MoonViT, a Conv2d patch embedding with bias and a learned
# height × width position table (the time axis a fixed sinusoid), LayerNorm blocks with biases
# everywhere, a final LayerNorm; the projector: a LayerNorm of the top level's
# projection_hidden_size, two linears from the merge_kernel_size patches to the text model's width.
_KIMI_K25_TOWER = Tower(
    depth="num_hidden_layers",
    merge="merge_kernel_size",
    temporal=None,
    head=(linear("patch", "width"), Piece("table", ("pos_emb_height", "pos_emb_width", "width"))),
    tail=(norm(),),
    projector=(norm("top.projection_hidden_size"), linear("merged", "merged"), linear("merged", "text")),
    defaults=MappingProxyType(
        {
            "num_hidden_layers": 27,
            "hidden_size": 1152,
            "intermediate_size": 4304,
            "in_channels": 3,  # Conv2d(3, ...): no config field
            "patch_size": 14,
            "pos_emb_height": 64,
            "pos_emb_width": 64,
            "merge_kernel_size": [2, 2],
            "projection_hidden_size": 1152,
        }
    ),
)

# Pixtral (modeling_pixtral.py) under Mistral 3's projector (modeling_mistral3.py; Mistral Large 3's
# the same): a Conv2d patch embedding without bias, an RMSNorm, RMSNorm blocks of q/k/v/o and a
# gated MLP without biases; the projector: an RMSNorm, the patch merger (merge² patches -> width, the
# top level's spatial_merge_size) and two linears to the text model's width, biased by the top
# level's multimodal_projector_bias.
_PIXTRAL_TOWER = Tower(
    depth="num_hidden_layers",
    merge="top.spatial_merge_size",
    channels="num_channels",
    temporal=None,
    norm_bias=False,
    qkv_bias=False,
    o_bias=False,
    gated_mlp=True,
    mlp_bias=False,
    head=(linear("patch", "width", bias=False), norm(bias=False)),
    projector=(
        norm(bias=False),
        linear("merged", "width", bias=False),
        linear("features", "text", bias="top.multimodal_projector_bias"),
        linear("text", "text", bias="top.multimodal_projector_bias"),
    ),
    defaults=MappingProxyType(
        {
            "num_hidden_layers": 24,
            "hidden_size": 1024,
            "intermediate_size": 4096,
            "num_channels": 3,
            "patch_size": 16,
            "spatial_merge_size": 2,
            "multimodal_projector_bias": False,
        }
    ),
)

# SigLIP (modeling_siglip.py: SiglipVisionTransformer): a Conv2d patch embedding with bias, a learned
# table of the image's grid, LayerNorm blocks with biases everywhere, a final LayerNorm, and (with
# vision_use_head) the attention-pooling head: a probe, an nn.MultiheadAttention, a LayerNorm and an MLP.
_SIGLIP_HEAD = (
    Piece("table", ("width",), when="vision_use_head"),
    linear("width", "width", times=None, when="vision_use_head"),
    linear("width", "width", when="vision_use_head"),
    linear("width", "width", when="vision_use_head"),
    linear("width", "width", when="vision_use_head"),
    norm(when="vision_use_head"),
    linear("width", "mlp", when="vision_use_head"),
    linear("mlp", "width", when="vision_use_head"),
)
_SIGLIP_TOWER = Tower(
    depth="num_hidden_layers",
    channels="num_channels",
    temporal=None,
    head=(linear("patch", "width"), Piece("table", ("grid", "width"))),
    tail=(norm(), *_SIGLIP_HEAD),
    defaults=MappingProxyType(
        {
            "num_hidden_layers": 12,
            "hidden_size": 768,
            "intermediate_size": 3072,
            "num_channels": 3,
            "image_size": 224,
            "patch_size": 16,
            "vision_use_head": True,
        }
    ),
)
# Gemma 3 (modeling_gemma3.py: Gemma3MultiModalProjector): a weight of vision width × text width and
# a Gemma RMSNorm of the vision width.
_GEMMA3_TOWER = replace(_SIGLIP_TOWER, projector=(linear("width", "text", bias=False), norm(bias=False)))
# LLaVA (modeling_llava.py) over CLIP's vision model (modeling_clip.py: CLIPVisionTransformer): a
# class embedding, a Conv2d patch embedding without bias, a table of the grid and the class token,
# LayerNorms before and after the blocks; the projector: two linears to the text model's width,
# biased by the top level's multimodal_projector_bias.
_LLAVA_TOWER = replace(
    _SIGLIP_TOWER,
    head=(
        Piece("table", ("width",)),
        linear("patch", "width", bias=False),
        Piece("table", ("grid_cls", "width")),
        norm(),
    ),
    tail=(norm(),),
    projector=(
        linear("features", "text", bias="top.multimodal_projector_bias"),
        linear("text", "text", bias="top.multimodal_projector_bias"),
    ),
    defaults=MappingProxyType(
        {
            "num_hidden_layers": 24,
            "hidden_size": 1024,
            "intermediate_size": 4096,
            "num_channels": 3,
            "image_size": 336,
            "patch_size": 14,
            "multimodal_projector_bias": True,
        }
    ),
)
# LFM2-VL (modeling_lfm2_vl.py) over SigLIP 2's NaFlex vision model (modeling_siglip2.py): the patch
# embedding a Linear with bias, a table of num_patches; the projector: a LayerNorm of the merged
# width (projector_use_layernorm), two linears through projector_hidden_size (projector_bias), all
# switches and the downsample_factor of the top level.
_LFM2_VL_TOWER = replace(
    _SIGLIP_TOWER,
    merge="top.downsample_factor",
    head=(linear("patch", "width"), Piece("table", ("num_patches", "width"))),
    projector=(
        norm("merged", when="top.projector_use_layernorm"),
        linear("merged", "top.projector_hidden_size", bias="top.projector_bias"),
        linear("top.projector_hidden_size", "text", bias="top.projector_bias"),
    ),
    defaults=MappingProxyType(
        {
            **_SIGLIP_TOWER.defaults,
            "num_patches": 256,
            "downsample_factor": 2,
            "projector_use_layernorm": True,
            "projector_hidden_size": 2560,
            "projector_bias": True,
        }
    ),
)

# Qwen3.5 (modeling_qwen3_5.py): Qwen3-VL's tower and merger without the deepstack mergers.
_QWEN3_5_TOWER = replace(
    _QWEN3_VL_TOWER,
    projector=_QWEN3_VL_TOWER.projector[:3],
    defaults=MappingProxyType(
        {k: v for k, v in _QWEN3_VL_TOWER.defaults.items() if k != "deepstack_visual_indexes"}
    ),
)
# Llama 4 (modeling_llama4.py: Llama4VisionModel): a class embedding, a patch embedding (a Linear
# without bias), a table of the grid and the class token, LayerNorms before and after LayerNorm
# blocks with biases everywhere, the pixel-shuffle adapter (intermediate_size -> projector_input_dim,
# projector_output_dim², no biases); the projector: one linear of vision_output_dim to the text width.
_LLAMA4_TOWER = replace(
    _SIGLIP_TOWER,
    head=(
        Piece("table", ("width",)),
        Piece("table", ("grid_cls", "width")),
        linear("patch", "width", bias=False),
        norm(),
    ),
    tail=(
        norm(),
        linear("intermediate_size", "projector_input_dim", bias=False),
        linear("projector_output_dim", "projector_output_dim", bias=False),
    ),
    projector=(linear("vision_output_dim", "text", bias=False),),
    defaults=MappingProxyType(
        {
            "num_hidden_layers": 34,
            "hidden_size": 768,
            "intermediate_size": 5632,
            "num_channels": 3,
            "image_size": 448,
            "patch_size": 14,
            "vision_output_dim": 7680,
            "projector_input_dim": 4096,
            "projector_output_dim": 4096,
        }
    ),
)

# LLaVA-NeXT (modeling_llava_next.py): LLaVA's, and a learned image_newline of the text width
# (counted with the projector: it is trained with it).
_LLAVA_NEXT_TOWER = replace(_LLAVA_TOWER, projector=(*_LLAVA_TOWER.projector, Piece("table", ("text",))))
# LLaVA-OneVision (modeling_llava_onevision.py): the same projector and newline over SigLIP (without
# its pooling head by LlavaOnevisionConfig's default).
_LLAVA_ONEVISION_TOWER = replace(
    _SIGLIP_TOWER,
    projector=_LLAVA_NEXT_TOWER.projector,
    defaults=MappingProxyType(
        {
            "num_hidden_layers": 26,
            "hidden_size": 1152,
            "intermediate_size": 4304,
            "num_channels": 3,
            "image_size": 384,
            "patch_size": 14,
            "vision_use_head": False,
            "multimodal_projector_bias": True,
        }
    ),
)
# VipLLaVA (modeling_vipllava.py): a LayerNorm over the vision_feature_layer list's concatenated
# layers before the two linears (always biased).
_VIPLLAVA_TOWER = replace(
    _LLAVA_TOWER,
    projector=(norm("features"), linear("features", "text"), linear("text", "text")),
    defaults=MappingProxyType({**_LLAVA_TOWER.defaults, "vision_feature_layer": [-2, -5, -8, -11, 6]}),
)
# Video-LLaVA (modeling_video_llava.py): two CLIP towers of the one vision_config, for images and
# for videos, one projector.
_VIDEO_LLAVA_TOWERS = (
    replace(_LLAVA_TOWER, defaults=MappingProxyType({**_LLAVA_TOWER.defaults, "image_size": 224})),
    replace(
        _LLAVA_TOWER, projector=(), defaults=MappingProxyType({**_LLAVA_TOWER.defaults, "image_size": 224})
    ),
)

# Cohere 2 Vision (modeling_cohere2_vision.py): SigLIP; the projector: a linear from the
# downsample_factor² patches to alignment_intermediate_size, a SwiGLU halving it, a linear to the text
# width, both biased (the top level's fields).
_COHERE2_VISION_TOWER = replace(
    _SIGLIP_TOWER,
    merge="top.downsample_factor",
    projector=(
        linear("merged", "top.alignment_intermediate_size"),
        linear("half.top.alignment_intermediate_size", "text"),
    ),
    defaults=MappingProxyType(
        {**_SIGLIP_TOWER.defaults, "downsample_factor": 2, "alignment_intermediate_size": 36864}
    ),
)

_LIKE = {f.model_type: f for f in FAMILIES}
# The text models of the Qwen-VL and GLM-4V repos: their text families' layers under the
# multimodal RoPE (3-D positions: no parameter more); not measured on their own (mm: the
# activations of their text families are not claimed for them, see benchmarks/ACCURACY.md).
_MM_TEXT = {
    "qwen2_vl_text": "qwen2",
    "qwen2_5_vl_text": "qwen2",
    "qwen3_vl_text": "qwen3",
    "qwen3_vl_moe_text": "qwen3_moe",
    "glm4v_text": "glm4",
    "glm4v_moe_text": "glm4_moe",
}
# Glm4vMoeTextConfig: attention biases on by default, no QK-norm; the correction bias a buffer.
_MM_TEXT_CHANGES: Mapping[str, Mapping[str, object]] = {
    "glm4v_moe_text": {
        "defaults": MappingProxyType({"attention_bias": True}),
        "qk_norm": False,
        "experts": replace(_DEEPSEEK_EXPERTS, correction_bias=False),
        "small": MappingProxyType({}),
    },
}
FAMILIES += tuple(
    replace(
        _LIKE[like],
        model_type=text,
        also=(),
        preset_prefixes=(),
        activations_measured=False,
        standalone=False,
        **_MM_TEXT_CHANGES.get(text, {}),  # type: ignore[arg-type]
    )
    for text, like in _MM_TEXT.items()
)
# Mistral Small 4 (mistral4): DeepSeek-V3's MLA and MoE. (Mistral Large 3, mistral_large4, adds
# layers sharing keys and values and layers without RoPE to its indexer: not declared.)
FAMILIES += (
    # Built by transformers 5.24's image-text-to-text mapping only (no AutoModelForCausalLM entry).
    replace(
        _LIKE["deepseek_v3"],
        model_type="mistral4",
        also=(),
        preset_prefixes=(),
        activations_measured=False,
        standalone=False,
    ),
)
_MM_WRAPPERS: tuple[Multimodal, ...] = (
    Multimodal("qwen2_vl", "qwen2_vl_text", towers=(_QWEN2_VL_TOWER,), tie_either=True, flat_text=True),
    Multimodal("qwen2_5_vl", "qwen2_5_vl_text", towers=(_QWEN2_5_VL_TOWER,), tie_either=True, flat_text=True),
    Multimodal("qwen3_vl", "qwen3_vl_text", towers=(_QWEN3_VL_TOWER,)),
    # Qwen3VLMoeForConditionalGeneration ties by the top-level config (its text config says True).
    Multimodal("qwen3_vl_moe", "qwen3_vl_moe_text", tie_at_top=True, towers=(_QWEN3_VL_TOWER,)),
    Multimodal("glm4v", "glm4v_text", towers=(_GLM4V_TOWER,), tie_either=True),
    Multimodal("glm4v_moe", "glm4v_moe_text", towers=(_GLM4V_TOWER,), tie_either=True),
    Multimodal("glm46v", "glm4v_text", towers=(_GLM4V_TOWER,)),
    Multimodal("llava", "llama", tie_either=True, towers=(_LLAVA_TOWER,)),
    Multimodal("lfm2_vl", "lfm2", towers=(_LFM2_VL_TOWER,)),
    Multimodal(
        "cohere2_vision", "cohere2", tie_at_top=True, tied_by_default=True, towers=(_COHERE2_VISION_TOWER,)
    ),
    Multimodal("llava_next", "llama", tie_either=True, towers=(_LLAVA_NEXT_TOWER,)),
    Multimodal("llava_onevision", "qwen2", tie_either=True, towers=(_LLAVA_ONEVISION_TOWER,)),
    Multimodal("vipllava", "llama", tie_either=True, towers=(_VIPLLAVA_TOWER,)),
    Multimodal("video_llava", "llama", tie_either=True, towers=_VIDEO_LLAVA_TOWERS),
    # Kimi K2.5: Kimi K2's text model (DeepSeek-V3's classes), tied by the top level (True there).
    Multimodal("kimi_k25", "deepseek_v3", tie_at_top=True, tied_by_default=True, towers=(_KIMI_K25_TOWER,)),
)
# The towers of wrappers declared above (their Tower is declared here, after them).
_TOWERS_OF_DECLARED: Mapping[str, tuple[Tower, ...]] = {
    "mistral3": (_PIXTRAL_TOWER,),
    "gemma3": (_GEMMA3_TOWER,),
    "llama4": (_LLAMA4_TOWER,),
    "qwen3_5": (_QWEN3_5_TOWER,),
    "qwen3_5_moe": (_QWEN3_5_TOWER,),
}
_MM_WRAPPERS += tuple(
    replace(m, towers=_TOWERS_OF_DECLARED[m.model_type])
    for m in MULTIMODAL
    if m.model_type in _TOWERS_OF_DECLARED
)
MULTIMODAL = tuple(m for m in MULTIMODAL if m.model_type not in _TOWERS_OF_DECLARED) + _MM_WRAPPERS
__all__ += ["Piece", "Tower"]

# --- Gemma 4 and Mistral Large 4 (issue 20) -----------------------------------------------------------------
_LIKE = {f.model_type: f for f in FAMILIES}
# Gemma 4 (modeling_gemma4.py: Gemma4TextModel): Gemma 3's layers (four norms, QK-norm of the head
# width, a weightless v_norm; 5 sliding : 1 full) whose full layers have a head width of their own
# (GlobalAttention), Gemma 3n's per-layer inputs and shared keys and values without AltUp or LAuReL,
# and with enable_moe_block a MoE block beside the dense MLP in every layer (counted as one shared
# expert of intermediate_size): experts in one 3-D gate_up_proj, a router with learned scales.
# Its activations are not measured: its answers ask for `activations`.
_GEMMA4_TEXT = replace(
    _LIKE["gemma3_text"],
    model_type="gemma4_text",
    activations_measured=False,
    preset_prefixes=("gemma-4",),
    sliding=SlidingLayers(512, full_every=(None, 6)),
    per_layer=PerLayer(widths=False, altup=None, laurel=None, input_optional=True),
    global_attention=GlobalAttention(),
    layer_scalar=True,
    experts=Experts(
        count=("num_experts",),
        active="top_k_experts",
        shared_width="intermediate_size",
        fused_gate_up=True,
        enabled_by="enable_moe_block",
        router_scales=True,
        norms=3,
        linear_router=True,  # Gemma4TextRouter.proj, an nn.Linear peft adapts
    ),
    # Gemma4TextConfig's defaults of the fields read (a config.json may leave them out).
    defaults=MappingProxyType(
        {
            "head_dim": 256,
            "sliding_window": 512,
            "hidden_size_per_layer_input": 256,
            "vocab_size_per_layer_input": 262_144,
            "num_kv_shared_layers": 0,
        }
    ),
    # Its config class wants each kind of layer sharing keys and values among the earlier layers too.
    small=MappingProxyType(
        {
            "num_hidden_layers": 4,
            "layer_types": ["sliding_attention", "full_attention"] * 2,
            "global_head_dim": 96,
            # Its per-layer embedding takes every token id (Gemma 3n's masks the larger ones).
            "vocab_size_per_layer_input": 1000,
        }
    ),
)
# Mistral Large 4 (modeling_mistral_large4.py): DeepSeek-V3's MLA without a q latent (q_proj), layers
# without RoPE and layers sharing an earlier layer's latent (MlaVariants), GLM-5's indexer in the layers
# indexer_types calls "full" but reading the hidden state, a learned softmax scale and bias per head,
# the first first_k_dense_replace layers dense (or mlp_layer_types), then routed experts in one 3-D
# gate_up_proj with a plain router (no correction bias) and n_shared_experts shared.
_MISTRAL_LARGE4_TEXT = Family(
    "mistral_large4_text",
    mla=True,
    names=MappingProxyType({"q_lora_rank": ()}),  # no q latent, whatever the config writes
    experts=Experts(
        count=("n_routed_experts", "num_local_experts", "num_experts"),
        shared="n_shared_experts",
        kinds=("mlp_layer_types", "dense"),
        first_dense="first_k_dense_replace",
        first_dense_unless_listed=True,
        fused_gate_up=True,
    ),
    indexer=Indexer(layers=("indexer_types", "full"), query_from_hidden=True),
    mla_variants=MlaVariants(),
    softmax_scaling=True,
    learned_rope_scale=True,
    standalone=False,
    defaults=MappingProxyType(
        {
            "n_routed_experts": 128,
            "n_shared_experts": 1,
            "num_experts_per_tok": 4,
            "moe_intermediate_size": 6144,
            "first_k_dense_replace": 1,
            "kv_lora_rank": 512,
            "qk_rope_head_dim": 64,
            "qk_nope_head_dim": 64,
            "v_head_dim": 128,
            "index_n_heads": 32,
            "index_head_dim": 128,
        }
    ),
)
# Its vision tower: Pixtral with MistralLarge4Config's vision defaults, under Mistral 3's projector.
_MISTRAL_LARGE4_TOWER = replace(
    _PIXTRAL_TOWER,
    defaults=MappingProxyType(
        {
            **_PIXTRAL_TOWER.defaults,
            "num_hidden_layers": 30,
            "hidden_size": 2048,
            "intermediate_size": 6144,
            "patch_size": 14,
        }
    ),
)
_GEMMA4_AND_MISTRAL_LARGE4 = (_GEMMA4_TEXT, _MISTRAL_LARGE4_TEXT)
_DECL_MULTIMODAL = (
    # Gemma 4's vision and audio towers are not declared: counted from the repo's tensors.
    Multimodal("gemma4", "gemma4_text"),
    Multimodal("mistral_large4", "mistral_large4_text", tie_at_top=True, towers=(_MISTRAL_LARGE4_TOWER,)),
)
FAMILIES += _GEMMA4_AND_MISTRAL_LARGE4
MULTIMODAL += _DECL_MULTIMODAL

# --- Classic causal LMs, counts only (issue 20) -------------------------------------------------------------
# Their names for the common fields (the config classes' attribute_map); the K/V heads are the query
# heads (no grouped-query attention), head_dim is hidden / heads whatever a config writes.
_GPT_NAMES = MappingProxyType(
    {
        "hidden_size": ("n_embd", "hidden_size"),
        "num_hidden_layers": ("n_layer", "num_hidden_layers"),
        "num_attention_heads": ("n_head", "num_attention_heads"),
        "num_key_value_heads": ("n_head", "num_attention_heads"),
        "intermediate_size": ("n_inner",),
        "head_dim": (),
        "n_positions": ("n_positions", "max_position_embeddings"),
    }
)
_GPT_SMALL = MappingProxyType({"n_inner": 688})
# GPT-J's rotary width (64 by default) within the small shape's heads of 32.
_GPTJ_SMALL = MappingProxyType({"n_inner": 688, "rotary_dim": 16})
_GPTJ = Family(
    # GPT-J (modeling_gptj.py): q/k/v/out_proj without biases, one LayerNorm a layer before the parallel
    # attention and MLP (fc_in, fc_out with biases, 4h when n_inner is null), an LM head with a bias.
    "gptj",
    names=_GPT_NAMES,
    qkv_bias=False,
    o_bias=False,
    norms_per_layer=1,
    norm_parameters="weight_bias",
    gated_mlp=False,
    mlp_bias=True,
    lm_head_bias=True,
    mlp_ratio=4,
    attention_modules=MappingProxyType({"o_proj": "out_proj"}),
    small=_GPTJ_SMALL,
)
# GPT-2 (modeling_gpt2.py): a learned position table (wpe, n_positions rows), LayerNorms with
# biases, the fused c_attn (q, k, v) and c_proj with biases, a plain MLP of n_inner (4h) with biases,
# tied. Its cross-attention (add_cross_attention) is not modelled.
_GPT2 = Family(
    "gpt2",
    names=_GPT_NAMES,
    tied_by_default=True,
    qkv_bias=True,
    o_bias=True,
    fused_qkv=True,
    norm_parameters="weight_bias",
    gated_mlp=False,
    mlp_bias=True,
    mlp_ratio=4,
    position_table=("n_positions", 0),
    attention_modules=MappingProxyType({"qkv_proj": "c_attn", "o_proj": "c_proj"}),
    module_names=MappingProxyType({"down_proj": "c_proj"}),  # GPT2MLP's c_proj
    unsupported=("add_cross_attention",),
    small=_GPT_SMALL,
)
_CLASSIC: tuple[Family, ...] = (
    _GPT2,
    _GPTJ,
    # CodeGen (modeling_codegen.py): GPT-J's layer with q, k and v in one qkv_proj.
    replace(
        _GPTJ,
        model_type="codegen",
        fused_qkv=True,
        attention_modules=MappingProxyType({"qkv_proj": "qkv_proj", "o_proj": "out_proj"}),
    ),
    # GPT-Neo (modeling_gpt_neo.py): a learned position table, q/k/v without and out_proj with a bias,
    # two LayerNorms a layer, a plain MLP (c_fc, c_proj) of intermediate_size (4h when null), tied; its
    # local and global layers differ in their mask only.
    Family(
        "gpt_neo",
        names=MappingProxyType(
            {
                "num_hidden_layers": ("num_layers", "num_hidden_layers"),
                "num_attention_heads": ("num_heads", "num_attention_heads"),
                "num_key_value_heads": ("num_heads", "num_attention_heads"),
                "head_dim": (),
            }
        ),
        tied_by_default=True,
        qkv_bias=False,
        o_bias=True,
        norm_parameters="weight_bias",
        gated_mlp=False,
        mlp_bias=True,
        mlp_ratio=4,
        position_table=("max_position_embeddings", 0),
        attention_modules=MappingProxyType({"o_proj": "out_proj"}),
        runs_sdpa=False,  # transformers 5.24 runs GPT-Neo (and BLOOM) eager only
        small=MappingProxyType(
            {"num_hidden_layers": 2, "attention_types": [[["global", "local"], 1]], "intermediate_size": 688}
        ),
    ),
    # OPT (modeling_opt.py): a learned position table of max_position_embeddings + 2 rows, q/k/v/out_proj
    # and fc1/fc2 with biases by enable_bias, two LayerNorms a layer and a final one, tied. Its
    # projections around the layers (word_embed_proj_dim), post-norm layers and LayerNorms without
    # parameters are not modelled: a config with them is refused.
    Family(
        "opt",
        names=MappingProxyType(
            {
                "intermediate_size": ("ffn_dim",),
                "num_key_value_heads": ("num_attention_heads",),
                "head_dim": (),
            }
        ),
        defaults=MappingProxyType({"enable_bias": True}),
        tied_by_default=True,
        qkv_bias="enable_bias",
        o_bias="enable_bias",
        mlp_bias="enable_bias",
        norm_parameters="weight_bias",
        gated_mlp=False,
        position_table=("max_position_embeddings", 2),
        attention_modules=MappingProxyType({"o_proj": "out_proj"}),
        unsupported=("_remove_final_layer_norm",),
        built_as=MappingProxyType(
            {
                "word_embed_proj_dim": "hidden_size",
                "do_layer_norm_before": 1,
                "layer_norm_elementwise_affine": 1,
            }
        ),
        small=MappingProxyType({"ffn_dim": 688, "num_hidden_layers": 2}),
    ),
    # BLOOM (modeling_bloom.py): a LayerNorm of the embeddings, ALiBi (no position table), the fused
    # query_key_value and dense with biases, a plain MLP of 4h with biases, LayerNorms with biases, tied.
    Family(
        "bloom",
        names=MappingProxyType(
            {
                "num_hidden_layers": ("n_layer", "num_hidden_layers"),
                "num_attention_heads": ("n_head", "num_attention_heads"),
                "num_key_value_heads": ("n_head", "num_attention_heads"),
                "intermediate_size": (),
                "head_dim": (),
            }
        ),
        tied_by_default=True,
        qkv_bias=True,
        o_bias=True,
        fused_qkv=True,
        norm_parameters="weight_bias",
        gated_mlp=False,
        mlp_bias=True,
        mlp_ratio=4,
        embedding_layernorm=True,
        runs_sdpa=False,
        attention_modules=MappingProxyType({"qkv_proj": "query_key_value", "o_proj": "dense"}),
        small=MappingProxyType({"num_hidden_layers": 2}),
    ),
    # GPT-BigCode (StarCoder, SantaCoder; modeling_gpt_bigcode.py): GPT-2's layer with one K/V head for
    # all queries by multi_query (on by default) in its c_attn.
    replace(
        _GPT2,
        model_type="gpt_bigcode",
        multi_query="multi_query",
        defaults=MappingProxyType({"multi_query": True}),
    ),
    # Falcon (modeling_falcon.py): the fused query_key_value and dense, a plain MLP of ffn_hidden_size
    # (4h when null), their biases by bias, LayerNorms with biases, RoPE or ALiBi (no parameters), tied;
    # its K/V heads and norms a layer by FalconLayout.
    Family(
        "falcon",
        names=MappingProxyType(
            {
                "num_key_value_heads": ("num_kv_heads",),
                "intermediate_size": ("ffn_hidden_size",),
                "head_dim": (),
            }
        ),
        tied_by_default=True,
        qkv_bias="bias",
        o_bias="bias",
        mlp_bias="bias",
        fused_qkv=True,
        norm_parameters="weight_bias",
        gated_mlp=False,
        mlp_ratio=4,
        falcon_layout=FalconLayout(),
        attention_modules=MappingProxyType({"qkv_proj": "query_key_value", "o_proj": "dense"}),
        small=MappingProxyType({"num_hidden_layers": 2, "ffn_hidden_size": 688}),
    ),
)
FAMILIES += _CLASSIC

# Gemma 4 unified (modeling_gemma4_unified.py): Gemma 4's text layers without per-layer inputs or a MoE
# block, a 1024-token window by default; its vision and audio towers from the repo's tensors.
_GEMMA4_UNIFIED_TEXT = replace(
    _GEMMA4_TEXT,
    model_type="gemma4_unified_text",
    preset_prefixes=(),
    experts=None,
    per_layer=PerLayer(widths=False, altup=None, laurel=None, input_optional=True, inputs=False),
    defaults=MappingProxyType({"head_dim": 256, "sliding_window": 1024, "num_kv_shared_layers": 0}),
)
FAMILIES += (_GEMMA4_UNIFIED_TEXT,)
MULTIMODAL += (Multimodal("gemma4_unified", "gemma4_unified_text"),)

# --- More causal LMs, counts only (issue 20) ----------------------------------------------------------------
_MORE_CAUSAL_LMS: tuple[Family, ...] = (
    # MPT (modeling_mpt.py): the fused Wqkv and out_proj, a plain GELU MLP of 4h (up_proj, down_proj),
    # no biases anywhere, LayerNorms with their bias set to None, ALiBi (no position table), tied.
    # transformers builds 4h and no biases whatever expansion_ratio and no_bias say: a config saying
    # otherwise is refused, not counted as another model.
    Family(
        "mpt",
        names=MappingProxyType(
            {
                "hidden_size": ("d_model", "hidden_size"),
                "num_hidden_layers": ("n_layers", "num_hidden_layers"),
                "num_attention_heads": ("n_heads", "num_attention_heads"),
                "num_key_value_heads": ("n_heads", "num_attention_heads"),
                "intermediate_size": (),
                "head_dim": (),
            }
        ),
        tied_by_default=True,
        qkv_bias=False,
        o_bias=False,
        fused_qkv=True,
        norm_parameters="weight",
        gated_mlp=False,
        mlp_bias=False,
        mlp_ratio=4,
        attention_modules=MappingProxyType({"qkv_proj": "Wqkv", "o_proj": "out_proj"}),
        built_as=MappingProxyType({"no_bias": 1, "expansion_ratio": 4}),
        runs_sdpa=False,  # transformers 5.24 runs MPT eager only (its ALiBi)
        small=MappingProxyType({"n_layers": 2}),
    ),
    # Persimmon (modeling_persimmon.py): the fused query_key_value and dense with biases, LayerNorms of
    # head_dim with biases on queries and keys (qk_layernorm, on by default), a plain MLP
    # (dense_h_to_4h, dense_4h_to_h) with biases, LayerNorms with biases, untied; no grouped-query
    # attention, partial rotary (no parameters).
    Family(
        "persimmon",
        names=MappingProxyType({"num_key_value_heads": ("num_attention_heads",), "head_dim": ()}),
        qkv_bias=True,
        o_bias=True,
        fused_qkv=True,
        qk_norm="qk_layernorm",
        qk_norm_bias=True,
        defaults=MappingProxyType({"qk_layernorm": True}),
        norm_parameters="weight_bias",
        gated_mlp=False,
        mlp_bias=True,
        attention_modules=MappingProxyType({"qkv_proj": "query_key_value", "o_proj": "dense"}),
        small=MappingProxyType({"num_hidden_layers": 2}),
    ),
    # JetMoE (modeling_jetmoe.py): every layer a mixture of attention (attention_experts: per expert a
    # query and an output projection of kv_heads × kv_channels, a shared kv_proj, a router, an output
    # bias) and a MoE of gated experts of intermediate_size (a 3-D input_linear of 2f and output_linear,
    # a router, an output bias); RMSNorms, tied. JetMoeConfig sets num_attention_heads to
    # num_key_value_heads × num_experts_per_tok.
    Family(
        "jetmoe",
        names=MappingProxyType(
            {
                "num_attention_heads": ("num_attention_heads", "num_key_value_heads"),
                "head_dim": ("kv_channels", "head_dim"),
            }
        ),
        defaults=MappingProxyType(
            {"kv_channels": 128, "num_key_value_heads": 16, "num_local_experts": 8, "num_experts_per_tok": 2}
        ),
        tied_by_default=True,
        qkv_bias=False,
        o_bias=False,
        attention_experts=True,
        # Both routers are nn.Linear (JetMoeTopKGating.layer), which peft adapts; the 3-D experts not.
        experts=Experts(count=("num_local_experts",), width=None, fused_gate_up=True, linear_router=True),
        # The counter's kv_proj, named here so that lora_targets:attention adapts it.
        attention_modules=MappingProxyType({"k_proj": "kv_proj"}),
        small=MappingProxyType({"num_hidden_layers": 2, "kv_channels": 32}),
    ),
    # Zamba2 (modeling_zamba2.py): Mamba-2 blocks (one RMSNorm each, no MLP; in_proj and out_proj
    # biases by add_bias_linear) and, on its hybrid layers, the shared transformer blocks of
    # SharedBlocks; tied. Zamba2Config requires num_hidden_layers to be its list's length.
    Family(
        "zamba2",
        names=MappingProxyType({"head_dim": ()}),
        tied_by_default=True,
        qkv_bias=False,
        o_bias=False,
        norms_per_layer=1,
        mlp_ratio=4,  # Zamba2Config: intermediate_size null is 4h
        layer_kinds=LayerKinds(
            fields=("layers_block_type", "layer_types"),
            words=MappingProxyType(
                {
                    "linear_attention": ("mamba", "none"),
                    "mamba": ("mamba", "none"),
                    "hybrid": ("mamba", "none"),
                }
            ),
            default="mamba",
            default_mlp="none",
        ),
        mamba=Mamba(
            heads="n_mamba_heads",
            head_dim="mamba_headdim",
            groups="mamba_ngroups",
            state="mamba_d_state",
            conv="mamba_d_conv",
            expand="mamba_expand",
            conv_bias=True,  # Zamba2MambaMixer's conv1d has a bias whatever use_conv_bias says
            in_bias="add_bias_linear",
            out_bias="add_bias_linear",
        ),
        shared_blocks=SharedBlocks(),
        defaults=MappingProxyType(
            {
                "num_hidden_layers": 54,
                "n_mamba_heads": 8,
                "mamba_ngroups": 1,
                "mamba_d_state": 64,
                "mamba_d_conv": 4,
                "mamba_expand": 2,
                "num_mem_blocks": 1,
                "adapter_rank": 128,
            }
        ),
        small=MappingProxyType(
            {
                "num_hidden_layers": 3,
                "layers_block_type": ["linear_attention", "hybrid", "hybrid"],
                "num_mem_blocks": 2,
                "adapter_rank": 8,
                "use_shared_attention_adapter": True,
                # Zamba2Attention's q/k/v adapters are 2h wide: with fewer K/V heads its forward fails.
                "num_key_value_heads": 8,
                "n_mamba_heads": 8,
                "mamba_d_state": 16,
            }
        ),
    ),
)
FAMILIES += _MORE_CAUSAL_LMS

_BY_TYPE.update({name: f for f in FAMILIES for name in (f.model_type, *f.also)})
_MULTIMODAL.update({m.model_type: m for m in MULTIMODAL})
