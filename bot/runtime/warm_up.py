"""Modules the first answer of a kind needs, imported ahead of it once the bot is up.

The bot's start leaves out what only an answer uses (the estimator and renderers; the Hub client):
start-up is quicker without them (benchmarks/README.md, the cold start). :func:`warm_up_module`
imports such a module in a worker thread, off the event loop, then moves what the import built out
of the collector's generations, as start-up's is (``runner.freeze_start_up``): it lives as long as
the process, and left in, every full collection would walk it (the Hub modules' 16,000 objects, some
7 ms each time, charged to whichever answer set it off).
"""

from __future__ import annotations

import asyncio
import gc
import importlib

_frozen: set[str] = set()


async def warm_up_module(name: str) -> None:
    """Import module ``name`` in a worker thread (nothing to do if imported already), and freeze the
    collector's generations once per module."""
    await asyncio.to_thread(importlib.import_module, name)
    if name not in _frozen:
        _frozen.add(name)
        gc.collect()  # so that no garbage of the moment is frozen with it
        gc.freeze()
