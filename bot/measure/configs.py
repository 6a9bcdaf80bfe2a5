"""What ``vram-bot measure`` builds, and what it compares the measurement with.

A *target* is a ``config.json``-like dict that ``transformers`` builds with random weights, and the
:class:`~bot.estimate.models.Architecture` the bot estimates the same model by. It comes from a
preset (its config derived here from ``bot/data/models.toml``, which stays the one source of the
shape), a Hugging Face repo's ``config.json`` (read by :mod:`bot.hub_lookup`, as ``/vram`` reads it),
a local file or one of the benchmark's small families.

Pure Python: torch and transformers are imported only by :func:`transformers_refuses`, on demand.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.estimate.families import Family, family, multimodal
from bot.estimate.hub import architecture_from_config
from bot.estimate.models import Architecture


class MeasureError(ValueError):
    """Bad input or a model that cannot be measured here, with a one-line message for the user."""


@dataclass(frozen=True)
class Target:
    """A model to measure: what to call it, the config to build, the architecture to estimate by."""

    label: str
    config: dict[str, Any]
    architecture: Architecture


def at_depth(arch: Architecture, layers: int) -> Architecture:
    """``arch`` cut to its first ``layers`` layers, as the measurement builds it."""
    return arch.model_copy(
        update={
            "layers": layers,
            "sliding_window_layers": min(arch.sliding_window_layers, layers),
            "layer_kinds": arch.layer_kinds[:layers],
            "no_mlp_layers": tuple(i for i in arch.no_mlp_layers if i < layers),
            # decl2: DeepSeek-V4's hash-routed layers are its first ones (DeepseekV4Config's default).
            "hash_routed_layers": min(arch.hash_routed_layers, layers),
        }
    )


# --- presets -----------------------------------------------------------------------------------------


def model_type_of(preset: Architecture) -> str:
    # The family is the Architecture's (bot.estimate.models), which the activation formulas read too.
    if preset.family is not None:
        return preset.family
    raise MeasureError(f"the preset {preset.name} has no transformers family to build it from")


def _layer_types(preset: Architecture) -> list[str] | None:
    """Sliding-window layers with a full-attention layer every k-th, as Gemma 2/3 and gpt-oss place
    them; None when the preset's count of sliding layers does not come out of such a pattern."""
    if not preset.sliding_window_layers:
        return None
    full = preset.layers - preset.sliding_window_layers
    every = preset.layers // full if full else preset.layers + 1
    types = ["full_attention" if (i + 1) % every == 0 else "sliding_attention" for i in range(preset.layers)]
    return types if types.count("sliding_attention") == preset.sliding_window_layers else None


def _switches(preset: Architecture, declared: Family) -> dict[str, Any]:
    """The config fields that switch the preset's biases, QK-norm and post-norms on or off, where the
    family has a field for them (a family's constant needs none)."""
    wanted = {
        declared.qkv_bias: preset.qkv_bias,
        declared.o_bias: preset.o_bias,
        declared.qk_norm: preset.qk_norm,
        declared.mlp_bias: preset.mlp_bias,
        declared.lm_head_bias: preset.lm_head_bias,
    }
    return {name: value for name, value in wanted.items() if isinstance(name, str)}


def _moe_fields(preset: Architecture, declared: Family) -> dict[str, Any]:
    """The experts in the field names of the family's config class (its declaration's)."""
    moe = declared.experts
    if not preset.is_moe or moe is None:
        return {}
    width = preset.expert_intermediate_size
    fields: dict[str, Any] = {moe.count[0]: preset.experts, moe.active: preset.experts_per_token}
    if moe.width is None:
        fields["intermediate_size"] = width  # one width for all: there is no dense layer
    else:
        fields |= {declared.name("intermediate_size")[0]: preset.intermediate_size, moe.width: width}
    if isinstance(moe.shared, str):
        fields[moe.shared] = preset.shared_experts
    if moe.shared_width is not None:
        fields[moe.shared_width] = preset.shared_expert_intermediate_size or 0
    if moe.step is not None:
        fields[moe.step] = preset.interleave_moe_layer_step
    if moe.enabled_by is not None:  # decl: Gemma 4's enable_moe_block
        fields[moe.enabled_by] = True
    dense = set(preset.mlp_only_layers)
    if moe.first_dense is not None:
        fields[moe.first_dense] = preset.first_k_dense_replace
    else:  # Qwen3-MoE lists its dense layers instead
        dense |= set(range(preset.first_k_dense_replace))
    if moe.dense_list is not None:
        fields[moe.dense_list] = sorted(dense)
    return fields


