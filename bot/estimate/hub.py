"""A Hugging Face repo's ``config.json`` as an :class:`~bot.estimate.models.Architecture`, and the
registry of the repos the runtime has looked up.

Pure: no network and no words. The runtime (``bot/runtime/hub_client.py``, the CLI) fetches the config
and the Hub's stored parameter count, turns them into an architecture here and registers it; the
request's ``model`` validator then finds a repo ID in the registry, so validation stays synchronous.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from bot.estimate.models import Architecture, LayerKind
from bot.estimate.tensors import CountedModel

if TYPE_CHECKING:
    from bot.estimate.families import (
        CompressedAttention,
        Experts,
        FalconLayout,
        Family,
        GlobalAttention,
        LayerKinds,
        MlaVariants,
        Multimodal,
        SharedBlocks,
    )

# The family declarations (bot.estimate.families, and the towers declared there) are imported where a
# config is read, not with this module: the bot's start needs the registry and the repo-ID checks only
# (benchmarks/README.md, the cold start).

# The Hub's repo IDs in the "owner/name" form, by huggingface_hub's own rules (validate_repo_id in
# huggingface_hub/utils/_validators.py): each part 1 to 96 ASCII letters, digits, "_", "-" or ".",
# beginning and ending with a letter, digit or "_"; no "--" or ".." anywhere; no ".git" at the end.
REPO_PART_MAX = 96
_PART = rf"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{{0,{REPO_PART_MAX - 2}}}[A-Za-z0-9_])?"
_REPO_ID = re.compile(rf"{_PART}/{_PART}")
# A config's model_type is echoed in answers only when it is a short name of this form.
_MODEL_TYPE = re.compile(r"[A-Za-z0-9_.-]{1,40}")

# What the counter accepts from a config: beyond these the numbers are a typo or an attack, and an
# estimate built on them would only mislead (the largest real models are ~1/100 of each bound).
_MAX_DIMENSION = 1_000_000
_MAX_LAYERS = 10_000
_MAX_EXPERTS = 100_000
_MAX_PARAMETERS = 1_000_000_000_000_000  # 10^15 = 1,000,000B: over 1,000 times Kimi K2
# The Hub's stored count and the counted one may differ by rounding and tiny extras; past this the
# checkpoint stores packed tensors (FP8 scales, MXFP4 blocks, GPTQ int32 packs) or extra modules.
COUNT_TOLERANCE = 0.01

HUB_KEY = "hub"  # the key of every Hub architecture: it travels by its repo ID, never by key


def is_repo_id(text: str) -> bool:
    """Whether ``text`` is a repo ID of the Hub's ``owner/name`` form that huggingface_hub accepts
    (no URL, path, whitespace, ``--`` or ``..``)."""
    return (
        _REPO_ID.fullmatch(text) is not None
        and "--" not in text
        and ".." not in text
        and not text.endswith(".git")
    )


def looks_like_repo_id(text: str) -> bool:
    """Whether the user meant a repo rather than a preset name: a ``/`` says so (``Qwen/Qwen3-32B``,
    but also ``../x`` or a URL, which :func:`is_repo_id` then refuses)."""
    return "/" in text or "\\" in text


FailureKind = Literal[
    "not_found",  # no such repo (or private)
    "gated",  # gated, and no token with access (HF_TOKEN)
    "no_config",  # the repo has no config.json
    "too_large",  # config.json over CONFIG_MAX_BYTES
    "malformed",  # config.json is not a JSON object
    "absurd",  # sizes no model has
    "unknown_architecture",  # fields the counter needs are missing
    "not_a_decoder",  # an encoder, encoder-decoder or other model the counter does not count
    "undeclared_family",  # a model_type the counter has no declaration of (bot.estimate.families)
    "rate_limited",  # the Hub answered 429
    "unavailable",  # the Hub is down, unreachable or too slow
    "offline",  # HF_HUB_OFFLINE and the config is not cached
    "disabled",  # the setting hub_lookups is off
]


class HubFailure(Exception):
    """Why a repo could not be turned into an architecture; bot.present.hub_problems words it for the user."""

    def __init__(self, kind: FailureKind, repo: str, fields: tuple[str, ...] = ()) -> None:
        super().__init__(f"{repo}: {kind}{': ' + ', '.join(fields) if fields else ''}")
        self.kind: FailureKind = kind
        self.repo = repo
        self.fields = fields


class ConfigProblem(ValueError):
    """A config.json the counter cannot use; ``kind`` says why, ``fields`` which fields (if any)."""

    def __init__(
        self,
        kind: Literal["unknown_architecture", "not_a_decoder", "undeclared_family", "absurd", "malformed"],
        fields: tuple[str, ...],
    ) -> None:
        super().__init__(f"{kind}: {', '.join(fields)}")
        self.kind = kind
        self.fields = fields


def _text_config(config: dict[str, Any]) -> tuple[dict[str, Any], Multimodal | None]:
    """The text model's config and, for a multimodal repo, its declaration (Gemma 3, Llama 4,
    Mistral 3 keep the language model's fields in ``text_config``)."""
    from bot.estimate.families import multimodal

    outer = multimodal(str(config.get("model_type") or ""))
    inner = config.get("text_config")
    if outer is not None and outer.flat_text and inner is None:  # mm: the text fields at the top
        inner = {k: v for k, v in config.items() if k not in ("model_type", "text_config")}
    if outer is None or not isinstance(inner, dict):
        return config, None
    merged = dict(inner)
    # Some multimodal configs keep the vocabulary or the tying at the top level only.
    for name in ("vocab_size", "tie_word_embeddings"):
        if name not in merged and name in config:
            merged[name] = config[name]
    if outer.tie_at_top:  # the ForConditionalGeneration class ties by the top-level config
        value = config.get("tie_word_embeddings")
        merged["tie_word_embeddings"] = value if isinstance(value, bool) else outer.tied_by_default
    elif outer.tie_either:  # mm: either level's True ties (the config class's pre-v5 rule)
        merged["tie_word_embeddings"] = any(
            level.get("tie_word_embeddings") is True for level in (config, inner)
        )
    merged["model_type"] = merged.get("model_type") or outer.text_model_type
    return merged, outer


def _refusal(config: dict[str, Any], model_type: str) -> ConfigProblem:
    """Why a config without a declared family is not counted: an encoder (its classes say so) or a
    family the counter has no declaration of, rather than a guess at a Llama-shaped count."""
    architectures = config.get("architectures")
    names = [a for a in architectures if isinstance(a, str)] if isinstance(architectures, list) else []
    causal = any(name.endswith(("ForCausalLM", "LMHeadModel", "ForConditionalGeneration")) for name in names)
    named = (model_type[:40] or "model_type",)
    if config.get("is_encoder_decoder") is True or (names and not causal):
        return ConfigProblem("not_a_decoder", named)
    return ConfigProblem("undeclared_family", named)


