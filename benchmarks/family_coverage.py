"""Which of transformers' decoder-only LMs the bot counts exactly, and why it refuses the others.

For every ``model_type`` the installed transformers maps to a causal LM (and every image-text-to-text
one), its default config is written as the ``config.json`` a Hub repo holds and given to the bot's Hub
reader (``bot.estimate.hub.architecture_from_config``); the model is built on the meta device (no
memory, no weights) and its parameters summed: the text model's, or every one where the bot counts a
multimodal type's towers and projectors from its config (their declaration's ``towers``). Each type is
then *exact* (within :data:`TOLERANCE` of the build), *refused* with the reader's stated reason, or a
*miscount*, which ``tests/test_family_coverage.py`` fails on. The default config is read twice: as
transformers writes it, with each switch that adds parameters (tying, biases, QK-norm: :data:`SWITCHES`)
flipped, and with the switches left out (so the family's declared defaults decide), so that a family's
declaration is checked every way.

    pip install -e ".[measure]"
    python -m benchmarks.family_coverage            # prints the table
    python -m benchmarks.family_coverage --write    # and writes it into benchmarks/ACCURACY.md
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.estimate.families import multimodal
from bot.estimate.hub import ConfigProblem, architecture_from_config

TOLERANCE = 0.001  # 0.1 % of the meta-device build
ACCURACY_MD = Path(__file__).with_name("ACCURACY.md")
BEGIN = "<!-- family coverage: python -m benchmarks.family_coverage --write -->"
END = "<!-- end of family coverage -->"


@dataclass(frozen=True, slots=True)
class Row:
    model_type: str
    variant: str  # "default" or the switch flipped
    # The text model's parameters on the meta device (the whole model's where the bot counts the
    # towers from the config: _counts_towers); None: transformers cannot build it.
    built: int | None
    counted: int | None  # the bot's count; None: refused
    reason: str  # the refusal's kind and fields, or why transformers could not build it

    @property
    def status(self) -> str:
        if self.built is None:
            return "not built"
        if self.counted is None:
            return "refused"
        return "exact" if abs(self.counted / self.built - 1) <= TOLERANCE else "miscount"


def model_types() -> list[str]:
    """Every decoder-only causal LM and image-text-to-text model_type of the installed transformers."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES,
    )

    return sorted(set(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES) | set(MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES))


def _text_parameters(model: Any) -> int:
    """The parameters the bot counts: the language model and its head, without a vision tower or
    projector (a multimodal model keeps its text model under ``language_model``)."""
    named = list(model.named_parameters())  # tied parameters appear once
    text = [p for name, p in named if "language_model." in name or name.startswith("lm_head.")]
    chosen = text if any("language_model." in name for name, _ in named) else [p for _, p in named]
    return sum(int(p.numel()) for p in chosen)


def _build(config: Any, causal: bool, whole: bool = False) -> int:
    """The built model's parameters: the text model's, or (``whole``) every one, towers included."""
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForImageTextToText

    auto = AutoModelForCausalLM if causal else AutoModelForImageTextToText
    with torch.device("meta"):
        model = auto.from_config(config)
    return sum(int(p.numel()) for p in model.parameters()) if whole else _text_parameters(model)


def _counts_towers(model_type: str) -> bool:
    """Whether the bot counts this multimodal type's towers from its config (mm: its declaration's
    towers); then the whole model is compared, else the text model."""
    declared = multimodal(model_type)
    return declared is not None and bool(declared.towers)


def _bot_count(config_json: dict[str, Any]) -> tuple[int | None, str]:
    """The bot's N from the config: the text model's count, with the towers where it counts them."""
    try:
        return architecture_from_config("coverage/check", config_json).total_params, ""
    except ConfigProblem as problem:
        return None, f"{problem.kind}: {', '.join(problem.fields)}"


# The switches of config classes that add or remove parameters: each is flipped on its own (tying in
# the text config and the top level together), so that a family's declaration is checked both ways.
SWITCHES = (
    "tie_word_embeddings",
    "attention_bias",
    "attention_out_bias",
    "mlp_bias",
    "use_bias",
    "qkv_bias",
    "use_qkv_bias",
    "use_qk_norm",
    "qk_layernorm",
    "use_post_norm",
    "lm_head_bias",
    "use_parallel_residual",
)


