"""The runner as an operator starts it: ``python -m bot`` in its own process, against the fake Discord.

One test of the default suite pays for a process start (about 0.7 s of CPU): the real entry point,
stopped by SIGTERM. Two processes splitting the shards (two starts, some 2.5 CPU seconds) run under
``-m slow``; the default suite splits the same shards between two ``serve`` calls in this process.
Everything else about the runner runs in-process: the bad settings here through ``main``, the
start-up faults in ``test_startup_faults.py`` through ``serve``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
from pathlib import Path

import pytest

from bot import __version__
from bot.cli import main
from bot.runtime.runner import serve
from bot.runtime.settings import ENV_PREFIX, TOKEN_ENV, Settings
from tests.fake_discord import FakeDiscord
from tests.fake_hub import FakeHub
from tests.fresh_python import compile_bytecode
from tests.hub_configs import CONFIGS

PROJECT = Path(__file__).resolve().parents[1]
HF_TOKEN = "hf_TestOnlyTokenThatMustNeverBeLogged01"  # made up


def bot_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV and not k.upper().startswith(ENV_PREFIX)}
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
    compile_bytecode()
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
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        process.kill()  # what docker stop does next (exit 137): no process outlives its test
        raise
    assert process.returncode is not None
    return process.returncode, (stdout + stderr).decode()


@pytest.mark.asyncio(loop_scope="module")
async def test_the_entry_point_syncs_serves_logs_json_with_no_secret_and_stops_on_sigterm(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    # Lower-case "debug": any case works. The secret scan below reads real DEBUG logging, the
    # libraries' own records included, with a Hub whose 401 repeats "Authorization: Bearer hf_…" back.
    config = write_config(
        tmp_path, fake, dev_guild_id=int(fake.guild_id), log_level="debug", log_format="json"
    )
    sessions = fake.sessions
    hub = FakeHub()
    hub.echo_credentials = True
    await hub.start()
    # A Hub that trickles: SIGTERM comes while a lookup reads it, a byte a second.
    hub.add("acme/Trickle-8B", CONFIGS["llama-3.1-8b"], trickle_s=1.0)
    # PYTHONWARNINGS: discord.py's import warns that audioop is deprecated, which was a raw line.
    env = bot_env(
        DISCORD_TOKEN=fake.token,
        HF_TOKEN=HF_TOKEN,
        HF_ENDPOINT=hub.url,
        HF_HOME=str(tmp_path / "hf"),
        PYTHONWARNINGS="default",
    )
    process = await start_bot(config, env)
    asking = None
    try:
        await fake.wait_identified(timeout=20, after=sessions)
        assert fake.identifies[-1]["intents"] == 0
        assert [c["name"] for c in fake.registered[fake.guild_id]] == ["vram"]

        interaction = fake.slash_interaction("vram", fake.command_options("vram", params=7.0))
        callback = await fake.send_interaction(interaction)
        assert callback.embed["title"].startswith("❌ 7B · Adam")
        await fake.invoke("vram", params=-1)  # an error path too
        refused = await fake.invoke("vram", model="acme/no-such-model", timeout=15)  # the Hub's 401
        if refused.type == 5:  # deferred (a loaded machine): the refusal follows; wait for it, or
            # the lookup's last log lines could come after the SIGTERM's "Stopped"
            await fake.webhook_calls(str(fake.tokens[refused.interaction_id]), 2, timeout=15)
        asking = asyncio.create_task(fake.invoke("vram", model="acme/Trickle-8B"))
        for _ in range(500):
            if hub.count("/api/models/acme/Trickle-8B"):
                break
            await asyncio.sleep(0.02)
    finally:
        process.send_signal(signal.SIGTERM)
        # Within seconds, though the lookup's thread would read the trickle for two minutes.
        code, output = await finish(process, timeout=10)
        if asking is not None:
            asking.cancel()
        await hub.stop()
    assert code == 0, output
    lines = output.splitlines()
    records = [json.loads(line) for line in lines]  # every line one JSON record
    messages = [record["message"] for record in records]
    assert f"vram-bot {__version__} starting (discord.py" in output
    assert "Synced 1 command(s) to guild" in output
    assert "Got SIGTERM, closing the connection" in messages
    # The bot's last word. On a loaded machine the trickling lookup's thread, left to itself at the
    # exit, may still log its HTTP client's lines after it: those and nothing else.
    after = records[messages.index("Stopped") + 1 :]
    assert [r for r in after if not r["logger"].startswith(("httpx2", "httpcore2"))] == []
    assert {r["level"] for r in after} <= {"DEBUG", "INFO"}
    assert {"DEBUG", "INFO"} <= {record["level"] for record in records}
    loggers = {record["logger"] for record in records}
    assert {"discord.gateway", "httpcore2.http11", "httpx2", "asyncio", "py.warnings"} <= loggers
    assert len(lines) > 20
    assert [line for line in lines if fake.token in line] == []  # never logged, even at DEBUG
    assert [line for line in lines if HF_TOKEN.removeprefix("hf_") in line] == []
    assert "Authorization: Bearer <redacted>" in output  # the Hub's echo was logged, redacted
    assert hub.count("/api/models/acme/no-such-model") == 1
    assert "Traceback" not in output


async def _each_shard_answers_its_guild(
    fake: FakeDiscord, identifies: int, guilds: dict[int, str], polls: int
) -> None:
    """Once both shards identified (polled every 20 ms, ``polls`` times at most) and the commands are
    synced: each identified its own shard only, and a /vram in each shard's guild is answered."""
    for _ in range(polls):
        if len(fake.identifies) >= identifies + 2 and fake.registered.get("global"):
            break
        await asyncio.sleep(0.02)
    shards = sorted(tuple(i["shard"]) for i in fake.identifies[identifies:])
    assert shards == [(0, 2), (1, 2)]
    for shard, guild in guilds.items():
        interaction = fake.slash_interaction(
            "vram", fake.command_options("vram", params=7 + shard), guild_id=guild
        )
        callback = await fake.send_interaction(interaction)  # delivered on that shard's connection
        assert callback.embed["title"].startswith(f"❌ {7 + shard}B · Adam")


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="module")
async def test_two_processes_split_two_shards_and_each_answers_its_guilds(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    # Discord's rule: guild g is on shard (g >> 22) % shard_count.
    guilds = {0: str(4_000 << 22), 1: str(4_001 << 22)}
    processes = []
    identifies = len(fake.identifies)
    try:
        # Both start at once: the two process starts overlap instead of adding up.
        for shard in (0, 1):
            folder = tmp_path / f"shard{shard}"
            folder.mkdir()
            config = write_config(folder, fake, shard_count=2, shard_ids=[shard], sync_commands=shard == 0)
            processes.append(await start_bot(config, bot_env(DISCORD_TOKEN=fake.token)))
        # two process starts: 30 s at most, for a loaded machine
        await _each_shard_answers_its_guild(fake, identifies, guilds, polls=1500)
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        outputs = [await finish(process) for process in processes]
    for shard, (code, output) in enumerate(outputs):
        assert code == 0, output
        assert "Traceback" not in output, f"shard {shard}: {output}"


@pytest.mark.asyncio(loop_scope="module")
async def test_two_serves_split_two_shards_and_each_answers_its_guilds(
    fake: FakeDiscord, discord_endpoints: None
) -> None:
    # The test above in one process: the same settings through serve, as `python -m bot` runs them.
    guilds = {0: str(4_002 << 22), 1: str(4_003 << 22)}  # shard (g >> 22) % 2
    identifies = len(fake.identifies)
    stop = asyncio.Event()
    serving = [
        asyncio.create_task(
            serve(
                Settings(
                    api_base_url=fake.api_base,
                    gateway_url=fake.gateway_url,
                    shard_count=2,
                    shard_ids=[shard],
                    sync_commands=shard == 0,
                ),
                fake.token,
                stop=stop,
                handle_signals=False,
            )
        )
        for shard in (0, 1)
    ]
    try:
        await _each_shard_answers_its_guild(fake, identifies, guilds, polls=500)
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*serving), 10)


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, (captured.out + captured.err).strip().splitlines()


