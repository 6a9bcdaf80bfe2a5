"""Per-GPU memory under plain data parallelism and the three ZeRO stages.

Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
section 5 and Figure 1: with Ψ parameters, mixed-precision Adam keeps 2Ψ of 16-bit weights, 2Ψ of
16-bit gradients and KΨ = 12Ψ of optimizer state, and across N_d data-parallel GPUs

    stage 1 (optimizer states sharded):          4Ψ + 12Ψ / N_d   (= (2 + 2)Ψ + KΨ / N_d)
    stage 2 (+ gradients sharded):               2Ψ + 14Ψ / N_d   (= 2Ψ + (2 + K)Ψ / N_d)
    stage 3 (+ parameters sharded, FSDP full):   16Ψ / N_d        (= (2 + 2 + K)Ψ / N_d)

Other optimizers scale the same way: the weight, gradient and optimizer parts of their breakdown
take the places of 2, 2 and K. Activations are not sharded by ZeRO and are added to every GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Strategy = Literal["data parallel", "ZeRO-1", "ZeRO-2", "ZeRO-3"]
STRATEGIES: tuple[Strategy, ...] = ("data parallel", "ZeRO-1", "ZeRO-2", "ZeRO-3")


@dataclass(frozen=True, slots=True)
class PerGpu:
    strategy: Strategy
    gb: float
    fits: bool


def per_gpu_gb(
    strategy: Strategy, weights_gb: float, gradients_gb: float, optimizer_gb: float, gpus: int
) -> float:
    """Model-state memory on one of ``gpus`` data-parallel GPUs (activations not included)."""
    if strategy == "data parallel":
        return weights_gb + gradients_gb + optimizer_gb
    if strategy == "ZeRO-1":
        return weights_gb + gradients_gb + optimizer_gb / gpus
    if strategy == "ZeRO-2":
        return weights_gb + (gradients_gb + optimizer_gb) / gpus
    return (weights_gb + gradients_gb + optimizer_gb) / gpus


def all_strategies(
    weights_gb: float,
    gradients_gb: float,
    optimizer_gb: float,
    activations_gb: float,
    gpus: int,
    capacity_gb: float,
) -> tuple[PerGpu, ...]:
    rows = []
    for strategy in STRATEGIES:
        total = per_gpu_gb(strategy, weights_gb, gradients_gb, optimizer_gb, gpus) + activations_gb
        rows.append(PerGpu(strategy=strategy, gb=total, fits=total <= capacity_gb))
    return tuple(rows)
