"""The runner as an operator starts it: ``python -m bot`` in its own process, against the fake Discord."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from tests.fake_discord import FakeDiscord

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROJECT = Path(__file__).resolve().parents[1]


def bot_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DISCORD_TOKEN", "VRAM_BOT_CONFIG"}}
    env["PYTHONPATH"] = str(PROJECT)
    env.update(extra)
    return env


def write_config(tmp_path: Path, fake: FakeDiscord, **settings: object) -> Path:
    lines = [f'api_base_url = "{fake.api_base}"', f'gateway_url = "{fake.gateway_url}"']
    for key, value in settings.items():
        lines.append(f"{key} = {value!r}" if not isinstance(value, bool) else f"{key} = {str(value).lower()}")
    path = tmp_path / "config.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


async def start_bot(config: Path, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "--config",
        str(config),
        env=env,
        cwd=config.parent,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def finish(process: asyncio.subprocess.Process, timeout: float = 20) -> tuple[int, str]:
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode is not None
    return process.returncode, (stdout + stderr).decode()


async def test_runs_syncs_to_the_dev_guild_serves_and_stops_on_sigterm(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    config = write_config(tmp_path, fake, dev_guild_id=int(fake.guild_id), log_level="INFO")
    sessions = fake.sessions
    process = await start_bot(config, bot_env(DISCORD_TOKEN=fake.token))
    try:
        await fake.wait_identified(timeout=20, after=sessions)
        assert fake.identifies[-1]["intents"] == 0
        assert [c["name"] for c in fake.registered[fake.guild_id]] == ["vram"]

        interaction = fake.slash_interaction("vram", fake.command_options("vram", params=7.0))
        callback = await fake.send_interaction(interaction)
        assert callback.embed["title"].startswith("❌ 7B · Adam")
    finally:
        process.send_signal(signal.SIGTERM)
        code, output = await finish(process)
    assert code == 0, output
    assert "Synced 1 command(s) to guild" in output
    assert "Stopped" in output
    assert fake.token not in output
    assert "Traceback" not in output


async def test_a_token_discord_rejects_exits_2_with_one_clear_line(fake: FakeDiscord, tmp_path: Path) -> None:
    bad_token = "not-the-right-token-1234567890"
    process = await start_bot(write_config(tmp_path, fake), bot_env(DISCORD_TOKEN=bad_token))
    code, output = await finish(process)
    assert code == 2
    assert "vram-bot: Discord rejected the token (401 Unauthorized)" in output
    assert bad_token not in output
    assert "Traceback" not in output


async def test_a_gateway_that_refuses_authentication_exits_2_with_one_clear_line(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    fake.reject_identify = True  # REST accepts the token, the gateway closes with 4004
    try:
        process = await start_bot(write_config(tmp_path, fake), bot_env(DISCORD_TOKEN=fake.token))
        code, output = await finish(process)
    finally:
        fake.reject_identify = False
    assert code == 2
    assert output.count("vram-bot: Discord closed the gateway: authentication failed (4004)") == 1
    assert fake.token not in output
    assert "Traceback" not in output


async def test_the_token_never_appears_in_the_logs_even_at_debug(fake: FakeDiscord, tmp_path: Path) -> None:
    config = write_config(tmp_path, fake, log_level="DEBUG")
    sessions = fake.sessions
    process = await start_bot(config, bot_env(DISCORD_TOKEN=fake.token))
    try:
        await fake.wait_identified(timeout=20, after=sessions)
        await fake.invoke("vram", params=7)
        await fake.invoke("vram", params=-1)  # an error path too
    finally:
        process.send_signal(signal.SIGTERM)
        code, output = await finish(process)
    assert code == 0, output
    assert "DEBUG" in output  # the scan below read real debug logging
    lines = output.splitlines()
    assert len(lines) > 20
    leaking = [line for line in lines if fake.token in line]
    assert leaking == []


async def test_two_processes_split_two_shards_and_each_answers_its_guilds(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    # Discord's rule: guild g is on shard (g >> 22) % shard_count.
    guilds = {0: str(4_000 << 22), 1: str(4_001 << 22)}
    processes = []
    identifies = len(fake.identifies)
    try:
        for shard in (0, 1):
            folder = tmp_path / f"shard{shard}"
            folder.mkdir()
            config = write_config(folder, fake, shard_count=2, shard_ids=[shard], sync_commands=shard == 0)
            processes.append(await start_bot(config, bot_env(DISCORD_TOKEN=fake.token)))
            for _ in range(400):
                if len(fake.identifies) > identifies + shard:
                    break
                await asyncio.sleep(0.05)
        shards = sorted(tuple(i["shard"]) for i in fake.identifies[identifies:])
        assert shards == [(0, 2), (1, 2)]  # each process identified its own shard only
        for shard, guild in guilds.items():
            interaction = fake.slash_interaction(
                "vram", fake.command_options("vram", params=7 + shard), guild_id=guild
            )
            callback = await fake.send_interaction(interaction)  # delivered on that shard's connection
            assert callback.embed["title"].startswith(f"❌ {7 + shard}B · Adam")
    finally:
        outputs = []
        for process in processes:
            process.send_signal(signal.SIGTERM)
            outputs.append(await finish(process))
    for shard, (code, output) in enumerate(outputs):
        assert code == 0, output
        assert "Traceback" not in output, f"shard {shard}: {output}"


async def test_an_extension_that_cannot_load_exits_2_with_one_line(fake: FakeDiscord, tmp_path: Path) -> None:
    config = write_config(tmp_path, fake, extra_extensions=["no_such_package.cog"])
    process = await start_bot(config, bot_env(DISCORD_TOKEN=fake.token))
    code, output = await finish(process)
    assert code == 2
    assert "vram-bot: cannot load extra_extensions entry 'no_such_package.cog'" in output
    assert "Traceback" not in output


async def test_token_can_come_from_a_file(fake: FakeDiscord, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(fake.token + "\n", encoding="utf-8")
    config = write_config(tmp_path, fake, token_file=str(token_file), sync_commands=False)
    identified_before = len(fake.identifies)
    process = await start_bot(config, bot_env())
    try:
        for _ in range(200):
            if len(fake.identifies) > identified_before:
                break
            await asyncio.sleep(0.05)
        assert fake.identifies[-1]["token"] == fake.token
    finally:
        process.send_signal(signal.SIGINT)
        code, output = await finish(process)
    assert code == 0, output
    assert fake.token not in output


async def test_missing_token_exits_2_without_traceback(tmp_path: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        env=bot_env(),
        cwd=tmp_path,  # no config.toml here: defaults
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    code, output = await finish(process)
    assert code == 2
    assert output.strip().splitlines() == [
        "vram-bot: no Discord token: set DISCORD_TOKEN, or token_file in the config "
        "(or try the offline preview: vram-bot estimate 7)"
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("log_level = 'LOUD'\n", "bad setting in"),
        ("dev_guild_id = -5\n", "dev_guild_id"),
        ("unknown_key = 1\n", "unknown_key"),
        ("this is not toml\n", "cannot read config file"),
        ("shard_ids = [0]\n", "shard_ids needs shard_count"),
        ("shard_count = 2\nshard_ids = [2]\n", "shard_ids must be below shard_count (2)"),
        ("shard_count = 2\nshard_ids = [1, 1]\n", "shard_ids must list each shard once"),
        ("extra_extensions = ['not a module']\n", "extra_extensions"),
    ],
)
async def test_bad_settings_exit_2_with_one_line(tmp_path: Path, content: str, message: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(content, encoding="utf-8")
    process = await start_bot(config, bot_env(DISCORD_TOKEN="x"))
    code, output = await finish(process)
    assert code == 2
    assert len(output.strip().splitlines()) == 1
    assert message in output
    assert "Traceback" not in output