def _hybrid_fields(preset: Architecture, declared: Family) -> dict[str, Any]:
    """The hybrid layers in the field names of the family's declaration: each layer's kind in its
    config's words, and the Mamba-2, Gated DeltaNet, short-conv and indexer dimensions."""
    fields: dict[str, Any] = {}
    kinds = declared.layer_kinds
    if kinds is not None and kinds.fields and preset.layer_kinds:
        dense, none = set(preset.mlp_only_layers), set(preset.no_mlp_layers)
        word_of: dict[tuple[str, str], str] = {}
        for word, meaning in kinds.words.items():
            word_of.setdefault(meaning, word)
        words = []
        for i, mixer in enumerate(preset.layer_kinds):
            mlp = "none" if i in none else ("dense" if i in dense else ("moe" if preset.is_moe else "dense"))
            words.append(word_of.get((mixer, mlp)) or word_of[(mixer, "default")])
        fields[kinds.fields[0]] = words
    if declared.mamba is not None:
        m = declared.mamba
        fields |= {
            m.heads: preset.mamba_heads,
            m.head_dim: preset.mamba_inner_size // (preset.mamba_heads or 1),
            m.groups: preset.mamba_groups,
            m.state: preset.mamba_state_size,
            m.conv: preset.mamba_conv_kernel,
        }
        if m.width is not None:
            fields[m.width] = preset.mamba_inner_size
        elif m.expand is not None:
            expand = preset.mamba_inner_size / preset.hidden_size
            fields[m.expand] = int(expand) if expand.is_integer() else expand  # the classes take an int
        wanted = {m.conv_bias: preset.mamba_conv_bias, m.in_bias: preset.mamba_in_bias}
        wanted |= {m.out_bias: preset.mamba_out_bias, m.gated_norm: preset.mamba_gated_norm}
        fields |= {name: value for name, value in wanted.items() if isinstance(name, str)}
    if declared.delta_net is not None:
        d = declared.delta_net
        fields |= {
            d.key_heads: preset.linear_key_heads,
            d.value_heads: preset.linear_value_heads,
            d.key_dim: preset.linear_key_head_dim,
            d.value_dim: preset.linear_value_head_dim,
            d.conv: preset.linear_conv_kernel,
        }
    if declared.short_conv is not None:
        fields[declared.short_conv.kernel] = preset.conv_kernel
        if isinstance(declared.short_conv.bias, str):
            fields[declared.short_conv.bias] = preset.conv_bias
    if declared.indexer is not None:
        fields |= {
            declared.indexer.heads: preset.index_heads,
            declared.indexer.head_dim: preset.index_head_dim,
        }
    return fields


def config_for(preset: Architecture) -> dict[str, Any]:
    """A transformers ``config.json`` dict of the preset's text model, from its architecture alone,
    in the field names of its family's declaration (bot.estimate.families)."""
    model_type = model_type_of(preset)
    declared = family(model_type)
    if declared is None:
        raise MeasureError(f"the preset {preset.name} has no declared family ({model_type})")
    config: dict[str, Any] = {
        "model_type": model_type,
        "hidden_size": preset.hidden_size,
        "num_hidden_layers": preset.layers,
        "num_attention_heads": preset.attention_heads,
        "num_key_value_heads": preset.kv_heads,
        declared.name("intermediate_size")[0]: preset.intermediate_size,
        "vocab_size": preset.vocab_size,
        "tie_word_embeddings": preset.tied_embeddings,
        "use_cache": False,
        **declared.measure_fields,
    }
    if preset.head_dim is not None:
        config["head_dim"] = preset.head_dim
    if preset.context_length is not None:
        config["max_position_embeddings"] = preset.context_length
    if preset.is_mla:
        config |= {
            "q_lora_rank": preset.q_lora_rank,
            "kv_lora_rank": preset.kv_lora_rank,
            "qk_nope_head_dim": preset.qk_nope_head_dim,
            "qk_rope_head_dim": preset.qk_rope_head_dim,
            "v_head_dim": preset.v_head_dim,
        }
    config |= _switches(preset, declared)
    window = declared.sliding
    if window is not None:
        # Mistral's class defaults to a 4096 window: a preset without one says None.
        config["sliding_window"] = preset.sliding_window
        if window.switch is not None:
            config[window.switch] = preset.sliding_window is not None
        if window.from_layer is not None and preset.sliding_window is not None:
            config[window.from_layer[0]] = preset.layers - preset.sliding_window_layers
    layer_types = _layer_types(preset)
    if declared.takes_layer_types and layer_types is not None:
        config["layer_types"] = layer_types
    return (
        config
        | _moe_fields(preset, declared)
        | _hybrid_fields(preset, declared)
        | _frontier_fields(preset, declared)
    )


