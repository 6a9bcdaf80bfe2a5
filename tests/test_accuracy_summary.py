"""The README's accuracy table is the one the last full accuracy run (benchmarks/accuracy.json) gives."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.accuracy_summary import RESULTS, summary_table

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_shows_the_last_runs_table() -> None:
    table = summary_table(json.loads(RESULTS.read_text(encoding="utf-8")))
    assert table in README.read_text(encoding="utf-8"), "run python -m benchmarks.accuracy_summary"


def test_every_family_is_within_the_targets() -> None:
    rows = json.loads(RESULTS.read_text(encoding="utf-8"))["rows"]
    families = {row["family"] for row in rows}
    assert {"llama", "gemma3", "mixtral", "deepseek_v3", "gpt_oss"} <= families
    for row in rows:
        for key, tolerance in (("model_states", 0.05), ("saved", 0.05), ("peak", 0.10)):
            assert abs(row[key] / row[f"proposed_{key}"] - 1) <= tolerance, (row["family"], key)
