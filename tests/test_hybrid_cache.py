"""The fixed per-sequence state and the per-token cache of each hybrid family, against the cache a
transformers forward returns (CPU, bf16, random weights, small configs): exact to the byte.

Each family's small config goes through the bot's Hub reader (``architecture_from_config``); the
model built from the same config runs two forwards of different lengths with ``use_cache``, and the
cache's tensors (each storage once) give the per-token bytes (their difference) and the fixed bytes
(what is left). Needs torch and transformers; skipped without them.
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.estimate.hub import architecture_from_config
from bot.estimate.kv_cache import KvDtype, layer_caches
from bot.measure.cache import cache_bytes
from bot.measure.families import DECLARED, SMALL_CONFIGS

pytestmark = [pytest.mark.accuracy, pytest.mark.usefixtures("quiet_transformers")]

BATCH = 2
LENGTHS = (5, 9)
# Every hybrid family's small config (bot.measure.families, from its declaration): Gated DeltaNet,
# Mamba-2 (alone, beside attention, in parallel with it), the short convolution, and DeepSeek-V3.2's
# indexer beside MLA (its top-k below the lengths, so that it selects); two layers where the family
# lists none.
# (Mistral Large 4's, built only inside its multimodal class: tests/test_decl_families.py.)
HYBRID = sorted(name for name, f in DECLARED.items() if (f.layer_kinds or f.indexer) and f.standalone)


def _config(family: str) -> Any:
    from transformers import AutoConfig

    fields = {"num_hidden_layers": 2, **SMALL_CONFIGS[family], "use_cache": True}
    if DECLARED[family].indexer is not None:
        fields["index_topk"] = 4
    return AutoConfig.for_model(fields.pop("model_type"), **fields)


def _measured(family: str) -> tuple[int, int]:
    """(fixed bytes, bytes per token) of one sequence in the cache of a bf16 forward."""
    import torch
    from transformers import AutoModelForCausalLM

    config = _config(family)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16).eval()
    totals = []
    for length in LENGTHS:
        ids = torch.randint(0, config.vocab_size, (BATCH, length))
        with torch.no_grad():
            totals.append(cache_bytes(model(input_ids=ids, use_cache=True).past_key_values))
    per_token = (totals[1] - totals[0]) // (LENGTHS[1] - LENGTHS[0])
    return (totals[0] - per_token * LENGTHS[0]) // BATCH, per_token // BATCH


@pytest.mark.parametrize("family", HYBRID)
def test_the_fixed_state_and_the_per_token_cache_are_what_transformers_keeps(family: str) -> None:
    arch = architecture_from_config("acme/small", _config(family).to_dict())
    fixed, per_token = _measured(family)
    counted = sum(cache.layers * cache.bytes_per_token for cache in layer_caches(arch, KvDtype.BF16))
    assert (arch.state_bytes_per_sequence(2), counted) == (fixed, per_token)
    assert arch.is_hybrid
