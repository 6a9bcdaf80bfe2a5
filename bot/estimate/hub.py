"""A Hugging Face repo's ``config.json`` as an :class:`~bot.estimate.models.Architecture`, and the
registry of the repos the runtime has looked up.

Pure: no network and no words. The runtime (``bot/runtime/hub_client.py``, the CLI) fetches the config
and the Hub's stored parameter count, turns them into an architecture here and registers it; the
request's ``model`` validator then finds a repo ID in the registry, so validation stays synchronous.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from bot.estimate.models import Architecture
from bot.estimate.tensors import CountedModel

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

# Families whose transformers config class ties the embeddings by default (PretrainedConfig's
# default is True; these classes keep it, the others set False).
_TIED_BY_DEFAULT = frozenset({"gemma", "gemma2", "gemma3", "gemma3_text"})
# Families whose decoder layers hold four RMSNorms (pre and post, around attention and the MLP).
_FOUR_NORMS = frozenset({"gemma2", "gemma3", "gemma3_text"})
_QK_NORM = frozenset({"qwen3", "qwen3_moe", "gemma3", "gemma3_text"})
_FUSED_PROJECTIONS = frozenset({"phi3"})  # qkv_proj and gate_up_proj in the checkpoint
_FUSED_EXPERTS = frozenset({"gpt_oss", "llama4", "llama4_text"})  # experts.gate_up_proj
# The families whose field names this module maps (and tests against the presets' counts). Another
# family is counted when its config says it is a causal LM (Llama-like variants abound); a BERT or a
# T5 has the same field names but another shape, which the counter would count wrongly.
KNOWN_FAMILIES = frozenset(
    {
        "llama", "mistral", "mistral3", "qwen2", "qwen3", "qwen3_moe", "mixtral", "gemma", "gemma2",
        "gemma3", "gemma3_text", "phi3", "deepseek_v3", "kimi_k2", "gpt_oss", "glm4_moe", "llama4",
        "llama4_text", "smollm3",
    }
)  # fmt: skip


def _is_decoder(config: dict[str, Any], family: str) -> bool:
    architectures = config.get("architectures")
    names = [a for a in architectures if isinstance(a, str)] if isinstance(architectures, list) else []
    return family in KNOWN_FAMILIES or any(name.endswith("ForCausalLM") for name in names)


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
        kind: Literal["unknown_architecture", "not_a_decoder", "absurd", "malformed"],
        fields: tuple[str, ...],
    ) -> None:
        super().__init__(f"{kind}: {', '.join(fields)}")
        self.kind = kind
        self.fields = fields


def _text_config(config: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The text model's config and whether the repo is multimodal (Gemma 3, Llama 4, Mistral 3 keep
    the language model's fields in ``text_config``)."""
    inner = config.get("text_config")
    if isinstance(inner, dict):
        merged = dict(inner)
        # Some multimodal configs keep the vocabulary or the tying at the top level only.
        for name in ("vocab_size", "tie_word_embeddings"):
            if name not in merged and name in config:
                merged[name] = config[name]
        merged.setdefault("model_type", config.get("model_type"))
        return merged, True
    return config, False


