"""The memory savers a training run switches on, as one value, and what each moves off the card.

- ``offload``: optimizer state to host RAM (DeepSpeed ZeRO-Offload, ``offload_optimizer: cpu``, whose
  CPU Adam also holds the fp32 master copy and runs the step on the host, Ren et al. 2021, section 4;
  FSDP's ``CPUOffload``), activations to host RAM (``torch.autograd.graph.save_on_cpu``, torchtune's
  ``OffloadActivations``), or both.
- ``optimizer_in_backward``: each parameter steps as soon as its gradient is accumulated and the
  gradient is freed at once (``register_post_accumulate_grad_hook``, torchtune's ``optimizer_in_bwd``):
  the step never holds a full set of gradients. It cannot accumulate gradients over micro-batches.
- ``chunked_loss``: a chunked or fused cross-entropy (torchtune's ``LinearCrossEntropyLoss``, Liger's
  fused linear cross-entropy): the logits exist one chunk at a time, never for the whole vocabulary
  and batch at once.
- ``grad_accum``: micro-batches per optimizer step: the same memory per micro-batch, a larger
  effective batch; from the second micro-batch on, the accumulated gradients live through forward.

Pure Python; nothing here imports torch. The step's moments that read these are
:func:`bot.estimate.step_peak.step_peak`'s.
"""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from typing import TYPE_CHECKING

from bot.estimate.models import Architecture
from bot.estimate.optimizers import Part
from bot.estimate.value_type import value_type

if TYPE_CHECKING:  # saved_activations reads the Setup, which holds the savers
    from bot.estimate.saved_activations import MeasuredActivations


class Offload(StrEnum):
    """What is kept in host RAM instead of on the card."""

    NONE = "none"
    OPTIMIZER = "optimizer"
    ACTIVATIONS = "activations"
    BOTH = "both"


# Read on every answer: enum members as module constants (bot/README.md, "Code on every answer's path").
_OPTIMIZER_OFFLOADED = (Offload.OPTIMIZER, Offload.BOTH)
_ACTIVATIONS_OFFLOADED = (Offload.ACTIVATIONS, Offload.BOTH)

# The chunks a chunked loss splits the tokens into: torchtune's num_output_chunks default (8, in
# CEWithChunkedOutputLoss and LinearCrossEntropyLoss).
LOSS_CHUNKS = 8
# Decoder layers whose saved tensors stay on the card under activation offloading: the one being
# computed and the one whose copy to (or from) the host is in flight, as torchtune's
# OffloadActivations overlaps the copies on a second stream.
OFFLOAD_LAYERS_IN_FLIGHT = 2


@value_type
class Savers:
    """The savers of one run (default: none on)."""

    offload: Offload = Offload.NONE
    optimizer_in_backward: bool = False
    chunked_loss: bool = False
    grad_accum: int = 1

    @property
    def optimizer_offloaded(self) -> bool:
        return self.offload in _OPTIMIZER_OFFLOADED

    @property
    def activations_offloaded(self) -> bool:
        return self.offload in _ACTIVATIONS_OFFLOADED

    @property
    def any_on(self) -> bool:
        return self != NO_SAVERS


NO_SAVERS = Savers()


@value_type
class PlacedParts:
    """B's parts split by where they live: on the card (what M counts), in host RAM (offloaded or
    paged out), and not held at all (the gradients under optimizer in backward, one tensor's at a time)."""

    on_card: tuple[Part, ...]
    in_host: tuple[Part, ...]
    not_held: tuple[Part, ...]


def place_parts(parts: tuple[Part, ...], savers: Savers) -> PlacedParts:
    """Where each of B's parts lives under ``savers``: offloaded optimizer state (the fp32 master copy
    with it, as under ZeRO-Offload) and paged state in host RAM; gradients not held under optimizer in
    backward."""
    on_card: list[Part] = []
    in_host: list[Part] = []
    not_held: list[Part] = []
    offloaded, in_backward = savers.optimizer_offloaded, savers.optimizer_in_backward  # read once
    for part in parts:
        if part.kind == "optimizer" and (part.paged or offloaded):
            in_host.append(part)
        elif part.kind == "gradients" and in_backward:
            not_held.append(part)
        else:
            on_card.append(part)
    return PlacedParts(tuple(on_card), tuple(in_host), tuple(not_held))


def saved_on_card(acts: MeasuredActivations, arch: Architecture, savers: Savers) -> MeasuredActivations:
    """What autograd keeps on the card under ``savers``: with activations offloaded, the layers' saved
    tensors but ``OFFLOAD_LAYERS_IN_FLIGHT`` layers' go to host RAM (what the layers' outside saves
    stays, as torchtune keeps the output layer's on the card); with a chunked loss, the fp32
    log-softmax of the whole vocabulary is not kept (each chunk's logits are rebuilt in backward from
    the saved hidden states) and the loss's transients are one chunk's."""
    if not (savers.activations_offloaded or savers.chunked_loss):
        return acts
    saved, outside, per_layer = acts.saved_bytes, acts.outside_layers_bytes, acts.per_layer_bytes
    loss_forward, loss_backward = acts.loss_forward_bytes, acts.loss_backward_bytes
    if savers.chunked_loss:
        log_softmax = log_softmax_bytes(arch, acts.batch_size, acts.seq_len)
        outside -= log_softmax
        saved -= log_softmax
        # One chunk: in forward its bf16 logits and their fp32 copy (6v per token); in backward the
        # chunk rebuilt (6v) and its two fp32 gradients (8v).
        loss_backward = (loss_forward + loss_backward) / LOSS_CHUNKS
        loss_forward /= LOSS_CHUNKS
    if savers.activations_offloaded:
        sent = offloaded_activation_bytes(acts, arch.layers, savers)
        saved -= sent
        per_layer -= sent / arch.layers
    return replace(
        acts,
        saved_bytes=saved,
        outside_layers_bytes=outside,
        per_layer_bytes=per_layer,
        loss_forward_bytes=loss_forward,
        loss_backward_bytes=loss_backward,
    )


def offloaded_activation_bytes(acts: MeasuredActivations, layers: int, savers: Savers) -> float:
    """What activation offloading keeps in host RAM: every layer's saved tensors but those in flight."""
    if not savers.activations_offloaded:
        return 0.0
    return (layers - min(layers, OFFLOAD_LAYERS_IN_FLIGHT)) * acts.per_layer_bytes


def log_softmax_bytes(arch: Architecture, batch_size: int, seq_len: int) -> float:
    """The loss's fp32 log-softmax over the whole vocabulary, 4 B per token and entry
    (saved_activations' outside term), which a chunked loss does not keep."""
    return 4.0 * batch_size * seq_len * arch.vocab_size
