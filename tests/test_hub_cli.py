"""``vram-bot estimate --model owner/name`` against the fake Hub, and loose preset names in the CLI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import main
from bot.estimate.hub import forget_all
from tests.fake_hub import FakeHub, point_hub_client_at, running_in_thread
from tests.hub_configs import CONFIGS


@pytest.fixture(scope="module")
def hub() -> Iterator[FakeHub]:
    """The fake Hub on a loop of its own thread: the CLI's lookup is blocking, on the test's thread."""
    hub = FakeHub()
    hub.add("acme/Phi-Like", CONFIGS["phi-4"], stored_params=14_659_507_200)
    hub.add("acme/Gated-8B", CONFIGS["llama-3.1-8b"], gated=True)
    hub.add("acme/Deep", raw=b"[" * 100_000 + b"]" * 100_000)
    with running_in_thread(hub):
        yield hub
    forget_all()


@pytest.fixture
def hub_env(hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeHub:
    """HF_ENDPOINT and HF_HOME as an operator would set them, pointing at the fake and a fresh cache."""
    point_hub_client_at(hub, tmp_path, monkeypatch)
    forget_all()
    return hub


def test_a_repo_id_is_looked_up_and_answered(hub_env: FakeHub, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "--model", "acme/Phi-Like", "--optimizer", "sgd", "--view", "details"]) == 0
    out = capsys.readouterr().out
    assert "/vram model:acme/Phi-Like optimizer:sgd" in out
    assert "14,659,507,200 parameters" in out
    assert hub_env.count("/api/models/acme/Phi-Like") == 1


def test_a_gated_repo_exits_2_saying_how_to_get_access(
    hub_env: FakeHub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["estimate", "--model", "acme/Gated-8B", "--lang", "de"]) == 2
    assert "HF_TOKEN" in capsys.readouterr().err


def test_hub_offline_answers_from_the_cache_or_says_so(
    hub_env: FakeHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["estimate", "--model", "acme/Phi-Like"]) == 0
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    forget_all()
    hub_env.requests.clear()
    assert main(["estimate", "--model", "acme/Phi-Like"]) == 0
    assert main(["estimate", "--model", "acme/Other"]) == 2
    assert "HF_HUB_OFFLINE" in capsys.readouterr().err
    assert hub_env.requests == []


@pytest.mark.parametrize(("typed", "name"), [("qwen72", "Qwen2.5 72B"), ("llama 8", "Llama 3.1 8B")])
def test_loose_preset_names_work_as_in_autocomplete(
    typed: str, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["estimate", "--model", typed]) == 0
    assert f" {name} · Adam:" in capsys.readouterr().out  # the title names the preset


@pytest.mark.parametrize("model", ["../etc/passwd", "Qwen/a--b"])  # "--": the Hub forbids it
def test_a_bad_repo_id_exits_2(model: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "--model", model]) == 2
    assert "nor a Hugging Face repo ID" in capsys.readouterr().err


def test_a_config_nested_too_deep_for_python_exits_2_in_one_line(
    hub_env: FakeHub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["estimate", "--model", "acme/Deep"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "vram-bot: The config.json of acme/Deep is not a JSON object the bot can read (not JSON, or "
        "nested too deep); give the size with params instead"
    ]
