"""What a Hub repo costs an answer: cached vs preset, uncached against the fake Hub, and autocomplete.

Everything runs in this process against the loopback fake Hub (``tests/fake_hub.py``), through the
same code the ``/vram`` command runs before Discord sees anything: the Hub client's lookup, the
request's validation, the estimate and the embed. Discord's own transport is the same for a preset and
a repo, so it is left out (``benchmarks/interactions.py`` measures it).

    python -m benchmarks.hub            # the full run (a few seconds)
    python -m benchmarks.hub --quick    # a smoke run with small counts
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from bot.estimate.core import estimate
from bot.estimate.hub import forget_all
from bot.estimate.models import search_presets
from bot.estimate.request import parse_request
from bot.hub_settings import HubSettings
from bot.present.answer import render_embed
from bot.present.i18n import Language
from bot.runtime.hub_client import HubClient
from tests.fake_hub import FakeHub
from tests.hub_configs import CONFIGS

REPO = "acme/Qwen3-32B-FP8"


@dataclass
class Figure:
    what: str
    runs: int
    median_ms: float
    p90_ms: float


async def _time(what: str, runs: int, step: Callable[[int], Awaitable[object]]) -> Figure:
    samples = []
    for index in range(runs):
        start = time.perf_counter()
        await step(index)
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return Figure(what, runs, statistics.median(samples), samples[int(0.9 * (runs - 1))])


def _answer(model: str) -> object:
    """What the command does once the model is known: validate, estimate, render."""
    return render_embed(estimate(parse_request(model=model, optimizer="adam8bit")), Language.EN)


async def run(quick: bool) -> list[Figure]:
    many, few = (50, 3) if quick else (2000, 30)
    hub = FakeHub()
    await hub.start()
    hub.add(REPO, CONFIGS["qwen3-32b"], stored_params=17_000_000_000)
    for index in range(30):
        hub.add(f"acme/Model-{index}", CONFIGS["llama-3.1-8b"], downloads=index)
    root = Path(tempfile.mkdtemp(prefix="vram-hub-bench-"))

    def client(name: str, ttl_s: float = 3600) -> HubClient:
        return HubClient(HubSettings(endpoint=hub.url, cache_dir=root / name, offline=False), ttl_s=ttl_s)

    warm = client("warm")
    await warm.resolve(REPO)

    async def preset(_: int) -> object:
        return _answer("qwen3-32b")

    async def cached(_: int) -> object:
        await warm.resolve(REPO)
        return _answer(REPO)

    async def uncached(index: int) -> object:
        forget_all()
        await client(f"cold-{index}").resolve(REPO)  # empty memory and disk cache: every request
        return _answer(REPO)

    revalidating = client("revalidate", ttl_s=0)  # memory always expired, disk cache warm
    await revalidating.resolve(REPO)

    async def new_revision_check(_: int) -> object:
        await revalidating.resolve(REPO)
        return _answer(REPO)

    async def suggest_presets(_: int) -> object:
        return search_presets("acme/", limit=25)

    async def suggest_uncached(index: int) -> object:
        search_presets("acme/", limit=25)
        return await client(f"search-{index}").suggest("acme/", 2.0)

    searching = client("search")
    await searching.suggest("acme/", 2.0)

    async def suggest_cached(_: int) -> object:
        search_presets("acme/", limit=25)
        return await searching.suggest("acme/", 2.0)

    try:
        return [
            await _time("preset answer (qwen3-32b)", many, preset),
            await _time("cached Hub answer (memory)", many, cached),
            await _time("Hub answer, memory expired (1 request, config on disk)", few, new_revision_check),
            await _time("uncached Hub answer (fake Hub, empty caches)", few, uncached),
            await _time("autocomplete, presets only", many, suggest_presets),
            await _time("autocomplete with Hub suggestions, cached", many, suggest_cached),
            await _time("autocomplete with Hub suggestions, uncached", few, suggest_uncached),
        ]
    finally:
        await hub.stop()
        forget_all()


def print_table(figures: list[Figure]) -> None:
    width = max(len(f.what) for f in figures)
    print(f"{'':{width}}  {'runs':>5}  {'median ms':>10}  {'p90 ms':>8}")
    for f in figures:
        print(f"{f.what:{width}}  {f.runs:>5}  {f.median_ms:>10.3f}  {f.p90_ms:>8.3f}")
    preset, cached = figures[0], figures[1]
    extra = cached.median_ms - preset.median_ms
    print(f"cached Hub answer - preset answer: {extra:+.3f} ms (target: within 1 ms)")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="small counts, for a smoke run")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    print_table(asyncio.run(run(parse_args(argv).quick)))


if __name__ == "__main__":
    main()
