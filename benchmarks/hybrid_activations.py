"""What the hybrid layers save for the backward pass, measured with PyTorch on CPU (issue 20, point 3).

Each hybrid family is built small (hidden 256: its small config, bot.measure.families) with one
layer of each of its kinds, and one real training step runs through ``bot.measure`` (bf16 weights
with fp32 master weights, SDPA, AdamW):
``torch.autograd.graph.saved_tensors_hooks`` counts what each layer saves, each storage once, as
``benchmarks/accuracy.py`` does. Two sequence lengths give each layer's bytes per token. These
figures follow the **torch fallback** that runs on CPU (the chunked Gated DeltaNet of
``torch_chunk_gated_delta_rule``, the chunked Mamba-2 scan ``torch_forward``, the short conv as a
``Conv1d``); fla's, mamba-ssm's and causal-conv1d's GPU kernels save less (their autograd functions
keep the inputs and recompute the chunk states). The bot does not model them yet: a hybrid model's
activation estimate is left to the ``activations`` option.

    python -m benchmarks.hybrid_activations            # prints the table
    python -m benchmarks.hybrid_activations --write    # and writes it into benchmarks/ACCURACY.md
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any

from bot.measure.families import SMALL_CONFIGS

ACCURACY_MD = Path(__file__).with_name("ACCURACY.md")
BEGIN = "<!-- hybrid activations: python -m benchmarks.hybrid_activations --write -->"
END = "<!-- end of hybrid activations -->"
HIDDEN = 256
LENGTHS = (128, 256)
# family -> (its small config, from its declaration: bot.measure.families; one layer of each of its
# kinds), each layer's kind as the bot reads it)
FAMILIES: dict[str, tuple[dict[str, Any], list[str]]] = {
    "qwen3_5": (SMALL_CONFIGS["qwen3_5"], ["Gated DeltaNet + MLP", "gated attention + MLP"]),
    "nemotron_h": (
        SMALL_CONFIGS["nemotron_h"],
        ["Mamba-2 alone", "attention alone", "ReLU² MLP alone", "MoE alone"],
    ),
    "bamba": (SMALL_CONFIGS["bamba"], ["Mamba-2 + MLP", "attention + MLP"]),
    "lfm2": (SMALL_CONFIGS["lfm2"], ["short conv + MLP", "attention + MLP"]),
}


def measure(family: str) -> list[tuple[str, float]]:
    """Each layer's saved bytes per token (batch 1), from two lengths' difference."""
    from bot.measure import MeasureSetup, measure_step

    config, kinds = FAMILIES[family]
    per_length = [
        measure_step(config, len(kinds), MeasureSetup(batch_size=1, seq_len=length)).saved_per_layer
        for length in LENGTHS
    ]
    span = LENGTHS[1] - LENGTHS[0]
    return [(kind, (per_length[1][i] - per_length[0][i]) / span) for i, kind in enumerate(kinds)]


def markdown(rows: list[tuple[str, str, float]]) -> str:
    lines = [
        BEGIN,
        f"Saved for backward per token and layer, hidden h = {HIDDEN}, bf16 weights, SDPA, batch 1, "
        f"from {LENGTHS[0]} and {LENGTHS[1]} tokens (torch fallbacks on CPU; not yet modelled).",
        "",
        "| family | layer | bytes / token | × 2h |",
        "| --- | --- | ---: | ---: |",
    ]
    lines += [f"| {f} | {kind} | {b:,.0f} | {b / (2 * HIDDEN):.1f} |" for f, kind, b in rows]
    return "\n".join([*lines, END]) + "\n"


def write_into(path: Path, section: str) -> None:
    text = path.read_text(encoding="utf-8")
    if BEGIN in text and END in text:
        before, rest = text.split(BEGIN, 1)
        text = before + section + rest.split(END, 1)[1].lstrip("\n")
    else:
        text = text.rstrip("\n") + "\n\n## What the hybrid layers save (measured)\n\n" + section
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true", help=f"write the table into {ACCURACY_MD.name}")
    args = parser.parse_args(argv)
    try:
        import transformers
    except ImportError:
        print(
            'hybrid_activations: needs torch and transformers: pip install -e ".[measure]"', file=sys.stderr
        )
        return 2
    warnings.filterwarnings("ignore")
    transformers.logging.set_verbosity_error()
    rows = [(family, kind, bytes_) for family in FAMILIES for kind, bytes_ in measure(family)]
    section = markdown(rows)
    print(section)
    if args.write:
        write_into(ACCURACY_MD, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
