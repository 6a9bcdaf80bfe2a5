"""``python -m bot.measure``: one real training step of a model from its config, measured against the
estimate; ``vram-bot measure`` runs it.

The model is built with random weights at depths 1 and 2 (no weights are downloaded), one training
step is measured at each, and the figures are extended to the model's full depth. Exit status: 0
measured, 2 bad input, a model or repo that cannot be had, or a model too large for this machine even
at two layers.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.estimate.core import estimate
from bot.estimate.hub import HubFailure, is_repo_id, looks_like_repo_id
from bot.estimate.models import Architecture, find_preset, search_presets
from bot.estimate.parts_table import PartsTable, RowKind
from bot.estimate.request import InvalidRequest, parse_request
from bot.estimate.step_peak import step_peak
from bot.measure import extrapolate, measure_step, torch_available
from bot.measure.configs import (
    MeasureError,
    Target,
    at_depth,
    buildable_config,
    hub_target,
    preset_target,
    transformers_refuses,
)
from bot.measure.families import SMALL_CONFIGS, architecture
from bot.measure.types import ATTENTIONS, METHODS, OPTIMIZERS, PRECISIONS, Measurement, MeasureSetup

__all__ = ["MeasureError", "main", "needed_bytes", "resolve", "run"]

# What one measured depth may use of the memory this machine has free: the measurement runs the
# model twice (depths 1 and 2) and keeps Python's own overhead besides.
MEMORY_SHARE = 0.7
EXIT_USAGE = 2

EXAMPLES = """examples:
  vram-bot measure llama-3.1-8b --precision bf16 --optimizer sgd --seq-len 256
                                          a preset, by its key or a loose name ("qwen3 8b")
  vram-bot measure Qwen/Qwen3-0.6B        a Hugging Face repo's config.json (HF_TOKEN for a gated one)
  vram-bot measure --config path/to/config.json --checkpointing
  vram-bot measure --family llama --precision amp --attention eager --batch-size 2 --seq-len 256

A preset's own repo ID (Qwen/Qwen3-8B) is measured from the preset, offline, as /vram answers it.
Nothing but config.json is read from the Hub; the weights are random. A model that does not fit
this machine even at two layers exits 2 with the memory it needs."""


def load_config(path: Path) -> dict[str, Any]:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise MeasureError(f"cannot read {path}: {error}") from None
    if not isinstance(config, dict) or "model_type" not in config:
        raise MeasureError(f"{path} is not a model config.json (no model_type)")
    return config


def _file_target(label: str, config: dict[str, Any]) -> Target:
    built = buildable_config(config)
    try:
        # The benchmark's families leave the depth out: they are measured as two layers.
        arch = architecture(str(built["model_type"]), built, int(built.get("num_hidden_layers") or 2))
    except (KeyError, TypeError, ValueError) as error:
        raise MeasureError(f"{label} lacks a field the estimate needs: {error}") from None
    return Target(f"{label} (built as {built['model_type']})", built, arch)


def _hub_message(failure: HubFailure) -> str:
    # The words of `vram-bot estimate --model owner/name`, from the same catalogue.
    from bot.present.hub_problems import describe_hub_failure

    return describe_hub_failure(failure).replace("`", "")


def _model_message(model: str) -> str:
    """Why ``model`` names neither a preset nor a repo, in the words ``/vram model:`` uses."""
    from bot.estimate.request import InvalidRequest, parse_request
    from bot.present.problems import describe_problem

    try:
        parse_request(model=model)
    except InvalidRequest as exc:
        return "; ".join(describe_problem(problem).replace("`", "") for problem in exc.problems)
    return f"{model} is not a model preset"  # not reached: the validator refuses it too


def resolve(model: str) -> Target:
    """A preset by any name ``/vram`` takes, or a Hub repo looked up now (blocking)."""
    preset = find_preset(model)
    if preset is None and not looks_like_repo_id(model):
        loose = search_presets(model, limit=1)  # "llama 8", "qwen72": as autocomplete finds them
        preset = loose[0] if loose else None
    if preset is not None:
        return preset_target(preset)
    if not is_repo_id(model):
        raise MeasureError(_model_message(model))
    # Imported here: huggingface_hub costs a quarter of a second, which a preset should not pay.
    from bot.hub_lookup import fetch_model
    from bot.hub_settings import hub_settings_from_env

    try:
        # A terminal can wait longer per request than the bot's 2 s, which Discord's 3 s bound.
        config, arch = fetch_model(model, hub_settings_from_env(os.environ, timeout_s=10.0))
    except HubFailure as failure:
        raise MeasureError(_hub_message(failure)) from None
    if not isinstance(arch, Architecture):  # known by its tensors only: no estimate to measure against
        raise MeasureError(_hub_message(HubFailure("unknown_architecture", model)))
    return hub_target(arch.hub_id or model, config, arch)


def available_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (Linux), or None where it cannot be read."""
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def needed_bytes(target: Target, setup: MeasureSetup, layers: int = 2) -> float:
    """The calibrated peak of a ``layers``-deep copy of the model (what measuring it needs)."""
    arch = at_depth(target.architecture, layers)
    return setup.proposed_peak_bytes(arch, arch.parameter_count)


