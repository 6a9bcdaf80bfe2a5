"""A tiny Redis on loopback, speaking RESP2 (Redis's wire protocol, redis.io/docs/reference/protocol-spec)
for the commands the shared Hub cache sends: GET, SET (NX, PX), PTTL, DEL, EXISTS; anything else
(the client's CLIENT SETINFO at connect) is answered OK. Keys expire on its own clock.
``stall()`` makes it read commands and never answer, as a hung Redis does; ``drop()`` makes it close
each connection at once, as a Redis going down does."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any


class FakeRedis:
    def __init__(self) -> None:
        self.data: dict[bytes, tuple[bytes, float | None]] = {}  # key -> (value, expiry)
        self.commands: list[list[bytes]] = []
        self.stalled = False
        self.dropping = False
        self.connections = 0  # connections accepted
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._writers):
                writer.close()
            await self._server.wait_closed()

    def stall(self) -> None:
        self.stalled = True

    def drop(self) -> None:
        self.dropping = True

    def _alive(self, key: bytes) -> tuple[bytes, float | None] | None:
        entry = self.data.get(key)
        if entry is not None and entry[1] is not None and entry[1] <= time.monotonic():
            del self.data[key]
            return None
        return entry

    def _run(self, command: list[bytes]) -> bytes:
        name, args = command[0].upper(), command[1:]
        if name == b"GET":
            entry = self._alive(args[0])
            return b"$-1\r\n" if entry is None else b"$%d\r\n%s\r\n" % (len(entry[0]), entry[0])
        if name == b"SET":
            key, value, flags = args[0], args[1], [a.upper() for a in args[2:]]
            if b"NX" in flags and self._alive(key) is not None:
                return b"$-1\r\n"
            expiry = None
            if b"PX" in flags:
                expiry = time.monotonic() + int(flags[flags.index(b"PX") + 1]) / 1000
            self.data[key] = (value, expiry)
            return b"+OK\r\n"
        if name == b"PTTL":
            entry = self._alive(args[0])
            if entry is None:
                return b":-2\r\n"
            return b":-1\r\n" if entry[1] is None else b":%d\r\n" % int((entry[1] - time.monotonic()) * 1000)
        if name in (b"DEL", b"EXISTS"):
            found = [key for key in args if self._alive(key) is not None]
            if name == b"DEL":
                for key in found:
                    del self.data[key]
            return b":%d\r\n" % len(found)
        return b"+OK\r\n"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        self.connections += 1
        try:
            while not self.dropping:
                command = await _read_command(reader)
                if command is None:
                    break
                self.commands.append(command)
                if self.stalled:
                    await asyncio.Event().wait()  # read, and never answer
                writer.write(self._run(command))
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # the client went, or the loop is closing: this connection is done
        finally:
            self._writers.discard(writer)
            with contextlib.suppress(Exception):
                writer.close()


async def _read_command(reader: asyncio.StreamReader) -> list[bytes] | None:
    """One command as a client sends it: an array of bulk strings."""
    line = await reader.readline()
    if not line:
        return None
    count = int(line[1:].strip())
    parts: list[Any] = []
    for _ in range(count):
        size = int((await reader.readline())[1:].strip())
        parts.append((await reader.readexactly(size + 2))[:-2])
    return parts
