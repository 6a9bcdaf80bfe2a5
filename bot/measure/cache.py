"""The bytes a transformers cache holds after a forward: every tensor it keeps, each once.

Its layers' keys and values, and the hybrid layers' conv and recurrent states and the indexers'
keys, wherever the cache class keeps them (attributes, lists, dicts). A tensor counts its own
elements, not its storage's: a sliding-window layer keeps a view of the last window of its prefill,
whose storage (the whole prefill) transformers lets go at the next token and a serving engine never
holds. The serving benchmark and the
hybrid cache test compare the bot's cache bytes with this. Needs torch.
"""

from __future__ import annotations

from typing import Any

# Attributes of a cache layer that are bookkeeping, not cache (DynamicSlidingWindowLayer's window,
# the tokens seen so far).
BOOKKEEPING = frozenset({"_sliding_window_tensor", "cumulative_length"})
_DEPTH = 5  # how deep the cache's own containers go (cache -> layers -> layer -> its tensors)


def cache_bytes(cache: object) -> int:
    """Every tensor ``cache`` holds, each once, bookkeeping left out."""
    import torch

    seen: set[int] = set()
    total = 0

    def walk(value: Any, depth: int) -> None:
        nonlocal total
        if isinstance(value, torch.Tensor):
            pointer = value.data_ptr()
            if pointer not in seen:
                seen.add(pointer)
                total += value.numel() * value.element_size()
            return
        if depth >= _DEPTH:
            return
        if isinstance(value, list | tuple):
            items = list(value)
        elif isinstance(value, dict):
            items = list(value.values())
        elif hasattr(value, "__dict__") and not isinstance(value, torch.nn.Module):
            items = [item for name, item in vars(value).items() if name not in BOOKKEEPING]
        else:
            return
        for item in items:
            walk(item, depth + 1)

    walk(cache, 0)
    return total