def _variants(config: Any) -> list[tuple[str, Any]]:
    """The config with one switch flipped, for each switch the config has."""
    import copy

    found = []
    for name in SWITCHES:
        flipped = copy.deepcopy(config)
        text = getattr(flipped, "text_config", None)
        holders = [h for h in (flipped, text) if h is not None and isinstance(getattr(h, name, None), bool)]
        if name != "tie_word_embeddings":
            holders = holders[-1:]  # the text model's switch
        for holder in holders:
            setattr(holder, name, not getattr(holder, name))
        if holders:
            found.append((f"{name} flipped", flipped))
    return found


# Hybrid families whose default config has one layer kind only (LFM2's is all attention, Granite 4's
# and Bamba's all Mamba-2): a config of mixed layers too, as the published checkpoints have, with
# each kind's own switches (conv bias, the Mamba-2 norm) on. Read as config fields.
LAYER_MIXES: dict[str, dict[str, Any]] = {
    "lfm2": {
        "num_hidden_layers": 6,
        "layer_types": ["conv", "conv", "full_attention", "conv", "full_attention", "conv"],
        "conv_bias": True,
    },
    "granitemoehybrid": {
        "num_hidden_layers": 4,
        "layer_types": ["mamba", "attention", "mamba", "mamba"],
        "mamba_proj_bias": True,
        "num_local_experts": 0,  # the dense Granite 4 models: the shared MLP alone
    },
    "bamba": {"num_hidden_layers": 4, "attn_layer_indices": [1, 3], "mamba_conv_bias": False},
    "falcon_h1": {"mamba_rms_norm": True, "projectors_bias": True, "mamba_d_ssm": None},
    "nemotron_h": {"layers_block_type": ["mamba", "mlp", "attention", "mamba", "moe"], "n_shared_experts": 2},
    "qwen3_next": {"num_hidden_layers": 6, "layer_types": None, "full_attention_interval": 3},
    "mamba2": {"use_conv_bias": False, "n_groups": 2},
    # GLM-5.x: an indexer in every fourth layer, the others reuse its top-k.
    "glm_moe_dsa": {
        "num_hidden_layers": 6,
        "mlp_layer_types": None,
        "layer_types": None,
        "indexer_types": ["full", "shared", "shared", "shared", "full", "shared"],
    },
    # The frontier block (issue 20, point 3): Gemma 3n with a width a layer and fewer layers sharing
    # keys and values, Mamba-1 with its widths from expand and dt's rank "auto", Jamba's periods.
    "gemma3n_text": {
        "num_hidden_layers": 10,
        "intermediate_size": [8192, 8192, 4096, 4096, 16384, 8192, 8192, 4096, 4096, 16384],
        "activation_sparsity_pattern": [0.95] * 5 + [0.0] * 5,
        "layer_types": ["sliding_attention"] * 4
        + ["full_attention"]
        + ["sliding_attention"] * 4
        + ["full_attention"],
        "num_kv_shared_layers": 5,
        "altup_num_inputs": 2,
        "laurel_rank": 32,
        "attention_bias": True,
    },
    "mamba": {"intermediate_size": None, "expand": 3, "time_step_rank": "auto", "use_conv_bias": False},
    "jamba": {
        "num_hidden_layers": 6,
        "attn_layer_period": 3,
        "attn_layer_offset": 1,
        "expert_layer_period": 3,
        "expert_layer_offset": 2,
        "mamba_proj_bias": True,
        "mamba_conv_bias": False,
        "mamba_dt_rank": "auto",
    },
    "olmo_hybrid": {
        "num_hidden_layers": 6,
        "layer_types": ["linear_attention", "full_attention", "linear_attention"] * 2,
        "linear_num_key_heads": 6,
        "linear_key_head_dim": 64,
        "linear_value_head_dim": 96,
        "linear_conv_kernel_dim": 3,
        "attention_bias": True,
    },
    "lfm2_moe": {
        "num_hidden_layers": 6,
        "layer_types": ["conv", "conv", "full_attention", "conv", "full_attention", "conv"],
        "num_dense_layers": 1,
        "conv_bias": True,
    },
    # Hunyuan: grouped keys and values; the MoE with its published eight of 64 experts' shape scaled.
    "hunyuan_v1_dense": {"num_hidden_layers": 4, "num_key_value_heads": 8, "head_dim": 64},
    "hunyuan_v1_moe": {
        "num_hidden_layers": 4,
        "num_key_value_heads": 8,
        "num_experts": 16,
        "moe_topk": 2,
        "intermediate_size": 3072,
    },
    # Kimi Linear: MLA every third layer, two dense MLPs, a query LoRA rank, fewer linear heads.
    "kimi_linear": {
        "num_hidden_layers": 6,
        "layer_types": ["linear_attention", "linear_attention", "full_attention"] * 2,
        "mlp_layer_types": ["dense", "sparse", "sparse", "dense", "sparse", "sparse"],
        "q_lora_rank": 256,
        "linear_num_heads": 8,
        "linear_head_dim": 64,
        "linear_conv_kernel_dim": 3,
        "attention_bias": True,
    },
    # DeepSeek-V4: every attention kind (sliding alone, compressed-sparse, heavily-compressed) in an
    # order of its own, rates and streams other than the defaults, hash-routed first layers.
    "deepseek_v4": {
        "num_hidden_layers": 6,
        "layer_types": [
            "sliding_attention",
            "compressed_sparse_attention",
            "heavily_compressed_attention",
            "compressed_sparse_attention",
            "sliding_attention",
            "heavily_compressed_attention",
        ],
        "mlp_layer_types": ["hash_moe", "hash_moe", "moe", "moe", "moe", "moe"],
        "compress_rates": {"compressed_sparse_attention": 8, "heavily_compressed_attention": 64},
        "hc_mult": 3,
        "n_routed_experts": 16,
        "o_groups": 4,
        "o_lora_rank": 256,
        "index_n_heads": 16,
        "index_head_dim": 64,
    },
}

