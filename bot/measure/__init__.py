"""Measuring a real training step (issue 11): the optional ``measure`` extra.

``pip install "vram-bot[measure]"`` brings torch and transformers; this package imports them only
inside ``measure_step`` so that importing ``bot.measure`` (its types, its family configs) costs
nothing and the bot itself never loads them.
"""

from __future__ import annotations

from typing import Any

from bot.measure.types import Extrapolated, Measurement, MeasureSetup, extrapolate

__all__ = ["Extrapolated", "MeasureSetup", "Measurement", "extrapolate", "measure_step", "torch_available"]


def torch_available() -> bool:
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        return False
    return True


def measure_step(config: dict[str, Any], layers: int, setup: MeasureSetup) -> Measurement:
    """Build the model of ``config`` (a config.json-like dict) ``layers`` deep with random weights,
    run one real training step of ``setup`` on CPU and count its bytes (see ``bot.measure.step``)."""
    from bot.measure import step  # torch is imported here, on demand

    return step.measure_step(config, layers, setup)
