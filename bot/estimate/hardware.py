"""Accelerators the verdict can be measured against, with the memory each exposes to one process."""

from __future__ import annotations

from enum import StrEnum


class Gpu(StrEnum):
    H100 = "h100"
    A100_40 = "a100-40"
    A100_80 = "a100-80"
    H200 = "h200"
    B200 = "b200"
    B300 = "b300"
    MI300X = "mi300x"
    L40S = "l40s"
    RTXPRO6000 = "rtxpro6000"
    RTX6000ADA = "rtx6000ada"
    A6000 = "a6000"
    RTX5090 = "rtx5090"
    RTX4090 = "rtx4090"
    RTX3090 = "rtx3090"
    L4 = "l4"
    A10G = "a10g"
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
    # Blackwell Ultra: 288 GB of HBM3e per GPU (NVIDIA's B300 / HGX B300 data sheet; DGX B300: 2.3 TB / 8).
    Gpu.B300: ("NVIDIA B300 288 GB", 288),
    Gpu.MI300X: ("AMD Instinct MI300X 192 GB", 192),
    Gpu.L40S: ("NVIDIA L40S 48 GB", 48),
    # 96 GB GDDR7 with ECC (NVIDIA RTX PRO 6000 Blackwell data sheet, workstation and server editions).
    Gpu.RTXPRO6000: ("NVIDIA RTX PRO 6000 Blackwell 96 GB", 96),
    Gpu.RTX6000ADA: ("NVIDIA RTX 6000 Ada 48 GB", 48),
    Gpu.A6000: ("NVIDIA RTX A6000 48 GB", 48),
    # 32 GB GDDR7 (NVIDIA GeForce RTX 5090 specifications).
    Gpu.RTX5090: ("NVIDIA GeForce RTX 5090 32 GB", 32),
    Gpu.RTX4090: ("NVIDIA GeForce RTX 4090 24 GB", 24),
    Gpu.RTX3090: ("NVIDIA GeForce RTX 3090 24 GB", 24),
    # 24 GB GDDR6 (NVIDIA L4 Tensor Core GPU data sheet).
    Gpu.L4: ("NVIDIA L4 24 GB", 24),
    # 24 GB GDDR6: the A10G of AWS's G5 instances (Amazon EC2 G5 instance specifications).
    Gpu.A10G: ("NVIDIA A10G 24 GB", 24),
    Gpu.T4: ("NVIDIA T4 16 GB", 16),
    Gpu.V100_16: ("NVIDIA V100 16 GB", 16),
    Gpu.V100_32: ("NVIDIA V100 32 GB", 32),
}