@pytest.mark.usefixtures("clean_env")
def test_missing_token_exits_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main([], capsys) == (
        2,
        [
            "vram-bot: no Discord token: set DISCORD_TOKEN, or token_file in the config "
            "(or try the offline preview: vram-bot estimate 7)"
        ],
    )


@pytest.mark.usefixtures("clean_env")
def test_an_empty_token_file_says_it_is_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "token").write_text("\n", encoding="utf-8")
    (tmp_path / "config.toml").write_text(f"token_file = '{tmp_path / 'token'}'\n", encoding="utf-8")
    code, lines = run_main([], capsys)
    assert code == 2
    assert lines == [
        f"vram-bot: token_file {tmp_path / 'token'} is empty: "
        "write the bot token into it, or set DISCORD_TOKEN"
    ]


@pytest.mark.usefixtures("clean_env")
@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("log_level = 'LOUD'\n", "log_level = 'LOUD' is not valid: use one of debug, info, warning"),
        ("dev_guild_id = -5\n", "dev_guild_id = -5 is not valid: use a Discord server ID"),
        (
            "sync_comands = false\n",
            "unknown setting 'sync_comands' (did you mean 'sync_commands'?); "
            "valid keys are token_file, sync_commands,",
        ),
        (
            "token = 'abc'\n",
            "the token is never read from the config file: remove the token key and set "
            "DISCORD_TOKEN, or put the token alone in a file and name it with token_file",
        ),
        ("this is not toml\n", "cannot read config file"),
        (
            "shard_ids = [0]\n",
            "shard_ids is set but shard_count is not: add shard_count = <total number of shards>",
        ),
        ("shard_count = 2\nshard_ids = [2]\n", "shard_ids must be below shard_count (2)"),
        ("shard_count = 2\nshard_ids = [1, 1]\n", "shard_ids must list each shard once"),
        ("extra_extensions = ['ok', 'not a module']\n", "extra_extensions[1] = 'not a module' is not valid"),
        ("status_interval_s = 0\n", "status_interval_s = 0 is not valid: use a number of seconds above 0"),
    ],
)
def test_bad_settings_exit_2_with_one_line(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: str,
    message: str,
) -> None:
    monkeypatch.setenv(TOKEN_ENV, "x")
    config = tmp_path / "config.toml"
    config.write_text(content, encoding="utf-8")
    code, lines = run_main(["--config", str(config)], capsys)
    assert code == 2
    assert len(lines) == 1, lines
    assert lines[0].startswith("vram-bot: ")
    assert message in lines[0]


