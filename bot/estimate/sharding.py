"""Per-GPU memory under plain data parallelism and the three ZeRO stages.

Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
section 5 and Figure 1: with Ψ parameters, mixed-precision Adam keeps 2Ψ of 16-bit weights, 2Ψ of
16-bit gradients and KΨ = 12Ψ of optimizer state, and across N_d data-parallel GPUs

    stage 1 (optimizer states sharded):          4Ψ + 12Ψ / N_d   (= (2 + 2)Ψ + KΨ / N_d)
    stage 2 (+ gradients sharded):               2Ψ + 14Ψ / N_d   (= 2Ψ + (2 + K)Ψ / N_d)
    stage 3 (+ parameters sharded, FSDP full):   16Ψ / N_d        (= (2 + 2 + K)Ψ / N_d)

Other optimizers scale the same way: the weight, gradient and optimizer parts of their breakdown
take the places of 2, 2 and K. Activations are not sharded by ZeRO and are added to every GPU.

DeepSpeed, which runs ZeRO, holds more than the paper's figures (its own estimators,
``estimate_zero2_model_states_mem_needs`` and ``estimate_zero3_model_states_mem_needs`` without
offload): stages 1 and 2 also keep an fp32 partition of the gradients, 4Ψ + 16Ψ / N_d, and stage 3
keeps 16-bit parameters and the fp32 partitions, 18Ψ / N_d, plus four bytes for every parameter of
the largest module, which it gathers whole. :func:`deepspeed_per_gpu_gb` follows those.

With the optimizer offloaded (``offload_optimizer: cpu``) the fp32 gradient partition lives in host
RAM beside the master weights and the optimizer state, and each 16-bit gradient is moved there as
it is reduced: the estimators' GPU figures are 2Ψ for stages 1 and 2
(``estimate_zero2_model_states_mem_needs(cpu_offload=True)``) and 4Ψ_largest + 2Ψ / N_d for stage 3
(``estimate_zero3_model_states_mem_needs(cpu_offload=True, cpu_offload_params=False)``).
"""

from __future__ import annotations

from typing import Literal

from bot.estimate.value_type import value_type

Strategy = Literal["data parallel", "ZeRO-1", "ZeRO-2", "ZeRO-3"]
STRATEGIES: tuple[Strategy, ...] = ("data parallel", "ZeRO-1", "ZeRO-2", "ZeRO-3")


@value_type
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


@value_type
class CardShare:
    """The fraction of each model state one card holds: of the weights, the gradients and the
    optimizer state (the optimizer step's temporaries follow the optimizer state: each card steps its
    own shard)."""

    weights: float
    gradients: float
    optimizer: float


WHOLE_MODEL = CardShare(1.0, 1.0, 1.0)  # one card, or plain data parallel: every card holds it all


def card_share(strategy: Strategy, gpus: int) -> CardShare:
    """What one of ``gpus`` cards holds of each model state under ``strategy`` (the paper's stages)."""
    return CardShare(
        per_gpu_gb(strategy, 1.0, 0.0, 0.0, gpus),
        per_gpu_gb(strategy, 0.0, 1.0, 0.0, gpus),
        per_gpu_gb(strategy, 0.0, 0.0, 1.0, gpus),
    )


# DeepSpeed's fp32 gradient partition, which its optimizer steps from (its estimators' 16Ψ and 18Ψ).
DEEPSPEED_FP32_GRADIENT_BYTES = 4
# DeepSpeed ZeRO-3 gathers the largest module's 16-bit parameters and gradients: 4 bytes a parameter.
DEEPSPEED_GATHERED_BYTES = 4


def deepspeed_per_gpu_gb(
    strategy: Strategy,
    weights_gb: float,
    gradients_gb: float,
    optimizer_gb: float,
    params_billion: float,
    largest_module_billion: float,
    gpus: int,
    *,
    optimizer_offloaded: bool = False,
) -> float:
    """Model-state memory on one of ``gpus`` GPUs as DeepSpeed holds it (activations not included);
    with the optimizer offloaded, the gradients go to host RAM with it (the module's docstring)."""
    fp32_gradients_gb = 0.0 if optimizer_offloaded else params_billion * DEEPSPEED_FP32_GRADIENT_BYTES
    if strategy == "data parallel":
        return weights_gb + gradients_gb + optimizer_gb
    if strategy in ("ZeRO-1", "ZeRO-2"):
        on_card_gradients = 0.0 if optimizer_offloaded else gradients_gb
        return weights_gb + on_card_gradients + (optimizer_gb + fp32_gradients_gb) / gpus
    three = zero_three(
        weights_gb,
        optimizer_gb,
        params_billion,
        largest_module_billion,
        optimizer_offloaded=optimizer_offloaded,
    )
    return three.per_gpu_gb(gpus)


def deepspeed_gathered_gb(largest_module_billion: float) -> float:
    """What DeepSpeed ZeRO-3 holds whole on every GPU: the largest module, gathered."""
    return largest_module_billion * DEEPSPEED_GATHERED_BYTES


@value_type
class ZeroThree:
    """DeepSpeed ZeRO-3 on one GPU: the largest module gathered whole, plus a share of the rest."""

    gathered_gb: float  # held on every GPU
    sharded_gb: float  # divided among the GPUs

    def per_gpu_gb(self, gpus: int) -> float:
        """What one of ``gpus`` GPUs holds."""
        return self.gathered_gb + self.sharded_gb / gpus


def zero_three(
    weights_gb: float,
    optimizer_gb: float,
    params_billion: float,
    largest_module_billion: float,
    *,
    optimizer_offloaded: bool = False,
) -> ZeroThree:
    """The terms of :func:`deepspeed_per_gpu_gb`'s ZeRO-3 figure, for counting the GPUs it needs."""
    fp32_gradients_gb = 0.0 if optimizer_offloaded else params_billion * DEEPSPEED_FP32_GRADIENT_BYTES
    return ZeroThree(
        gathered_gb=deepspeed_gathered_gb(largest_module_billion),
        sharded_gb=weights_gb + optimizer_gb + fp32_gradients_gb,
    )


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


def deepspeed_strategies(
    weights_gb: float,
    gradients_gb: float,
    optimizer_gb: float,
    activations_gb: float,
    params_billion: float,
    largest_module_billion: float,
    gpus: int,
    capacity_gb: float,
    *,
    optimizer_offloaded: bool = False,
) -> tuple[PerGpu, ...]:
    rows = []
    for strategy in STRATEGIES:
        states = deepspeed_per_gpu_gb(
            strategy,
            weights_gb,
            gradients_gb,
            optimizer_gb,
            params_billion,
            largest_module_billion,
            gpus,
            optimizer_offloaded=optimizer_offloaded,
        )
        total = states + activations_gb
        rows.append(PerGpu(strategy=strategy, gb=total, fits=total <= capacity_gb))
    return tuple(rows)