def check_memory(target: Target, setup: MeasureSetup) -> None:
    """Refuse, before torch is even imported, a model whose two layers this machine cannot hold."""
    need = needed_bytes(target, setup)
    free = available_bytes()
    if free is not None and need > MEMORY_SHARE * free:
        params = at_depth(target.architecture, 2).parameter_count
        raise MeasureError(
            f"measuring even two layers ({params / 1e9:.1f}B parameters) of {target.label} needs "
            f"about {need / 1e9:.1f} GB and this machine has {free / 1e9:.1f} GB free: "
            f"use a machine with at least {need / MEMORY_SHARE / 1e9:.0f} GB free, a lighter setup "
            "(--precision bf16 --optimizer sgd) or a smaller batch or sequence"
        )


# The estimate's optimizer for each one measured (the fused AdamW keeps Adam's state).
_ESTIMATED_OPTIMIZERS = {"adamw": "adam", "adamw_fused": "adam", "sgd": "sgd", "adam8bit": "adam8bit"}


def measured_parts(
    arch: Architecture, setup: MeasureSetup, shallow: Measurement, deep: Measurement
) -> PartsTable | None:
    """The estimate's parts table for the measured setup, each card row with what the step held of
    it, extended to the model's depth as every figure is (affine in depth); None where the setup is
    not one /vram can ask for."""
    try:
        request = parse_request(
            model=arch,
            precision=setup.precision,
            optimizer=_ESTIMATED_OPTIMIZERS[setup.optimizer],
            flash_attention=setup.attention == "sdpa",
            checkpointing=setup.checkpointing,
            method=setup.method,
            lora_rank=setup.lora_rank,
            lora_targets=setup.lora_targets,
            batch_size=setup.batch_size,
            seq_len=setup.seq_len,
        )
    except InvalidRequest:
        return None
    layers, span = arch.layers, deep.layers - shallow.layers

    def line(measured: Callable[[Measurement], float]) -> float:
        low, high = measured(shallow), measured(deep)
        return (low + (high - low) * (layers - shallow.layers) / span) / 1e9

    # The measured step's tensors by the table's rows: the fp32 master copy is optimizer state there.
    by_row: dict[tuple[RowKind, bool], float] = {
        ("weights", False): line(lambda m: m.param_bytes),
        ("gradients", False): line(lambda m: m.grad_bytes),
        ("optimizer", False): line(lambda m: m.master_bytes + m.optimizer_bytes),
        ("weights", True): line(lambda m: m.frozen_bytes),
        ("activations", False): line(lambda m: m.saved_bytes),
    }
    return estimate(request).table.with_measured(by_row)


def run(target: Target, setup: MeasureSetup) -> dict[str, float]:
    config, full_arch = target.config, target.architecture
    depth = full_arch.layers
    check_memory(target, setup)
    shallow, deep = measure_step(config, 1, setup), measure_step(config, 2, setup)
    full = extrapolate(shallow, deep, depth)
    # Under LoRA the step is given the whole base, which it keeps frozen (the adapters are counted).
    base = full.parameters if setup.method == "full" else full_arch.parameter_count
    found = step_peak(full_arch, base, setup.batch_size, setup.seq_len, setup=setup.training)
    return {
        "layers": depth,
        "parameters": full.parameters,
        "model_states_measured": full.model_state_bytes,
        "model_states_proposed": found.model_states_bytes,
        "saved_measured": full.saved_bytes,
        "saved_current": setup.current_saved_bytes(full_arch),
        "saved_proposed": found.saved_bytes,
        "peak_measured": full.peak_bytes,
        "peak_proposed": found.peak_bytes,
        **_table_figures(measured_parts(full_arch, setup, shallow, deep)),
    }


