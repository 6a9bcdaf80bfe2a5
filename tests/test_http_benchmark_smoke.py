"""The HTTP benchmark's smoke run: tiny counts, the report's shape (``-m benchmark``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from benchmarks.http_path import parse_args, run
from tests.fresh_python import compile_bytecode

pytestmark = pytest.mark.benchmark


def test_the_http_benchmark_reports_cpu_ratios_and_scaling(tmp_path: Path) -> None:
    compile_bytecode()
    results = asyncio.run(run(parse_args(["--quick", "--out", str(tmp_path / "out.json")])))
    cpu, scaling = results["cpu"], results["scaling"]
    assert cpu["cpu_ms_per_vram"] > 0
    assert cpu["vram_to_ping_cpu_ratio"] > 0
    assert set(scaling["ratio_to_one_replica"]) == {"1", "2"}
    assert scaling["ratio_to_one_replica"]["1"] == 1.0
