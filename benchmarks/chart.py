"""What Compare's chart costs: CPU per chart drawn (cold and from the cache), and the import.

    python -m benchmarks.chart            # the figures, and the budget checked (5 ms of CPU a chart)
    python -m benchmarks.chart --quick    # a smoke run with small counts

CPU time (``time.process_time``), not wall time, so that a busy machine does not blur the figures.
Each cold chart is for a different request (the cache is cleared before every one), which is what a
first click on Compare costs; a warm chart is the cache's answer to a second click. When matplotlib
is installed (it is no dependency of the bot) the same chart drawn with its Agg backend is measured
beside it: those are the figures the choice of Pillow rests on.
"""

from __future__ import annotations

import argparse
import io
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from bot.estimate.core import estimate
from bot.estimate.request import EstimateRequest, parse_request
from bot.present.chart import COLOURS, bars, compare_png
from bot.present.i18n import Language
from bot.present.words import Words

BUDGET_MS = 5.0


def _requests(count: int) -> list[EstimateRequest]:
    return [parse_request(params=1 + index * 0.5, activations=index % 30) for index in range(count)]


def _cpu_ms(work: Callable[[], object], count: int) -> list[float]:
    times = []
    for _ in range(count):
        start = time.process_time()
        work()
        times.append((time.process_time() - start) * 1000)
    return times


def _summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "median_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1 if len(ordered) > 1 else 0], 3),
    }


def _import_ms(module: str) -> float | None:
    """CPU time to import ``module`` in a fresh interpreter (user + system of the child)."""
    code = (
        "import resource, time; s = resource.getrusage(resource.RUSAGE_SELF); "
        f"import {module}; e = resource.getrusage(resource.RUSAGE_SELF); "
        "print((e.ru_utime - s.ru_utime + e.ru_stime - s.ru_stime) * 1000)"
    )
    # Our own interpreter and a fixed snippet: nothing untrusted reaches the command.
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)  # noqa: S603
    return round(float(found.stdout), 1) if found.returncode == 0 else None


def _matplotlib_png(request: EstimateRequest) -> bytes:
    """The same bars drawn with matplotlib's Agg backend, for the comparison only."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    w = Words(Language.EN)
    chosen = estimate(request)
    rows = bars(chosen, w)
    figure, axes = pyplot.subplots(figsize=(8, 6), dpi=100)
    for index, bar in enumerate(rows):
        left = 0.0
        for kind, gb in bar.parts:
            axes.barh(index, gb, left=left, color=[c / 255 for c in COLOURS[kind]])
            left += gb
        axes.text(left, index, w.gb(bar.total))
    axes.axvline(chosen.single_gpu.capacity_gb, color="red", linestyle="--")
    axes.set_yticks(range(len(rows)), [bar.name for bar in rows])
    out = io.BytesIO()
    figure.savefig(out, format="png")
    pyplot.close(figure)
    return out.getvalue()


def run(count: int) -> dict[str, Any]:
    requests = _requests(count)
    compare_png(requests[0], Language.EN)  # load Pillow and its font once, as a running bot has

    def cold(language: Language) -> Callable[[], object]:
        pending = iter(requests)

        def draw() -> object:
            compare_png.cache_clear()
            return compare_png(next(pending), language)

        return draw

    result: dict[str, Any] = {
        "charts": count,
        "pillow_cold_en": _summary(_cpu_ms(cold(Language.EN), count)),
        "pillow_cold_de": _summary(_cpu_ms(cold(Language.DE), count)),
        "pillow_cached": _summary(_cpu_ms(lambda: compare_png(requests[0], Language.EN), count)),
        "png_bytes": len(compare_png(requests[0], Language.EN)),
        "import_pillow_ms": _import_ms("PIL.Image, PIL.ImageDraw, PIL.ImageFont"),
    }
    try:
        _matplotlib_png(requests[0])  # the import and the backend set-up, once
        mpl = iter(requests)
        result["matplotlib_agg"] = _summary(_cpu_ms(lambda: _matplotlib_png(next(mpl)), min(count, 20)))
        result["import_matplotlib_ms"] = _import_ms("matplotlib.pyplot")
    except ImportError:
        result["matplotlib_agg"] = None
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a smoke run with small counts")
    args = parser.parse_args(argv)
    result = run(5 if args.quick else 200)
    for name, value in result.items():
        print(f"{name:22} {value}")
    worst = max(result["pillow_cold_en"]["median_ms"], result["pillow_cold_de"]["median_ms"])
    within = worst <= BUDGET_MS
    print(f"budget {BUDGET_MS} ms of CPU per chart: {'kept' if within else 'EXCEEDED'} ({worst} ms)")
    return 0 if within or args.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
