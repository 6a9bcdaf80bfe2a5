"""The optimizers and memory savers against real steps on CPU: measured ÷ estimated.

For each optimizer (torch.optim's AdamW and SGD, torch.optim.Adafactor, Lion's reference update,
torch.optim.Muon with AdamW for the embeddings and the head, bitsandbytes' 8-bit AdamW where it runs)
it takes one steady-state step of a small Llama built from its config (random weights, bytes counted
tensor by tensor as ``bot.measure`` counts them) and compares

- the model states after the step (weights, gradients, optimizer state) with
  ``bot.estimate.step_peak``'s bytes per parameter,
- the step's peak of live bytes with ``step_peak`` for the same setup,

and then the savers that CPU can run: the optimizer in backward (one optimizer per parameter,
stepped from ``register_post_accumulate_grad_hook``, the gradient freed at once), a chunked loss
(cross-entropy over 8 chunks of tokens, each chunk's logits rebuilt in backward by
``torch.utils.checkpoint``) and gradient accumulation (two micro-batches, then one step).
Offloading to host RAM cannot be measured on a machine whose "device" is host RAM: ``save_on_cpu``
moves nothing there.

    python -m benchmarks.accuracy_optimizers --quick --check    # CI: bf16, under a minute
    python -m benchmarks.accuracy_optimizers                    # bf16 and amp, two families
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from bot.estimate.savers import LOSS_CHUNKS, NO_SAVERS, Savers
from bot.estimate.setup import Setup
from bot.estimate.step_peak import (
    OptimizerKind,
    largest_tensor_params,
    model_state_bytes_per_param,
    muon_adamw_share,
    muon_newton_schulz_bytes,
    step_peak,
    step_temporary_bytes_per_largest_entry,
    step_temporary_bytes_per_param,
)
from bot.measure import torch_available
from bot.measure.families import SMALL_CONFIGS, architecture

QUICK_FAMILIES = ("llama",)
FULL_FAMILIES = ("llama", "qwen3")
OPTIMIZERS: tuple[OptimizerKind, ...] = ("adamw", "sgd", "adam8bit", "adafactor", "lion", "muon")
# --check: model states within ±5 %, peaks within ±15 %.
STATES_TOLERANCE = 0.05
PEAK_TOLERANCE = 0.15
LAYERS = 2
BATCH, SEQ = 2, 128


@dataclass(frozen=True)
class Row:
    family: str
    precision: str
    optimizer: str
    saver: str
    states_ratio: float  # measured ÷ estimated model states after the step
    peak_ratio: float  # measured ÷ estimated peak of the step
    states_bytes_per_param: float  # measured
    temporaries_bytes: float  # the optimizer step's own, measured (0 under the optimizer in backward)
    estimated_temporaries_bytes: float


def _lion_step(torch: Any, params: list[Any], state: dict[Any, Any], lr: float = 1e-5) -> None:
    """Lion's update (Chen et al. 2023, Program 1), tensor by tensor as the reference runs it."""
    beta1, beta2, weight_decay = 0.9, 0.99, 0.01

    def update_one(p: Any, momentum: Any) -> None:  # as lion-pytorch's update_fn: its temporary dies here
        update = momentum.mul(beta1).add_(p.grad, alpha=1 - beta1).sign_()
        p.mul_(1 - lr * weight_decay).add_(update, alpha=-lr)
        momentum.mul_(beta2).add_(p.grad, alpha=1 - beta2)

    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                update_one(p, state.setdefault(p, torch.zeros_like(p)))


