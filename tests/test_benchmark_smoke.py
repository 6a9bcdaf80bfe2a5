"""The benchmark still runs end to end (tiny counts; its figures are not checked, only its shape)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.interactions import parse_args, print_table, run

pytestmark = pytest.mark.benchmark


async def test_the_benchmark_runs_and_reports_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = await run(parse_args(["--quick", "--out", str(tmp_path / "results.json")]))
    commands = {(row["command"], row["mode"]) for row in result["latency"]}
    assert {c for c, _ in commands} == {"/ping", "/ping_embed", "/vram"}
    assert all(row["answered"] == row["sent"] for row in result["latency"])
    assert result["leak_run_lost"] == 0
    assert set(result["ratios"]) == {"/vram vs /ping", "/vram vs /ping_embed"}
    print_table(result)
    assert "/vram vs /ping" in capsys.readouterr().out


def test_the_chart_benchmark_runs_and_reports_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.chart import main

    assert main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "pillow_cold_en" in out
    assert "budget 5.0 ms of CPU per chart" in out
