"""``python -m bot.measure``: one real training step of a model from its config, measured against the
estimate; ``vram-bot measure`` runs it.

    python -m bot.measure --config path/to/config.json --precision amp --batch 1 --seq 512
    python -m bot.measure --family llama --checkpointing

The model is built with random weights at depths 1 and 2 (nothing is downloaded), one training step
is measured at each, and the figures are extended to the config's ``num_hidden_layers``. Exit status:
0 measured, 2 bad input or a model too large for this machine even at two layers.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bot.estimate.activations_measured import (
    model_state_bytes_per_param,
)
from bot.measure import extrapolate, measure_step, torch_available
from bot.measure.families import ALL_FAMILIES, architecture
from bot.measure.types import ATTENTIONS, OPTIMIZERS, PRECISIONS, Setup

# What one measured depth may use of the memory this machine has free: the measurement runs the
# model twice (depths 1 and 2) and keeps Python's own overhead besides.
MEMORY_SHARE = 0.7


class MeasureError(ValueError):
    """Bad input or a model that cannot be measured here, with a message for the user."""


def load_config(path: Path) -> dict[str, Any]:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise MeasureError(f"cannot read {path}: {error}") from None
    if not isinstance(config, dict) or "model_type" not in config:
        raise MeasureError(f"{path} is not a model config.json (no model_type)")
    return config


def available_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (Linux), or None where it cannot be read."""
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def needed_bytes(config: dict[str, Any], setup: Setup, layers: int = 2) -> float:
    """The calibrated peak of a ``layers``-deep copy of the model (what measuring it needs)."""
    arch = architecture(str(config["model_type"]), config, layers)
    return setup.proposed_peak_bytes(arch, arch.parameter_count)


def run(config: dict[str, Any], setup: Setup) -> dict[str, float]:
    depth = int(config.get("num_hidden_layers") or 2)
    need = needed_bytes(config, setup)
    free = available_bytes()
    if free is not None and need > MEMORY_SHARE * free:
        raise MeasureError(
            f"measuring even two layers needs about {need / 1e9:.1f} GB and this machine has "
            f"{free / 1e9:.1f} GB free: use a machine with at least {need / MEMORY_SHARE / 1e9:.0f} GB, "
            "or a smaller batch or sequence"
        )
    full = extrapolate(measure_step(config, 1, setup), measure_step(config, 2, setup), depth)
    arch = architecture(str(config["model_type"]), config, depth)
    return {
        "layers": depth,
        "parameters": full.parameters,
        "model_states_measured": full.model_state_bytes,
        "model_states_proposed": model_state_bytes_per_param(setup.precision, setup.optimizer)
        * full.parameters,
        "saved_measured": full.saved_bytes,
        "saved_current": setup.current_saved_bytes(arch),
        "saved_proposed": setup.proposed(arch).saved_bytes,
        "peak_measured": full.peak_bytes,
        "peak_proposed": setup.proposed_peak_bytes(arch, full.parameters),
    }


def main(argv: list[str] | None = None, prog: str = "python -m bot.measure") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--config", type=Path, help="a model's config.json")
    source.add_argument("--family", choices=sorted(ALL_FAMILIES), help="one of the benchmark's small models")
    parser.add_argument("--precision", choices=PRECISIONS, default="mixed")
    parser.add_argument("--optimizer", choices=OPTIMIZERS, default="adamw")
    parser.add_argument("--attention", choices=ATTENTIONS, default="sdpa")
    parser.add_argument("--checkpointing", action="store_true")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seq", type=int, default=512)
    args = parser.parse_args(argv)
    if not torch_available():
        print('measure: needs torch and transformers: pip install "vram-bot[measure]"', file=sys.stderr)
        return 2
    if args.batch < 1 or args.seq < 2:
        print("measure: the batch must be at least 1 and the sequence at least 2", file=sys.stderr)
        return 2
    try:
        config = load_config(args.config) if args.config else dict(ALL_FAMILIES[args.family])
        setup = Setup(
            args.precision, args.optimizer, args.attention, args.checkpointing, args.batch, args.seq
        )
        figures = run(config, setup)
    except MeasureError as error:
        print(f"measure: {error}", file=sys.stderr)
        return 2
    for name, value in figures.items():
        shown = f"{value / 1e9:.4f} GB" if name not in ("layers", "parameters") else f"{value:,.0f}"
        print(f"{name:24} {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