class _Optimizer:
    """One optimizer choice over some parameters: step, zero_grad and its state tensors."""

    def __init__(self, torch: Any, name: str, params: list[Any], hidden: set[int]) -> None:
        self.torch, self.name, self.params = torch, name, params
        self.lion_state: dict[Any, Any] = {}
        self.inner: list[Any] = []
        if name == "adamw":
            self.inner = [torch.optim.AdamW(params, lr=1e-5, weight_decay=0.01, foreach=True)]
        elif name == "sgd":
            self.inner = [torch.optim.SGD(params, lr=1e-5, momentum=0.9, foreach=True)]
        elif name == "adam8bit":
            import bitsandbytes  # optional: main() skips it where it does not import

            self.inner = [bitsandbytes.optim.AdamW8bit(params, lr=1e-5, weight_decay=0.01)]
        elif name == "adafactor":
            self.inner = [torch.optim.Adafactor(params, lr=1e-2, foreach=True)]
        elif name == "muon":
            # As the reference's MuonWithAuxAdam: Muon for the 2-D hidden weights, AdamW for the rest.
            matrices = [p for p in params if id(p) in hidden]
            rest = [p for p in params if id(p) not in hidden]
            if matrices:
                self.inner.append(torch.optim.Muon(matrices, lr=0.02, weight_decay=0.01))
            if rest:
                self.inner.append(torch.optim.AdamW(rest, lr=1e-5, weight_decay=0.01, foreach=True))

    def step(self) -> None:
        if self.name == "lion":
            _lion_step(self.torch, self.params, self.lion_state)
        for inner in self.inner:
            inner.step()

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def state_tensors(self) -> Iterator[Any]:
        yield from self.lion_state.values()
        for inner in self.inner:
            for state in inner.state.values():
                for value in state.values():
                    if isinstance(value, self.torch.Tensor):
                        yield value


def _chunked_loss(torch: Any, model: Any, input_ids: Any) -> Any:
    """Cross-entropy over LOSS_CHUNKS chunks of tokens, each chunk's logits rebuilt in backward."""
    from torch.utils.checkpoint import checkpoint

    hidden = model.model(input_ids=input_ids).last_hidden_state[:, :-1]
    hidden = hidden.reshape(-1, hidden.shape[-1])
    labels = input_ids[:, 1:].reshape(-1)
    weight = model.lm_head.weight

    def chunk_loss(h: Any, y: Any) -> Any:
        return torch.nn.functional.cross_entropy(
            torch.nn.functional.linear(h, weight).float(), y, reduction="sum"
        )

    total = None
    for h, y in zip(hidden.chunk(LOSS_CHUNKS), labels.chunk(LOSS_CHUNKS), strict=True):
        part = checkpoint(chunk_loss, h, y, use_reentrant=False)
        total = part if total is None else total + part
    return total / labels.numel()


def measure(family: str, precision: str, optimizer: OptimizerKind, savers: Savers) -> Row:
    import torch

    from bot.measure.step import _LiveBytes, _Tracker, _unique_bytes, build_model
    from bot.measure.types import MeasureSetup

    config = SMALL_CONFIGS[family]
    model = build_model(config, LAYERS, MeasureSetup(precision=precision, batch_size=BATCH, seq_len=SEQ))  # type: ignore[arg-type]
    params = [p for p in model.parameters() if p.requires_grad]
    outside = {id(model.model.embed_tokens.weight), id(model.lm_head.weight)}
    hidden = {id(p) for p in params if p.ndim == 2 and id(p) not in outside}
    if savers.optimizer_in_backward:
        per_param = {p: _Optimizer(torch, optimizer, [p], hidden) for p in params}

        def step_now(p: Any) -> None:
            per_param[p].step()
            p.grad = None

        for p in params:
            p.register_post_accumulate_grad_hook(step_now)
        optimizers = list(per_param.values())
    else:
        optimizers = [_Optimizer(torch, optimizer, params, hidden)]
    input_ids = torch.randint(
        0, int(config["vocab_size"]), (BATCH, SEQ), generator=torch.Generator().manual_seed(0)
    )

    def forward() -> Any:
        autocast: Any = (
            torch.autocast("cpu", dtype=torch.bfloat16) if precision == "amp" else contextlib.nullcontext()
        )
        with autocast:
            if savers.chunked_loss:
                return _chunked_loss(torch, model, input_ids)
            return model(input_ids=input_ids, labels=input_ids).loss

    before_step = [0]

    def one_step(tracker: Any = None) -> None:
        # Gradient accumulation: the micro-batches' gradients add up in .grad (no zero_grad between
        # them), live through the next micro-batch's forward and backward, then one step.
        for _ in range(savers.grad_accum):
            loss = forward()
            loss.backward()
            del loss
        if not savers.optimizer_in_backward:
            if tracker is not None:
                before_step[0] = tracker.total
                tracker.enter("optimizer")
            optimizers[0].step()

    def states() -> Iterator[Any]:
        for opt in optimizers:
            yield from opt.state_tensors()

    one_step()  # warm-up: creates the optimizer state
    for opt in optimizers:
        opt.zero_grad()
    tracker = _Tracker()
    with _LiveBytes(tracker):
        for tensor in [*model.parameters(), *model.buffers(), *states(), input_ids]:
            tracker.add(tensor.untyped_storage())
        tracker.enter("step")
        one_step(tracker)
        seen: set[int] = set()
        measured_states = (
            _unique_bytes(iter(params), seen)
            + _unique_bytes((p.grad for p in params if p.grad is not None), seen)
            + _unique_bytes(states(), seen)
        )
        peak = max(tracker.peak.values())
        temporaries = tracker.peak.get("optimizer", 0) - before_step[0]
    n = sum(int(p.numel()) for p in params)
    arch = architecture(family, config, LAYERS)
    kind: Any = precision
    estimated_states = model_state_bytes_per_param(kind, optimizer) * n
    if optimizer == "muon":
        estimated_states += (2 if precision == "bf16" else 4) * muon_adamw_share(arch, n) * n
    if savers.optimizer_in_backward:  # no gradients are left after the step
        estimated_states -= (2 if precision == "bf16" else 4) * n
    found = step_peak(arch, n, BATCH, SEQ, setup=Setup(precision=kind, optimizer=optimizer, savers=savers))
    # The optimizer step's own temporaries (none after backward when each tensor stepped inside it).
    estimated_temporaries = (
        0.0
        if savers.optimizer_in_backward
        else step_temporary_bytes_per_param(kind, optimizer) * n
        + (
            muon_newton_schulz_bytes(arch, kind)
            if optimizer == "muon"
            else step_temporary_bytes_per_largest_entry(kind, optimizer) * largest_tensor_params(arch)
        )
    )
    saver = "in backward" if savers.optimizer_in_backward else "chunked loss" if savers.chunked_loss else "-"
    if savers.grad_accum > 1:
        saver = f"grad accum × {savers.grad_accum}"
    return Row(
        family=family,
        precision=precision,
        optimizer=optimizer,
        saver=saver,
        states_ratio=measured_states / estimated_states,
        peak_ratio=peak / found.peak_bytes,
        states_bytes_per_param=measured_states / n,
        temporaries_bytes=float(temporaries),
        estimated_temporaries_bytes=estimated_temporaries,
    )


