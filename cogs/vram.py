"""The ``/vram`` extension: ``await bot.load_extension("cogs.vram")`` loads it into any ``commands.Bot``.

The cog itself lives in :mod:`bot.runtime.cog`, with the rest of the Discord runtime; a host bot whose
own top-level ``cogs`` package hides this one loads ``bot.runtime.cog`` instead.
"""

from bot.runtime.cog import setup, teardown

__all__ = ["setup", "teardown"]
