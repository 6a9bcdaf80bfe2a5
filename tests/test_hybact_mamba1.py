"""Mamba-1's saved activations (Mamba, Falcon-Mamba, Jamba; bot/estimate/hybrid_saved.py): the
kernel path by hand from mamba-ssm's saves, and the torch fallback against a layer measured on CPU
(torch 2.13, transformers 5.24, ``saved_tensors_hooks``, each storage once). Pure: no torch.
"""

from __future__ import annotations

import pytest

from bot.estimate.family_traits import traits_for
from bot.estimate.hub import architecture_from_config
from bot.estimate.hybrid_saved import hybrid_layers_saved_bytes, mamba1_bytes
from bot.measure.families import SMALL_CONFIGS, at_depth

# Layer 0 of each family's small config (h 256, inner I 512, state N 16, dt rank R 16, conv 4),
# one sequence of 64 tokens in bf16: its saved bytes as measured (the sequential scan's fp32
# discretized A and B and its states dominate: 14·I·N a token).
MEASURED_LAYER_0 = {"mamba": 8_322_304, "falcon_mamba": 8_333_312, "jamba": 8_823_040}


@pytest.mark.parametrize("name", sorted(MEASURED_LAYER_0))
def test_the_fallback_is_the_measured_mamba1_layer(name: str) -> None:
    arch = architecture_from_config(f"small/{name}", at_depth(SMALL_CONFIGS[name], 4))
    layers = hybrid_layers_saved_bytes(
        arch, 1, 64, attention="sdpa", precision="bf16", traits=traits_for(arch), path="fallback"
    )
    assert abs(layers[0] / MEASURED_LAYER_0[name] - 1) < 0.01


def test_the_kernel_path_is_what_mamba_ssm_saves_by_hand() -> None:
    inner, state, rank = 512, 16, 16
    mamba = architecture_from_config("small/mamba", at_depth(SMALL_CONFIGS["mamba"], 2))
    # MambaInnerFn: xz (4I), x_dbl (2(R + 2N)), B's and C's contiguous copies (4N), out (2I).
    assert mamba1_bytes(mamba, "kernel") == 4 * inner + 2 * (rank + 2 * state) + 4 * state + 2 * inner
    jamba = architecture_from_config("small/jamba", at_depth(SMALL_CONFIGS["jamba"], 4))
    # Apart: the conv's input (in_proj's output, 4I), x_proj's input (2I), the RMSNorms over dt, B
    # and C (6w + 4 each), the normalized dt (2R), SelectiveScanFn's delta, z's copy and out (6I),
    # B and C (4N), out_proj's input (2I).
    norms = 6 * (rank + 2 * state) + 12
    assert (
        mamba1_bytes(jamba, "kernel")
        == 4 * inner + 2 * inner + norms + 2 * rank + 6 * inner + 4 * state + 2 * inner
    )
    # The fallback keeps the discretized state per token: far more.
    assert mamba1_bytes(mamba, "fallback") > 15 * mamba1_bytes(mamba, "kernel")