def _bitsandbytes() -> bool:
    try:
        import bitsandbytes  # noqa: F401
    except Exception:  # it raises more than ImportError where it does not run
        return False
    return True


def runs(quick: bool) -> Iterator[tuple[str, str, OptimizerKind, Savers]]:
    families = QUICK_FAMILIES if quick else FULL_FAMILIES
    precisions = ("bf16",) if quick else ("bf16", "amp")
    optimizers = [o for o in OPTIMIZERS if o != "adam8bit" or _bitsandbytes()]
    for family in families:
        for precision in precisions:
            for optimizer in optimizers:
                yield family, precision, optimizer, NO_SAVERS
            in_backward: tuple[OptimizerKind, ...] = ("sgd",) if quick else ("adamw", "sgd")
            for kind in in_backward:
                yield family, precision, kind, Savers(optimizer_in_backward=True)
            yield family, precision, "adamw", Savers(chunked_loss=True)
            yield family, precision, "adamw", Savers(grad_accum=2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="CI's part: one family, bf16")
    parser.add_argument("--check", action="store_true", help="fail beyond the tolerances")
    args = parser.parse_args(argv)
    if not torch_available():
        print("torch is not installed: pip install -e '.[measure]'", file=sys.stderr)
        return 2
    rows = [measure(*run) for run in runs(args.quick)]
    print(
        "| family | precision | optimizer | saver | states B/param | states ratio | peak ratio "
        "| step temporaries MB (measured / estimated) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row.family} | {row.precision} | {row.optimizer} | {row.saver} | "
            f"{row.states_bytes_per_param:.3f} | {row.states_ratio:.3f} | {row.peak_ratio:.3f} | "
            f"{row.temporaries_bytes / 1e6:.2f} / {row.estimated_temporaries_bytes / 1e6:.2f} |"
        )
    bad: list[Callable[[], str]] = []
    for row in rows:
        if abs(row.states_ratio - 1) > STATES_TOLERANCE or abs(row.peak_ratio - 1) > PEAK_TOLERANCE:
            bad.append(lambda row=row: f"{row.family} {row.precision} {row.optimizer} {row.saver}")  # type: ignore[misc]
    if args.check and bad:
        print("beyond tolerance: " + "; ".join(b() for b in bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
