"""benchmarks/README.md's accuracy table is the one the last full run (benchmarks/accuracy.json) gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.accuracy import main as accuracy_main
from benchmarks.accuracy_summary import FAMILY_NAMES, RESULTS, summary_table

README = Path(__file__).resolve().parents[1] / "benchmarks" / "README.md"  # its Accuracy section


def test_the_readme_shows_the_last_runs_table() -> None:
    table = summary_table(json.loads(RESULTS.read_text(encoding="utf-8")))
    assert table in README.read_text(encoding="utf-8"), "run python -m benchmarks.accuracy_summary"


def test_every_family_is_within_the_targets() -> None:
    rows = json.loads(RESULTS.read_text(encoding="utf-8"))["rows"]
    families = {row["family"] for row in rows}
    measured_apart = {"deepseek_v3", "gpt_oss", "llama4", "glm4_moe", "gemma2", "phi3"}  # own terms
    assert {"llama", "gemma3", "mixtral", *measured_apart} <= families
    assert families <= set(FAMILY_NAMES)  # the README's table names every measured family
    for row in rows:
        for key, tolerance in (("model_states", 0.05), ("saved", 0.05), ("peak", 0.10)):
            assert abs(row[key] / row[f"proposed_{key}"] - 1) <= tolerance, (row["family"], key)


def test_the_accuracy_benchmarks_help_names_its_tolerances(capsys: pytest.CaptureFixture[str]) -> None:
    # argparse %-formats help strings: "5%," in one raised ValueError instead of printing the help.
    with pytest.raises(SystemExit) as exit_:
        accuracy_main(["--help"])
    assert exit_.value.code == 0
    assert "saved 5%, saved_per_layer 5%, peak 10%" in " ".join(capsys.readouterr().out.split())