def _frontier_fields(preset: Architecture, declared: Family) -> dict[str, Any]:
    """Issue 20's frontier block: Gemma 3n's per-layer parts, DeepSeek-V4's layer kinds and Mamba-1's
    dimensions, in the family's field names (bot.estimate.families.PerLayer, CompressedAttention,
    Mamba1)."""
    fields: dict[str, Any] = {}
    if declared.per_layer is not None:
        p = declared.per_layer
        fields |= {
            name: value
            for name, value in ((p.altup, preset.altup_inputs), (p.laurel, preset.laurel_rank))
            if name
        }
        fields |= {
            p.input_width: preset.per_layer_input_size,
            p.input_vocab: preset.per_layer_vocab_size,
            p.kv_shared: preset.kv_shared_layers,
        }
        if preset.intermediate_sizes:
            fields["intermediate_size"] = list(preset.intermediate_sizes)
    g = declared.global_attention
    if g is not None:  # decl: Gemma 4's global layers
        fields |= {
            g.head_dim: preset.full_head_dim,
            g.k_eq_v: preset.global_k_eq_v,
            g.double_wide: preset.double_wide_shared_mlp,
        }
        if preset.global_kv_heads is not None:
            fields[g.kv_heads] = preset.global_kv_heads
    c = declared.compressed_attention
    if c is not None and preset.compressed_kinds:  # decl2: DeepSeek-V4's layers, in its config's words
        words = {"sliding": c.sliding, "sparse": c.sparse, "heavy": c.heavy}
        given = (preset.compress_rate_sparse, preset.compress_rate_heavy)
        rates = zip((c.sparse, c.heavy), given, c.default_rates, strict=True)
        hashed = preset.hash_routed_layers
        fields |= {
            "layer_types": [words[kind] for kind in preset.compressed_kinds],
            c.rates: {word: rate or default for word, rate, default in rates},
            c.mlp_kinds: [c.hash_routed] * hashed + [c.routed] * (preset.layers - hashed),
            "q_lora_rank": preset.q_lora_rank,
            c.groups: preset.output_groups,
            c.group_rank: preset.output_group_rank,
            c.streams: preset.residual_streams,
            "index_n_heads": preset.index_heads,  # the names hub._compressed_attention_fields reads
            "index_head_dim": preset.index_head_dim,
            "sliding_window": preset.sliding_window,
        }
        if preset.sinkhorn_iterations:
            fields[c.sinkhorn] = preset.sinkhorn_iterations
    if declared.mamba1 is not None:
        m = declared.mamba1
        fields |= {
            m.state: preset.mamba_state_size,
            m.conv: preset.mamba_conv_kernel,
            m.dt_rank: preset.mamba_dt_rank,
            m.expand: preset.mamba_inner_size // preset.hidden_size,  # whole in every config seen
        }
        if m.width is not None:
            fields[m.width] = preset.mamba_inner_size
        for switch, value in ((m.conv_bias, preset.mamba_conv_bias), (m.bias, preset.mamba_in_bias)):
            if isinstance(switch, str):
                fields[switch] = value
    return fields


def preset_target(preset: Architecture) -> Target:
    """The preset's config, checked to hold exactly the preset's parameters as the bot counts a
    Hub config: a preset the derivation gets wrong is refused rather than measured as another model."""
    config = config_for(preset)
    counted = architecture_from_config(preset.hub_id or preset.key, config).parameter_count
    if counted != preset.parameter_count:
        raise MeasureError(
            f"the preset {preset.name} cannot be written as a {config['model_type']} config "
            f"({counted:,} parameters instead of {preset.parameter_count:,}); "
            "measure its repo's config.json with --config instead"
        )
    return Target(f"{preset.name} (preset {preset.key}, built as {config['model_type']})", config, preset)


# --- configs from the Hub or a file ------------------------------------------------------------------

# Fields that would make transformers do more than build a randomly initialised model: a
# pre-quantized checkpoint's format (FP8, MXFP4, GPTQ) and remote code, never run here.
_DROPPED = ("quantization_config", "auto_map", "text_config", "vision_config", "audio_config")


def buildable_config(config: dict[str, Any]) -> dict[str, Any]:
    """The causal LM a ``config.json`` describes, as a dict transformers builds: the text model of a
    multimodal repo (what the bot counts), unquantized, without remote code and without a cache."""
    text = config.get("text_config")
    if isinstance(text, dict):
        outer = str(config.get("model_type") or "")
        merged = dict(text)
        for name in ("vocab_size", "tie_word_embeddings"):  # kept at the top level by some repos
            if name not in merged and name in config:
                merged[name] = config[name]
        around = multimodal(outer)  # its text_config may leave out its own model_type
        merged["model_type"] = merged.get("model_type") or (around.text_model_type if around else outer)
        if around is not None and around.tie_at_top:  # tied as the whole model ties (Mistral 3)
            top = config.get("tie_word_embeddings")
            merged["tie_word_embeddings"] = top if isinstance(top, bool) else around.tied_by_default
        config = merged
    built = {name: value for name, value in config.items() if name not in _DROPPED}
    # A model_type transformers builds under another name (Kimi K2 as DeepSeek-V3): the declaration's.
    declared = family(str(built.get("model_type") or ""))
    if declared is not None:
        built["model_type"] = declared.model_type
    built["use_cache"] = False
    return built


def hub_target(repo: str, config: dict[str, Any], architecture: Architecture) -> Target:
    revision = f" at {architecture.hub_revision[:7]}" if architecture.hub_revision else ""
    built = buildable_config(config)
    return Target(f"{repo} (Hugging Face{revision}, built as {built['model_type']})", built, architecture)


def transformers_refuses(model_type: str) -> str | None:
    """Why the installed transformers cannot build ``model_type`` as a causal LM, or None."""
    import transformers
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    if model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return None
    return (
        f"transformers {transformers.__version__} has no causal LM for model_type {model_type!r} "
        "(a newer transformers may have it; remote code is never run)"
    )
