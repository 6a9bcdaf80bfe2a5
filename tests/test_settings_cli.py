"""Settings and token loading, and the offline ``estimate`` preview."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from bot.runtime.settings import ConfigError, Settings, load_settings, load_token


def test_defaults_when_no_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    settings = load_settings(env={})
    assert settings == Settings()
    assert settings.sync_commands is True
    assert settings.dev_guild_id is None
    assert settings.log_level == "INFO"


def test_config_path_from_flag_then_environment(tmp_path: Path) -> None:
    flagged = tmp_path / "a.toml"
    flagged.write_text("log_level = 'DEBUG'\n", encoding="utf-8")
    from_env = tmp_path / "b.toml"
    from_env.write_text("log_level = 'WARNING'\nsync_commands = false\n", encoding="utf-8")
    env = {"VRAM_BOT_CONFIG": str(from_env)}
    assert load_settings(flagged, env).log_level == "DEBUG"
    loaded = load_settings(None, env)
    assert (loaded.log_level, loaded.sync_commands) == ("WARNING", False)


def test_a_named_config_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "missing.toml", {})


def test_the_example_config_is_valid_and_documents_every_setting(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[1] / "config.example.toml"
    lines = example.read_text(encoding="utf-8").splitlines()
    assert load_settings(example, {}) == Settings()  # as shipped, it changes nothing
    # With every commented-out key switched on, it is still valid.
    switched_on = [line.removeprefix("# ") if " = " in line else line for line in lines]
    (tmp_path / "all.toml").write_text("\n".join(switched_on), encoding="utf-8")
    everything = load_settings(tmp_path / "all.toml", {})
    for name in Settings.model_fields:
        assert getattr(everything, name) is not None, f"{name} is not in config.example.toml"
        index = next(i for i, line in enumerate(switched_on) if line.startswith(f"{name} = "))
        assert lines[index - 1].startswith("#"), f"{name} has no comment above it"


def test_token_from_environment_wins_and_is_secret(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("from-file\n", encoding="utf-8")
    settings = Settings(token_file=token_file)
    token = load_token(settings, {"DISCORD_TOKEN": "from-env"})
    assert token.get_secret_value() == "from-env"
    assert "from-env" not in repr(token)
    assert "from-env" not in str(token)
    from_file = load_token(settings, {})
    assert from_file.get_secret_value() == "from-file"
    # Settings only name the file; neither they nor the loaded secret show the token.
    for shown in (repr(settings), str(settings), settings.model_dump_json(), repr(from_file), f"{from_file}"):
        assert "from-file" not in shown


def test_missing_token_and_unreadable_token_file() -> None:
    with pytest.raises(ConfigError, match="no Discord token"):
        load_token(Settings(), {"DISCORD_TOKEN": "  "})
    with pytest.raises(ConfigError, match="cannot read token_file"):
        load_token(Settings(token_file=Path("/nonexistent/token")), {})


def test_estimate_prints_the_embed_content(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "7", "--optimizer", "adam8bit", "--activations", "20"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:5] == [
        "❌ 7B · 8-bit Adam: 104.0 GB — 2 × H100 80 GB with ZeRO-3",
        "========================================================",
        "/vram params:7 optimizer:adam8bit activations:20",
        "M = N × B = 7 × 12 = 84.0 GB",
        "V = M + A = 84.0 + 20.0 = 104.0 GB",
    ]


def test_estimate_json_is_the_discord_embed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "7", "--bytes-per-param", "10", "--json"]) == 0
    message = json.loads(capsys.readouterr().out)
    (embed,) = message["embeds"]
    assert embed["title"] == "✅ 7B · Custom 10 B/param: 70.0 GB fits one H100 80 GB"
    assert embed["color"] == 0x2ECC71  # 70 GB fits an 80 GB card
    assert "M = N × B = 7 × 10 = 70.0 GB" in embed["description"]
    # The message as the bot sends it: the controls too, and no attachment for this view.
    assert [c["custom_id"] for c in message["components"][1]["components"]] == [
        "vram:est:p=7;b=10",
        "vram:cmp:p=7;b=10",
        "vram:det:p=7;b=10",
    ]
    assert "attachments" not in message
    assert message["allowed_mentions"] == {"parse": []}


def test_estimate_shows_every_view_and_writes_the_chart(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    chart = tmp_path / "compare.png"
    args = ["estimate", "7", "--activations", "20", "--view", "compare", "--json", "--chart", str(chart)]
    assert main(args) == 0
    message = json.loads(capsys.readouterr().out)
    assert message["attachments"] == [{"id": 0, "filename": "compare.png"}]
    assert message["embeds"][0]["image"] == {"url": "attachment://compare.png"}
    assert chart.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert main(["estimate", "7", "--view", "details", "--lang", "de"]) == 0
    assert "Die Modellzustände dominieren:" in capsys.readouterr().out
    assert main(["estimate", "7", "--private", "--json"]) == 0
    message = json.loads(capsys.readouterr().out)
    assert message["flags"] == 64
    assert message["components"][1]["components"][-1]["custom_id"] == "vram:shr:est:p=7"


def test_estimate_rejects_bad_input_with_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "0"]) == 2
    err = capsys.readouterr().err
    assert "params = 0 is not allowed: give a number greater than 0" in err


def test_readme_example_is_what_the_preview_prints(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    example = readme.split("```sh\nvram-bot estimate 7 --optimizer adam8bit\n```\n\n```\n", 1)[1].split(
        "```", 1
    )[0]
    assert main(["estimate", "7", "--optimizer", "adam8bit"]) == 0
    assert capsys.readouterr().out.strip() == example.strip()


def test_preview_takes_the_preset_options(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["estimate", "--model", "llama 3.1 70b", "--gpus", "8", "--seq-len", "4096", "--lora-rank", "32"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "Llama 3.1 70B · Adam: " in out
    assert main([*args, "--view", "details"]) == 0
    out = capsys.readouterr().out
    assert "On 8 × NVIDIA H100 80 GB:" in out
    assert "rank 32" in out
    assert "batch 1 × 4,096 tokens" in out
    assert main(["estimate", "--list-models"]) == 0
    assert "llama-3.1-8b" in capsys.readouterr().out


def test_estimate_speaks_german_with_lang_de(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "7", "--activations", "20", "--lang", "de"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("❌ 7B · Adam: 132,0 GB — 3 × H100 80 GB mit ZeRO-3\n")
    assert "M = N × B = 7 × 16 = 112,0 GB" in out
    assert "V = M + A = 112,0 + 20,0 = 132,0 GB" in out
    assert main(["estimate", "0", "--lang", "de"]) == 2
    assert "params = 0 ist nicht zulässig: Geben Sie eine Zahl größer als 0" in capsys.readouterr().err
