"""How close the estimate comes to a real training step: measured ÷ estimated, per family and setup.

Runs ``bot.measure`` (one real training step on CPU, bytes counted tensor by tensor) over every preset
family at small shapes, each precision setup, attention implementation and with and without full
activation checkpointing, measuring two depths and extending them to ``--depth`` layers. It compares
three figures with the current estimate (``bot.estimate.activations.estimate_activations`` and the
seed's bytes per parameter) and with the calibrated formulas of ``bot.estimate.saved_activations``
and ``bot.estimate.step_peak``:

- model states after the optimizer step (weights, gradients, master weights, optimizer states),
- saved activations (what autograd keeps for backward, each storage once),
- the step's peak of live tensor bytes (the current estimate's figure for it is V = M + A).

    pip install -e ".[measure]"                 # torch and transformers
    python -m benchmarks.accuracy --quick       # CI's small part: a few families, under a minute
    python -m benchmarks.accuracy               # every family and setup (a few minutes on 2 cores)

It prints a table and writes the figures as JSON (``--out``, default benchmarks/accuracy.json).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bot.estimate.family_traits import offers_activations
from bot.estimate.models import Architecture
from bot.estimate.optimizers import Optimizer
from bot.estimate.step_peak import model_state_bytes_per_param
from bot.measure import extrapolate, measure_step, torch_available
from bot.measure.families import SMALL_CONFIGS, architecture
from bot.measure.types import (
    ATTENTIONS,
    OPTIMIZERS,
    PRECISIONS,
    Attention,
    Measurement,
    MeasureSetup,
    OptimizerName,
    Precision,
)

DEFAULT_OUT = Path(__file__).with_name("accuracy.json")
QUICK_FAMILIES = ("llama", "gemma3", "mixtral")
# CI's part also runs two DeepSeek-V3 (MLA) setups: SDPA on the padded-V stand-in with 16-bit
# weights, and eager under autocast (its bf16 router and fp32 experts).
QUICK_EXTRA: tuple[tuple[str, Precision, Attention], ...] = (
    ("deepseek_v3", "mixed", "sdpa"),
    ("deepseek_v3", "amp", "eager"),
)
# ... and a few of the other declared families (bot.measure.families.SMALL_CONFIGS; the full run
# measures them all): a dense one under autocast with eager attention (Granite's multipliers), a MoE
# one (OLMoE's projection-wide QK-norm) and ERNIE 4.5's biases under checkpointing.
QUICK_DECLARED: tuple[tuple[str, Precision, Attention, bool], ...] = (
    ("granite", "amp", "eager", False),
    ("olmoe", "mixed", "sdpa", False),
    ("ernie4_5", "mixed", "sdpa", True),
    # famact (issue 20): the families measured this round, one setup each: Cohere 2's fp32 LayerNorm
    # and parallel block under autocast, Phi's gelu_new and partial RoPE, Apertus' xIELU, nanochat's
    # weightless norms, Qwen2-MoE's gated shared expert and ERNIE 4.5 MoE's fp32 router.
    ("cohere2", "amp", "eager", False),
    ("phi", "mixed", "sdpa", False),
    ("apertus", "amp", "sdpa", False),
    ("nanochat", "bf16", "eager", False),
    ("qwen2_moe", "amp", "sdpa", False),
    ("ernie4_5_moe", "mixed", "eager", False),
    # famact, part two: DeepSeek-V2's softmax router, GLM-4.7-Flash's DeepSeek-V3 MoE under MLA,
    # Hunyuan MoE's fp32 gate and QK-norm after RoPE, Seed-OSS' dropout masks, GPT-NeoX's parallel
    # residual and quarter rotary, Granite SWA's sink scaling under checkpointing.
    ("deepseek_v2", "amp", "eager", False),
    ("glm4_moe_lite", "mixed", "sdpa", False),
    ("hunyuan_v1_moe", "amp", "eager", False),
    ("seed_oss", "mixed", "sdpa", False),
    ("gpt_neox", "amp", "eager", False),
    ("granite_swa", "mixed", "eager", True),
)
# The full run adds a long sequence on some families, where activations rather than model states
# decide the peak.
LONG_FAMILIES = ("llama", "mixtral", "deepseek_v3", "gpt_oss")
LONG_SEQ = 1024
# --check fails when the calibrated formulas are further than this from the measurement.
TOLERANCE = {"model_states": 0.05, "saved": 0.05, "saved_per_layer": 0.05, "peak": 0.10}
# The seed's rules (bot.estimate.core.Optimizer) for each optimizer measured.
SEED_OPTIMIZER = {
    "adamw": Optimizer.ADAM,
    "adamw_fused": Optimizer.ADAM,
    "sgd": Optimizer.SGD,
    "adam8bit": Optimizer.ADAM8BIT,
}


@dataclass(frozen=True, slots=True)
class Row:
    family: str
    precision: str
    optimizer: str
    attention: str
    checkpointing: bool
    batch_size: int
    seq_len: int
    depth: int
    parameters: int
    # Measured, extended to ``depth`` layers.
    model_states: float
    saved: float
    saved_per_layer: float
    saved_outside: float
    peak: float
    peak_phase: str
    # The current estimate and the calibrated formulas (None where a family has no formula yet).
    current_model_states: float
    current_saved: float
    current_peak: float
    proposed_model_states: float | None
    proposed_saved: float | None
    proposed_saved_per_layer: float | None
    proposed_peak: float | None
    seconds: float
    # Whether the estimate offers this family's activations (its declaration's activations_measured):
    # only those rows are held to the tolerance; the others are reported, and the bot asks for them.
    offered: bool = True

    def ratio(self, measured: float, estimated: float | None) -> float | None:
        return None if not estimated else measured / estimated


def _estimates(
    arch: Architecture, setup: MeasureSetup, parameters: int
) -> tuple[float, float, float, float | None, float | None, float | None, float | None]:
    seed_states = SEED_OPTIMIZER[setup.optimizer].bytes_per_param * parameters
    current_saved = setup.current_saved_bytes(arch)
    proposed = setup.proposed(arch)
    states = model_state_bytes_per_param(setup.precision, setup.optimizer) * parameters
    peak = setup.proposed_peak_bytes(arch, parameters)
    return (
        seed_states,
        current_saved,
        seed_states + current_saved,
        states,
        proposed.saved_bytes,
        proposed.per_layer_bytes,
        peak,
    )


def measure_row(family: str, setup: MeasureSetup, depth: int) -> Row:
    config = SMALL_CONFIGS[family]
    started = time.perf_counter()
    shallow = measure_step(config, 1, setup)
    deep = measure_step(config, 2, setup)
    full = extrapolate(shallow, deep, depth)
    arch = architecture(family, config, depth)
    estimates = _estimates(arch, setup, full.parameters)
    return Row(
        family=family,
        precision=setup.precision,
        optimizer=setup.optimizer,
        attention=setup.attention,
        checkpointing=setup.checkpointing,
        batch_size=setup.batch_size,
        seq_len=setup.seq_len,
        depth=depth,
        parameters=full.parameters,
        model_states=full.model_state_bytes,
        saved=full.saved_bytes,
        saved_per_layer=full.saved_per_layer,
        saved_outside=full.saved_outside,
        peak=full.peak_bytes,
        peak_phase=full.peak_phase,
        current_model_states=estimates[0],
        current_saved=estimates[1],
        current_peak=estimates[2],
        proposed_model_states=estimates[3],
        proposed_saved=estimates[4],
        proposed_saved_per_layer=estimates[5],
        proposed_peak=estimates[6],
        seconds=time.perf_counter() - started,
        offered=offers_activations(arch),
    )


def _fmt(value: float | None) -> str:
    return "   —  " if value is None else f"{value:6.3f}"


def _family_cell(row: Row) -> str:
    """The family, starred where the estimate does not offer its activations (not held to the tolerance)."""
    return row.family if row.offered else f"{row.family}*"


def print_table(rows: list[Row]) -> None:
    print(
        f"{'family':10} {'prec':5} {'optimizer':11} {'attn':5} {'ckpt':4} {'s×b':>7} "
        f"{'states':>6} {'saved':>6} {'peak':>6} │ {'states':>6} {'saved':>6} {'layer':>6} {'peak':>6} "
        f"{'peak at':8}"
    )
    print(f"{'':52} measured ÷ current │ measured ÷ proposed")
    for r in rows:
        print(
            f"{_family_cell(r):10} {r.precision:5} {r.optimizer:11} {r.attention:5} "
            f"{'yes' if r.checkpointing else 'no':4} "
            f"{f'{r.seq_len}×{r.batch_size}':>7} "
            f"{_fmt(r.ratio(r.model_states, r.current_model_states))} "
            f"{_fmt(r.ratio(r.saved, r.current_saved))} {_fmt(r.ratio(r.peak, r.current_peak))} │ "
            f"{_fmt(r.ratio(r.model_states, r.proposed_model_states))} "
            f"{_fmt(r.ratio(r.saved, r.proposed_saved))} "
            f"{_fmt(r.ratio(r.saved_per_layer, r.proposed_saved_per_layer))} "
            f"{_fmt(r.ratio(r.peak, r.proposed_peak))} {r.peak_phase:8}"
        )


def markdown_table(rows: list[Row]) -> str:
    """The ratios as a Markdown table (for benchmarks/ACCURACY.md and the README)."""

    def cell(value: float | None) -> str:
        return "—" if value is None else f"{value:.3f}"

    lines = [
        "| family | precision | optimizer | attention | ckpt | s×b | saved B/token/layer "
        "| states ÷ current | saved ÷ current | peak ÷ current | states ÷ proposed | saved ÷ proposed "
        "| peak ÷ proposed | peak in |",
        "|" + " --- |" * 14,
    ]
    for r in rows:
        per_token = r.saved_per_layer / (r.seq_len * r.batch_size)
        lines.append(
            f"| {_family_cell(r)} | {r.precision} | {r.optimizer} | {r.attention} | "
            f"{'yes' if r.checkpointing else 'no'} | {r.seq_len}×{r.batch_size} | {per_token:,.1f} | "
            f"{cell(r.ratio(r.model_states, r.current_model_states))} | "
            f"{cell(r.ratio(r.saved, r.current_saved))} | {cell(r.ratio(r.peak, r.current_peak))} | "
            f"{cell(r.ratio(r.model_states, r.proposed_model_states))} | "
            f"{cell(r.ratio(r.saved, r.proposed_saved))} | {cell(r.ratio(r.peak, r.proposed_peak))} | "
            f"{r.peak_phase} |"
        )
    return "\n".join(lines) + "\n"


def worst(rows: list[Row]) -> dict[str, float]:
    """The largest deviation of the proposed formulas from the measurement, per figure."""
    out: dict[str, float] = {}
    for name, measured, proposed in (
        ("model_states", "model_states", "proposed_model_states"),
        ("saved", "saved", "proposed_saved"),
        ("saved_per_layer", "saved_per_layer", "proposed_saved_per_layer"),
        ("peak", "peak", "proposed_peak"),
    ):
        devs = [
            abs(getattr(r, measured) / getattr(r, proposed) - 1)
            for r in rows
            if getattr(r, proposed) is not None and r.offered
        ]
        out[name] = max(devs, default=0.0)
    return out


def setups(quick: bool, batch: int, seq: int) -> list[tuple[str, MeasureSetup]]:
    families = QUICK_FAMILIES if quick else tuple(SMALL_CONFIGS)
    grid: list[tuple[str, MeasureSetup]] = []
    for family in families:
        for precision in PRECISIONS:
            if quick and precision == "bf16":
                continue
            for attention in ATTENTIONS:
                for checkpointing in (False, True):
                    grid.append(
                        (family, MeasureSetup(precision, "adamw", attention, checkpointing, batch, seq))
                    )
    if quick:
        for family, precision, attention in QUICK_EXTRA:
            grid.append((family, MeasureSetup(precision, "adamw", attention, False, batch, seq)))
        for family, precision, attention, checkpointing in QUICK_DECLARED:
            grid.append((family, MeasureSetup(precision, "adamw", attention, checkpointing, batch, seq)))
    if not quick:
        for family in LONG_FAMILIES:
            for precision in ("mixed", "amp"):
                for attention in ATTENTIONS:
                    for checkpointing in (False, True):
                        grid.append(
                            (
                                family,
                                MeasureSetup(precision, "adamw", attention, checkpointing, batch, LONG_SEQ),
                            )
                        )
    # Every optimizer under every precision, on the Llama-like family.
    optimizers: tuple[OptimizerName, ...] = ("adamw_fused", "sgd") if quick else OPTIMIZERS[1:]
    for precision in PRECISIONS:
        for optimizer in optimizers:
            grid.append(("llama", MeasureSetup(precision, optimizer, "sdpa", False, batch, seq)))
    return grid


def check_extrapolation(family: str, setup: MeasureSetup, depth: int) -> dict[str, float]:
    """Measure ``depth`` layers directly and compare with the extension of depths 1 and 2."""
    config = SMALL_CONFIGS[family]
    full = extrapolate(measure_step(config, 1, setup), measure_step(config, 2, setup), depth)
    direct: Measurement = measure_step(config, depth, setup)
    return {
        "saved": full.saved_bytes / direct.saved_bytes,
        "model_states": full.model_state_bytes / direct.model_state_bytes,
        "peak": full.peak_bytes / direct.peak_bytes,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a small part for CI (under a minute)")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--seq", type=int, default=None, help="sequence length (256; quick: 128)")
    parser.add_argument("--depth", type=int, default=8, help="layers to extend the measurements to")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch's intra-op threads (1: these shapes gain nothing from more, and share the cores well)",
    )
    parser.add_argument("--markdown", type=Path, default=None, help="also write the table as Markdown")
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when the calibrated formulas miss the measurement by more than "
        # argparse fills help strings with %-formatting: a percent sign is written %%.
        + ", ".join(f"{k} {v:.0%}".replace("%", "%%") for k, v in TOLERANCE.items()),
    )
    args = parser.parse_args(argv)
    if not torch_available():
        print('accuracy: torch and transformers are needed: pip install -e ".[measure]"', file=sys.stderr)
        return 2
    import torch  # the extra is installed (checked above)

    warnings.filterwarnings("ignore")
    torch.set_num_threads(max(1, args.threads))  # the bytes counted do not depend on it
    seq = args.seq or (128 if args.quick else 256)
    started = time.perf_counter()
    rows: list[Row] = []
    failures: list[dict[str, Any]] = []
    for family, setup in setups(args.quick, args.batch, seq):
        try:
            rows.append(measure_row(family, setup, args.depth))
        except Exception as error:  # a family transformers cannot train in this setup is reported
            message = f"{type(error).__name__}: {error}"
            failures.append({"family": family, "setup": asdict(setup), "error": message})
    print_table(rows)
    if not all(r.offered for r in rows):
        print("* activations not offered by the estimate (its family's activations_measured is off)")
    for failure in failures:
        print(f"not measured: {failure['family']} {failure['setup']}: {failure['error'][:160]}")
    extrapolation = {}
    if not args.quick:
        for family in ("llama", "mixtral"):
            setup = MeasureSetup("mixed", "adamw", "sdpa", False, args.batch, seq)
            extrapolation[family] = check_extrapolation(family, setup, 4)
        print("extension of depths 1–2 ÷ a direct measurement at depth 4:", extrapolation)
    deviations = worst(rows)
    elapsed = time.perf_counter() - started
    print("largest |measured ÷ proposed − 1|:", {k: round(v, 4) for k, v in deviations.items()})
    print(f"{len(rows)} setups measured in {elapsed:.1f} s")
    report = {
        "command": "python -m benchmarks.accuracy" + (" --quick" if args.quick else ""),
        "environment": {
            "python": platform.python_version(),
            "torch": str(torch.__version__),
            "transformers": __import__("transformers").__version__,
            "machine": platform.machine(),
        },
        "seconds": round(elapsed, 1),
        "worst_deviation_of_proposed": deviations,
        "extrapolation_check": extrapolation,
        "rows": [asdict(row) for row in rows],
        "not_measured": failures,
    }
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    if args.markdown:
        args.markdown.write_text(markdown_table(rows), encoding="utf-8")
    missed = {k: v for k, v in deviations.items() if v > TOLERANCE[k]}
    if args.check and (missed or (failures and args.quick)):
        print(f"accuracy: outside the tolerance: {missed or failures}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
