"""The accuracy benchmark's result per family, as the README shows it, from ``benchmarks/accuracy.json``.

    python -m benchmarks.accuracy_summary            # prints the Markdown table (no torch needed)

Each cell is the range, over the family's measured setups, of measured ÷ estimated by the bot's
calibrated formulas (``proposed_*`` in the JSON). ``tests/test_accuracy_summary.py`` checks that the
README's table is this one, so the README cannot drift from the last full run.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "accuracy.json"
# The families as the README names them, in the order it lists them.
FAMILY_NAMES = {
    "llama": "Llama (dense, GQA)",
    "qwen2": "Qwen2 (QKV bias)",
    "qwen3": "Qwen3 (QK-norm)",
    "gemma3": "Gemma 3 (4 norms, fp32 norm weights)",
    "mixtral": "Mixtral (MoE)",
    "qwen3_moe": "Qwen3-MoE",
    "deepseek_v3": "DeepSeek-V3 / Kimi K2 (MLA, shared experts)",
    "gpt_oss": "gpt-oss (sinks, eager only)",
    "llama4": "Llama 4 (every token through every expert)",
    "glm4_moe": "GLM-4.5 (DeepSeek-V3's MoE, partial RoPE)",
    "gemma2": "Gemma 2 (tanh-capped scores and logits, eager only)",
    "phi3": "Phi-3 / Phi-4 (fused qkv and gate_up)",
}
COLUMNS = (("model_states", "model states"), ("saved", "saved activations"), ("peak", "the step's peak"))


def _span(ratios: list[float]) -> str:
    low, high = min(ratios), max(ratios)
    return f"{low:.3f}" if f"{low:.3f}" == f"{high:.3f}" else f"{low:.3f}–{high:.3f}"


def summary_table(results: dict[str, Any]) -> str:
    """One row per family: its number of setups and the range of measured ÷ estimated per column."""
    rows: list[dict[str, Any]] = results["rows"]
    header = "| family | setups | " + " | ".join(title for _, title in COLUMNS) + " |"
    lines = [header, "|" + " --- |" * (2 + len(COLUMNS))]
    for family, name in FAMILY_NAMES.items():
        mine = [row for row in rows if row["family"] == family]
        if not mine:
            continue
        cells = [_span([row[key] / row[f"proposed_{key}"] for row in mine]) for key, _ in COLUMNS]
        lines.append(f"| {name} | {len(mine)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.accuracy_summary", description=__doc__)
    parser.add_argument(
        "--results", type=Path, default=RESULTS, help="the benchmark's JSON (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    print(summary_table(json.loads(args.results.read_text(encoding="utf-8"))), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