# Families whose own default config transformers cannot build (LFM2-MoE leaves layer_types None and
# its layers index it): the default with these fields, as every published config writes them.
DEFAULT_FIXES: dict[str, dict[str, Any]] = {
    "lfm2_moe": {"layer_types": ["conv", "conv", "full_attention", "conv"] * 8},
    # Hunyuan V1 leaves head_dim None, which its attention reads as is; its checkpoints write 128.
    "hunyuan_v1_dense": {"head_dim": 128},
    "hunyuan_v1_moe": {"head_dim": 128},
}


def _layer_mix(model_type: str, config: Any, causal: bool) -> list[Row]:
    from transformers import AutoConfig

    mix = LAYER_MIXES.get(model_type)
    if mix is None:
        return []
    fields = {k: v for k, v in config.to_dict().items() if k not in mix and k != "transformers_version"}
    fields.update({k: v for k, v in mix.items() if v is not None})
    fields.pop("model_type", None)
    try:
        mixed = AutoConfig.for_model(model_type, **fields)
        built = _build(mixed, causal)
    except Exception as error:  # reported like a variant transformers refuses
        return [Row(model_type, "layer mix", None, None, f"{type(error).__name__}: {str(error)[:80]}")]
    written = {**mixed.to_dict(), **{k: v for k, v in mix.items() if v is not None}}
    if mix.get("layer_types", 0) is None:
        written.pop("layer_types", None)  # the class's own pattern decides
    return [Row(model_type, "layer mix", built, *_bot_count(written))]


def _without_switches(config: dict[str, Any]) -> dict[str, Any]:
    """The config.json with every switch left out, as a Hub repo saved at its class's defaults may
    be: the reader must then know the family's default of each."""
    bare = {k: v for k, v in config.items() if k not in SWITCHES}
    if isinstance(bare.get("text_config"), dict):
        bare["text_config"] = _without_switches(bare["text_config"])
    return bare


