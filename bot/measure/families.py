"""Small Hugging Face configs for measuring on CPU: one per declared family, derived from its declaration.

Pure Python. :func:`small_config` writes one shared small shape in the field names of the family's
declaration (``bot.estimate.families``): hidden size, MLP width, K/V width and vocabulary all
different, so that the s·b·h, s·b·f, s·b·kv and s·b·v terms can be told apart; its experts (4 of
them, 2 active, one shared expert where it has shared experts), latent attention, a sliding window
where its config class slides layers by default, and one layer of each of its hybrid layer kinds in
its config's own words. The declaration's ``small`` fields are laid over that, where the derivation
alone would not build or would not be the model measured. A new declaration needs nothing here.

``vram-bot measure --family``, the accuracy benchmarks (``benchmarks/accuracy*.py``,
``benchmarks/hybrid_activations.py``) and the accuracy tests all take a family's config from
:data:`SMALL_CONFIGS`; ``architecture`` reads such a dict as the bot reads a Hub config.json, so a
measurement is compared with the estimate /vram gives.
"""

from __future__ import annotations

import copy
from types import MappingProxyType
from typing import Any

from bot.estimate.families import FAMILIES, Family, LayerKind, LayerKinds, MlpKind, family
from bot.estimate.hub import architecture_from_config
from bot.estimate.models import Architecture
from bot.measure.types import Attention

# Shared small shape: h = 256, 8 query heads of 32, 2 K/V heads (GQA 4:1), f = 688, v = 1000.
_BASE: dict[str, Any] = {
    "hidden_size": 256,
    "intermediate_size": 688,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "head_dim": 32,
    "vocab_size": 1000,
    "max_position_embeddings": 4096,
    "tie_word_embeddings": False,
    "use_cache": False,
    "attention_dropout": 0.0,
    "pad_token_id": 0,  # within the small vocabulary
}
# Wider than the benchmarks' sequences, so that local and global layers keep the same (the serving
# benchmark narrows it to reach the cap).
WIDE_WINDOW = 4096
EXPERT_WIDTH = 344
# Multi-head latent attention (DeepSeek-V3): low-rank Q and KV, decoupled RoPE; head_dim is RoPE's
# width, as DeepSeek-V3's config sets it.
_MLA: dict[str, Any] = {
    "num_key_value_heads": 8,
    "q_lora_rank": 96,
    "kv_lora_rank": 64,
    "qk_rope_head_dim": 16,
    "head_dim": 16,
    "qk_nope_head_dim": 32,
    "v_head_dim": 32,
}
# The hybrid mixers: Mamba-2 with an inner width of 2h = 8 heads × 64, Gated DeltaNet, the indexer.
_MAMBA_HEADS, _MAMBA_HEAD_DIM, _MAMBA_EXPAND = 8, 64, 2


def name_of(declared: Family) -> str:
    """The family's name in the benchmarks and ``vram-bot measure --family``: its model_type, a text
    model's without ``_text`` (gemma3_text is "gemma3")."""
    return declared.model_type.removesuffix("_text")


def _experts(declared: Family) -> dict[str, Any]:
    moe = declared.experts
    if moe is None:
        return {}
    fields: dict[str, Any] = {moe.count[0]: 4, moe.active: 2}
    if moe.width is not None:  # else intermediate_size is every expert's (Mixtral)
        dense = declared.name("intermediate_size")[0]
        fields |= {dense: _BASE["intermediate_size"], moe.width: EXPERT_WIDTH}
    if isinstance(moe.shared, str):
        fields[moe.shared] = 1
    if moe.shared_width is not None:
        fields[moe.shared_width] = EXPERT_WIDTH
    if moe.first_dense is not None:
        fields[moe.first_dense] = 0  # every layer MoE
    if moe.step is not None:
        fields[moe.step] = 1
    if moe.dense_list is not None:
        fields[moe.dense_list] = []
    return fields


def _one_layer_of_each_kind(kinds: LayerKinds) -> list[tuple[str, tuple[LayerKind, MlpKind]]]:
    """Each meaning the family's words have, once, by its first word; the default kind's first."""
    meanings: dict[tuple[LayerKind, MlpKind], str] = {}
    for word, meaning in kinds.words.items():
        meanings.setdefault(meaning, word)
    ordered = sorted(meanings.items(), key=lambda item: item[0][0] != kinds.default)
    return [(word, meaning) for meaning, word in ordered]