def _table_figures(table: PartsTable | None) -> dict[str, float]:
    """The parts table's card rows as the comparison prints them: each row's planned bytes (what
    /vram shows) and the measured ones."""
    figures: dict[str, float] = {}
    for row in table.at("gpu") if table is not None else ():
        name = f"{row.kind}{'_frozen' if row.frozen else ''}"
        figures[f"{name}_planned"] = row.planned_gb * 1e9
        if row.measured_gb is not None:
            figures[f"{name}_measured"] = row.measured_gb * 1e9
    return figures


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Measure one real training step of a model against the bot's estimate: the model is "
        "built from its config with random weights (no weights are downloaded), two layers deep, and "
        "the figures are extended to its full depth. Exit 2 on bad input, a model that cannot be had, "
        "or one too large for this machine even at two layers.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,  # keep the examples' line breaks
    )
    parser.add_argument(
        "model",
        nargs="?",
        metavar="MODEL",
        help="a model preset (a key such as llama-3.1-8b, or a name as /vram model: takes it) or a "
        "Hugging Face repo ID (owner/name)",
    )
    parser.add_argument("--config", type=Path, help="a model's config.json, instead of MODEL")
    parser.add_argument(
        "--family",
        choices=sorted(SMALL_CONFIGS),
        metavar="NAME",
        help="a declared family's small model (llama, gemma3, mixtral, qwen3_next, ...), instead of MODEL",
    )
    parser.add_argument("--precision", choices=PRECISIONS, default="mixed", help="default: %(default)s")
    parser.add_argument("--optimizer", choices=OPTIMIZERS, default="adamw", help="default: %(default)s")
    parser.add_argument("--attention", choices=ATTENTIONS, default="sdpa", help="default: %(default)s")
    parser.add_argument("--checkpointing", action="store_true", help="full activation checkpointing")
    parser.add_argument(
        "--method",
        choices=METHODS,
        default="full",
        help="lora: peft's adapters (r 16, all-linear) on a frozen base; qlora: on an NF4 base "
        "(bitsandbytes); default: %(default)s",
    )
    # The same flag names as `vram-bot estimate` for the same inputs. The older --batch and --seq stay
    # as hidden aliases for now (not in --help), so that scripts written for them keep working.
    parser.add_argument("--batch-size", type=int, default=1, help="sequences per step (default: %(default)s)")
    parser.add_argument("--seq-len", type=int, default=512, help="tokens per sequence (default: %(default)s)")
    parser.add_argument(
        "--batch", dest="batch_size", type=int, default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )
    parser.add_argument("--seq", dest="seq_len", type=int, default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return parser


def parse_args(argv: list[str] | None, prog: str) -> argparse.Namespace:
    """The arguments, with exactly one of MODEL, --config and --family (else a usage error, exit 2)."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    given = [name for name in ("model", "config", "family") if getattr(args, name) is not None]
    if len(given) != 1:
        parser.error("give one MODEL (a preset or owner/name), or --config FILE, or --family NAME")
    if args.batch_size < 1 or args.seq_len < 2:
        parser.error("--batch-size must be at least 1 and --seq-len at least 2")
    return args


def target_of(args: argparse.Namespace) -> Target:
    if args.model is not None:
        return resolve(args.model)
    if args.config is not None:
        return _file_target(str(args.config), load_config(args.config))
    return _file_target(f"family {args.family}", dict(SMALL_CONFIGS[args.family]))


def main(argv: list[str] | None = None, prog: str = "python -m bot.measure") -> int:
    args = parse_args(argv, prog)
    setup = MeasureSetup(
        args.precision,
        args.optimizer,
        args.attention,
        args.checkpointing,
        args.batch_size,
        args.seq_len,
        args.method,
    )
    try:
        target = target_of(args)
        # Before torch: a model too large for this machine is said to be so wherever torch is missing.
        check_memory(target, setup)
        if not torch_available():
            raise MeasureError('needs torch and transformers: pip install "vram-bot[measure]"')
        refused = transformers_refuses(str(target.config["model_type"]))
        if refused is not None:
            raise MeasureError(refused)
        figures = run(target, setup)
    except MeasureError as error:
        print(f"measure: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(f"{'model':24} {target.label}")
    for name, value in figures.items():
        shown = f"{value / 1e9:.4f} GB" if name not in ("layers", "parameters") else f"{value:,.0f}"
        print(f"{name:24} {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