def check(model_type: str) -> list[Row]:
    """The rows of one model_type: its default config, and the same with each switch flipped."""
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    whole = _counts_towers(model_type)  # then built with its towers (Qwen3.5 is a causal LM too)
    causal = model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and not whole
    try:
        config = AutoConfig.for_model(model_type, **DEFAULT_FIXES.get(model_type, {}))
        built = _build(config, causal, whole)
    except Exception as error:  # transformers cannot build its own default: reported, not counted
        return [Row(model_type, "default", None, None, f"{type(error).__name__}: {str(error)[:80]}")]
    rows = [Row(model_type, "default", built, *_bot_count(config.to_dict()))]
    if rows[0].counted is None:
        return rows  # refused: its variants would be too
    rows.append(Row(model_type, "switches left out", built, *_bot_count(_without_switches(config.to_dict()))))
    rows += _layer_mix(model_type, config, causal)
    for label, variant in _variants(config):
        try:
            variant_built = _build(variant, causal, whole)
        except Exception as error:  # a config class that refuses the other setting: reported
            rows.append(Row(model_type, label, None, None, f"{type(error).__name__}: {str(error)[:80]}"))
            continue
        if variant_built != built:
            rows.append(Row(model_type, label, variant_built, *_bot_count(variant.to_dict())))
    return rows


def all_rows() -> list[Row]:
    import transformers

    warnings.filterwarnings("ignore")
    transformers.logging.set_verbosity_error()
    return [row for model_type in model_types() for row in check(model_type)]


def markdown(rows: list[Row]) -> str:
    """The table of ACCURACY.md's coverage section: counts by status, refusals by reason."""
    import transformers

    defaults = [r for r in rows if r.variant == "default"]
    by_status = Counter(r.status for r in defaults)
    exact = sorted(r.model_type for r in defaults if r.status == "exact")
    refused = Counter(r.reason.split(":")[0] for r in defaults if r.status == "refused")
    lines = [
        BEGIN,
        f"transformers {transformers.__version__}: {len(defaults)} causal-LM and image-text-to-text "
        f"model_types. Exact within {TOLERANCE:.1%} of the meta-device build: **{by_status['exact']}**; "
        f"refused with a stated reason: **{by_status['refused']}**; miscounted: "
        f"**{by_status['miscount']}**; transformers cannot build its own default config: "
        f"{by_status['not built']}.",
        "",
        "| status | model_types |",
        "| --- | --- |",
        f"| exact ({len(exact)}) | {', '.join(exact)} |",
    ]
    for reason, number in refused.most_common():
        names = sorted(
            r.model_type for r in defaults if r.status == "refused" and r.reason.startswith(reason)
        )
        lines.append(f"| refused, {reason} ({number}) | {', '.join(names)} |")
    missed = [r for r in rows if r.status == "miscount"]
    for r in missed:
        lines.append(f"| MISCOUNT | {r.model_type} ({r.variant}): {r.counted:,} of {r.built:,} |")
    return "\n".join([*lines, END]) + "\n"


def write_into(path: Path, section: str) -> None:
    text = path.read_text(encoding="utf-8")
    if BEGIN in text and END in text:
        before, rest = text.split(BEGIN, 1)
        after = rest.split(END, 1)[1].lstrip("\n")
        text = before + section + after
    else:
        text = text.rstrip("\n") + "\n\n## Which families the counter reads\n\n" + section
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true", help=f"write the table into {ACCURACY_MD.name}")
    parser.add_argument("--all", action="store_true", help="print every row, not only the declared")
    args = parser.parse_args(argv)
    try:
        rows = all_rows()
    except ImportError:
        print('family_coverage: needs torch and transformers: pip install -e ".[measure]"', file=sys.stderr)
        return 2
    for r in rows:
        if args.all or r.status in ("exact", "miscount"):
            ratio = f"{r.counted / r.built:.4f}" if r.counted and r.built else "—"
            print(f"{r.model_type:28} {r.variant:30} {r.status:9} {ratio:>7} {r.reason}")
    section = markdown(rows)
    print(section)
    if args.write:
        write_into(ACCURACY_MD, section)
    return 1 if any(r.status == "miscount" for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
