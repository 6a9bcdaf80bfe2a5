"""The benchmark still runs end to end (tiny counts; its figures are not checked, only its shape)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


def test_the_benchmark_runs_and_writes_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    finished = subprocess.run(  # noqa: S603 (our own interpreter and script)
        [sys.executable, "-m", "benchmarks.interactions", "--quick", "--out", str(out)],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    result = json.loads(out.read_text(encoding="utf-8"))
    commands = {(row["command"], row["mode"]) for row in result["latency"]}
    assert {c for c, _ in commands} == {"/ping", "/ping_embed", "/vram"}
    assert all(row["answered"] == row["sent"] for row in result["latency"])
    assert result["leak_run_lost"] == 0
    assert set(result["ratios"]) == {"/vram vs /ping", "/vram vs /ping_embed"}
    assert "/vram vs /ping" in finished.stdout
