"""Accelerators the verdict can be measured against, with the memory each exposes to one process."""

from __future__ import annotations

from enum import StrEnum


class Gpu(StrEnum):
    H100 = "h100"
    A100_40 = "a100-40"
    A100_80 = "a100-80"
    H200 = "h200"
    B200 = "b200"
    MI300X = "mi300x"
    L40S = "l40s"
    RTX6000ADA = "rtx6000ada"
    A6000 = "a6000"
    RTX4090 = "rtx4090"
    RTX3090 = "rtx3090"
    T4 = "t4"
    V100_16 = "v100-16"
    V100_32 = "v100-32"

    @property
    def display_name(self) -> str:
        return _GPUS[self][0]

    @property
    def memory_gb(self) -> float:
        return _GPUS[self][1]


DEFAULT_GPU = Gpu.H100

# Memory per GPU from the vendors' data sheets, in GB as they state it.
_GPUS: dict[Gpu, tuple[str, float]] = {
    Gpu.H100: ("NVIDIA H100 80 GB", 80),
    Gpu.A100_40: ("NVIDIA A100 40 GB", 40),
    Gpu.A100_80: ("NVIDIA A100 80 GB", 80),
    Gpu.H200: ("NVIDIA H200 141 GB", 141),
    # The B200 data sheet gives 192 GB of HBM3e; DGX B200 systems expose 180 GB per GPU (1,440 GB / 8).
    Gpu.B200: ("NVIDIA B200 180 GB", 180),
    Gpu.MI300X: ("AMD Instinct MI300X 192 GB", 192),
    Gpu.L40S: ("NVIDIA L40S 48 GB", 48),
    Gpu.RTX6000ADA: ("NVIDIA RTX 6000 Ada 48 GB", 48),
    Gpu.A6000: ("NVIDIA RTX A6000 48 GB", 48),
    Gpu.RTX4090: ("NVIDIA GeForce RTX 4090 24 GB", 24),
    Gpu.RTX3090: ("NVIDIA GeForce RTX 3090 24 GB", 24),
    Gpu.T4: ("NVIDIA T4 16 GB", 16),
    Gpu.V100_16: ("NVIDIA V100 16 GB", 16),
    Gpu.V100_32: ("NVIDIA V100 32 GB", 32),
}
