"""The count from safetensors headers against torch: real transformers models built from their configs
with random weights, saved with safetensors' ``save_file`` (tied weights once, as ``save_pretrained``
keeps them), and read back from the file's header alone. No download: configs are written here."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from bot.estimate.tensors import count_tensors, packing_of
from tests.hub_tensors import MAMBA2_CONFIG, MAMBA2_PARAMS, mamba2_shards

pytestmark = pytest.mark.accuracy

SMALL = {"hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
         "num_hidden_layers": 2, "vocab_size": 512, "max_position_embeddings": 256}  # fmt: skip
CONFIGS: dict[str, dict[str, Any]] = {
    "llama": {**SMALL, "model_type": "llama", "tie_word_embeddings": False},
    "qwen3 (tied)": {**SMALL, "model_type": "qwen3", "head_dim": 16, "tie_word_embeddings": True},
    "qwen3_moe": {**SMALL, "model_type": "qwen3_moe", "head_dim": 16, "num_experts": 4,
                  "num_experts_per_tok": 2, "moe_intermediate_size": 32},
    "gpt_oss": {**SMALL, "model_type": "gpt_oss", "head_dim": 16, "num_local_experts": 4,
                "num_experts_per_tok": 2, "layer_types": ["sliding_attention", "full_attention"]},
    "mamba2": {"model_type": "mamba2", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 512,
               "state_size": 16, "num_heads": 4, "head_dim": 32, "expand": 2, "n_groups": 1},
    "nemotron_h": {"model_type": "nemotron_h", "hidden_size": 64, "num_hidden_layers": 4, "vocab_size": 512,
                   "hybrid_override_pattern": "M*M-", "num_attention_heads": 4, "num_key_value_heads": 2,
                   "head_dim": 16, "intermediate_size": 128, "mamba_num_heads": 4, "mamba_head_dim": 32,
                   "ssm_state_size": 16, "n_groups": 1},
    "qwen2_vl": {"model_type": "qwen2_vl", "text_config": {**SMALL, "model_type": "qwen2_vl_text"},
                 "vision_config": {"depth": 2, "embed_dim": 32, "hidden_size": 64, "num_heads": 2,
                                   "mlp_ratio": 2, "patch_size": 14, "spatial_merge_size": 2}},
}  # fmt: skip


def _header(path: Path) -> dict[str, Any]:
    """A safetensors file's header, as the Hub's range read gets it: 8 bytes of length, then JSON."""
    with path.open("rb") as file:
        (length,) = struct.unpack("<Q", file.read(8))
        header: dict[str, Any] = json.loads(file.read(length))
    header.pop("__metadata__", None)
    return header


def _saved(model: Any, path: Path) -> None:
    """The state dict with each shared tensor once (the tied LM head is the embedding), as
    ``save_pretrained`` writes it, through safetensors' own ``save_file``."""
    from safetensors.torch import save_file

    seen: set[int] = set()
    tensors = {}
    for name, tensor in model.state_dict().items():
        if tensor.data_ptr() in seen:
            continue
        seen.add(tensor.data_ptr())
        tensors[name] = tensor.contiguous()
    save_file(tensors, str(path))


@pytest.mark.parametrize("family", list(CONFIGS))
def test_the_header_count_is_the_models_parameter_count(family: str, tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    fields = dict(CONFIGS[family])
    config = transformers.AutoConfig.for_model(fields.pop("model_type"), **fields)
    torch.manual_seed(0)
    if family == "qwen2_vl":
        model = transformers.Qwen2VLForConditionalGeneration(config)
    else:
        model = transformers.AutoModelForCausalLM.from_config(config)
    path = tmp_path / "model.safetensors"
    _saved(model, path)
    header = _header(path)
    found = count_tensors(
        ((name, entry["dtype"], entry["shape"]) for name, entry in header.items()),
        packing=packing_of(config.to_dict())[0],
        layers=config.get_text_config().num_hidden_layers,
    )
    assert found.total == sum(p.numel() for p in model.parameters())
    tied = model.get_output_embeddings().weight is model.get_input_embeddings().weight
    assert found.tied_embeddings == tied
    assert tied or family != "qwen3 (tied)"
    if family == "qwen2_vl":
        # The merger sits inside ``visual`` but is the projector (trained; the tower is frozen).
        visual = sum(p.numel() for p in model.model.visual.parameters())
        merger = sum(p.numel() for p in model.model.visual.merger.parameters())
        assert (found.part("vision"), found.part("projector")) == (visual - merger, merger)
        assert found.towers == visual - merger > 0
    if family in ("qwen3_moe", "gpt_oss"):
        experts = sum(p.numel() for name, p in model.named_parameters() if ".experts." in name)
        assert found.part("experts") == experts > 0


def test_the_fake_hubs_mamba2_shards_are_transformers_own_state_dict() -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    fields = dict(MAMBA2_CONFIG)
    fields.pop("architectures")
    config = transformers.AutoConfig.for_model(fields.pop("model_type"), **fields)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config)
    served = {name: shape for shard in mamba2_shards().values() for name, (_, shape) in shard.items()}
    held = {name: list(p.shape) for name, p in model.named_parameters()}  # the tied head once
    assert served == held
    assert sum(p.numel() for p in model.parameters()) == MAMBA2_PARAMS
