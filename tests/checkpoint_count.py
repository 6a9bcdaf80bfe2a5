"""What a checkpoint of a model transformers builds holds, counted: the figure every count is held to."""

from __future__ import annotations

from typing import Any


def checkpoint_count(model: Any) -> int:
    """Parameters (tied ones once) and the persistent buffers, what ``model.state_dict()`` holds and a
    preset's or a repo's count means (DeepSeek-V3's and MiniMax-M2's ``e_score_correction_bias`` is a
    buffer); ``model`` is a ``torch.nn.Module``, typed loosely as the default suite has no torch."""
    kept = set(model.state_dict())
    buffers = sum(int(b.numel()) for name, b in model.named_buffers() if name in kept)
    return sum(int(p.numel()) for p in model.parameters()) + buffers