class _Reader:
    """Reads typed fields of a config, remembering which required ones are missing or unusable."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.missing: list[str] = []
        self.absurd: list[str] = []

    def first(self, *names: str) -> tuple[str, object] | None:
        for name in names:
            if self.config.get(name) is not None:
                return name, self.config[name]
        return None

    def int(
        self, *names: str, required: bool = False, default: int | None = None, top: int = _MAX_DIMENSION
    ) -> int | None:
        found = self.first(*names)
        if found is None:
            if required:
                self.missing.append(names[0])
            return default
        name, value = found
        # JSON has one number type: 4096.0 is a whole number, 4096.5 and true are not.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= top:
            self.absurd.append(name)
            return default
        return value

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.config.get(name)
        return value if isinstance(value, bool) else default


def _sliding_layers(text: dict[str, Any], layers: int) -> int:
    """Layers with sliding-window attention, where the config says which: ``layer_types`` (gpt-oss,
    recent transformers) or Gemma 3's ``sliding_window_pattern`` (every n-th layer global). Anything
    else counts as full attention everywhere, the larger activation estimate. (Mistral's and Qwen2's
    ``sliding_window`` alone does not say which layers use it, or whether any do.)"""
    window = text.get("sliding_window")
    if not isinstance(window, int) or isinstance(window, bool) or not 0 < window <= _MAX_DIMENSION * 10:
        return 0
    types = text.get("layer_types")
    if isinstance(types, list) and len(types) == layers:
        return sum(kind == "sliding_attention" for kind in types)
    pattern = text.get("sliding_window_pattern")
    if isinstance(pattern, int) and not isinstance(pattern, bool) and 0 < pattern <= layers:
        return layers - layers // pattern
    return 0


def plain_model_type(model_type: object) -> str:
    """The config's ``model_type`` when it is a plain short name, else "" (a list, an object or
    markup is never echoed: the answer names the field instead)."""
    if isinstance(model_type, str) and _MODEL_TYPE.fullmatch(model_type):
        return model_type
    return ""


def _positive_int(value: object) -> int | None:
    """A config's whole number when it is one (JSON has no other kind of int; booleans are not)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def architecture_from_config(
    repo_id: str, config: object, *, stored_params: int | None = None, revision: str | None = None
) -> Architecture:
    """The architecture a config.json describes, counted like the presets; :class:`ConfigProblem` when
    it is not a dict of the fields a decoder-only transformer needs, or its sizes are absurd.

    ``stored_params`` is the Hub's safetensors total: recorded when it disagrees with the count by
    more than :data:`COUNT_TOLERANCE` (the answer uses the count and says why), and, for a multimodal
    repo, what the vision side holds besides the text model.
    """
    if not isinstance(config, dict):
        raise ConfigProblem("malformed", ())
    text, multimodal = _text_config(config)
    family = plain_model_type(text.get("model_type"))
    if not _is_decoder(config, family):
        raise ConfigProblem("not_a_decoder", (family[:40] or "model_type",))
    read = _Reader(text)
    hidden = read.int("hidden_size", "n_embd", "d_model", required=True)
    layers = read.int("num_hidden_layers", "n_layer", "num_layers", required=True, top=_MAX_LAYERS)
    heads = read.int("num_attention_heads", "n_head", required=True)
    kv_heads = read.int("num_key_value_heads", "num_kv_heads", default=heads)
    vocab = read.int("vocab_size", required=True, top=100_000_000)
    head_dim = read.int("head_dim")
    experts = read.int("num_local_experts", "n_routed_experts", "num_experts", default=1, top=_MAX_EXPERTS)
    per_token = read.int("num_experts_per_tok", "experts_per_token", "num_experts_per_token", default=1)
    expert_width = read.int("moe_intermediate_size")
    # Llama 4 names its widths the other way round: intermediate_size is an expert's,
    # intermediate_size_mlp the dense layers'.
    if family in ("llama4", "llama4_text"):
        expert_width = read.int("intermediate_size")
        dense_width = read.int("intermediate_size_mlp", "intermediate_size", required=True)
    else:
        dense_width = read.int("intermediate_size", "n_inner", "ffn_dim", required=True)
    shared = read.int(
        "n_shared_experts", "num_shared_experts", default=1 if family.startswith("llama4") else 0
    )
    mla = {
        name: read.int(name)
        for name in ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
    }
    first_dense = text.get("first_k_dense_replace")
    step = read.int("interleave_moe_layer_step", "decoder_sparse_step", default=1)
    mtp = text.get("num_nextn_predict_layers")
    sliding = _sliding_layers(text, layers or 0)
    if read.absurd:
        raise ConfigProblem("absurd", tuple(read.absurd))
    if read.missing or None in (hidden, layers, heads, kv_heads, vocab, dense_width):
        raise ConfigProblem("unknown_architecture", tuple(read.missing))
    if heads and kv_heads and heads % kv_heads:  # grouped-query attention shares whole groups
        raise ConfigProblem("absurd", ("num_key_value_heads",))
    is_moe = (experts or 1) > 1
    attention_bias = read.flag("attention_bias")
    fields: dict[str, Any] = {
        "key": HUB_KEY,
        "name": repo_id,
        "hub_id": repo_id,
        "source": "hub",
        "hub_revision": revision,
        "model_type": family[:40] or None,
        "hidden_size": hidden,
        "layers": layers,
        "attention_heads": heads,
        "kv_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": dense_width,
        "vocab_size": vocab,
        "tied_embeddings": read.flag("tie_word_embeddings", family in _TIED_BY_DEFAULT),
        # Qwen2 always has q/k/v biases; elsewhere attention_bias puts them on q/k/v (GLM-4.5) or also
        # on o (Llama, Mistral, Qwen3, gpt-oss: transformers passes bias=attention_bias to o_proj).
        "qkv_bias": family == "qwen2" or attention_bias,
        "o_bias": attention_bias and family not in ("glm4_moe", "qwen2"),
        # use_qk_norm: RMSNorm weights on q and k in GLM-4.5; Llama 4's is an L2 norm without weights
        # (transformers' Llama4TextL2Norm), so it adds no parameters there.
        "qk_norm": family in _QK_NORM or (read.flag("use_qk_norm") and not family.startswith("llama4")),
        "attention_sinks": family == "gpt_oss",
        "norms_per_layer": 4 if family in _FOUR_NORMS else 2,
        "fused_qkv": family in _FUSED_PROJECTIONS,
        "fused_gate_up": family in _FUSED_PROJECTIONS,
        "fused_expert_gate_up": family in _FUSED_EXPERTS and is_moe,
        **mla,
        "experts": experts,
        "experts_per_token": min(per_token or 1, experts or 1),
        "moe_intermediate_size": expert_width if is_moe else None,
        "shared_experts": shared if is_moe else 0,
        "first_k_dense_replace": first_dense
        if is_moe and isinstance(first_dense, int) and first_dense >= 0
        else 0,
        "interleave_moe_layer_step": step,
        "router_bias": family == "gpt_oss",
        # DeepSeek-V3's noaux_tc routing and GLM-4.5 keep a correction bias per expert.
        "router_correction_bias": is_moe and (text.get("topk_method") == "noaux_tc" or family == "glm4_moe"),
        "expert_bias": family == "gpt_oss",
        "mtp_layers": mtp if isinstance(mtp, int) and 0 <= mtp <= _MAX_LAYERS else 0,
        "sliding_window": text["sliding_window"] if sliding else None,
        "sliding_window_layers": sliding,
        "text_only_of_multimodal": multimodal,
        # "Active per token" by the vendor's convention, as the presets count it.
        "active_embeddings": {"gpt_oss": "output", "glm4_moe": "none"}.get(family, "both"),
        "context_length": _positive_int(text.get("max_position_embeddings")),
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
    if stored_params is not None and stored_params > 0:
        if multimodal and stored_params > count:
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
