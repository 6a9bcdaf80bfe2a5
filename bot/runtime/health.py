"""The status file the running bot keeps fresh, and the ``vram-bot health`` check that reads it.

A file rather than an HTTP endpoint: Docker's HEALTHCHECK runs a command inside the container, and a
file needs no open port, no extra dependency and no network namespace; the check is one small
process that does not import discord.py (this module must not), so it costs little every 30 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bot import __version__

log = logging.getLogger(__name__)

EXIT_HEALTHY, EXIT_UNHEALTHY = 0, 1  # what Docker's HEALTHCHECK expects


@dataclass
class GatewayState:
    """Which of our shards have a live gateway session (None is the unsharded connection)."""

    expected: frozenset[int | None]
    up: set[int | None] = field(default_factory=set)

    @property
    def connected(self) -> bool:
        return bool(self.expected) and self.expected <= self.up

    def mark(self, shard: int | None, up: bool) -> None:
        if up:
            self.up.add(shard)
        else:
            self.up.discard(shard)


def write_status(path: Path, state: GatewayState, *, now: float | None = None) -> None:
    """Replace the file atomically, so a health check never reads half a write."""
    status = {
        "version": __version__,
        "pid": os.getpid(),
        "connected": state.connected,
        "shards": {str(shard): shard in state.up for shard in sorted(state.expected, key=str)},
        "updated_at": time.time() if now is None else now,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=".status-", delete=False) as tmp:
        json.dump(status, tmp)
    os.replace(tmp.name, path)


async def keep_status_fresh(path: Path, state: GatewayState, interval: float, changed: asyncio.Event) -> None:
    """Rewrite the status every ``interval`` seconds, and at once when the connection changes."""
    while True:
        try:
            write_status(path, state)
        except OSError as exc:
            # Not fatal: the bot still serves; the health check will report the stale file.
            log.warning("Cannot write status_file %s: %s", path, exc.strerror or exc)
        changed.clear()
        # asyncio.timeout, not wait_for: in 3.11 wait_for can swallow a cancel that arrives just as
        # the event is set, and this task would then outlive the bot.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(interval):
                await changed.wait()


def check(path: Path, max_age: float, *, now: float | None = None) -> tuple[bool, str]:
    """(healthy, one line saying why) for the status file at ``path``."""
    try:
        status = json.loads(path.read_text(encoding="utf-8"))
        updated_at = float(status["updated_at"])
        connected = status["connected"] is True
    except FileNotFoundError:
        return False, f"unhealthy: no status file at {path} (is the bot running with this status_file?)"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return False, f"unhealthy: cannot read status file {path}: {exc}"
    age = (time.time() if now is None else now) - updated_at
    if age > max_age:
        return False, f"unhealthy: status is {age:.0f} s old (limit {max_age:.0f} s): bot stuck or stopped"
    if not connected:
        down = sorted(shard for shard, up in status.get("shards", {}).items() if not up)
        return False, f"unhealthy: gateway not connected (shards down: {', '.join(down) or 'all'})"
    return True, f"healthy: gateway connected, status {age:.0f} s old, version {status.get('version', '?')}"
