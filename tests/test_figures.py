"""``vram-bot estimate --format json`` and ``--check``: the figures for scripts, and an exit code."""

from __future__ import annotations

import json

import pytest

from bot.cli import main


def figures_of(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main(["estimate", *argv, "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert isinstance(found, dict)
    return found


def test_the_worked_example_as_figures(capsys: pytest.CaptureFixture[str]) -> None:
    found = figures_of(capsys, "7", "--activations", "20")
    assert (found["schema"], found["version"]) == ("vram-bot/estimate", 1)
    assert found["request"] == {"params": 7.0, "activations": 20.0}
    assert found["command_line"] == "/vram params:7 optimizer:adam activations:20"
    assert found["bytes_per_param"] == 16
    assert (found["model_states_gb"], found["activations_gb"], found["total_gb"]) == (112, 20, 132)
    assert found["parts"] == [
        {"key": "part.weights16", "kind": "weights", "bytes_per_param": 2, "gb": 14},
        {"key": "part.gradients16", "kind": "gradients", "bytes_per_param": 2, "gb": 14},
        {"key": "part.master32", "kind": "optimizer", "bytes_per_param": 4, "gb": 28},
        {"key": "part.adam_momentum32", "kind": "optimizer", "bytes_per_param": 4, "gb": 28},
        {"key": "part.adam_variance32", "kind": "optimizer", "bytes_per_param": 4, "gb": 28},
    ]
    assert found["card"] == {"name": "NVIDIA H100 80 GB", "memory_gb": 80}
    assert (found["fits"], found["fits_one_card"], found["sharded_gpus_needed"]) == (False, False, 3)
    assert found["cluster"] is None
    assert found["largest_batch"] is None


def test_a_preset_on_eight_cards_reports_the_strategies_and_the_largest_batch(
    capsys: pytest.CaptureFixture[str],
) -> None:
    found = figures_of(capsys, "--model", "llama-3.1-8b", "--gpus", "8", "--seq-len", "4096")
    parameters = found["parameters"]
    assert parameters == {"billion": 8.030261248, "count": 8_030_261_248, "active_count": 8_030_261_248}
    cluster = found["cluster"]
    assert isinstance(cluster, dict)
    assert cluster["source"] == "deepspeed"
    assert [row["strategy"] for row in cluster["strategies"]] == [
        "data parallel",
        "ZeRO-1",
        "ZeRO-2",
        "ZeRO-3",
    ]
    assert found["fits"] is (cluster["smallest_fitting"] is not None)
    batch = found["largest_batch"]
    assert isinstance(batch, dict)
    assert batch["seq_len"] == 4096
    assert batch["strategy"] == cluster["smallest_fitting"] == "ZeRO-1"  # the verdict's
    assert batch["checkpointed_batch"] is not None  # a ZeRO-1 card takes sequences


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["5"], 0),  # 80 GB exactly: fits
        (["7"], 1),  # 112 GB
        (["7", "--gpus", "8"], 0),  # ZeRO-1 fits on each card
        (["0"], 2),  # bad input
    ],
)
def test_check_exits_by_the_verdict(argv: list[str], code: int, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", *argv, "--check"]) == code
    capsys.readouterr()
