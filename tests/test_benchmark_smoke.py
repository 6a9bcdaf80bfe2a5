"""The benchmark still runs end to end (tiny counts; its figures are not checked, only its shape)."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from benchmarks import instructions
from benchmarks.interactions import parse_args, print_table, run

pytestmark = pytest.mark.benchmark

COMMANDS = {"/noop", "/noop_options", "/vram", "/compare"}
RATIOS = {"/vram vs /noop", "/compare vs /noop"}


async def test_the_benchmark_runs_and_reports_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = await run(parse_args(["--quick", "--out", str(tmp_path / "results.json")]))
    commands = {(row["command"], row["mode"]) for row in result["latency"]}
    assert {c for c, _ in commands} == COMMANDS
    assert all(row["answered"] == row["sent"] for row in result["latency"])
    assert result["leak_run_lost"] == 0
    assert set(result["ratios"]) == RATIOS

    # The headline: the bot's CPU per answer of each, and the ratios to /noop's, with their targets.
    cpu = result["cpu_per_answer"]
    assert set(cpu["ms"]) == COMMANDS
    assert all(set(burst) == COMMANDS for burst in cpu["rounds"])
    assert set(cpu["ratios"]) == RATIOS
    assert all(set(figures) == {"ratio", "target", "met"} for figures in cpu["ratios"].values())
    # Where /vram's time goes: every stage was timed, and each command's whole CPU was read.
    assert set(result["stages"]) == COMMANDS
    assert all(figures["answered"] == 10 for figures in result["stages"].values())
    vram_stages = result["stages"]["/vram"]["stages_us"]
    assert {"validate", "estimate", "render", "controls", "send"} <= set(vram_stages)
    assert {"render", "chart", "send"} <= set(result["stages"]["/compare"]["stages_us"])
    assert "send" in result["stages"]["/noop"]["stages_us"]
    # Cold start: one per bot start of the run (a smoke run starts one).
    cold = result["cold_start_s"]
    assert len(cold["runs"]) == 1
    assert all(0 < seconds < 60 for seconds in cold["runs"])
    assert {"median", "vs_import_floor", "target", "met", "bot_cpu_median", "third_party_imports"} <= set(
        cold
    )
    assert len(cold["third_party_imports"]["runs"]) == len(cold["runs"])  # a floor before each start
    assert not math.isnan(cold["vs_import_floor"])
    # No model size asked twice.
    sizes = result["vram_requests"]
    assert sizes["sent"] == sizes["distinct_model_sizes"] > 0

    print_table(result)
    out = capsys.readouterr().out
    assert "/vram vs /noop: " in out
    assert "/compare vs /noop: " in out
    assert "the import floor" in out
    assert "CPU per answer" in out


def test_the_chart_benchmark_runs_and_reports_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.chart import main

    assert main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "pillow_cold_en" in out
    assert "budget 5.0 ms of CPU per chart" in out


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
async def test_the_instruction_count_runs_and_reports_every_command(tmp_path: Path) -> None:
    per_answer = await instructions.run(count=100, rounds=1, folder=tmp_path)
    assert set(per_answer) == COMMANDS
    # An answer takes one to a few tens of millions: a count far off says the dumps were misread.
    assert all(len(counts) == 1 and 2e5 < counts[0] < 1e8 for counts in per_answer.values())
    result = instructions.report(per_answer, 100)
    assert set(result["ratios"]) == RATIOS | {"/vram vs /noop_options"}
    assert result["ratios"]["/vram vs /noop"]["rounds"] == [per_answer["/vram"][0] / per_answer["/noop"][0]]
    peer = per_answer["/noop_options"][0]
    assert result["ratios"]["/vram vs /noop_options"]["rounds"] == [per_answer["/vram"][0] / peer]