class _Reader:
    """Reads typed fields of a config, or the family's defaults for them, remembering which required
    ones are missing or unusable."""

    def __init__(self, config: dict[str, Any], declared: Family) -> None:
        self.config = config
        self.declared = declared
        self.missing: list[str] = []
        self.absurd: list[str] = []

    def first(self, *keys: str, mapped: bool = True) -> tuple[str, object] | None:
        """The first of ``keys`` the config (or the family's defaults) gives; ``mapped``: the keys are
        the counter's common names, which the family may spell otherwise (``Family.names``)."""
        names = [n for key in keys for n in (self.declared.name(key) if mapped else (key,))]
        for name in names:
            if self.config.get(name) is not None:
                return name, self.config[name]
        for name in names:
            if self.declared.default(name) is not None:
                return name, self.declared.default(name)
        return None

    def whole(
        self,
        *names: str,
        required: bool = False,
        default: int | None = None,
        top: int = _MAX_DIMENSION,
        mapped: bool = True,
    ) -> int | None:
        found = self.first(*names, mapped=mapped)
        if found is None:
            if required:
                self.missing.append(self.declared.name(names[0])[0] if mapped else names[0])
            return default
        name, value = found
        # JSON has one number type: 4096.0 is a whole number, 4096.5 and true are not.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= top:
            self.absurd.append(name)
            return default
        return value

    def count(self, name: str | None, top: int = _MAX_LAYERS) -> int:
        """A whole number that may be 0 (first_k_dense_replace, n_shared_experts: 0)."""
        if name is None:
            return 0
        found = self.first(name, mapped=False)
        if found is None or found[1] == 0 or found[1] == 0.0:
            return 0
        return self.whole(name, top=top, mapped=False) or 0

    def flag(self, switch: bool | str, default: bool = False) -> bool:
        """A family's constant, or the config's switch (the family's default when absent)."""
        if isinstance(switch, bool):
            return switch
        value = self.config.get(switch)
        if isinstance(value, bool):
            return value
        declared = self.declared.default(switch)
        return declared if isinstance(declared, bool) else default

    def layers_listed(self, name: str | None, layers: int) -> tuple[int, ...]:
        """A list of layer indices (Qwen's mlp_only_layers); a bad one is absurd."""
        if name is None:
            return ()
        value = self.config.get(name, self.declared.default(name))
        if value is None:
            return ()
        if not isinstance(value, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) and 0 <= i < max(layers, 1) for i in value
        ):
            self.absurd.append(name)
            return ()
        return tuple(sorted(set(value)))


def _whole(value: object, top: int) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= top else None