def _hybrid(declared: Family) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    kinds = declared.layer_kinds
    if kinds is not None and kinds.words:
        layers = _one_layer_of_each_kind(kinds)
        fields["num_hidden_layers"] = len(layers)
        if kinds.indices is not None:  # Bamba's attn_layer_indices: the list is derived from it
            name, kind = kinds.indices
            fields[name] = [i for i, (_, (mixer, _)) in enumerate(layers) if mixer == kind]
        elif kinds.fields:
            fields[kinds.fields[0]] = [word for word, _ in layers]
    if declared.mamba is not None:
        m = declared.mamba
        fields |= {m.heads: _MAMBA_HEADS, m.head_dim: _MAMBA_HEAD_DIM, m.groups: 2, m.state: 16, m.conv: 4}
        if m.width is not None:
            fields[m.width] = _MAMBA_HEADS * _MAMBA_HEAD_DIM
        if m.expand is not None:
            fields[m.expand] = _MAMBA_EXPAND
    if declared.mamba1 is not None:  # Mamba-1: an inner width of 2h, a rank-16 dt
        m1 = declared.mamba1
        fields |= {m1.state: 16, m1.conv: 4, m1.expand: _MAMBA_EXPAND, m1.dt_rank: 16}
        if m1.width is not None:
            fields[m1.width] = _MAMBA_EXPAND * _BASE["hidden_size"]
    if declared.per_layer is not None:  # Gemma 3n: small per-layer inputs, LAuReL and K/V sharing
        p = declared.per_layer
        fields[p.kv_shared] = 1
        if p.inputs:
            fields |= {p.input_width: 8, p.input_vocab: 128}
        if p.laurel is not None:  # Gemma 4 has no LAuReL
            fields[p.laurel] = 4
    if declared.delta_net is not None:
        d = declared.delta_net
        fields |= {d.key_heads: 2, d.value_heads: 4, d.key_dim: 64, d.value_dim: 64, d.conv: 4}
    if declared.short_conv is not None:
        fields[declared.short_conv.kernel] = 3
    if declared.indexer is not None:
        fields |= {declared.indexer.heads: 2, declared.indexer.head_dim: 32}
    return fields


def small_config(declared: Family) -> dict[str, Any]:
    """The family's small ``config.json``-like dict, which transformers builds on CPU."""
    config: dict[str, Any] = {"model_type": declared.model_type, **_BASE, **declared.measure_fields}
    if declared.slides_by_default:
        config["sliding_window"] = WIDE_WINDOW
    if declared.mla:
        config |= _MLA
    # A shared field the family has no name for (GPT-2's head_dim, Falcon's, a property there) is left out.
    config = {k: v for k, v in config.items() if declared.names.get(k) != ()}
    return config | _experts(declared) | _hybrid(declared) | copy.deepcopy(dict(declared.small))


# Every declared family by name_of, and its small config: derived, the one table of them
# (tests/test_small_configs.py).
DECLARED: MappingProxyType[str, Family] = MappingProxyType({name_of(f): f for f in FAMILIES})
SMALL_CONFIGS: MappingProxyType[str, dict[str, Any]] = MappingProxyType(
    {name: small_config(f) for name, f in DECLARED.items() if f.standalone}
)


def at_depth(config: dict[str, Any], layers: int) -> dict[str, Any]:
    """``config`` cut to its first ``layers`` layers: each per-layer list (as long as the config's
    num_hidden_layers, or ``layer_types``) and each list of layer indices its declaration names."""
    declared = family(str(config.get("model_type") or ""))
    indices: set[str] = set()
    if declared is not None and declared.layer_kinds is not None and declared.layer_kinds.indices:
        indices.add(declared.layer_kinds.indices[0])
    if declared is not None and declared.experts is not None and declared.experts.dense_list:
        indices.add(declared.experts.dense_list)
    depth = config.get("num_hidden_layers")
    cut = dict(config)
    for name, value in config.items():
        if not isinstance(value, list):
            continue
        if name in indices:
            cut[name] = [i for i in value if isinstance(i, int) and i < layers]
        elif name == "layer_types" or (depth is not None and len(value) == depth):
            cut[name] = value[:layers]
            if len(set(map(str, value))) == 1:  # famact: one kind for every layer extends to any depth
                cut[name] = value[:1] * layers
    cut["num_hidden_layers"] = layers
    return cut


def attention_it_runs(declared: Family | None) -> Attention:
    """The attention transformers 5.24 builds a family's model with, so a measurement builds it so:
    SDPA, or eager where its declaration says it runs no SDPA (``runs_sdpa``); SDPA undeclared."""
    return "sdpa" if declared is None or declared.runs_sdpa else "eager"


def architecture(name: str, config: dict[str, Any], layers: int | None = None) -> Architecture:
    """The estimator's view of a config dict, ``layers`` deep: the bot's own reading of it as a Hub
    config.json (bot.estimate.hub, by the family's declaration in bot.estimate.families), so the
    benchmark compares the measurement with exactly what /vram would estimate."""
    depth = int(layers or config.get("num_hidden_layers") or 1)
    read = architecture_from_config(name, at_depth(config, depth))
    # Named like a preset (keys are plain: [a-z0-9.-]); the family follows its model_type.
    return read.model_copy(
        update={"key": name.replace("_", "-"), "name": name, "hub_id": None, "source": "preset"}
    )