@pytest.mark.usefixtures("clean_env")
def test_a_bad_environment_override_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(TOKEN_ENV, "x")
    monkeypatch.setenv("VRAM_BOT_DEV_GUILD_ID", "my-server")
    code, lines = run_main([], capsys)
    assert code == 2
    assert lines == [
        "vram-bot: bad setting in config.toml: VRAM_BOT_DEV_GUILD_ID = 'my-server' is not valid: "
        "use a Discord server ID: a positive whole number"
    ]


@pytest.mark.usefixtures("clean_env")
def test_a_config_path_that_is_a_folder_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(TOKEN_ENV, "x")
    (tmp_path / "config.toml").mkdir()  # what `docker run -v` leaves when the host file is missing
    code, lines = run_main([], capsys)
    assert code == 2
    assert lines == [
        "vram-bot: config file config.toml is a folder, not a file: mount or create the file itself"
    ]


def test_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"vram-bot {__version__}\n"
    for argv in (["--help"], ["health", "--help"], ["estimate", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        out = capsys.readouterr().out
        assert "example" in out, argv
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "$VRAM_BOT_CONFIG" in out  # the default, named
    assert "3 Discord unreachable for longer than startup_retry_s" in out


@pytest.mark.asyncio(loop_scope="module")
async def test_sighup_stops_the_bot_cleanly_with_a_log_line(
    fake: FakeDiscord, discord_endpoints: None, caplog: pytest.LogCaptureFixture
) -> None:
    # In this process, with serve's own signal handlers (SIGTERM is the entry point's test above).
    # Without a handler, SIGHUP's default action would end the test's process: no log line, no clean-up.
    caplog.set_level(logging.INFO, logger="bot")
    settings = Settings(api_base_url=fake.api_base, gateway_url=fake.gateway_url, sync_commands=False)
    sessions = fake.sessions
    serving = asyncio.create_task(serve(settings, fake.token))
    await fake.wait_identified(after=sessions)
    os.kill(os.getpid(), signal.SIGHUP)
    await asyncio.wait_for(serving, 10)  # serve returns: the CLI's exit code 0
    said = [r.getMessage() for r in caplog.records if r.name == "bot.runtime.runner"]
    assert "Got SIGHUP, closing the connection" in said
    assert said[-1] == "Stopped"
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL  # the handler went with the bot