def _sliding_layers(text: dict[str, Any], layers: int, declared: Family) -> tuple[int | None, int]:
    """The sliding window and how many layers use it, as transformers 5.24 builds the family: from
    ``layer_types`` where the config lists them, else by its config class's rule (the declaration's
    SlidingLayers: Mistral slides every layer, Qwen2 those from max_window_layers when
    use_sliding_window is on, Gemma 2 every other one). A family without a rule, or a window that is
    not a plain number, counts as full attention everywhere, the larger estimate."""
    rule = declared.sliding
    window = _whole(text.get("sliding_window", rule.window if rule else None), _MAX_DIMENSION * 10)
    if window is None or (rule is not None and rule.switch and text.get(rule.switch) is not True):
        return None, 0
    types = text.get("layer_types")
    if isinstance(types, list) and len(types) == layers:
        sliding = sum(kind == "sliding_attention" for kind in types)
    elif rule is None:
        sliding = 0
    elif rule.from_layer is not None:
        name, first = rule.from_layer
        start = text.get(name, first)
        sliding = max(0, layers - start) if isinstance(start, int) and not isinstance(start, bool) else 0
    elif rule.full_every is not None:
        field_name, default = rule.full_every
        every = _whole(text.get(field_name, default) if field_name else default, _MAX_DIMENSION)
        if every is None:
            return None, 0
        sliding = layers - ((layers + every - 1) // every if rule.full_first else layers // every)
    else:
        sliding = layers
    return (window, sliding) if sliding else (None, 0)


def plain_model_type(model_type: object) -> str:
    """The config's ``model_type`` when it is a plain short name, else "" (a list, an object or
    markup is never echoed: the answer names the field instead)."""
    if isinstance(model_type, str) and _MODEL_TYPE.fullmatch(model_type):
        return model_type
    return ""


def positive_int(value: object) -> int | None:
    """A config's whole number when it is one (JSON has no other kind of int; booleans are not)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _dense_layers(read: _Reader, moe: Experts, layers: int) -> tuple[int, ...]:
    """The layers of a MoE model that keep a dense MLP, where the config lists them or bounds the MoE
    layers (on top of first_k_dense_replace and the step, which the Architecture applies itself)."""
    dense = set(read.layers_listed(moe.dense_list, layers))
    if moe.kinds is not None:
        name, dense_kind = moe.kinds
        kinds = read.config.get(name, read.declared.default(name))
        if isinstance(kinds, list) and len(kinds) == layers:
            dense |= {i for i, kind in enumerate(kinds) if kind == dense_kind}
        elif kinds is not None:
            read.absurd.append(name)
    if moe.span is not None:
        values = [read.config.get(n, read.declared.default(n)) for n in moe.span]
        bounds = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
        if len(bounds) != len(values):
            read.absurd.extend(moe.span)
            return ()
        start, end, interval = bounds
        end = layers - 1 if end == -1 else end  # the config class's "up to the last layer"
        step = max(interval, 1)
        dense |= {i for i in range(layers) if not (start <= i <= end and (i + 1) % step == 0)}
    if moe.period is not None:  # Jamba: MoE on layers i % period == offset
        period, offset = _period(read, moe.period)
        dense |= {i for i in range(layers) if i % period != offset}
    return tuple(sorted(dense))


def _period(read: _Reader, names: tuple[str, str]) -> tuple[int, int]:
    """Jamba's (period, offset) of a kind of layer; an offset outside the period is absurd."""
    period = read.whole(names[0], default=1, mapped=False) or 1
    offset = read.count(names[1])
    if offset >= period:
        read.absurd.append(names[1])
    return period, offset


def _layer_kinds(
    read: _Reader, kinds: LayerKinds, layers: int
) -> tuple[list[LayerKind], list[int], list[int]]:
    """Each layer's mixer, the layers whose MLP is dense and those with none, as the family's config
    says (its list or pattern, a list of one kind's indices, or its class's default)."""
    listed: object = next((read.config[f] for f in kinds.fields if read.config.get(f) is not None), None)
    mixers: list[LayerKind] = [kinds.default] * layers
    mlps = [kinds.default_mlp] * layers
    if isinstance(listed, str):  # Nemotron-H's hybrid_override_pattern: one letter a layer
        listed = list(listed)
    if listed is not None:
        if (
            not isinstance(listed, list)
            or (len(listed) != layers and not kinds.list_is_layers)
            or not all(isinstance(w, str) and w in kinds.words for w in listed)
            or not 0 < len(listed) <= _MAX_LAYERS
        ):
            read.absurd.append(kinds.fields[0])
            return mixers, [], []
        mixers = [kinds.words[w][0] for w in listed]
        mlps = [kinds.words[w][1] for w in listed]
    elif kinds.list_is_layers:
        read.missing.append(kinds.fields[-1])
    elif kinds.indices is not None and isinstance(read.config.get(kinds.indices[0]), list):
        for i in read.layers_listed(kinds.indices[0], layers):
            mixers[i] = kinds.indices[1]
    elif kinds.period is not None:  # Jamba: layers i % period == offset are of the kind
        period, offset = _period(read, kinds.period[:2])
        mixers = [kinds.period[2] if i % period == offset else kinds.default for i in range(layers)]
    elif kinds.every is not None:  # Qwen3-Next: every n-th layer full attention
        name, default_every, every_kind = kinds.every
        every = (read.whole(name, default=default_every, mapped=False) if name else None) or default_every
        if kinds.every_after_first:  # Kimi Linear: layers i > 0 with i % n == 0
            mixers = [every_kind if i and i % every == 0 else kinds.default for i in range(layers)]
        else:
            mixers = [every_kind if (i + 1) % every == 0 else kinds.default for i in range(layers)]
    dense = [i for i, kind in enumerate(mlps) if kind == "dense"]
    none = [i for i, kind in enumerate(mlps) if kind == "none"]
    return mixers, dense, none


def _ffn_width(config: dict[str, Any], width: int) -> int:
    """LFM2's MLP width from intermediate_size (Lfm2MLP: 2/3 of it, times block_ffn_dim_multiplier,
    rounded up to block_multiple_of, when block_auto_adjust_ff_dim)."""
    if config.get("block_auto_adjust_ff_dim", True) is not True:
        return width
    width = int(2 * width / 3)
    multiplier, multiple = config.get("block_ffn_dim_multiplier", 1.0), config.get("block_multiple_of", 256)
    if isinstance(multiplier, int | float) and not isinstance(multiplier, bool):
        if not isinstance(multiple, int) or isinstance(multiple, bool) or multiple <= 0:
            return width
        width = int(multiplier * width)
        width = multiple * ((width + multiple - 1) // multiple)
    return width


def _hybrid_fields(read: _Reader, hidden: int, layers: int) -> dict[str, Any]:
    """The fields of a family's hybrid layers (bot.estimate.families: LayerKinds, Mamba, DeltaNet,
    ShortConv, Indexer) as the Architecture takes them."""
    declared, fields = read.declared, dict[str, Any]()
    if declared.layer_kinds is not None:
        mixers, dense, none = _layer_kinds(read, declared.layer_kinds, layers)
        fields.update(layer_kinds=tuple(mixers), no_mlp_layers=tuple(none), hybrid_dense=tuple(dense))
    if declared.mamba is not None:
        m = declared.mamba
        heads = read.whole(m.heads, required=True, mapped=False) or 1
        width = read.whole(m.width, mapped=False) if m.width else None
        if m.width_from_heads:
            width = heads * (read.whole(m.head_dim, required=True, mapped=False) or 1)
        elif width is None and m.expand is not None:
            expand = read.config.get(m.expand, declared.default(m.expand))
            width = int(expand * hidden) if isinstance(expand, int | float) and 0 < expand < 100 else None
        fields.update(
            mamba_heads=heads,
            mamba_head_dim=read.whole(m.head_dim, mapped=False),  # Bamba's may be "auto"
            mamba_groups=read.whole(m.groups, required=True, mapped=False),
            mamba_state_size=read.whole(m.state, required=True, mapped=False),
            mamba_conv_kernel=read.whole(m.conv, required=True, mapped=False),
            mamba_intermediate_size=width,
            mamba_conv_bias=read.flag(m.conv_bias, True),
            mamba_in_bias=read.flag(m.in_bias),
            mamba_out_bias=read.flag(m.out_bias),
            mamba_gated_norm=read.flag(m.gated_norm, True),
        )
    if declared.delta_net is not None:
        d = declared.delta_net
        fields.update(
            linear_key_heads=read.whole(d.key_heads, required=True, mapped=False),
            linear_value_heads=read.whole(d.value_heads, required=True, mapped=False),
            linear_key_head_dim=read.whole(d.key_dim, required=True, mapped=False),
            linear_value_head_dim=read.whole(d.value_dim, required=True, mapped=False),
            linear_conv_kernel=read.whole(d.conv, required=True, mapped=False),
            fused_linear_projections=d.fused,
            linear_kda=d.kda,
        )
    if declared.short_conv is not None:
        c = declared.short_conv
        fields.update(
            conv_kernel=read.whole(c.kernel, required=True, mapped=False), conv_bias=read.flag(c.bias)
        )
    if declared.indexer is not None:
        i = declared.indexer
        fields.update(
            index_heads=read.whole(i.heads, required=True, mapped=False),
            index_head_dim=read.whole(i.head_dim, required=True, mapped=False),
        )
        listed = read.config.get(i.layers[0]) if i.layers else None
        if i.layers is not None and listed is not None:
            if not isinstance(listed, list) or len(listed) != layers:
                read.absurd.append(i.layers[0])
            else:
                fields["index_layers"] = sum(word == i.layers[1] for word in listed)
    fields["attention_output_gate"] = declared.attention_output_gate
    return fields | _frontier_fields(read, hidden, layers)


# --- frontier (issue 20, point 3): Mamba-1 and Gemma 3n's per-layer parts --------------------------


def layer_widths(read: _Reader, layers: int) -> tuple[int, ...]:
    """Gemma 3n's intermediate_size when it is a list of one width a layer; () otherwise (the
    reader then takes it as one number)."""
    value = read.config.get("intermediate_size")
    if read.declared.per_layer is None or not read.declared.per_layer.widths or not isinstance(value, list):
        return ()
    if len(value) != layers or not all(positive_int(v) and v <= _MAX_DIMENSION for v in value):
        read.absurd.append("intermediate_size")
        return ()
    return tuple(value)


def _sparse_layers(pattern: object, layers: int) -> tuple[int, ...]:
    """act: the layers with activation sparsity, as Gemma3nTextConfig.__post_init__ reads its
    activation_sparsity_pattern: a list of one value a layer, one value for every layer, or none (the
    first 10 layers when there are more than 10)."""
    if pattern is None:
        return tuple(range(10)) if layers > 10 else ()
    if isinstance(pattern, list):
        return tuple(i for i, v in enumerate(pattern[:layers]) if isinstance(v, int | float) and v > 0)
    return tuple(range(layers)) if isinstance(pattern, int | float) and pattern > 0 else ()


def _frontier_fields(read: _Reader, hidden: int, layers: int) -> dict[str, Any]:
    declared, fields = read.declared, dict[str, Any]()
    if declared.mamba1 is not None:
        m = declared.mamba1
        # The config's own width only (Mamba's family default of intermediate_size is a placeholder).
        width = positive_int(read.config.get(m.width)) if m.width else None
        if width is None:
            expand = read.config.get(m.expand, declared.default(m.expand))
            ok = isinstance(expand, int | float) and not isinstance(expand, bool) and 0 < expand < 100
            width = int(expand * hidden) if ok else None
            if width is None:
                read.missing.append(m.expand)
        rank_value = read.config.get(m.dt_rank)
        # MambaConfig / JambaConfig: "auto" is ceil(hidden / 16).
        rank = -(-hidden // 16) if rank_value in (None, "auto") else read.whole(m.dt_rank, mapped=False)
        fields.update(
            mamba_intermediate_size=width,
            mamba_state_size=read.whole(m.state, required=True, mapped=False),
            mamba_conv_kernel=read.whole(m.conv, required=True, mapped=False),
            mamba_dt_rank=rank or None,
            mamba_conv_bias=read.flag(m.conv_bias, True),
            mamba_in_bias=read.flag(m.bias),
            mamba_dt_norms=m.dt_norms,
        )
    if declared.per_layer is not None:
        p = declared.per_layer
        shared = read.count(p.kv_shared)
        types = read.config.get("layer_types")
        sliding = 0
        if (
            shared
            and isinstance(types, list)
            and len(types) == layers
            and _sliding_layers(read.config, layers, declared)[1]
        ):
            sliding = sum(kind == "sliding_attention" for kind in types[layers - shared :])
        # decl: Gemma 4 builds no per-layer inputs where their width is 0 (or null).
        width = read.count(p.input_width, top=_MAX_DIMENSION) if p.input_optional and p.inputs else 0
        width = width if p.input_optional else None
        fields.update(
            altup_inputs=read.count(p.altup),
            laurel_rank=read.count(p.laurel, top=_MAX_DIMENSION),
            per_layer_input_size=(
                width if p.input_optional else read.whole(p.input_width, required=True, mapped=False)
            ),
            per_layer_vocab_size=(
                read.whole(p.input_vocab, required=True, top=100_000_000, mapped=False)
                if width is None or width
                else 0
            ),
            kv_shared_layers=shared,
            kv_shared_sliding_layers=sliding,
            sparse_mlp_layers=_sparse_layers(read.config.get(p.sparsity), layers),
        )
    if declared.compressed_attention is not None:
        fields |= _compressed_attention_fields(read, declared.compressed_attention, layers)
    if declared.shared_blocks is not None:
        fields |= _shared_block_fields(read, declared.shared_blocks, layers)
    if declared.global_attention is not None:
        fields |= _global_attention_fields(read, declared.global_attention, layers)
    if declared.mla_variants is not None:
        fields |= _mla_variant_fields(read, declared.mla_variants, layers)
    if declared.indexer is not None:
        fields["index_query_from_hidden"] = declared.indexer.query_from_hidden
    fields.update(
        softmax_scaling=declared.softmax_scaling,
        learned_rope_scale=declared.learned_rope_scale,
        layer_scalars=declared.layer_scalar,
        embedding_layernorm=declared.embedding_layernorm,
    )
    if declared.falcon_layout is not None:
        fields |= _falcon_fields(read, declared.falcon_layout)
    if declared.position_table is not None:  # decl: GPT-2's wpe, OPT's (max_position_embeddings + 2)
        rows_field, offset = declared.position_table
        rows = read.whole(rows_field, required=True, top=100_000_000)
        fields["position_embeddings"] = rows + offset if rows else None
    return fields


# --- decl (issue 20): Gemma 4's global layers, Mistral Large 4's MLA layers ---------------------------


def _gemma4_layer_types(read: _Reader, g: GlobalAttention, layers: int) -> list[str]:
    """Each layer's attention as Gemma4TextConfig.__post_init__ decides: layer_types, else every
    full_every-th layer full; the last layer full whatever the list says."""
    listed = read.config.get("layer_types")
    words = ("sliding_attention", "full_attention")
    if listed is not None and (
        not isinstance(listed, list) or len(listed) != layers or not all(w in words for w in listed)
    ):
        read.absurd.append("layer_types")
        return []
    types = (
        list(listed)
        if listed
        else ["sliding_attention" if (i + 1) % g.full_every else "full_attention" for i in range(layers)]
    )
    if types:
        types[-1] = "full_attention"
    return types


def _layer_overrides(read: _Reader, g: GlobalAttention, types: list[str]) -> dict[int, dict[str, Any]]:
    """Each layer's head_dim and num_key_value_heads overrides: the config's per_layer_config, or
    the class's derivation from global_head_dim (and, with attention_k_eq_v, num_global_key_value_heads)."""
    written = read.config.get(g.overrides)
    if written is None:
        found: dict[str, Any] = {"head_dim": read.whole(g.head_dim, default=g.default_head_dim, mapped=False)}
        if read.flag(g.k_eq_v) and read.config.get(g.kv_heads) is not None:
            found["num_key_value_heads"] = read.whole(g.kv_heads, mapped=False)
        return {i: found for i, kind in enumerate(types) if kind == "full_attention"}
    if not isinstance(written, dict):
        read.absurd.append(g.overrides)
        return {}
    overrides: dict[int, dict[str, Any]] = {}
    for key, value in written.items():
        index = int(key) if isinstance(key, str) and key.isdigit() and len(key) <= 6 else None
        if index is None or index >= len(types) or not isinstance(value, dict):
            read.absurd.append(g.overrides)
            return {}
        if not set(value) <= {"head_dim", "num_key_value_heads"}:
            # Only the field's name is echoed, never the config's own keys.
            raise ConfigProblem(
                "undeclared_family", (f"{g.overrides} beyond head_dim and num_key_value_heads",)
            )
        if not all(_whole(v, _MAX_DIMENSION) for v in value.values()):
            read.absurd.append(g.overrides)
            return {}
        overrides[index] = value
    return overrides


def _global_attention_fields(read: _Reader, g: GlobalAttention, layers: int) -> dict[str, Any]:
    """Gemma 4's global layers: how many, their head width and K/V heads (one shape for all of them,
    and the sliding layers the config's own; else refused), K = V, the shared layers' kinds."""
    types = _gemma4_layer_types(read, g, layers)
    overrides = _layer_overrides(read, g, types)
    head_dim = read.whole("head_dim")
    kv_heads = read.whole("num_key_value_heads", default=read.whole("num_attention_heads"))
    shapes = {
        kind: {
            (
                overrides.get(i, {}).get("head_dim", head_dim),
                overrides.get(i, {}).get("num_key_value_heads", kv_heads),
            )
            for i, k in enumerate(types)
            if k == kind
        }
        for kind in ("sliding_attention", "full_attention")
    }
    if shapes["sliding_attention"] - {(head_dim, kv_heads)} or len(shapes["full_attention"]) > 1:
        raise ConfigProblem("undeclared_family", (f"{g.overrides} varying within a layer kind",))
    global_dim, global_kv = next(iter(shapes["full_attention"]), (head_dim, kv_heads))
    if not (_whole(global_dim, _MAX_DIMENSION) and _whole(global_kv, _MAX_DIMENSION)):
        read.absurd.append(g.overrides if read.config.get(g.overrides) is not None else g.head_dim)
        return {}
    heads = read.whole("num_attention_heads") or 1
    if not isinstance(global_kv, int) or heads % global_kv:
        read.absurd.append(g.kv_heads)
    shared = read.count(read.declared.per_layer.kv_shared) if read.declared.per_layer else 0
    shared_sliding = (
        sum(kind == "sliding_attention" for kind in types[len(types) - shared :]) if shared else 0
    )
    full = types.count("full_attention")
    double_wide = read.flag(g.double_wide)
    moe = read.declared.experts
    if double_wide and shared and moe is not None and moe.enabled_by and read.flag(moe.enabled_by):
        raise ConfigProblem(
            "undeclared_family", ("gemma4_text with use_double_wide_mlp and enable_moe_block",)
        )
    return {
        "global_layers": full,
        "global_head_dim": global_dim,
        "global_kv_heads": global_kv,
        "global_k_eq_v": read.flag(g.k_eq_v),
        "double_wide_shared_mlp": double_wide,
        "kv_shared_sliding_layers": shared_sliding,
    }


def _falcon_fields(read: _Reader, f: FalconLayout) -> dict[str, Any]:
    """Falcon's K/V heads and norms a layer by its switches (FalconAttention's qkv_out_dim,
    FalconDecoderLayer's LayerNorms)."""
    heads = read.whole("num_attention_heads") or 1
    if read.flag(f.new_architecture):
        kv_heads = read.whole("num_key_value_heads", default=heads) or heads
        parallel_norms = read.whole(f.norms_in_parallel, mapped=False) or 2
    else:
        kv_heads = 1 if read.flag(f.multi_query, True) else heads
        parallel_norms = read.whole(f.norms_in_parallel, mapped=False) or 1
    if heads % kv_heads:
        read.absurd.append("num_kv_heads")
    norms = (2 if parallel_norms == 2 else 1) if read.flag(f.parallel, True) else 2
    return {"kv_heads": kv_heads, "norms_per_layer": norms}


def _gemma4_types_written(text: dict[str, Any], declared: Family) -> dict[str, Any]:
    """The config with Gemma 4's layer_types as its class completes them (the pattern where absent,
    the last layer full), so that the sliding layers are counted as built."""
    g, layers = declared.global_attention, positive_int(text.get("num_hidden_layers"))
    if g is None or layers is None or layers > _MAX_LAYERS:
        return text
    probe = _Reader(text, declared)
    types = _gemma4_layer_types(probe, g, layers)
    return {**text, "layer_types": types} if types else text


def _mla_variant_fields(read: _Reader, m: MlaVariants, layers: int) -> dict[str, Any]:
    """Mistral Large 4's MLA layers without RoPE, those sharing an earlier layer's latent (and of them
    the ones without RoPE), and its indexer's layers, as MistralLarge4TextConfig.__post_init__ derives
    them where the config leaves them out."""
    ropes = read.config.get(m.rope_list)
    if ropes is None:
        every = read.whole(m.rope_interval, default=m.default_interval, mapped=False) or m.default_interval
        ropes = [int((i + 1) % every != 0) for i in range(layers)]
    sources = read.config.get(m.kv_sources)
    if sources is None:
        sources = list(range(layers))
    ok_ropes = isinstance(ropes, list) and len(ropes) >= layers and all(r in (0, 1) for r in ropes)
    ok_sources = (
        isinstance(sources, list)
        and len(sources) == layers
        and all(
            isinstance(s, int) and not isinstance(s, bool) and 0 <= s <= i and sources[s] == s
            for i, s in enumerate(sources)
        )
    )
    if not ok_ropes or not ok_sources:
        read.absurd.append(m.rope_list if not ok_ropes else m.kv_sources)
        return {}
    shared = [i for i in range(layers) if sources[i] != i]
    fields: dict[str, Any] = {
        "nope_layers": sum(1 for i in range(layers) if not ropes[i]),
        "kv_shared_layers": len(shared),
        "kv_shared_nope_layers": sum(1 for i in shared if not ropes[i]),
    }
    indexer = read.declared.indexer
    if indexer is not None and indexer.layers is not None and read.config.get(indexer.layers[0]) is None:
        pattern = read.config.get(m.index_pattern)
        if pattern is not None:
            words = (
                [{"F": "full", "S": "shared"}.get(c) for c in pattern]
                if isinstance(pattern, str)
                else pattern
            )
        else:
            freq = max(read.whole(m.index_freq[0], default=m.index_freq[1], mapped=False) or 1, 1)
            offset = (
                read.count(m.index_offset[0])
                if read.config.get(m.index_offset[0]) is not None
                else m.index_offset[1]
            )
            words = ["full" if max(i - offset + 1, 0) % freq == 0 else "shared" for i in range(layers)]
        if not isinstance(words, list) or len(words) < layers:
            read.absurd.append(m.index_pattern)
            return fields
        fields["index_layers"] = sum(1 for w in words[:layers] if w != "shared")
    return fields


# --- frontier, round 4 (issue 20, point 3): Kimi Linear's linear_attn_config, DeepSeek-V4 -----------


def _first_dense(read: _Reader, moe: Experts) -> int:
    """The first layers that keep a dense MLP: first_dense's, unless the family reads only its kinds
    list where the config has one; where it has none, the config class's own derivation (issue 20,
    point 4: a missing mlp_layer_types is not every layer MoE in every family)."""
    listed = moe.kinds is not None and isinstance(read.config.get(moe.kinds[0]), list)
    if listed and moe.first_dense_unless_listed:
        return 0
    if not listed and moe.kinds is not None and moe.first_dense is None:
        return moe.unlisted_dense
    return read.count(moe.first_dense)


def _uniform(text: dict[str, Any], declared: Family, model_type: str) -> dict[str, Any]:
    """The config with each of the family's per-layer lists of one value as that value; a list of
    several values is refused (Hunyuan-A13B: the family's classes read one value)."""
    found = dict(text)
    for name in declared.uniform_lists:
        value = text.get(name)
        if not isinstance(value, list) or not value:
            continue
        if any(v != value[0] for v in value):
            raise ConfigProblem("undeclared_family", (f"{model_type[:40]} with {name} varying by layer",))
        found[name] = value[0]
    return found


def _built_as(text: dict[str, Any], declared: Family, model_type: str) -> dict[str, Any]:
    """Refuses a config whose unread fields say otherwise than what the family's classes build."""
    for name, built in declared.built_as.items():
        value = text.get(name)
        expected = text.get(built) if isinstance(built, str) else built
        if value is not None and value != expected:
            # The config's own value is never echoed: only the field names and the declared value.
            raise ConfigProblem("undeclared_family", (f"{model_type[:40]} with {name} other than {built}",))
    return text


def _lifted(text: dict[str, Any], declared: Family) -> dict[str, Any]:
    """The config with the fields its sub-dict gives lifted over its own, as the config class does
    (Kimi Linear's linear_attn_config; bot.estimate.families.NestedFields); a layer list naming a
    layer the model does not have, or leaving one out, is absurd."""
    nested = declared.nested
    sub = text.get(nested.name) if nested is not None else None
    if nested is None or not isinstance(sub, dict):
        return text
    lifted = dict(text)
    for key, name in nested.lifted.items():
        if sub.get(key) is not None:
            lifted[name] = sub[key]
    layers = positive_int(text.get("num_hidden_layers"))
    if text.get("layer_types") is None and nested.layer_lists and all(k in sub for k in nested.layer_lists):
        types: list[str | None] = [None] * (layers or 0)
        for key, word in nested.layer_lists.items():
            numbers = sub[key]
            if not isinstance(numbers, list) or not all(positive_int(n) and n <= len(types) for n in numbers):
                raise ConfigProblem("absurd", (nested.name,))
            for number in numbers:
                types[number - 1] = word  # 1-indexed in the checkpoint
        if None in types:
            raise ConfigProblem("absurd", (nested.name,))
        lifted["layer_types"] = types
    return lifted


# DeepseekV4Config's legacy per-layer compress_ratios: 0 a sliding layer, else the kind of that rate.
_LEGACY_RATIO_KINDS = {0: "sliding", 4: "sparse", 128: "heavy"}


def _compressed_layer_kinds(read: _Reader, c: CompressedAttention, layers: int) -> list[str]:
    """Each layer's kind ("sliding", "sparse", "heavy") as DeepseekV4Config.__post_init__ decides:
    layer_types, else the legacy compress_ratios, else two heavily-compressed layers and then
    compressed-sparse and heavily-compressed in turn; a longer list is cut to the layers."""
    words = {c.sliding: "sliding", c.sparse: "sparse", c.heavy: "heavy"}
    listed, legacy = read.config.get("layer_types"), read.config.get(c.legacy_ratios)
    if listed is not None:
        if not isinstance(listed, list) or len(listed) < layers or not all(w in words for w in listed):
            read.absurd.append("layer_types")
            return []
        return [words[w] for w in listed[:layers]]
    if legacy is not None:
        if (
            not isinstance(legacy, list)
            or len(legacy) < layers
            or not all(r in _LEGACY_RATIO_KINDS for r in legacy)
        ):
            read.absurd.append(c.legacy_ratios)
            return []
        return [_LEGACY_RATIO_KINDS[r] for r in legacy[:layers]]
    return ["heavy"] * min(layers, 2) + ["sparse" if i % 2 else "heavy" for i in range(max(layers - 2, 0))]


def _compress_rates(read: _Reader, c: CompressedAttention) -> tuple[int | None, int | None]:
    """The compressed-sparse and heavily-compressed rates: compress_rates, its legacy top-level
    compress_rate_csa / compress_rate_hca, or the class's defaults (4, 128)."""
    rates = read.config.get(c.rates)
    found: list[int | None] = []
    for word, legacy, default in zip(
        (c.sparse, c.heavy), ("compress_rate_csa", "compress_rate_hca"), c.default_rates, strict=True
    ):
        value = read.config.get(legacy)
        if value is None:
            value = rates.get(word, default) if isinstance(rates, dict) else default
        rate = _whole(value, _MAX_DIMENSION)
        if rate is None:
            read.absurd.append(c.rates)
        found.append(rate)
    return found[0], found[1]


def _hash_routed_layers(read: _Reader, c: CompressedAttention, layers: int) -> int:
    """decl2: the hash-routed MoE layers as DeepseekV4Config.__post_init__ decides: mlp_layer_types
    (cut to the layers), else the first num_hash_layers (default 3)."""
    listed = read.config.get(c.mlp_kinds)
    if listed is not None:
        if (
            not isinstance(listed, list)
            or len(listed) < layers
            or not all(w in (c.hash_routed, c.routed) for w in listed)
        ):
            read.absurd.append(c.mlp_kinds)
            return 0
        return listed[:layers].count(c.hash_routed)
    if read.config.get(c.legacy_hash_layers) is None:
        return min(layers, c.default_hash_layers)
    return min(layers, read.count(c.legacy_hash_layers))


def _shared_block_fields(read: _Reader, b: SharedBlocks, layers: int) -> dict[str, Any]:
    """decl2: Zamba2's shared blocks: its hybrid layers by layers_block_type (else the class's own
    list, which is then the model: a config of another depth is refused), the distinct blocks
    (num_mem_blocks, cycled over the hybrid layers), the adapters' rank and switches."""
    listed = read.config.get(b.kinds)
    kinds = listed if isinstance(listed, list) else list(b.default_kinds)
    if len(kinds) != layers:
        read.absurd.append("num_hidden_layers")
        return {}
    hybrid = kinds.count(b.word)
    cycle = read.whole(b.blocks, required=True, mapped=False) or 1
    # Each block holds the adapters of the hybrid layers i with i % num_mem_blocks == its own. The
    # blocks are tied by _tied_weights_keys, which transformers applies only with tied embeddings:
    # untied, every hybrid layer keeps a block of its own, with its cycle slot's adapters.
    slots = [len(range(k, hybrid, cycle)) for k in range(min(cycle, hybrid))]
    per_module = sum(slots[k % cycle] for k in range(hybrid))
    tied = read.flag("tie_word_embeddings", True)
    return {
        "shared_blocks": len(slots) if tied else hybrid,
        "shared_block_layers": hybrid,
        "shared_block_adapters": hybrid if tied else per_module,
        "shared_module_adapters": per_module,
        "shared_adapter_rank": read.count(b.rank, top=_MAX_DIMENSION),
        "shared_attention_adapters": read.flag(b.attention_adapters),
        "shared_block_bias": read.flag(b.bias),
    }


def _compressed_attention_fields(read: _Reader, c: CompressedAttention, layers: int) -> dict[str, Any]:
    """DeepSeek-V4's attention fields as the Architecture takes them: every layer slides over the
    window, with its one K=V head; the indexer is the compressed-sparse layers'."""
    kinds = _compressed_layer_kinds(read, c, layers)
    sparse_rate, heavy_rate = _compress_rates(read, c)
    sparse = kinds.count("sparse")
    return {
        "kv_heads": 1,
        "q_lora_rank": read.whole("q_lora_rank", required=True, mapped=False),
        "output_groups": read.whole(c.groups, required=True, mapped=False),
        "output_group_rank": read.whole(c.group_rank, required=True, mapped=False),
        "residual_streams": read.count(c.streams),
        "hash_routed_layers": _hash_routed_layers(read, c, layers),
        "compressed_kinds": tuple(kinds),
        "sinkhorn_iterations": read.count(c.sinkhorn) if c.sinkhorn in read.config else c.default_sinkhorn,
        "compressed_sparse_layers": sparse,
        "heavily_compressed_layers": kinds.count("heavy"),
        "compress_rate_sparse": sparse_rate,
        "compress_rate_heavy": heavy_rate,
        "index_heads": read.whole("index_n_heads", required=True, mapped=False),
        "index_head_dim": read.whole("index_head_dim", required=True, mapped=False),
        "index_layers": sparse,
        "sliding_window": read.whole("sliding_window", required=True, top=_MAX_DIMENSION * 10, mapped=False),
        "sliding_window_layers": layers,
    }


def architecture_from_config(
    repo_id: str, config: object, *, stored_params: int | None = None, revision: str | None = None
) -> Architecture:
    """The architecture a config.json describes, counted like the presets; :class:`ConfigProblem` when
    it is not a dict of the fields its family's declaration (bot.estimate.families) reads, its family
    has no declaration, or its sizes are absurd.

    ``stored_params`` is the Hub's safetensors total: recorded when it disagrees with the count by
    more than :data:`COUNT_TOLERANCE` (the answer uses the count and says why), and, for a multimodal
    repo, what the vision side holds besides the text model, unless its declaration counts the
    towers and projectors from the config itself (bot.estimate.towers).
    """
    from bot.estimate.families import family
    from bot.estimate.towers import count_towers

    if not isinstance(config, dict):
        raise ConfigProblem("malformed", ())
    text, outer = _text_config(config)
    # Only a plain short name is ever echoed (a list's or an object's repr never reaches an answer).
    model_type = plain_model_type(text.get("model_type"))
    declared = family(model_type)
    if declared is None:
        named = plain_model_type(config.get("model_type")) or model_type if outer is None else model_type
        raise _refusal(config, named)
    text = _built_as(_uniform(_lifted(text, declared), declared, model_type), declared, model_type)
    text = _gemma4_types_written(text, declared)  # decl
    read = _Reader(text, declared)
    for switch in declared.unsupported:
        if text.get(switch, declared.default(switch)):
            raise ConfigProblem("undeclared_family", (f"{model_type[:40]} with {switch}",))
    hidden = read.whole("hidden_size", required=True)
    kinds = declared.layer_kinds
    listed = next((text[f] for f in kinds.fields if text.get(f) is not None), None) if kinds else None
    if kinds is not None and kinds.list_is_layers and isinstance(listed, list | str) and listed:
        layers = len(listed) if len(listed) <= _MAX_LAYERS else None  # Nemotron-H: the list is the model
    else:
        layers = read.whole("num_hidden_layers", required=True, top=_MAX_LAYERS)
    heads = read.whole("num_attention_heads", required=True)
    kv_heads = read.whole("num_key_value_heads", default=heads)
    if declared.multi_query is not None and read.flag(declared.multi_query):
        kv_heads = 1  # decl: GPT-BigCode's multi-query attention
    vocab = read.whole("vocab_size", required=True, top=100_000_000)
    head_dim = read.whole("head_dim")
    widths = layer_widths(read, layers or 0)  # Gemma 3n: one width a layer
    ratio = declared.mlp_ratio  # decl: GPT-2's n_inner null is 4h
    dense_width = widths[0] if widths else read.whole("intermediate_size", required=ratio is None)
    if dense_width is None and ratio is not None and hidden is not None:
        dense_width = ratio * hidden
    if declared.ffn_auto_adjust and dense_width is not None:
        dense_width = _ffn_width(text, dense_width)
    moe = declared.experts
    if moe is not None and moe.enabled_by is not None and not read.flag(moe.enabled_by):
        moe = None  # decl: Gemma 4 builds no MoE block without enable_moe_block
    experts = 1
    if moe is not None:  # Granite 4's dense models write num_local_experts: 0
        found_count = read.first(*moe.count, mapped=False)
        if found_count is not None and found_count[1] not in (0, 0.0):
            experts = read.whole(*moe.count, default=1, top=_MAX_EXPERTS, mapped=False) or 1
    is_moe = (experts or 1) > 1 or (moe is not None and moe.one_expert_block)
    moe_fields: dict[str, Any] = {}
    if moe is not None and is_moe:
        per_token = read.whole(moe.active, default=1, mapped=False) or 1
        shared_width = read.count(moe.shared_width, top=_MAX_DIMENSION)
        shared = moe.shared if isinstance(moe.shared, int) else read.count(moe.shared, top=_MAX_EXPERTS)
        moe_fields = {
            "experts_per_token": min(per_token, experts or 1),
            "moe_intermediate_size": (
                read.whole(moe.width, required=True, mapped=False) if moe.width else None
            ),
            "shared_experts": 1 if shared_width else shared,
            "shared_expert_intermediate_size": shared_width or None,
            "shared_expert_gate": moe.shared_gate and bool(shared_width),
            "first_k_dense_replace": _first_dense(read, moe),
            "interleave_moe_layer_step": read.whole(moe.step, default=1, mapped=False) if moe.step else 1,
            "mlp_only_layers": _dense_layers(read, moe, layers or 0),
            "router_bias": moe.router_bias,
            "router_correction_bias": read.flag(moe.correction_bias),
            "expert_bias": moe.expert_bias,
            "fused_expert_gate_up": moe.fused_gate_up,
            "moe_with_one_expert": moe.one_expert_block,
            "router_scales": moe.router_scales,
        }
    mla_names = ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
    mla = {name: read.whole(name) for name in mla_names} if declared.mla else {}
    mtp = read.count("num_nextn_predict_layers") if declared.multi_token_prediction else 0
    window, sliding = _sliding_layers(text, layers or 0, declared)
    hybrid = _hybrid_fields(read, hidden or 0, layers or 0)
    hybrid_dense = hybrid.pop("hybrid_dense", ())
    if hybrid_dense and moe_fields:  # Nemotron-H's MLP blocks among its MoE blocks
        moe_fields["mlp_only_layers"] = tuple(sorted({*moe_fields["mlp_only_layers"], *hybrid_dense}))
    if read.absurd:
        raise ConfigProblem("absurd", tuple(read.absurd))
    if read.missing or None in (hidden, layers, heads, kv_heads, vocab, dense_width):
        raise ConfigProblem("unknown_architecture", tuple(read.missing))
    if heads and kv_heads and heads % kv_heads:  # grouped-query attention shares whole groups
        raise ConfigProblem("absurd", ("num_key_value_heads",))
    fields: dict[str, Any] = {
        "key": HUB_KEY,
        "name": repo_id,
        "hub_id": repo_id,
        "source": "hub",
        "hub_revision": revision,
        "model_type": model_type or None,
        "hidden_size": hidden,
        "layers": layers,
        "attention_heads": heads,
        "kv_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": dense_width,
        "vocab_size": vocab,
        "tied_embeddings": read.flag("tie_word_embeddings", declared.tied_by_default),
        "qkv_bias": read.flag(declared.qkv_bias),
        "o_bias": read.flag(declared.o_bias),
        "qk_norm": read.flag(declared.qk_norm),
        "qk_norm_scope": declared.qk_norm_scope,
        "qk_norm_bias": declared.qk_norm_bias,
        "attention_experts": experts if declared.attention_experts else 0,
        "attention_sinks": declared.attention_sinks,
        "norms_per_layer": (
            declared.norms_per_layer
            + 2 * read.flag(declared.post_norms)
            + (moe.norms if moe_fields and moe else 0)
        ),
        "norm_parameters": declared.norm_parameters,
        "lm_head_bias": read.flag(declared.lm_head_bias),
        "gated_mlp": declared.gated_mlp,
        "mlp_bias": read.flag(declared.mlp_bias),
        "activation_params": declared.activation_params,
        "fused_qkv": declared.fused_qkv,
        "fused_gate_up": declared.fused_gate_up,
        **mla,
        "experts": experts if moe_fields else 1,
        **moe_fields,
        "mtp_layers": mtp,
        "sliding_window": window,
        "sliding_window_layers": sliding,
        **hybrid,
        "intermediate_sizes": widths,
        "text_only_of_multimodal": outer is not None,
        # "Active per token" by the vendor's convention, as the presets count it.
        "active_embeddings": declared.active_embeddings,
        "context_length": positive_int(text.get("max_position_embeddings")),
        "published_params": 1,  # replaced below by the count
    }
    try:
        counted = Architecture.model_validate(fields)
    except ValidationError as exc:
        names = tuple(dict.fromkeys(str(e["loc"][0]) if e["loc"] else "config" for e in exc.errors()))
        raise ConfigProblem("absurd", names) from None
    count = counted.parameter_count
    if count > _MAX_PARAMETERS:
        raise ConfigProblem("absurd", ("hidden_size", "num_hidden_layers"))
    update: dict[str, Any] = {"published_params": count}
    # mm: a multimodal family's declared towers and projectors, counted from the config itself.
    towers = count_towers(config, outer, hidden or 0) if outer is not None else None
    if towers is not None:
        if towers.total > _MAX_PARAMETERS:  # a tower no model has (its depth or widths absurd)
            subs = dict.fromkeys(t.config for t in (outer.towers if outer else ()))
            raise ConfigProblem("absurd", tuple(subs))
        update.update(non_text_params=towers.total, projector_params=towers.projector)
        whole = count + towers.total
        if stored_params and abs(stored_params - whole) > COUNT_TOLERANCE * whole:
            update["hub_stored_params"] = stored_params
    elif stored_params is not None and stored_params > 0:
        if outer is not None and stored_params > count:
            update["non_text_params"] = stored_params - count  # the vision tower and projector
        elif abs(stored_params - count) > COUNT_TOLERANCE * count:
            update["hub_stored_params"] = stored_params
    return counted.model_copy(update=update)


# --- the registry of looked-up repos ---------------------------------------------------------------

# What a looked-up repo is: its shape (a family declared), or only its tensors' exact count.
HubModel = Architecture | CountedModel


@dataclass
class _Registry:
    """Repo ID -> architecture, filled by the runtime before it validates a request naming the repo."""

    by_repo: dict[str, HubModel]


_REGISTRY = _Registry({})
REGISTRY_MAX = 4096


def register(architecture: HubModel) -> None:
    """Make a looked-up repo known to the request's validator (the latest revision wins)."""
    if architecture.hub_id is None:
        raise ValueError("only Hub architectures are registered")
    key = architecture.hub_id.lower()
    _REGISTRY.by_repo.pop(key, None)
    _REGISTRY.by_repo[key] = architecture
    # Bounded like the runtime's caches, oldest first: a dropped repo is registered again by the
    # runtime's next lookup before validation.
    while len(_REGISTRY.by_repo) > REGISTRY_MAX:
        del _REGISTRY.by_repo[next(iter(_REGISTRY.by_repo))]


def registered(repo_id: str) -> HubModel | None:
    """The architecture of a looked-up repo; repo IDs are case-insensitive on the Hub."""
    return _REGISTRY.by_repo.get(repo_id.lower())


def forget_all() -> None:
    """Empty the registry (tests, and the runtime when it drops its cache)."""
    _REGISTRY.by_repo.clear()
