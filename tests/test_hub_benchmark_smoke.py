"""The Hub benchmark still runs (tiny counts; its figures are not checked, only its shape)."""

from __future__ import annotations

import pytest

from benchmarks.hub import print_table, run

pytestmark = [pytest.mark.benchmark, pytest.mark.asyncio(loop_scope="function")]


async def test_the_hub_benchmark_reports_every_figure(capsys: pytest.CaptureFixture[str]) -> None:
    figures = await run(quick=True)
    assert [f.what.split(" (")[0] for f in figures][:2] == ["preset answer", "cached Hub answer"]
    assert all(f.median_ms > 0 for f in figures)
    print_table(figures)
    assert "target: within 1 ms" in capsys.readouterr().out
