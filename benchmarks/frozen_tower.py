"""What a multimodal model's tower saves for backward, frozen and trained (mm, issue 20 point 3).

A small Qwen2.5-VL (transformers 5.24, CPU, fp32) takes one image of 64 patches (16 image tokens
after the merger) in a sequence of 64 tokens; autograd's saved tensors are summed (each storage once)
by the module that saved them, with the tower frozen (the default: its parameters need no gradient)
and trained (``train_vision``), against the same sequence of text tokens alone. Printed, not asserted:
benchmarks/ACCURACY.md (the mm section) quotes it.

    pip install -e ".[measure]"
    python -m benchmarks.frozen_tower
"""

from __future__ import annotations

import collections
import warnings
from typing import Any


def _model() -> Any:
    import torch
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    torch.manual_seed(0)
    text = {
        "hidden_size": 128,
        "intermediate_size": 256,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 1000,
        "rope_scaling": {"type": "mrope", "mrope_section": [4, 6, 6]},
    }
    vision = {
        "depth": 2,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_heads": 2,
        "out_hidden_size": 128,
        "fullatt_block_indexes": [1],
        "window_size": 56,
    }
    config = Qwen2_5_VLConfig(
        text_config=text,
        vision_config=vision,
        image_token_id=999,
        video_token_id=998,
        vision_start_token_id=997,
        vision_end_token_id=996,
    )
    return Qwen2_5_VLForConditionalGeneration(config)


def saved_bytes(model: Any, train_tower: bool, with_image: bool) -> collections.Counter[str]:
    """The bytes autograd saves in one forward, by the top-level module (three name parts) saving them."""
    import torch

    for p in model.model.visual.parameters():
        p.requires_grad_(train_tower)
    for p in model.model.visual.merger.parameters():  # the projector is trained either way
        p.requires_grad_(True)
    stack: list[str] = []
    hooks = []
    for name, module in model.named_modules():
        hooks.append(module.register_forward_pre_hook(lambda m, a, name=name: stack.append(name)))
        hooks.append(module.register_forward_hook(lambda m, a, o: (stack.pop(), None)[1]))
    per: collections.Counter[str] = collections.Counter()
    seen: set[tuple[int, Any]] = set()

    def pack(t: Any) -> Any:
        key = (t.untyped_storage().data_ptr(), t.dtype)
        if key not in seen:
            seen.add(key)
            name = ".".join(stack[-1].split(".")[:3]) if stack else "(outside modules)"
            per[name or "(the model's own: the loss)"] += int(t.untyped_storage().nbytes())
        return t

    image_tokens = 16  # 8 x 8 patches merged 2 x 2
    ids = torch.cat(
        [
            torch.tensor([[997]]),
            torch.full((1, image_tokens), 999),
            torch.tensor([[996]]),
            torch.randint(0, 900, (1, 46)),
        ],
        dim=1,
    )
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if with_image:
            patches = torch.randn(64, 3 * 2 * 14 * 14)
            out = model(
                input_ids=ids, pixel_values=patches, image_grid_thw=torch.tensor([[1, 8, 8]]), labels=ids
            )
        else:
            out = model(input_ids=torch.randint(0, 900, ids.shape), labels=ids)
    out.loss.backward()
    model.zero_grad(set_to_none=True)
    for hook in hooks:
        hook.remove()
    return per


def main() -> int:
    try:
        import transformers
    except ImportError:
        print('frozen_tower: needs torch and transformers: pip install -e ".[measure]"')
        return 2
    warnings.filterwarnings("ignore")
    transformers.logging.set_verbosity_error()
    model = _model()
    runs = {
        "text tokens only": saved_bytes(model, False, False),
        "image, tower frozen": saved_bytes(model, False, True),
        "image, tower trained": saved_bytes(model, True, True),
    }
    for label, per in runs.items():
        parts = ", ".join(f"{name} {size:,}" for name, size in per.most_common())
        print(f"{label}: {sum(per.values()):,} B ({parts})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
