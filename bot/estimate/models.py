"""Model presets: architectures kept as data (``bot/data/models.toml``) and what follows from them.

The parameter count is summed from the architecture of a decoder-only transformer as the Hugging
Face ``transformers`` implementations build it (their state dicts: Llama, Llama 4, Mistral, Mixtral,
Qwen2/Qwen3/Qwen3-MoE, Gemma 2/3, Phi-3, DeepSeek-V3, GLM-4.5 MoE, gpt-oss): token embeddings,
attention (grouped-query K/V, or Multi-head Latent Attention), a gated MLP (gate, up, down), a plain
one (up, down) or a mixture of experts, the norms' weights (and LayerNorm biases), and an LM head
unless it is tied to the embeddings; which of these a family has is its declaration's
(``bot.estimate.families``), checked against transformers' own build of every declared family.
Multi-token-prediction modules (DeepSeek-V3, GLM-4.5) are recorded but not counted: ``transformers``
does not build them and the vendors' headline totals leave them out (DeepSeek-V3: "671B of the Main
Model weights and 14B of the Multi-Token Prediction (MTP) Module weights"). For a multimodal repo
(Llama 4, Gemma 3) only the text model is counted. A test holds each total to the model's published
count.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from decimal import Decimal
from functools import cache, lru_cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bot.estimate.tensors import TensorCount

KEY_PATTERN = r"^[a-z0-9][a-z0-9.-]{0,19}$"  # keys travel in a Discord custom_id: short and plain
# transformers 5.24 keeps the recurrent states of linear-attention and Mamba-2 layers in float32
# whatever the model's dtype (its torch fallbacks, and fla's and mamba-ssm's kernels, return the
# final state in fp32; measured: tests/test_hybrid_cache.py), the conv states in the model's dtype.
RECURRENT_STATE_BYTES = 4

# The mixer of one hybrid layer (issue 20, point 3): softmax attention (full or sliding), Gated
# DeltaNet linear attention (Qwen3-Next), a Mamba-2 SSM, LFM2's short convolution, Falcon-H1's
# attention and Mamba-2 side by side, or none (Nemotron-H's MLP-only blocks).
# Mamba-1 (Gu & Dao 2023: Mamba, Falcon-Mamba, Jamba's mixer) is "mamba1". Which a family's layers
# are is its declaration's (bot.estimate.families.LayerKinds).
LayerKind = Literal["attention", "linear_attention", "mamba", "conv", "attention_mamba", "none", "mamba1"]


class Architecture(BaseModel):
    """One preset's shape, as its config.json gives it (field names follow the config's where short)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str = Field(pattern=KEY_PATTERN)
    name: str
    hub_id: str | None = None  # the canonical Hugging Face repo id, e.g. "Qwen/Qwen3-32B"
    aliases: tuple[str, ...] = ()  # other names people type (another repo id, a short name)
    hidden_size: int = Field(gt=0)
    layers: int = Field(gt=0)
    attention_heads: int = Field(gt=0)
    kv_heads: int = Field(gt=0)
    head_dim: int | None = Field(default=None, gt=0)
    # The dense MLP's width (every layer of a dense model; the dense layers of a MoE model).
    intermediate_size: int = Field(gt=0)
    vocab_size: int = Field(gt=0)
    tied_embeddings: bool
    qkv_bias: bool = False
    o_bias: bool = False  # gpt-oss: a bias on the output projection as well
    qk_norm: bool = False  # Qwen3, Gemma 3, GLM-4.5: RMSNorm of head_dim on each query and key head
    # "projection": the norms span all of q and all of k instead (OLMo 2, Cohere's per-head weights).
    qk_norm_scope: Literal["head", "projection"] = "head"
    qk_norm_bias: bool = False  # decl2: Persimmon's q/k LayerNorms (weight and bias of head_dim)
    attention_sinks: bool = False  # gpt-oss: one learned logit per head and layer
    # decl2: JetMoE's mixture of attention (JetMoeMoA): this many experts, each a query projection
    # h -> kv_heads × head_dim and an output projection back, with a router h × experts and one
    # output bias h; keys and values from one shared kv_proj. Its MoE block adds one output bias h too.
    attention_experts: int = Field(default=0, ge=0)
    norms_per_layer: int = Field(default=2, ge=0)
    # What each norm over the hidden size holds (the final norm's too): a weight (RMSNorm, Cohere's
    # LayerNorm), weight and bias (LayerNorm: StarCoder 2, Phi, GPT-NeoX) or nothing (OLMo's).
    norm_parameters: Literal["weight", "weight_bias", "none"] = "weight"
    lm_head_bias: bool = False  # Phi, ERNIE 4.5 with use_bias: a bias of the vocabulary's size
    # The dense MLP (and the experts): gated gate/up/down (Shazeer 2020) or a plain up/down.
    gated_mlp: bool = True
    mlp_bias: bool = False  # biases on the dense MLP's projections
    activation_params: int = Field(default=0, ge=0)  # learned scalars of each MLP's activation (xIELU)
    # How the checkpoint stores its projections (same parameters; LoRA pairs differ): Phi-3/Phi-4
    # fuse qkv_proj and gate_up_proj; gpt-oss and Llama 4 fuse every routed expert's gate_up_proj.
    fused_qkv: bool = False
    fused_gate_up: bool = False
    fused_expert_gate_up: bool = False
    # Multi-head Latent Attention (DeepSeek-V2/V3, Kimi K2): set kv_lora_rank and the head dims.
    q_lora_rank: int | None = Field(default=None, gt=0)  # None: a plain q_proj
    kv_lora_rank: int | None = Field(default=None, gt=0)
    qk_nope_head_dim: int | None = Field(default=None, gt=0)
    qk_rope_head_dim: int | None = Field(default=None, gt=0)
    v_head_dim: int | None = Field(default=None, gt=0)
    # Mixture of experts.
    experts: int = Field(default=1, ge=1)  # routed experts per MoE layer
    experts_per_token: int = Field(default=1, ge=1)
    moe_intermediate_size: int | None = Field(
        default=None, gt=0
    )  # an expert's width; default intermediate_size
    shared_experts: int = Field(default=0, ge=0)  # one MLP of shared_experts × moe_intermediate_size
    # Qwen2-MoE: the shared MLP's own width (then shared_experts is 1), and its sigmoid gate h -> 1.
    shared_expert_intermediate_size: int | None = Field(default=None, gt=0)
    shared_expert_gate: bool = False
    mlp_only_layers: tuple[int, ...] = ()  # layers that keep a dense MLP (Qwen's mlp_only_layers)
    first_k_dense_replace: int = Field(default=0, ge=0)  # the first k layers keep a dense MLP
    interleave_moe_layer_step: int = Field(default=1, ge=1)  # MoE on layers i with (i + 1) % step == 0
    router_bias: bool = False  # gpt-oss: the router is a Linear with bias
    router_correction_bias: bool = False  # DeepSeek-V3, GLM-4.5: e_score_correction_bias per expert
    expert_bias: bool = False  # gpt-oss: biases on every expert's projections
    # Hunyuan MoE: the MoE block (router, experts, shared MLP) is built with one routed expert too.
    moe_with_one_expert: bool = False
    mtp_layers: int = Field(default=0, ge=0)  # num_nextn_predict_layers: recorded, never counted
    # Sliding-window (local) attention: changes no parameter; the activation/KV estimate may use it.
    sliding_window: int | None = Field(default=None, gt=0)
    sliding_window_layers: int = Field(default=0, ge=0)
    # Hybrid layers (issue 20, point 3): each layer's mixer (LayerKind, above); ()
    # is attention everywhere. A layer kept in no_mlp_layers has no MLP (Mamba-2's blocks,
    # Nemotron-H's mixer-only blocks, whose MLP and MoE blocks have mixer "none").
    layer_kinds: tuple[LayerKind, ...] = ()
    no_mlp_layers: tuple[int, ...] = ()
    attention_output_gate: bool = False  # Qwen3-Next, Qwen3.5: q_proj doubles to gate the output
    # Gated DeltaNet (Qwen3-Next's linear_attention layers).
    linear_key_heads: int | None = Field(default=None, gt=0)
    linear_value_heads: int | None = Field(default=None, gt=0)
    linear_key_head_dim: int | None = Field(default=None, gt=0)
    linear_value_head_dim: int | None = Field(default=None, gt=0)
    linear_conv_kernel: int | None = Field(default=None, gt=0)
    fused_linear_projections: bool = True  # in_proj_qkvz + in_proj_ba (Qwen3.5: qkv, z, b, a)
    # Kimi Delta Attention (Kimi Linear's KimiLinearDeltaAttention): q, k, v apart, low-rank forget
    # and output gates; its cached state is Gated DeltaNet's.
    linear_kda: bool = False
    # Mamba-2 (Nemotron-H, Granite 4, Falcon-H1, Bamba, Mamba-2).
    mamba_heads: int | None = Field(default=None, gt=0)
    mamba_head_dim: int | None = Field(default=None, gt=0)
    mamba_groups: int | None = Field(default=None, gt=0)
    mamba_state_size: int | None = Field(default=None, gt=0)
    mamba_conv_kernel: int | None = Field(default=None, gt=0)
    mamba_intermediate_size: int | None = Field(default=None, gt=0)
    mamba_conv_bias: bool = True
    mamba_in_bias: bool = False
    mamba_out_bias: bool = False
    mamba_gated_norm: bool = True
    # LFM2's short convolution.
    conv_kernel: int | None = Field(default=None, gt=0)
    conv_bias: bool = False
    # Mamba-1 (Mamba, Falcon-Mamba, Jamba): the inner width, state and conv kernel are the mamba_*
    # fields above (mamba_in_bias: in_proj's and out_proj's biases); dt's rank, and Jamba's norms.
    mamba_dt_rank: int | None = Field(default=None, gt=0)
    mamba_dt_norms: bool = False
    # Gemma 3n (bot.estimate.families.PerLayer): each layer's MLP width (() : intermediate_size in
    # every layer), AltUp's predictions, LAuReL's rank, the per-layer inputs' width and vocabulary,
    # and the last layers that reuse earlier layers' keys and values (of them, the sliding ones).
    intermediate_sizes: tuple[int, ...] = ()
    altup_inputs: int = Field(default=0, ge=0)
    laurel_rank: int = Field(default=0, ge=0)
    per_layer_input_size: int = Field(default=0, ge=0)
    per_layer_vocab_size: int = Field(default=0, ge=0)
    kv_shared_layers: int = Field(default=0, ge=0)
    kv_shared_sliding_layers: int = Field(default=0, ge=0)
    # act: the layers whose MLP keeps only the gate's top activations (Gemma 3n's activation sparsity).
    sparse_mlp_layers: tuple[int, ...] = ()
    # DeepSeek-V3.2's sparse-attention indexer, in every attention layer.
    index_heads: int | None = Field(default=None, gt=0)
    index_head_dim: int | None = Field(default=None, gt=0)
    index_layers: int | None = Field(default=None, ge=0)  # GLM-5: the layers with one; None: every layer
    # DeepSeek-V4 (bot.estimate.families.CompressedAttention): its grouped low-rank output projection
    # (o_groups × o_lora_rank) marks its attention (low-rank q, one shared K=V head, sinks); its
    # compressed-sparse (indexed: index_layers) and heavily-compressed layers and their compression
    # rates; the residual streams of its hyper-connections (hc_mult; 0: a plain residual).
    output_groups: int | None = Field(default=None, gt=0)
    output_group_rank: int | None = Field(default=None, gt=0)
    compressed_sparse_layers: int = Field(default=0, ge=0)
    heavily_compressed_layers: int = Field(default=0, ge=0)
    compress_rate_sparse: int | None = Field(default=None, gt=0)
    compress_rate_heavy: int | None = Field(default=None, gt=0)
    residual_streams: int = Field(default=0, ge=0)
    # decl2: its hash-routed MoE layers (mlp_layer_types' hash_moe), whose router holds a frozen
    # token -> experts table (tid2eid: vocab × experts_per_token, a persistent buffer the checkpoints
    # hold) where the others hold the correction bias.
    hash_routed_layers: int = Field(default=0, ge=0)
    # decl2: Zamba2's shared transformer blocks (bot.estimate.families.SharedBlocks): the distinct
    # blocks, the hybrid layers running one (each with its own linear), the adapter sets, their
    # rank, whether q, k and v have adapters too, and the shared MLP's biases.
    shared_blocks: int = Field(default=0, ge=0)
    shared_block_layers: int = Field(default=0, ge=0)
    shared_block_adapters: int = Field(default=0, ge=0)  # the adapter sets the distinct blocks hold
    # ... and the adapter sets the hybrid layers' block modules hold (tied or not: what peft adapts)
    shared_module_adapters: int = Field(default=0, ge=0)
    shared_adapter_rank: int = Field(default=0, ge=0)
    shared_attention_adapters: bool = False
    shared_block_bias: bool = False
    # act: each layer's kind ("sliding", "sparse", "heavy") in order, and the hyper-connections'
    # Sinkhorn iterations: what DeepSeek-V4's layers save depends on both.
    compressed_kinds: tuple[Literal["sliding", "sparse", "heavy"], ...] = ()
    sinkhorn_iterations: int = Field(default=0, ge=0)
    # decl (issue 20): Gemma 4's full-attention ("global") layers, global_layers of them, with a head
    # width and K/V heads of their own and, with attention_k_eq_v, no v_proj (the keys are the values);
    # its layers sharing keys and values get a double-wide MLP (use_double_wide_mlp); its router's
    # learned scales (an input scale of h, one per expert).
    global_layers: int = Field(default=0, ge=0)
    global_head_dim: int | None = Field(default=None, gt=0)
    global_kv_heads: int | None = Field(default=None, gt=0)
    global_k_eq_v: bool = False
    double_wide_shared_mlp: bool = False
    router_scales: bool = False
    # decl: Mistral Large 4's MLA layers without RoPE (their latent has no rope key, kv_b decompresses
    # it into the full key width), of the layers sharing an earlier layer's latent those without RoPE,
    # its indexer's queries read from the hidden state (not a q latent), and the learned per-head
    # softmax scaling of attention and indexer and the learned RoPE frequency scale.
    nope_layers: int = Field(default=0, ge=0)
    kv_shared_nope_layers: int = Field(default=0, ge=0)
    index_query_from_hidden: bool = False
    softmax_scaling: bool = False
    learned_rope_scale: bool = False
    layer_scalars: bool = False  # decl: Gemma 4's layer_scalar, a persistent buffer a layer
    position_embeddings: int = Field(default=0, ge=0)  # decl: a learned table of positions' rows (GPT-2)
    embedding_layernorm: bool = False  # decl: BLOOM's norm of the embeddings
    # A multimodal repo: the shape is the text model's; non_text_params is what the published total
    # holds besides (vision tower and projector), so count + non_text_params = published, and N (a
    # preset's total_params) counts both. projector_params is the projector's share of it, which
    # fine-tuning trains with the text model; the rest, the tower, is frozen unless train_vision.
    text_only_of_multimodal: bool = False
    non_text_params: int = Field(default=0, ge=0)
    projector_params: int = Field(default=0, ge=0)
    # Which embedding matrices the vendor's "active per token" figure holds: "both" (DeepSeek,
    # Qwen, Llama 4, Kimi), "output" (gpt-oss: the unembedding only), "none" (GLM-4.5).
    active_embeddings: Literal["both", "output", "none"] = "both"
    # The longest sequence the model was trained for (config.json's max_position_embeddings); None
    # where no second source confirmed it. A longer seq_len is still estimated, with a warning.
    context_length: int | None = Field(default=None, gt=0)
    # Releases of the preset's repo that differ from it only in the context they were trained for, by
    # the end of their repo name: Qwen3's "-2507" variants, 262,144 where the originals have 40,960.
    variant_contexts: tuple[tuple[str, int], ...] = ()
    published_params: int = Field(gt=0)
    published_active_params: int | None = Field(default=None, gt=0)
    note: str = ""
    # Where the shape comes from: a preset of models.toml, or a Hub repo's config.json read at run
    # time (bot/estimate/hub.py), which travels by its repo ID (hub_id) rather than by key.
    source: Literal["preset", "hub"] = "preset"
    hub_revision: str | None = None  # the commit the config.json was read at
    # The transformers model_type of a config this shape was read from (a Hub repo's, the text model's
    # if multimodal; a local config.json's); None for a preset, whose family follows from its key
    # (``family``).
    model_type: str | None = None
    # The Hub's stored (safetensors) total when it disagrees with the count by more than 1 %
    # (pre-quantized checkpoints store packed tensors): shown, never used.
    hub_stored_params: int | None = Field(default=None, gt=0)
    # A Hub repo's own tensors, counted from its safetensors headers (bot/estimate/tensors.py): when
    # read, their count is N, and a count from this shape that differs is shown beside it.
    tensors: TensorCount | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Architecture:
        if self.attention_heads % self.kv_heads:
            raise ValueError(f"{self.key}: attention_heads must be a multiple of kv_heads")
        mla = (self.kv_lora_rank, self.qk_nope_head_dim, self.qk_rope_head_dim, self.v_head_dim)
        if any(v is not None for v in mla) and any(v is None for v in mla):
            raise ValueError(f"{self.key}: MLA needs kv_lora_rank, qk_nope/qk_rope/v_head_dim together")
        if self.q_lora_rank is not None and self.kv_lora_rank is None and self.output_groups is None:
            raise ValueError(f"{self.key}: q_lora_rank is an MLA field")
        self._check_compressed_attention()
        if self.experts_per_token > self.experts:
            raise ValueError(f"{self.key}: experts_per_token exceeds experts")
        if self.sliding_window_layers > self.layers or (self.sliding_window_layers > 0) != (
            self.sliding_window is not None
        ):
            raise ValueError(f"{self.key}: sliding_window and sliding_window_layers go together")
        if self.shared_expert_intermediate_size is not None and self.shared_experts != 1:
            raise ValueError(f"{self.key}: a shared expert of its own width is one shared expert")
        if any(not 0 <= i < self.layers for i in self.mlp_only_layers):
            raise ValueError(f"{self.key}: mlp_only_layers names a layer the model does not have")
        if self.non_text_params and not self.text_only_of_multimodal:
            raise ValueError(f"{self.key}: non_text_params is for a multimodal repo")
        if self.projector_params > self.non_text_params:
            raise ValueError(f"{self.key}: the projector is part of non_text_params")
        if self.layer_kinds and len(self.layer_kinds) != self.layers:
            raise ValueError(f"{self.key}: layer_kinds names every layer, no more")
        if any(not 0 <= i < self.layers for i in self.no_mlp_layers):
            raise ValueError(f"{self.key}: no_mlp_layers names a layer the model does not have")
        kinds = set(self.mixer_counts)
        needs = {
            "linear_attention": (
                self.linear_key_heads,
                self.linear_value_heads,
                self.linear_key_head_dim,
                self.linear_value_head_dim,
                self.linear_conv_kernel,
            ),
            "mamba": (self.mamba_heads, self.mamba_groups, self.mamba_state_size, self.mamba_conv_kernel),
            "conv": (self.conv_kernel,),
            "mamba1": (self.mamba_state_size, self.mamba_conv_kernel, self.mamba_dt_rank),
        }
        needs["attention_mamba"] = needs["mamba"]
        for kind in kinds & set(needs):
            if any(v is None for v in needs[kind]):
                raise ValueError(f"{self.key}: {kind} layers need their dimensions")
        if self.intermediate_sizes and len(self.intermediate_sizes) != self.layers:
            raise ValueError(f"{self.key}: intermediate_sizes names every layer, no more")
        if self.kv_shared_sliding_layers > min(self.kv_shared_layers, self.sliding_window_layers) or (
            self.kv_shared_layers >= self.attention_layers > 0
        ):
            raise ValueError(f"{self.key}: the layers sharing keys and values reuse an earlier layer's")
        if (self.index_heads is None) != (self.index_head_dim is None) or (
            self.index_heads is not None and self.q_lora_rank is None and not self.index_query_from_hidden
        ):
            raise ValueError(f"{self.key}: the indexer needs index_heads, index_head_dim and q_lora_rank")
        return self

    # --- shapes -------------------------------------------------------------------------------

    @property
    def family(self) -> str | None:
        """The transformers ``model_type`` this shape is built as: the config's, or for a preset the
        one its key names (``qwen3_moe`` for a Qwen3 with experts); None for a family not listed.
        The activation formulas' family traits (``family_traits.traits_for``) and the configs
        ``vram-bot measure`` derives both read it."""
        if self.model_type:
            return self.model_type
        # The family declarations load where first needed, not at the bot's start (benchmarks/README.md).
        from bot.estimate.families import preset_family  # their preset_prefixes

        declared = preset_family(self.key, self.is_moe)
        return declared.model_type if declared is not None else None

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank is not None

    @property
    def is_moe(self) -> bool:
        return self.experts > 1 or self.moe_with_one_expert

    @property
    def attention_head_dim(self) -> int:
        return self.head_dim or self.hidden_size // self.attention_heads

    @property
    def qk_head_dim(self) -> int:
        """Width of one query/key head: nope + rope under MLA (DeepSeek-V2 paper, eq. 14-19)."""
        if self.qk_nope_head_dim is not None and self.qk_rope_head_dim is not None:
            return self.qk_nope_head_dim + self.qk_rope_head_dim
        return self.attention_head_dim

    @property
    def q_dim(self) -> int:
        return self.attention_heads * self.qk_head_dim

    @property
    def k_dim(self) -> int:
        """The key tensor's width per token (MLA: every head's nope + rope, decompressed)."""
        return self.q_dim if self.is_mla else self.kv_heads * self.attention_head_dim

    @property
    def v_dim(self) -> int:
        """The value tensor's width per token: KV heads × head_dim, or every head's v_head_dim (MLA)."""
        if self.v_head_dim is not None:
            return self.attention_heads * self.v_head_dim
        return self.kv_heads * self.attention_head_dim

    @property
    def o_dim(self) -> int:
        """Input width of the output projection: heads × v_head_dim (MLA) or heads × head_dim."""
        if self.v_head_dim is not None:
            return self.attention_heads * self.v_head_dim
        return self.q_dim

    @property
    def kv_dim(self) -> int:
        """K (and V) width of grouped-query attention; under MLA the larger of the two."""
        return max(self.k_dim, self.v_dim)

    @property
    def expert_intermediate_size(self) -> int:
        return self.moe_intermediate_size or self.intermediate_size

    @property
    def shared_intermediate_size(self) -> int:
        """The shared-expert MLP's width (DeepSeek-V3 and transformers: moe width × n_shared; Qwen2-MoE
        names its own)."""
        if self.shared_expert_intermediate_size is not None:
            return self.shared_expert_intermediate_size
        return self.expert_intermediate_size * self.shared_experts

    @property
    def moe_layers(self) -> int:
        """Layers with a mixture of experts: i ≥ first_k_dense_replace (DeepSeek-V3, GLM-4.5) and
        (i + 1) % interleave_moe_layer_step == 0 (Llama 4's moe_layers, Qwen3-MoE's decoder_sparse_step)."""
        return _moe_layers(self) if self.is_moe else 0

    @property
    def dense_layers(self) -> int:
        """Layers with a dense MLP: those with an MLP that is not a mixture of experts."""
        return self.layers - self.moe_layers - len(set(self.no_mlp_layers))

    # --- hybrid layers --------------------------------------------------------------------------

    @property
    def mixer_counts(self) -> dict[LayerKind, int]:
        """How many layers have each mixer (attention everywhere unless layer_kinds says otherwise)."""
        if not self.layer_kinds:
            return {"attention": self.layers}
        found: dict[LayerKind, int] = {}
        for kind in self.layer_kinds:
            found[kind] = found.get(kind, 0) + 1
        return found

    @property
    def attention_layers(self) -> int:
        """Layers with softmax attention (a KV cache that grows with the sequence); Falcon-H1's
        parallel attention and Mamba-2 included."""
        counts = self.mixer_counts
        return counts.get("attention", 0) + counts.get("attention_mamba", 0)

    @property
    def mamba_layers(self) -> int:
        counts = self.mixer_counts
        return counts.get("mamba", 0) + counts.get("attention_mamba", 0)

    @property
    def is_hybrid(self) -> bool:
        """Layers other than softmax attention, or DeepSeek-V3.2's indexer: what the calibrated
        activation formulas have not measured."""
        return set(self.mixer_counts) != {"attention"} or self.index_heads is not None

    @property
    def mamba_inner_size(self) -> int:
        """A Mamba-2 mixer's inner width: the config's (Falcon-H1's d_ssm, Nemotron-H's heads ×
        head_dim) or, as Mamba2Mixer takes it, 2 × hidden."""
        return self.mamba_intermediate_size or 2 * self.hidden_size

    @property
    def mamba_conv_dim(self) -> int:
        """The channels Mamba-2's conv runs over: x and the groups' B and C (Mamba2Mixer.conv_dim);
        Mamba-1's runs over x alone (MambaMixer.conv1d)."""
        if "mamba1" in self.mixer_counts:
            return self.mamba_inner_size
        return self.mamba_inner_size + 2 * (self.mamba_groups or 1) * (self.mamba_state_size or 0)

    @property
    def linear_key_dim(self) -> int:
        return (self.linear_key_heads or 0) * (self.linear_key_head_dim or 0)

    @property
    def linear_value_dim(self) -> int:
        return (self.linear_value_heads or 0) * (self.linear_value_head_dim or 0)

    @property
    def linear_conv_dim(self) -> int:
        """Gated DeltaNet's conv channels: q, k and v (Qwen3NextGatedDeltaNet.conv_dim)."""
        return 2 * self.linear_key_dim + self.linear_value_dim

    # --- what a sequence keeps between forwards (transformers' DynamicCache) --------------------

    def layer_state_bytes(self, kind: LayerKind, compute_bytes: int = 2) -> int:
        """The fixed state one sequence keeps in one layer of ``kind``, whatever its length: the
        conv state (channels × kernel taps, in the compute dtype) and the recurrent state in fp32
        (transformers 5.24's DynamicCache: LinearAttentionLayer.conv_states / recurrent_states)."""
        if kind == "linear_attention":
            # Gated DeltaNet: a k × v matrix per value head (Yang et al. 2025, eq. 1).
            conv = self.linear_conv_dim * (self.linear_conv_kernel or 0)
            matrix = (
                (self.linear_value_heads or 0)
                * (self.linear_key_head_dim or 0)
                * (self.linear_value_head_dim or 0)
            )
            return conv * compute_bytes + matrix * RECURRENT_STATE_BYTES
        if kind in ("mamba", "attention_mamba", "mamba1"):
            # Mamba-2: head_dim × state per head (Dao & Gu 2024, section 7), over x, B and C's conv;
            # Mamba-1: inner × state, its conv over x alone (Gu & Dao 2023, section 3).
            conv = self.mamba_conv_dim * (self.mamba_conv_kernel or 0)
            ssm = self.mamba_inner_size * (self.mamba_state_size or 0)  # heads × head_dim × state
            return conv * compute_bytes + ssm * RECURRENT_STATE_BYTES
        if kind == "conv":
            return self.hidden_size * (self.conv_kernel or 0) * compute_bytes  # Lfm2ShortConv's L_cache taps
        return 0

    def state_bytes_per_sequence(self, compute_bytes: int = 2) -> int:
        """Every layer's fixed state for one sequence (0 for a model of attention layers only)."""
        return sum(n * self.layer_state_bytes(kind, compute_bytes) for kind, n in self.mixer_counts.items())

    # --- linear layers: the counter's and LoRA's common list ----------------------------------

    def attention_linears(self) -> list[tuple[str, int, int]]:
        """Every linear layer of one block's attention as (module name, d_in, d_out)."""
        h = self.hidden_size
        kv_lora, rope = self.kv_lora_rank, self.qk_rope_head_dim
        if self.output_groups is not None:
            return self._compressed_attention_linears()
        if kv_lora is not None and rope is not None:
            # Multi-head Latent Attention (DeepSeek-V2 report, section 2.1; transformers
            # DeepseekV3Attention): low-rank q (or a plain q_proj), a joint compressed kv plus the
            # shared rope key, then kv_b decompresses every head's nope key and value.
            if self.q_lora_rank is None:
                q = [("q_proj", h, self.q_dim)]
            else:
                q = [("q_a_proj", h, self.q_lora_rank), ("q_b_proj", self.q_lora_rank, self.q_dim)]
            kv_b_out = self.attention_heads * (self.qk_nope_head_dim or 0) + self.v_dim
            return [
                *q,
                ("kv_a_proj_with_mqa", h, kv_lora + rope),
                ("kv_b_proj", kv_lora, kv_b_out),
                ("o_proj", self.o_dim, h),
            ]
        if self.attention_experts:  # decl2: JetMoeAttention's kv_proj; the experts are no nn.Linear
            return [("kv_proj", h, self.k_dim + self.v_dim)]
        # Qwen3-Next's gated attention: q_proj also gives a sigmoid gate per output channel.
        q_out = self.q_dim * (2 if self.attention_output_gate else 1)
        if self.fused_qkv:
            # Phi-3/Phi-4 store Q, K and V as one qkv_proj: the same parameters, one LoRA pair.
            qkv = [("qkv_proj", h, q_out + self.k_dim + self.v_dim)]
        else:
            qkv = [("q_proj", h, q_out), ("k_proj", h, self.k_dim), ("v_proj", h, self.v_dim)]
        return [*qkv, ("o_proj", self.o_dim, h)]

    def mixer_linears(self, kind: LayerKind) -> list[tuple[str, int, int]]:
        """The linear layers of one layer's mixer of ``kind`` as (module name, d_in, d_out)."""
        h = self.hidden_size
        if kind == "attention":
            return self.attention_linears()
        if kind == "attention_mamba":
            return [*self.attention_linears(), *self.mixer_linears("mamba")]
        if kind == "mamba":
            # Mamba2Mixer: in_proj gives the gate z, x, B, C and dt at once.
            inner, heads = self.mamba_inner_size, self.mamba_heads or 0
            return [("in_proj", h, inner + self.mamba_conv_dim + heads), ("out_proj", inner, h)]
        if kind == "linear_attention":
            # Qwen3NextGatedDeltaNet: q, k, v, the output gate z, and the beta and alpha heads.
            k, v, heads = self.linear_key_dim, self.linear_value_dim, self.linear_value_heads or 0
            if self.linear_kda:
                # KimiLinearDeltaAttention: the forget gate f_a -> f_b and output gate g_a -> g_b
                # through one head's width, beta per head (b_proj).
                d = self.linear_key_head_dim or 0
                return [
                    ("q_proj", h, k),
                    ("k_proj", h, k),
                    ("v_proj", h, v),
                    ("f_a_proj", h, d),
                    ("f_b_proj", d, k),
                    ("b_proj", h, heads),
                    ("g_a_proj", h, d),
                    ("g_b_proj", d, v),
                    ("o_proj", v, h),
                ]
            if self.fused_linear_projections:
                ins = [("in_proj_qkvz", h, 2 * k + 2 * v), ("in_proj_ba", h, 2 * heads)]
            else:
                ins = [
                    ("in_proj_qkv", h, 2 * k + v),
                    ("in_proj_z", h, v),
                    ("in_proj_b", h, heads),
                    ("in_proj_a", h, heads),
                ]
            return [*ins, ("out_proj", v, h)]
        if kind == "conv":
            return [("in_proj", h, 3 * h), ("out_proj", h, h)]  # Lfm2ShortConv: B, C and x
        if kind == "mamba1":
            # MambaMixer: in_proj gives x and the gate z; x_proj gives dt (of dt_rank), B and C.
            inner, rank, state = self.mamba_inner_size, self.mamba_dt_rank or 0, self.mamba_state_size or 0
            return [
                ("in_proj", h, 2 * inner),
                ("x_proj", inner, rank + 2 * state),
                ("dt_proj", rank, inner),
                ("out_proj", inner, h),
            ]
        return []

    def _mixer_params(self, kind: LayerKind) -> int:
        """One layer's mixer: its linear weights, then what each kind holds besides."""
        params = self._attention_params() if kind in ("attention", "attention_mamba") else 0
        if kind in ("linear_attention", "conv"):
            params += sum(i * o for _, i, o in self.mixer_linears(kind))
        if kind == "mamba1":
            params += sum(i * o for _, i, o in self.mixer_linears(kind)) + self._mamba1_params()
        if kind in ("mamba", "attention_mamba"):
            inner, conv_dim, heads = self.mamba_inner_size, self.mamba_conv_dim, self.mamba_heads or 0
            params += sum(i * o for _, i, o in self.mixer_linears("mamba"))
            params += conv_dim * (self.mamba_conv_kernel or 0) + conv_dim * self.mamba_conv_bias
            params += 3 * heads  # dt_bias, A_log, D
            params += inner * self.mamba_gated_norm
            params += (inner + conv_dim + heads) * self.mamba_in_bias + self.hidden_size * self.mamba_out_bias
        elif kind == "linear_attention":
            # A depthwise conv without bias, dt_bias and A_log per value head, and a gated RMSNorm
            # of one value head's width.
            params += self.linear_conv_dim * (self.linear_conv_kernel or 0)
            params += 2 * (self.linear_value_heads or 0) + (self.linear_value_head_dim or 0)
            if self.linear_kda:  # Kimi: dt_bias per channel, not per head (KimiLinearForgetGate)
                params += self.linear_key_dim - (self.linear_value_heads or 0)
        elif kind == "conv":
            h = self.hidden_size
            params += h * (self.conv_kernel or 0) + (3 * h + h + h) * self.conv_bias  # conv, in/out biases
        return params

    def _mlp(self, prefix: str, h: int, f: int, *, fused: bool) -> list[tuple[str, int, int]]:
        # A gated MLP (Shazeer 2020, "GLU Variants Improve Transformer"): gate and up h -> f, down
        # f -> h; some checkpoints store gate and up as one gate_up_proj of h -> 2f. A plain MLP
        # (GPT-2, StarCoder 2, Apertus) has only up and down.
        if not self.gated_mlp:
            return [(f"{prefix}up_proj", h, f), (f"{prefix}down_proj", f, h)]
        if fused:
            return [(f"{prefix}gate_up_proj", h, 2 * f), (f"{prefix}down_proj", f, h)]
        return [(f"{prefix}gate_proj", h, f), (f"{prefix}up_proj", h, f), (f"{prefix}down_proj", f, h)]

    def dense_mlp_linears(self, width: int | None = None) -> list[tuple[str, int, int]]:
        return self._mlp("", self.hidden_size, width or self.intermediate_size, fused=self.fused_gate_up)

    def expert_linears(self) -> list[tuple[str, int, int]]:
        h, f = self.hidden_size, self.expert_intermediate_size
        return self._mlp("experts.", h, f, fused=self.fused_expert_gate_up)

    def shared_expert_linears(self) -> list[tuple[str, int, int]]:
        if not self.shared_experts:
            return []
        h, f = self.hidden_size, self.shared_intermediate_size
        return self._mlp("shared_experts.", h, f, fused=self.fused_gate_up)

    def linear_layers(self) -> list[tuple[str, int, int, int]]:
        """Every linear layer of the blocks as (module name, d_in, d_out, copies in the whole model).

        Routers are left out: LoRA does not adapt them and the counter adds them separately."""
        found = [
            entry
            for kind, copies in self.mixer_counts.items()
            for entry in self.mixer_layer_linears(kind, copies)
        ]
        for width, layers in self._dense_widths():
            found += [(n, i, o, layers) for n, i, o in self.dense_mlp_linears(width)]
        if self.moe_layers:
            routed = self.moe_layers * self.experts
            found += [(n, i, o, routed) for n, i, o in self.expert_linears()]
            found += [(n, i, o, self.moe_layers) for n, i, o in self.shared_expert_linears()]
        return found + self._per_layer_linears() + self.shared_block_linears()

    def mixer_layer_linears(self, kind: LayerKind, copies: int) -> list[tuple[str, int, int, int]]:
        """The linears of the ``copies`` layers whose mixer is ``kind``, with the copies each has:
        one each for all of them, but attention's (:meth:`attention_layer_linears`)."""
        if kind == "attention":
            return self.attention_layer_linears(copies)
        return [(name, d_in, d_out, copies) for name, d_in, d_out in self.mixer_linears(kind)]

    def attention_layer_linears(self, copies: int) -> list[tuple[str, int, int, int]]:
        """The linears of ``copies`` attention layers, with the copies each has: Gemma 3n's and 4's
        layers reusing keys and values have no k/v_proj, Gemma 4's global layers and Mistral Large 4's
        MLA layers without RoPE or sharing a latent their own (decl)."""
        found = [(n, i, o, copies) for n, i, o in self.attention_linears()]
        if self.is_mla and (self.nope_layers or self.kv_shared_layers):
            return self._mla_variant_linears(found)
        if self._global_shape() is not self:
            return self._global_linears(found)
        if self.kv_shared_layers:  # Gemma 3n: the layers reusing keys and values have no k/v_proj
            return [
                (n, i, o, c - self.kv_shared_layers * (n in ("k_proj", "v_proj"))) for n, i, o, c in found
            ]
        return found

    def _global_linears(self, found: list[tuple[str, int, int, int]]) -> list[tuple[str, int, int, int]]:
        """decl: Gemma 4's attention linears, the sliding layers' and the global layers' apart (their
        own widths; no v_proj with K = V), less the k/v projections of the layers sharing them."""
        attention = {n for n, _, _ in self.attention_linears()}
        shared_sliding = self.kv_shared_sliding_layers
        shared_global = self.kv_shared_layers - shared_sliding
        kv = ("k_proj", "v_proj")
        kept = [
            (n, i, o, c - self.global_layers - shared_sliding * (n in kv)) if n in attention else (n, i, o, c)
            for n, i, o, c in found
        ]
        shape = self._global_shape()
        kept += [
            (n, i, o, self.global_layers - shared_global * (n in kv))
            for n, i, o in shape.attention_linears()
            if not (n == "v_proj" and self.global_k_eq_v)
        ]
        return [entry for entry in kept if entry[3] > 0]

    def _mla_variant_linears(self, found: list[tuple[str, int, int, int]]) -> list[tuple[str, int, int, int]]:
        """decl: Mistral Large 4's MLA linears: the layers without RoPE with their own kv_a and kv_b
        widths, no kv_a_proj_with_mqa in the layers sharing an earlier layer's latent."""
        rope, rank, heads = self.qk_rope_head_dim or 0, self.kv_lora_rank or 0, self.attention_heads
        own_nope = self.nope_layers - self.kv_shared_nope_layers
        own_rope = self.attention_layers - self.kv_shared_layers - own_nope
        nope_b = heads * ((self.qk_nope_head_dim or 0) + rope) + self.v_dim
        kept: list[tuple[str, int, int, int]] = []
        for n, i, o, c in found:
            if n == "kv_a_proj_with_mqa":
                kept += [(n, i, o, own_rope), (n, i, rank, own_nope)]
            elif n == "kv_b_proj":
                kept += [(n, i, o, c - self.nope_layers), (n, i, nope_b, self.nope_layers)]
            else:
                kept.append((n, i, o, c))
        return [entry for entry in kept if entry[3] > 0]

    # --- counts ---------------------------------------------------------------------------------

    def _attention_params(self) -> int:
        """One block's attention: the linear weights, then biases, MLA's latent norms, QK-norm, sinks."""
        params = sum(i * o for _, i, o in self.attention_linears())
        # decl2: JetMoeMoA's experts (input_linear, output_linear), its router and its output bias.
        params += self.attention_experts * (2 * self.hidden_size * self.k_dim + self.hidden_size)
        params += self.hidden_size * bool(self.attention_experts)
        if self.is_mla:
            params += (self.q_lora_rank or 0) + (self.kv_lora_rank or 0)  # q_a_layernorm, kv_a_layernorm
        if self.qkv_bias and self.is_mla:
            # DeepseekV3Attention: q_a_proj's and kv_a_proj_with_mqa's biases (q_proj, q_b, kv_b none).
            params += (self.q_lora_rank or 0) + (self.kv_lora_rank or 0) + (self.qk_rope_head_dim or 0)
        elif self.qkv_bias:
            params += self.q_dim + self.k_dim + self.v_dim
        if self.o_bias:
            params += self.hidden_size
        if self.qk_norm and self.qk_norm_scope == "projection":
            params += self.q_dim + self.k_dim  # q_norm and k_norm over every head's width
        elif self.qk_norm:
            # q_norm and k_norm, shared by the heads (PersimmonAttention's LayerNorms: and biases)
            params += 2 * self.qk_head_dim * (1 + self.qk_norm_bias)
        if self.attention_sinks:
            params += self.attention_heads  # gpt-oss: one learned sink logit per head
        if self.attention_output_gate and self.qkv_bias:
            params += self.q_dim  # the gate's half of q_proj's bias
        if self.output_groups is not None:
            params += (self.q_lora_rank or 0) + self.attention_head_dim  # DeepSeek-V4's q_a_norm, kv_norm
        if self.softmax_scaling:
            params += 2 * self.attention_heads  # MistralLarge4TextSoftmaxScaling: a scale and bias per head
        return params

    def _indexer_params(self) -> int:
        """One layer's sparse-attention indexer (DeepseekV32Indexer): wq_b from the q latent, wk
        with a LayerNorm, weights_proj."""
        if self.index_heads is None or self.index_head_dim is None:
            return 0
        if self.output_groups is not None:
            return self._compressed_indexer_params()
        heads, dim, h = self.index_heads, self.index_head_dim, self.hidden_size
        if self.index_query_from_hidden:
            # MistralLarge4TextIndexer: a LayerNorm of the hidden state, wq_b h -> heads × dim, wk with
            # its LayerNorm, weights_proj, and a softmax scale and bias per head.
            return 2 * h + h * heads * dim + h * dim + 2 * dim + h * heads + 2 * heads * self.softmax_scaling
        return (self.q_lora_rank or 0) * heads * dim + h * dim + 2 * dim + h * heads

    @property
    def indexed_layers(self) -> int:
        """Layers with their own indexer: every attention layer unless the config lists them."""
        if self.index_heads is None:
            return 0
        return self.attention_layers if self.index_layers is None else self.index_layers

    def _dense_mlp_params(self, width: int | None = None) -> int:
        """One dense MLP: its projections, their biases (d_out each) and its activation's scalars."""
        linears = self.dense_mlp_linears(width)
        biases = sum(o for _, _, o in linears) if self.mlp_bias else 0
        return sum(i * o for _, i, o in linears) + biases + self.activation_params

    def _norm_params(self) -> int:
        """One norm over the hidden size: RMSNorm's weight, LayerNorm's weight and bias."""
        return self.hidden_size * {"weight": 1, "weight_bias": 2, "none": 0}[self.norm_parameters]

    def _expert_params(self) -> int:
        """One routed expert: gate, up, down (+ their biases in gpt-oss: 2f on gate_up, h on down)."""
        h, f = self.hidden_size, self.expert_intermediate_size
        return (3 if self.gated_mlp else 2) * h * f + ((2 * f + h) if self.expert_bias else 0)

    def _moe_params(self, experts_counted: int) -> int:
        """One MoE layer's MLP side: the counted routed experts, the shared MLP and the router
        (h × experts, + a bias in gpt-oss, + DeepSeek-V3's per-expert e_score_correction_bias)."""
        h, e = self.hidden_size, self.experts
        router = h * e + e * (self.router_bias + self.router_correction_bias)
        router += (h + e) * self.router_scales  # Gemma4TextRouter's scale and per_expert_scale
        shared = sum(i * o for _, i, o in self.shared_expert_linears()) + h * self.shared_expert_gate
        shared += h * bool(self.attention_experts)  # decl2: JetMoeMoE's output bias
        return experts_counted * self._expert_params() + shared + router

    def _counts(self, experts_counted: int, embeddings_counted: str = "both") -> int:
        h = self.hidden_size
        mixers = sum(copies * self._mixer_params(kind) for kind, copies in self.mixer_counts.items())
        mixers += self.indexed_layers * self._indexer_params()
        mixers += self._compressor_params() + self._hyper_connection_params()
        mixers += self._shared_block_params()
        blocks = (
            mixers
            + self.layers * self.norms_per_layer * self._norm_params()
            + sum(layers * self._dense_mlp_params(width) for width, layers in self._dense_widths())
            + self.moe_layers * self._moe_params(experts_counted)
        )
        matrix = self.vocab_size * h
        # GPT-2's learned absolute positions (wpe) are embeddings too.
        matrix_in = matrix + self.position_embeddings * h
        if embeddings_counted == "none":
            embeddings = lm_head = 0
        elif embeddings_counted == "output":
            embeddings, lm_head = 0, matrix
        else:
            embeddings, lm_head = matrix_in, 0 if self.tied_embeddings else matrix
        if embeddings_counted != "none":
            lm_head += self.vocab_size * self.lm_head_bias
        blocks += self._per_layer_params() + self._attention_variants() + self._double_wide_params()
        blocks += (self.qk_rope_head_dim or 0) // 2 * self.learned_rope_scale  # the rotary's alpha
        blocks += self.layers * self.layer_scalars  # Gemma4TextDecoderLayer.layer_scalar (checkpointed)
        # decl2: DeepseekV4HashRouter's tid2eid buffer instead of e_score_correction_bias.
        tables = self.vocab_size * self.experts_per_token - self.experts * self.router_correction_bias
        blocks += self.hash_routed_layers * tables
        blocks += self._norm_params() * self.embedding_layernorm  # BloomModel.word_embeddings_layernorm
        return embeddings + blocks + self._norm_params() + lm_head  # and the final norm

    @property
    def mtp_parameter_count(self) -> int:
        """The multi-token-prediction modules as the checkpoints store them, outside parameter_count.
        Each is one more block (a MoE block when the model has experts), a projection of the
        concatenated [hidden; embedding] 2h -> h, RMSNorms on both inputs and on the output, and its
        own copy of the embedding and the output head (DeepSeek-V3 report, section 2.2; the
        checkpoints' extra layer holds embed_tokens and shared_head.head)."""
        if not self.mtp_layers:
            return 0
        h = self.hidden_size
        mlp = self._moe_params(self.experts) if self.is_moe else self._dense_mlp_params()
        attention = self._attention_params() + self._indexer_params()
        block = attention + self.norms_per_layer * self._norm_params() + mlp
        return self.mtp_layers * (block + 2 * h * h + 3 * h + 2 * self.vocab_size * h)

    @property
    def parameter_count(self) -> int:
        """Every parameter of the text model as transformers holds it (MTP modules not counted)."""
        return self._counts(self.experts)

    @property
    def active_parameter_count(self) -> int:
        """Parameters one token runs through: embeddings (as the vendor counts them), attention,
        dense layers, shared experts, the top-k routed experts, routers, norms and the LM head
        (Fedus et al. 2022, "Switch Transformers", section 2: compute follows the chosen experts).
        A dense model's active count is its total."""
        if not self.is_moe:
            return self.parameter_count
        return self._counts(self.experts_per_token, self.active_embeddings)

    @property
    def total_params(self) -> int:
        """N as a count: the repo's tensors where they were read (the truth), else this shape's count
        with a multimodal repo's vision tower and projector (``non_text_params``)."""
        return self.tensors.total if self.tensors is not None else self.parameter_count + self.non_text_params

    @property
    def tower_params(self) -> int:
        """The vision and audio towers' parameters (without the projector): what fine-tuning recipes
        freeze by default (Qwen2.5-VL's qwen-vl-finetune: tune_mm_vision off, tune_mm_mlp and
        tune_mm_llm on; LLaVA's instruction tuning: the vision encoder frozen, projector and LLM
        trained)."""
        if self.tensors is not None:
            return self.tensors.towers
        return self.non_text_params - self.projector_params

    @property
    def params_billion(self) -> float:
        return self.total_params / 1e9

    @property
    def active_params_billion(self) -> float:
        return self.active_parameter_count / 1e9

    @property
    def largest_module_params(self) -> int:
        """The most parameters one module holds by itself, which DeepSpeed ZeRO-3 gathers at once:
        the embedding (or LM head) v × h, one linear layer, or, in a MoE layer, the routed experts,
        which transformers 5 keeps as one module with 3-D gate_up_proj and down_proj parameters
        (e.g. MixtralExperts; checked by building the models on the meta device)."""
        candidates = [self.vocab_size * self.hidden_size]
        candidates.append(self.per_layer_vocab_size * self.layers * self.per_layer_input_size)  # Gemma 3n
        candidates += [d_in * d_out for _, d_in, d_out, _ in self.linear_layers()]
        if self.is_moe:
            candidates.append(self.experts * self._expert_params())
        return max(candidates)

    @property
    def lora_target_modules(self) -> tuple[str, ...]:
        """The module names LoRA adapts here, in the model's order (experts.* for every routed
        expert, shared_experts.* for the shared MLP); embeddings, norms and routers are not adapted."""
        return tuple(dict.fromkeys(name for name, *_ in self.linear_layers()))

    def lora_adapter_params(self, rank: int) -> int:
        """LoRA adapters on every linear layer of attention and MLP in every block, every expert
        included: r × (d_in + d_out) each (Hu et al. 2021, "LoRA", section 4: W + BA with B of
        d_out × r and A of r × d_in)."""
        return sum(rank * (d_in + d_out) * copies for _, d_in, d_out, copies in self.linear_layers())

    # --- frontier (issue 20, point 3): Mamba-1 and Gemma 3n's per-layer parts ----------------------

    def _mamba1_params(self) -> int:
        """One Mamba-1 mixer besides its linear weights (MambaMixer, JambaMambaMixer): the depthwise
        conv (and its bias), dt_proj's bias, A_log (inner × state) and D, in_proj's and out_proj's
        biases, and Jamba's RMSNorms over dt, B and C."""
        inner, state, rank = self.mamba_inner_size, self.mamba_state_size or 0, self.mamba_dt_rank or 0
        params = inner * (self.mamba_conv_kernel or 0) + inner * self.mamba_conv_bias
        params += inner + inner * state + inner  # dt_proj's bias, A_log, D
        params += (2 * inner + self.hidden_size) * self.mamba_in_bias
        return params + (rank + 2 * state) * self.mamba_dt_norms

    def _dense_widths(self) -> list[tuple[int, int]]:
        """(width, layers) of the dense MLPs: Gemma 3n's per-layer widths, or intermediate_size."""
        if self.intermediate_sizes and not self.is_moe:
            widths: dict[int, int] = {}
            for width in self.intermediate_sizes:
                widths[width] = widths.get(width, 0) + 1
            return list(widths.items())
        return [(self.intermediate_size, self.dense_layers)] if self.dense_layers else []

    def _per_layer_linears(self) -> list[tuple[str, int, int, int]]:
        """Gemma 3n's linear layers beside attention and MLP (Gemma3nTextDecoderLayer,
        Gemma3nTextModel): AltUp's router and coefficients, LAuReL's two low-rank projections, the
        per-layer input's gate and projection, and the model's projections into and out of AltUp's
        streams and of the per-layer inputs."""
        if not self.per_layer_input_size:
            return []
        h, n, r, p, layers = (
            self.hidden_size,
            self.altup_inputs,
            self.laurel_rank,
            self.per_layer_input_size,
            self.layers,
        )
        found = [
            ("altup.modality_router", h, n, layers),
            ("altup.prediction_coefs", n, n * n, layers),
            ("altup.correction_coefs", n, n, layers),
            ("laurel.linear_left", h, r, layers),
            ("laurel.linear_right", r, h, layers),
            ("per_layer_input_gate", h, p, layers),
            ("per_layer_projection", p, h, layers),
            ("per_layer_model_projection", h, layers * p, 1),
        ]
        if n > 1:
            found += [("altup_projections", h, h, n - 1), ("altup_unembed_projections", h, h, n - 1)]
        return [entry for entry in found if entry[1] and entry[2]]

    def _per_layer_params(self) -> int:
        """Gemma 3n's parameters beside attention and MLP: its linear layers (above), per layer
        AltUp's output scale and router norm, LAuReL's norm and the per-layer input's norm (h each),
        the per-layer embedding table (its vocabulary × layers × width) and that table's norm; less
        the k/v projections and key norms of the layers that reuse earlier keys and values."""
        if not self.per_layer_input_size:
            return 0
        h, p = self.hidden_size, self.per_layer_input_size
        params = sum(i * o * copies for _, i, o, copies in self._per_layer_linears())
        # Per layer: the per-layer input's norm, AltUp's output scale and router norm, LAuReL's norm
        # (Gemma 4 has neither AltUp nor LAuReL).
        norms = 1 + 2 * (self.altup_inputs > 0) + (self.laurel_rank > 0)
        return params + self.layers * norms * h + self.per_layer_vocab_size * self.layers * p + p

    # --- decl (issue 20): layers whose attention differs from the uniform one (Gemma 3n/4, Mistral Large 4)

    def _global_shape(self) -> Architecture:
        """This shape with Gemma 4's global layers' head width and K/V heads (itself without them)."""
        if self.global_head_dim is None and self.global_kv_heads is None:
            return self
        return self.model_copy(
            update={
                "head_dim": self.global_head_dim or self.head_dim,
                "kv_heads": self.global_kv_heads or self.kv_heads,
            }
        )

    def _own_kv_params(self, shape: Architecture) -> int:
        """What a layer sharing an earlier layer's keys and values does not hold (Gemma3nTextAttention,
        Gemma4TextAttention): k_proj and v_proj (v_proj none with K = V) and the key norm."""
        v = 0 if shape is not self and self.global_k_eq_v else shape.v_dim
        return (self.hidden_size + self.qkv_bias) * (shape.k_dim + v) + shape.qk_head_dim * self.qk_norm

    def _attention_variants(self) -> int:
        """The parameters the layers whose attention is not the uniform one hold more (or fewer).

        Grouped-query attention (Gemma 3n, Gemma 4): the global layers' own head width and K/V heads and,
        with K = V, no v_proj; the last kv_shared_layers layers without k/v projections or key norm.
        MLA (Mistral Large 4's MistralLarge4TextAttention): a layer without RoPE has a latent without the
        rope key (kv_a_proj_with_mqa h -> kv_lora_rank) and its kv_b_proj gives the full key width
        (nope + rope) a head; a layer sharing an earlier layer's latent has no kv_a_proj_with_mqa and no
        kv_a_layernorm."""
        h, shared = self.hidden_size, self.kv_shared_layers
        if self.is_mla:
            rope, rank = self.qk_rope_head_dim or 0, self.kv_lora_rank or 0
            a_in = h + self.qkv_bias  # kv_a_proj_with_mqa's weight row and bias
            delta = self.nope_layers * (rank * self.attention_heads * rope - a_in * rope)
            delta -= shared * (a_in * (rank + rope) + rank) - self.kv_shared_nope_layers * a_in * rope
            return delta
        shared_sliding = self.kv_shared_sliding_layers
        shape = self._global_shape()
        delta = -shared_sliding * self._own_kv_params(self)
        if shape is self:  # Gemma 3n: every layer one shape
            return delta - (shared - shared_sliding) * self._own_kv_params(self)
        v_proj = (h + self.qkv_bias) * shape.v_dim if self.global_k_eq_v else 0
        delta += self.global_layers * (shape._attention_params() - v_proj - self._attention_params())
        return delta - (shared - shared_sliding) * self._own_kv_params(shape)

    def _double_wide_params(self) -> int:
        """Gemma 4's use_double_wide_mlp: the layers sharing keys and values have an MLP twice as wide."""
        if not self.double_wide_shared_mlp or self.is_moe:
            return 0
        f = self.intermediate_size
        return self.kv_shared_layers * (self._dense_mlp_params(2 * f) - self._dense_mlp_params(f))

    @property
    def full_kv_heads(self) -> int:
        """The K/V heads of a full-attention layer (Gemma 4's global layers: their own)."""
        return self.global_kv_heads or self.kv_heads

    @property
    def full_head_dim(self) -> int:
        if self.shared_block_layers:  # decl2: Zamba2's shared attention, heads of 2h / heads
            return 2 * self.hidden_size // self.attention_heads
        return self.global_head_dim or self.attention_head_dim

    @property
    def kv_cached_sliding_layers(self) -> int:
        """Sliding-window layers with a cache of their own (Gemma 3n's sharing layers have none)."""
        return min(self.sliding_window_layers, self.attention_layers) - self.kv_shared_sliding_layers

    @property
    def kv_cached_full_layers(self) -> int:
        full_shared = self.kv_shared_layers - self.kv_shared_sliding_layers
        return self.attention_layers - min(self.sliding_window_layers, self.attention_layers) - full_shared

    # --- frontier, round 4 (issue 20, point 3): DeepSeek-V4 ------------------------------------------

    def _check_compressed_attention(self) -> None:
        compressed = self.compressed_sparse_layers + self.heavily_compressed_layers
        if compressed > self.layers:
            raise ValueError(f"{self.key}: more compressed layers than layers")
        if (self.output_groups is None) != (self.output_group_rank is None) or (
            self.output_groups is not None
            and (
                self.q_lora_rank is None
                or (self.attention_heads * self.attention_head_dim) % self.output_groups
            )
        ):
            raise ValueError(f"{self.key}: the grouped output needs o_groups, o_lora_rank and q_lora_rank")
        if (self.compressed_sparse_layers and self.compress_rate_sparse is None) or (
            self.heavily_compressed_layers and self.compress_rate_heavy is None
        ):
            raise ValueError(f"{self.key}: compressed layers need their compression rate")

    def _compressed_attention_linears(self) -> list[tuple[str, int, int]]:
        """DeepSeek-V4's attention linears (DeepseekV4Attention): q_a h -> q_lora_rank, q_b to every
        head, one shared K=V head (kv_proj h -> head_dim), the grouped output o_a (each of the g groups
        of heads × head_dim / g to o_lora_rank: one weight of g·o_lora_rank × heads·head_dim/g) and o_b."""
        h, d, heads = self.hidden_size, self.attention_head_dim, self.attention_heads
        groups, rank, q_rank = self.output_groups or 1, self.output_group_rank or 0, self.q_lora_rank or 0
        return [
            ("q_a_proj", h, q_rank),
            ("q_b_proj", q_rank, heads * d),
            ("kv_proj", h, d),
            ("o_a_proj", heads * d // groups, groups * rank),
            ("o_b_proj", groups * rank, h),
        ]

    def _compressed_indexer_params(self) -> int:
        """DeepSeek-V4's lightning indexer (DeepseekV4Indexer) in a compressed-sparse layer: its own
        compressor (kv and gate h -> 2 × index_head_dim, a position bias of rate × 2 × index_head_dim,
        a norm of index_head_dim), q_b from the q latent to every index head, weights_proj h -> heads."""
        heads, dim, h = self.index_heads or 0, self.index_head_dim or 0, self.hidden_size
        rate = self.compress_rate_sparse or 0
        return 4 * h * dim + rate * 2 * dim + dim + (self.q_lora_rank or 0) * heads * dim + h * heads

    def _compressor_params(self) -> int:
        """DeepSeek-V4's compressors (DeepseekV4CSACompressor, DeepseekV4HCACompressor): kv and gate
        projections h -> 2 × head_dim (CSA's two overlapping series) or h -> head_dim (HCA), a position
        bias of rate × that width, and a norm of head_dim; the CSA's indexer is _indexer_params'."""
        h, d = self.hidden_size, self.attention_head_dim
        sparse = 2 * h * 2 * d + (self.compress_rate_sparse or 0) * 2 * d + d
        heavy = 2 * h * d + (self.compress_rate_heavy or 0) * d + d
        return self.compressed_sparse_layers * sparse + self.heavily_compressed_layers * heavy

    def shared_block_linears(self, per_module: bool = False) -> list[tuple[str, int, int, int]]:
        """decl2: Zamba2's shared transformer blocks' linears as (module name, d_in, d_out, copies):
        each distinct block's (Zamba2AttentionDecoderLayer) q, k, v from the 2h-wide [hidden;
        embeddings] in heads of 2h / heads and o back to h, its gated MLP (gate_up h -> 2f, down);
        each adapter set (Zamba2MLP's h -> r -> 2f on gate_up; Zamba2Attention's 2h -> r -> 2h on q,
        k, v); each hybrid layer's linear h -> h. ``per_module``: as every hybrid layer's block module
        holds them, tied or not (peft adapts each module: the LoRA adapters)."""
        if not self.shared_block_layers:
            return []
        h, f, r = self.hidden_size, self.intermediate_size, self.shared_adapter_rank
        head = 2 * h // self.attention_heads
        q, kv = self.attention_heads * head, self.kv_heads * head
        blocks = self.shared_block_layers if per_module else self.shared_blocks
        sets = self.shared_module_adapters if per_module else self.shared_block_adapters
        found = [
            ("q_proj", 2 * h, q, blocks),
            ("k_proj", 2 * h, kv, blocks),
            ("v_proj", 2 * h, kv, blocks),
            ("o_proj", q, h, blocks),
            ("gate_up_proj", h, 2 * f, blocks),
            ("down_proj", f, h, blocks),
            ("gate_up_proj_adapter_list.0", h, r, sets),
            ("gate_up_proj_adapter_list.1", r, 2 * f, sets),
        ]
        if self.shared_attention_adapters:
            for x in "qkv":
                found += [
                    (f"linear_{x}_adapter_list.0", 2 * h, r, sets),
                    (f"linear_{x}_adapter_list.1", r, 2 * h, sets),
                ]
        return [*found, ("linear", h, h, self.shared_block_layers)]

    def _shared_block_params(self) -> int:
        """decl2: Zamba2's shared blocks: their linears, each distinct block's RMSNorms of 2h and h and
        its MLP's biases (add_bias_linear: 2f and h)."""
        if not self.shared_block_layers:
            return 0
        h, f = self.hidden_size, self.intermediate_size
        linears = sum(i * o * c for _, i, o, c in self.shared_block_linears())
        return linears + self.shared_blocks * (3 * h + (2 * f + h) * self.shared_block_bias)

    def _hyper_connection_params(self) -> int:
        """DeepSeek-V4's manifold-constrained hyper-connections (Xie et al. 2026; DeepseekV4HyperConnection
        before attention and before the MLP of every layer, DeepseekV4HyperHead once): each projects
        the n streams (n × h) to its (2 + n) × n weights (pre, post, comb), with a bias of as many and
        3 scales; the head to n weights, n biases and 1 scale."""
        n, h = self.residual_streams, self.hidden_size
        if not n:
            return 0
        mixes = (2 + n) * n
        return self.layers * 2 * (mixes * n * h + mixes + 3) + n * n * h + n + 1


@cache
def presets() -> dict[str, Architecture]:
    text = resources.files("bot").joinpath("data/models.toml").read_text(encoding="utf-8")
    entries = tomllib.loads(text)["model"]
    models = [Architecture.model_validate(entry) for entry in entries]
    return {model.key: model for model in models}


# A step's terms read it some 50 times an estimate, each a walk over the layers; the same for every
# answer about the model: kept for the few a session asks about.
@lru_cache(maxsize=64)
def _moe_layers(arch: Architecture) -> int:
    step, dense = arch.interleave_moe_layer_step, {*arch.mlp_only_layers, *arch.no_mlp_layers}
    return sum(
        1 for i in range(arch.first_k_dense_replace, arch.layers) if (i + 1) % step == 0 and i not in dense
    )


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _is_subsequence(needle: str, haystack: str) -> bool:
    letters = iter(haystack)
    return all(letter in letters for letter in needle)


def _names(model: Architecture) -> list[str]:
    """Every squashed name a preset answers to: key, name, Hub id (with and without its owner), aliases."""
    names = [model.key, model.name, *model.aliases]
    for repo in (model.hub_id, *model.aliases):
        if repo and "/" in repo:
            names += [repo, repo.rsplit("/", 1)[1]]
    return list(dict.fromkeys(_squash(name) for name in names))


@cache
def _by_name() -> dict[str, Architecture]:
    found: dict[str, Architecture] = {}
    for model in presets().values():
        for name in _names(model):
            found.setdefault(name, model)
    return found


# --- sizes written in a name ------------------------------------------------------------------------
# "8b", "8B", "8 b", "0.6b", "270m", "1t"; with a prefix "a3b" is an active size (Qwen3 30B-A3B),
# "e2b" an effective one (Gemma 3n), "8x7b" a mixture's (Mixtral). A size someone types must be a
# size of the preset's: "qwen3 4b" is never Qwen3 14B.
_SIZE = re.compile(r"(?<![a-z0-9.])(a|e|\d+x)?(\d+(?:\.\d+)?) ?([mbt])(?![a-z0-9])")
_SCALE = {"m": 10**6, "b": 10**9, "t": 10**12}
Size = tuple[str, int]  # (prefix: "" for a total, "a", "e" or "8x"; parameters)
# A preset whose names carry no total (DeepSeek-V3, Kimi K2, GLM-4.5, Llama 4's "17B" active) also
# answers to its counted or published total within this: "deepseek v3 671b", "kimi k2 1t".
_TOTAL_TOLERANCE = 0.03


def _sizes(text: str) -> frozenset[Size]:
    return frozenset(
        (prefix, int(Decimal(number) * _SCALE[unit])) for prefix, number, unit in _SIZE.findall(text.lower())
    )


# "17B-16E" (Llama 4): 17B active, 16 experts; not the total.
_ACTIVE_BEFORE_EXPERTS = re.compile(r"\d+(?:\.\d+)? ?[mbt]-\d+e(?![a-z0-9])")


def _preset_names(model: Architecture) -> tuple[str, ...]:
    return (model.key, model.name, model.hub_id or "", *model.aliases)


@cache
def _written_sizes(key: str) -> frozenset[Size]:
    return frozenset().union(*(_sizes(name) for name in _preset_names(presets()[key])))


@cache
def _writes_total(key: str) -> bool:
    """Whether one of the preset's names carries its total (not DeepSeek-V3's, not "17B-16E")."""
    names = (_ACTIVE_BEFORE_EXPERTS.sub(" ", name.lower()) for name in _preset_names(presets()[key]))
    return any(prefix == "" for name in names for prefix, _ in _sizes(name))


def _near(value: int, totals: tuple[int, ...]) -> bool:
    return any(abs(value - total) <= _TOTAL_TOLERANCE * total for total in totals)


@cache
def _counts_of(key: str) -> tuple[tuple[int, int], tuple[int, int] | None]:
    """The preset's total (counted with any vision tower, and published) and, for a mixture of
    experts, its active count (counted and published): what a size typed may mean besides a name's."""
    model = presets()[key]
    total = (model.parameter_count + model.non_text_params, model.published_params)
    active = (model.active_parameter_count, model.published_active_params or 0) if model.is_moe else None
    return total, active


def _has_size(model: Architecture, size: Size) -> bool:
    """Whether ``size`` is written in one of the preset's names, or is its total (or active count)
    where its names write none."""
    written = _written_sizes(model.key)
    if size in written:
        return True
    prefix, value = size
    total, active = _counts_of(model.key)
    if prefix == "" and not _writes_total(model.key):
        return _near(value, total)
    if prefix == "a" and active is not None and all(p != "a" for p, _ in written):
        return _near(value, active)
    return False


# The version after a family's name ("qwen3", "Qwen2.5", "llama 3.2", "DeepSeek-V3"), read only when a
# size is typed too: "qwen3 3b" is not Qwen2.5 3B. Without a size a number may be the size ("qwen72").
_VERSION = re.compile(r"\s*[a-z]+[\s_-]*v?(\d+(?:\.\d+)*)(?![\d.])")


def _version(text: str) -> str | None:
    found = _VERSION.match(_SIZE.sub(" ", text.lower()))
    return found.group(1) if found else None


def _same_version(model: Architecture, typed: str) -> bool:
    """ "3" is Qwen3's, and Llama 3.1's and 3.2's ("llama 3 8b"); "2.5" is not Qwen3's."""
    version = _version(model.name)
    return version is None or version == typed or version.startswith(typed + ".")


@cache
def _keys_of_size(size: Size) -> frozenset[str]:
    return frozenset(key for key, model in presets().items() if _has_size(model, size))


@cache
def _keys_of_version(version: str) -> frozenset[str]:
    return frozenset(key for key, model in presets().items() if _same_version(model, version))


def _keys_fitting(sizes: frozenset[Size], version: str | None) -> frozenset[str]:
    """The presets of every size typed (and of the family's version typed with them)."""
    keys = frozenset(presets())
    for size in sizes:
        keys &= _keys_of_size(size)
    return keys & _keys_of_version(version) if version is not None else keys


# --- variants of a preset's repo ------------------------------------------------------------------
# The vendor's own fine-tunes of a preset's repo hold the same architecture: "meta-llama/Llama-3.1-8B"
# and ".../Llama-3.1-8B-Instruct", "google/gemma-3-1b-pt" and "-it". Only these exact suffixes of the
# preset's own owner/name (any case): a fine-tune under another name may have another shape. A
# trailing version tag stays and must match ("Mixtral-8x7B-Instruct-v0.1" is Mixtral-8x7B-v0.1's,
# "Mistral-7B-Instruct-v0.2" is not Mistral-7B-v0.1's); so does Llama 2's "-hf".
_VARIANT_SUFFIXES = (
    "-instruct-2507",
    "-thinking-2507",
    "-instruct",
    "-thinking",
    "-base",
    "-chat",
    "-it",
    "-pt",
)
# The Hub's owner/name characters (bot.estimate.hub checks the rest): only such a name is echoed back.
_REPO_FORM = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*")
_VERSION_TAIL = re.compile(r"(?:-v\d+(?:\.\d+)*|-hf)$")


def _repo_stem(repo: str) -> str:
    """``owner/name`` in lower case without one variant suffix (before any version tag or ``-hf``)."""
    repo = repo.lower()
    tail = _VERSION_TAIL.search(repo)
    head, end = (repo[: tail.start()], tail.group()) if tail else (repo, "")
    for suffix in _VARIANT_SUFFIXES:
        if head.endswith(suffix):
            head = head.removesuffix(suffix)
            break
    return head + end


@cache
def _by_repo_stem() -> dict[str, Architecture]:
    found: dict[str, Architecture] = {}
    for model in presets().values():
        for repo in (model.hub_id, *model.aliases):
            if repo and "/" in repo:
                found.setdefault(_repo_stem(repo), model)
    return found


def preset_variant(model: Architecture) -> str | None:
    """The repo ID a preset was asked for by, when it is another than the preset's own (a variant
    such as ``meta-llama/Llama-3.1-8B-Instruct``, counted as the preset): the answer says so."""
    own = presets().get(model.key)
    if model.source != "preset" or own is None or model.hub_id is None:
        return None
    return model.hub_id if model.hub_id.lower() != (own.hub_id or "").lower() else None


def find_preset(name: str) -> Architecture | None:
    """The preset a user meant by its key, name, Hub repo id or an alias, ignoring case, spaces and
    punctuation, or by a variant of its repo (``Qwen/Qwen2.5-7B-Instruct``: the preset, with that
    repo as its ``hub_id``, which :func:`preset_variant` reads). A size in the name must be the
    preset's."""
    name = name.strip()
    found = _by_name().get(_squash(name))
    if found is None and "/" in name:
        found = _by_repo_stem().get(_repo_stem(name))
    if found is None or found.key not in _keys_fitting(_sizes(name), None):
        return None
    if _REPO_FORM.fullmatch(name) and name.lower() != (found.hub_id or "").lower():
        context = next((c for end, c in found.variant_contexts if name.lower().endswith(end)), None)
        return found.model_copy(update={"hub_id": name, "context_length": context or found.context_length})
    return found


def variant_context(model: Architecture) -> int | None:
    """The context of a preset's variant where it is not the preset's own (Qwen3's -2507 releases)."""
    own = presets().get(model.key)
    if preset_variant(model) is None or own is None or model.context_length == own.context_length:
        return None
    return model.context_length


@cache
def _name_tokens(key: str) -> tuple[str, tuple[str, ...]]:
    name = presets()[key].name
    return _squash(name), tuple(re.findall(r"[a-z0-9]+", name.lower()))


def search_presets(query: str, limit: int = 25) -> list[Architecture]:
    """Presets for autocomplete: every word of the query appears in order in the name (loosely),
    or every word is part of one of its other names (a Hub repo id, an alias). A size in the query
    must be the preset's, and the family's version with it ("qwen3 4b": Qwen3 4B or nothing)."""
    sizes = _sizes(query)
    version = _version(query) if sizes else None
    # The sizes are checked apart: "deepseek v3 671b" is DeepSeek-V3, whose name writes no size.
    words = [_squash(word) for word in _SIZE.sub(" ", query.lower()).replace("/", " ").split()]
    words = [word for word in words if word]
    if not words and not sizes:
        return list(presets().values())[:limit]
    fitting = _keys_fitting(sizes, version)
    hits: list[tuple[int, int, int, int, Architecture]] = []
    for index, model in enumerate(presets().values()):
        if model.key not in fitting:
            continue
        target, tokens = _name_tokens(model.key)
        if all(_is_subsequence(word, target) for word in words):
            # Words that are a token of the name first ("llama 4" -> Llama 4, not Llama 3.1 405B),
            # then words that start one, then whole-word substrings, then the data file's order.
            equal = sum(word in tokens for word in words)
            starts = sum(any(token.startswith(word) for token in tokens) for word in words)
            exact = sum(word in target for word in words)
            hits.append((-equal, -starts, -exact, index, model))
        elif any(all(word in other for word in words) for other in _names(model)):
            hits.append((1, 1, 1, index, model))
    found = [model for *_, model in sorted(hits, key=lambda hit: hit[:4])]
    named = find_preset(query)  # a name or repo ID exactly, or a variant's repo: first
    if named is not None:
        found = [named, *(model for model in found if model.key != named.key)]
    return found[:limit]


def close_matches(name: str, limit: int = 5) -> list[str]:
    by_squashed = {_squash(m.name): m.name for m in presets().values()}
    found = difflib.get_close_matches(_squash(name), list(by_squashed), n=limit, cutoff=0.4)
    return [by_squashed[key] for key in found] or [m.name for m in search_presets(name, limit)]
