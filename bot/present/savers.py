"""What the memory savers changed, in words (Details) and as data (``--format json``).

The figures come from the estimate (:mod:`bot.estimate.savers`, the parts the estimate moved off the
card); this module only words them.
"""

from __future__ import annotations

from typing import Any

from bot.estimate.core import Estimate
from bot.estimate.request import DEFAULT_BATCH_SIZE, DEFAULT_SEQ_LEN
from bot.estimate.savers import LOSS_CHUNKS, OFFLOAD_LAYERS_IN_FLIGHT, log_softmax_bytes
from bot.estimate.step_peak import gradient_bytes_per_param, largest_tensor_params
from bot.present.words import Words


def _largest_gradient_gb(estimate: Estimate) -> float | None:
    model = estimate.request.architecture
    if model is None:
        return None
    return largest_tensor_params(model) * gradient_bytes_per_param(estimate.request.precision.value) / 1e9


def _effective_batch(estimate: Estimate) -> int:
    request = estimate.request
    return (request.batch_size or DEFAULT_BATCH_SIZE) * request.grad_accum * request.gpus


def savers_text(estimate: Estimate, w: Words) -> str | None:
    """One line per saver that is on (and for a paged optimizer), saying what it moved or changed."""
    request = estimate.request
    savers = request.savers
    lines: list[str] = []
    if estimate.in_host:
        parts = ", ".join(w(part.key) for part in estimate.in_host)
        states_gb = estimate.host_gb - estimate.host_activations_gb
        lines.append(w("saver.in_host", parts=parts, gb=w.gb(states_gb)))
    if savers.optimizer_offloaded and not estimate.custom_bytes:
        lines.append(w("saver.offload_optimizer"))
    elif any(part.paged for part in estimate.in_host):
        lines.append(w("saver.paged"))
    # The activation savers change only what the bot estimated (an entered figure is taken as measured).
    estimated = estimate.activation_estimate is not None
    if savers.activations_offloaded and estimated:
        lines.append(
            w(
                "saver.offload_activations",
                gb=w.gb(estimate.host_activations_gb),
                layers=w.plain(OFFLOAD_LAYERS_IN_FLIGHT),
            )
        )
    if savers.optimizer_in_backward:
        one = _largest_gradient_gb(estimate)
        not_held = sum(estimate.part_gb(part) for part in estimate.not_held)
        lines.append(w("saver.in_backward", gb=w.gb(not_held), one=w.gb(one) if one is not None else "—"))
    model = request.architecture
    if savers.chunked_loss and model is not None and estimated:
        batch, seq_len = request.batch_size or DEFAULT_BATCH_SIZE, request.seq_len or DEFAULT_SEQ_LEN
        saved = log_softmax_bytes(model, batch, seq_len)
        lines.append(w("saver.chunked_loss", chunks=w.plain(LOSS_CHUNKS), gb=w.gb(saved / 1e9)))
    if savers.grad_accum > 1:
        lines.append(
            w("saver.grad_accum", k=w.plain(savers.grad_accum), effective=w.plain(_effective_batch(estimate)))
        )
    return "\n".join(lines) or None


def savers_json(estimate: Estimate) -> dict[str, Any]:
    """The savers as ``--format json`` carries them: the options, what left the card, the effective batch."""
    savers = estimate.request.savers
    return {
        "offload": savers.offload.value,
        "optimizer_in_backward": savers.optimizer_in_backward,
        "chunked_loss": savers.chunked_loss,
        "loss_chunks": LOSS_CHUNKS if savers.chunked_loss else None,
        "grad_accum": savers.grad_accum,
        "effective_batch": _effective_batch(estimate),
        "in_host": [
            {
                "key": part.key,
                "bytes_per_param": part.bytes_per_param,
                "gb": estimate.part_gb(part),
                "paged": part.paged,
            }
            for part in estimate.in_host
        ],
        "not_held": [
            {"key": part.key, "bytes_per_param": part.bytes_per_param, "gb": estimate.part_gb(part)}
            for part in estimate.not_held
        ],
        "host_activations_gb": estimate.host_activations_gb,
        "host_gb": estimate.host_gb,
    }
