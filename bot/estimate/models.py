"""Model presets: architectures kept as data (``bot/data/models.toml``) and what follows from them.

The parameter count is summed from the architecture of a decoder-only transformer as the Hugging
Face implementations build it (Llama, Mistral, Mixtral, Qwen2, Gemma 2, Phi-3): token embeddings,
attention with grouped-query K/V, a gated MLP (gate, up, down), RMSNorm weights, and an LM head
unless it is tied to the embeddings. A test holds each total to the model's published count.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from functools import cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Architecture(BaseModel):
    """One preset's shape, as its config.json gives it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    name: str
    hidden_size: int = Field(gt=0)
    layers: int = Field(gt=0)
    attention_heads: int = Field(gt=0)
    kv_heads: int = Field(gt=0)
    head_dim: int | None = Field(default=None, gt=0)
    intermediate_size: int = Field(gt=0)
    vocab_size: int = Field(gt=0)
    tied_embeddings: bool
    qkv_bias: bool = False
    norms_per_layer: int = Field(default=2, ge=0)
    experts: int = Field(default=1, ge=1)
    experts_per_token: int = Field(default=1, ge=1)
    published_params: int = Field(gt=0)

    @model_validator(mode="after")
    def _heads_divide(self) -> Architecture:
        if self.attention_heads % self.kv_heads:
            raise ValueError(f"{self.key}: attention_heads must be a multiple of kv_heads")
        return self

    @property
    def attention_head_dim(self) -> int:
        return self.head_dim or self.hidden_size // self.attention_heads

    @property
    def q_dim(self) -> int:
        return self.attention_heads * self.attention_head_dim

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.attention_head_dim

    def linear_shapes(self) -> list[tuple[str, int, int, int]]:
        """Every linear layer of one transformer block as (name, d_in, d_out, copies)."""
        h, f = self.hidden_size, self.intermediate_size
        return [
            ("q_proj", h, self.q_dim, 1),
            ("k_proj", h, self.kv_dim, 1),
            ("v_proj", h, self.kv_dim, 1),
            ("o_proj", self.q_dim, h, 1),
            ("gate_proj", h, f, self.experts),
            ("up_proj", h, f, self.experts),
            ("down_proj", f, h, self.experts),
        ]

    @property
    def parameter_count(self) -> int:
        h = self.hidden_size
        per_layer = sum(d_in * d_out * copies for _, d_in, d_out, copies in self.linear_shapes())
        if self.qkv_bias:
            per_layer += self.q_dim + 2 * self.kv_dim
        if self.experts > 1:
            per_layer += h * self.experts  # the router
        per_layer += self.norms_per_layer * h
        embeddings = self.vocab_size * h
        lm_head = 0 if self.tied_embeddings else self.vocab_size * h
        return embeddings + self.layers * per_layer + h + lm_head  # + h: the final norm

    @property
    def params_billion(self) -> float:
        return self.parameter_count / 1e9

    def lora_adapter_params(self, rank: int) -> int:
        """LoRA adapters on every linear layer of attention and MLP in every block: r × (d_in + d_out)
        each (Hu et al. 2021, "LoRA", section 4: W + BA with B of d_out × r and A of r × d_in)."""
        per_layer = sum(rank * (d_in + d_out) * copies for _, d_in, d_out, copies in self.linear_shapes())
        return self.layers * per_layer


@cache
def presets() -> dict[str, Architecture]:
    text = resources.files("bot").joinpath("data/models.toml").read_text(encoding="utf-8")
    entries = tomllib.loads(text)["model"]
    models = [Architecture.model_validate(entry) for entry in entries]
    return {model.key: model for model in models}


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _is_subsequence(needle: str, haystack: str) -> bool:
    letters = iter(haystack)
    return all(letter in letters for letter in needle)


def find_preset(name: str) -> Architecture | None:
    """The preset a user meant by its key or its name, ignoring case, spaces and punctuation."""
    wanted = _squash(name)
    return next((m for m in presets().values() if wanted in (_squash(m.key), _squash(m.name))), None)


def search_presets(query: str, limit: int = 25) -> list[Architecture]:
    """Presets for autocomplete: every word of the query appears in order in the name (loosely)."""
    words = [_squash(word) for word in query.split()]
    words = [word for word in words if word]
    if not words:
        return list(presets().values())[:limit]
    hits: list[tuple[int, int, Architecture]] = []
    for index, model in enumerate(presets().values()):
        target = _squash(model.name)
        if all(_is_subsequence(word, target) for word in words):
            # Whole-word substrings first, then the data file's order.
            exact = sum(word in target for word in words)
            hits.append((-exact, index, model))
    return [model for *_, model in sorted(hits, key=lambda hit: hit[:2])][:limit]


def close_matches(name: str, limit: int = 5) -> list[str]:
    by_squashed = {_squash(m.name): m.name for m in presets().values()}
    found = difflib.get_close_matches(_squash(name), list(by_squashed), n=limit, cutoff=0.4)
    return [by_squashed[key] for key in found] or [m.name for m in search_presets(name, limit)]
