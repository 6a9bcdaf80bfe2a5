"""``docker stop`` while a Hub lookup trickles: the real entry point (``python -m bot``) still exits 0
at once, its lookup thread being a daemon that nothing waits for."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from tests.fake_discord import Callback, FakeDiscord
from tests.fake_hub import FakeHub
from tests.hub_configs import CONFIGS
from tests.test_runner import bot_env, finish, start_bot, write_config

# The process stops in well under a second (more on a loaded machine); the trickle takes two minutes.
STOP_WITHIN_S = 10.0


@pytest.mark.asyncio(loop_scope="module")
async def test_sigterm_during_a_trickling_hub_lookup_exits_0_at_once(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    hub = FakeHub()
    await hub.start()
    hub.add("acme/Trickle-8B", CONFIGS["llama-3.1-8b"], trickle_s=1.0)  # its model info: 2 minutes
    config = write_config(tmp_path, fake, sync_commands=False)
    env = bot_env(DISCORD_TOKEN=fake.token, HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "hf"))
    for name in ("HF_HUB_OFFLINE", "HF_HUB_CACHE", "HF_TOKEN"):
        env.pop(name, None)
    sessions = fake.sessions
    process = await start_bot(config, env)
    asking: asyncio.Task[Callback] | None = None
    try:
        await fake.wait_identified(timeout=20, after=sessions)
        asking = asyncio.create_task(fake.invoke("vram", model="acme/Trickle-8B"))
        for _ in range(500):  # until the lookup's thread is reading the trickle
            if hub.count("/api/models/acme/Trickle-8B") or process.returncode is not None:
                break
            await asyncio.sleep(0.02)
        process.send_signal(signal.SIGTERM)
        code, output = await finish(process, timeout=STOP_WITHIN_S)
    finally:
        if process.returncode is None:  # what docker stop does next (exit 137)
            process.kill()
            await process.wait()
        if asking is not None:
            asking.cancel()
        await hub.stop()
    assert code == 0, output
    assert output.splitlines()[-1].endswith("Stopped")
    assert "Traceback" not in output
