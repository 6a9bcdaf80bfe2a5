"""A fake Hugging Face Hub on loopback: the HTTP and JSON of exactly the calls the bot makes.

- ``GET /api/models/{owner}/{name}?expand=safetensors&expand=sha`` (``HfApi.model_info``): the repo's
  ``_id``, ``id`` and the expanded fields only, as the Hub answers an ``expand`` query.
- ``HEAD``/``GET /{owner}/{name}/resolve/{revision}/config.json`` (``hf_hub_download``): a 307 to
  ``/api/resolve-cache/models/...`` with ``X-Repo-Commit`` and ``ETag``, as the Hub redirects a
  regular (non-LFS) file; the redirect target serves the bytes with the same headers.
- ``GET /api/models?search=...&sort=downloads&limit=N`` (``HfApi.list_models``): the matching repos,
  most downloaded first.
- Safetensors weights (:meth:`FakeHub.add_safetensors`): ``model.safetensors`` or the shards of
  ``model.safetensors.index.json``, as LFS files: ``resolve`` answers 302 with ``X-Linked-Size`` and
  ``X-Linked-Etag`` to the CDN route ``/fake-cdn/...``, which honours ``Range: bytes=a-b`` with
  ``206 Partial Content`` (what ``parse_safetensors_file_metadata`` reads: the 8-byte little-endian
  header length, then the JSON header). The weight bytes after the header are zeros, made on demand.
  The index is a regular file, served as config.json is.
Errors as the Hub sends them: ``401`` + ``X-Error-Code: RepoNotFound`` for a missing repo, ``401``
(no token) or ``403`` (a token without access) + ``X-Error-Code: GatedRepo`` for a gated file,
``404`` + ``X-Error-Code: EntryNotFound`` for a missing file, ``429`` with ``RateLimit`` headers.
A repo with ``trickle_s`` sends its bodies (model info and file) one byte every ``trickle_s``, never
silent long enough to trip a read timeout.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web


@dataclass
class FakeRepo:
    repo_id: str
    config: object = None  # dumped as JSON unless raw is given
    raw: bytes | None = None  # config.json's exact bytes (malformed or oversized files)
    stored_params: int | None = None  # safetensors total; None: no safetensors metadata
    sha: str = ""
    gated: bool = False
    downloads: int = 0
    files: set[str] = field(default_factory=lambda: {"config.json"})
    # Files other than config.json, by name: their bytes (a safetensors file's header only) and, for
    # LFS files, the whole file's size.
    blobs: dict[str, bytes] = field(default_factory=dict)
    lfs_sizes: dict[str, int] = field(default_factory=dict)
    trickle_s: float = 0.0  # > 0: every body of this repo goes out one byte at a time, this far apart
    files_status: int = 0  # not 0: the file routes of this repo answer this status (a 503 there only)
    files_without_etag: bool = False  # the file routes send no ETag (huggingface_hub's FileMetadataError)
    info_raw: bytes | None = None  # the model info's exact bytes (an answer huggingface_hub cannot read)

    def body(self, filename: str = "config.json") -> bytes:
        if filename in self.blobs:
            return self.blobs[filename]
        return self.raw if self.raw is not None else json.dumps(self.config).encode()


class FakeHub:
    """Start with ``await hub.start()``; point huggingface_hub at ``hub.url`` (``endpoint=``)."""

    def __init__(self) -> None:
        self.repos: dict[str, FakeRepo] = {}
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request
        self.delay_s = 0.0  # every answer waits this long (a slow Hub)
        self.rate_limited = False  # every answer is a 429
        self.down = False  # every answer is a 503
        self.tokens_with_access: set[str] = set()
        self.whole_weight_reads = 0  # GETs of a weight file without a Range (never the bot's)
        # Every 401 echoes the request's Authorization in its error message and body, as some mirrors
        # and proxies do: a test that the token reaches no log line even so.
        self.echo_credentials = False
        self._runner: web.AppRunner | None = None
        self.port = 0

    def add(self, repo_id: str, config: object = None, **fields: Any) -> FakeRepo:
        sha = hashlib.sha1(repo_id.encode() + json.dumps(config).encode()).hexdigest()  # noqa: S324
        repo = FakeRepo(repo_id, config, sha=sha, **fields)
        self.repos[repo_id.lower()] = repo
        return repo

    def count(self, prefix: str) -> int:
        """Requests whose path starts with ``prefix``."""
        return sum(1 for _, path in self.requests if path.startswith(prefix))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        app = web.Application(middlewares=[self._record])
        app.router.add_get("/api/models", self._search)
        app.router.add_get("/api/models/{owner}/{name}", self._model_info)
        app.router.add_route("*", "/{owner}/{name}/resolve/{revision}/{filename}", self._resolve)
        app.router.add_route("*", "/api/resolve-cache/models/{owner}/{name}/{sha}/{filename}", self._file)
        app.router.add_route("*", CDN_PREFIX + "{owner}/{name}/{sha}/{filename}", self._lfs_file)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    # -- routes ----------------------------------------------------------------------------------

    @web.middleware
    async def _record(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.requests.append((request.method, request.path))
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.rate_limited:
            return self._error(429, None, "You have been rate-limited", {"RateLimit": '"api";r=0;t=60'})
        if self.down:
            return self._error(503, None, "Service Unavailable")
        response: web.StreamResponse = await handler(request)
        if self.echo_credentials and response.status == 401:
            echoed = f"Invalid credentials in Authorization: {request.headers.get('Authorization')}"
            return self._error(401, "RepoNotFound", echoed, {"WWW-Authenticate": echoed})
        return response

    @staticmethod
    def _error(
        status: int, code: str | None, message: str, extra: dict[str, str] | None = None
    ) -> web.Response:
        headers = {"X-Error-Message": message, **(extra or {})}
        if code is not None:
            headers["X-Error-Code"] = code
        return web.json_response({"error": message}, status=status, headers=headers)

    def _repo(self, request: web.Request) -> FakeRepo | None:
        return self.repos.get(f"{request.match_info['owner']}/{request.match_info['name']}".lower())

    async def _model_info(self, request: web.Request) -> web.StreamResponse:
        repo = self._repo(request)
        if repo is None:
            return self._error(401, "RepoNotFound", "Repository not found")
        if repo.info_raw is not None:
            return web.Response(body=repo.info_raw, content_type="application/json")
        expand = request.query.getall("expand", [])
        body: dict[str, Any] = {"_id": repo.sha[:24], "id": repo.repo_id}
        if "sha" in expand:
            body["sha"] = repo.sha
        if "safetensors" in expand and repo.stored_params is not None:
            body["safetensors"] = {"parameters": {"BF16": repo.stored_params}, "total": repo.stored_params}
        if "gated" in expand:
            body["gated"] = "manual" if repo.gated else False
        if repo.trickle_s:
            return await self._trickle(request, json.dumps(body).encode(), repo.trickle_s, {})
        return web.json_response(body)

    @staticmethod
    async def _trickle(
        request: web.Request, body: bytes, interval_s: float, headers: dict[str, str]
    ) -> web.StreamResponse:
        """``body`` one byte every ``interval_s``, until it is all out or the client hangs up."""
        response = web.StreamResponse(headers={**headers, "Content-Type": "application/json"})
        response.content_length = len(body)
        await response.prepare(request)
        try:
            for i in range(len(body)):
                await response.write(body[i : i + 1])
                await asyncio.sleep(interval_s)
        except (ConnectionError, RuntimeError):  # the client went away (RuntimeError: transport closed)
            return response
        await response.write_eof()
        return response

    def _file_headers(self, repo: FakeRepo, body: bytes) -> dict[str, str]:
        etag = hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest()  # noqa: S324 (git's blob id)
        headers = {"X-Repo-Commit": repo.sha, "ETag": f'"{etag}"', "Content-Length": str(len(body))}
        if repo.files_without_etag:
            del headers["ETag"]
        return headers

    async def _resolve(self, request: web.Request) -> web.StreamResponse:
        repo = self._repo(request)
        if repo is None:
            return self._error(401, "RepoNotFound", "Repository not found")
        if repo.files_status:
            return self._error(repo.files_status, None, "Service Unavailable")
        if repo.gated:
            token = request.headers.get("Authorization", "").removeprefix("Bearer ")
            if token not in self.tokens_with_access:
                status = 403 if token else 401
                return self._error(status, "GatedRepo", f"Access to model {repo.repo_id} is restricted.")
        revision = request.match_info["revision"]
        if revision not in ("main", repo.sha):
            return self._error(404, "RevisionNotFound", "Invalid rev id")
        filename = request.match_info["filename"]
        if filename not in repo.files:
            response = self._error(404, "EntryNotFound", "Entry not found")
            response.headers["X-Repo-Commit"] = repo.sha
            return response
        if filename in repo.lfs_sizes:
            return self._lfs_redirect(repo, filename)
        headers = self._file_headers(repo, repo.body(filename))
        headers["Location"] = f"/api/resolve-cache/models/{repo.repo_id}/{repo.sha}/{filename}"
        del headers["Content-Length"]
        return web.Response(status=307, headers=headers)

    async def _file(self, request: web.Request) -> web.StreamResponse:
        repo = self._repo(request)
        if repo is None or request.match_info["sha"] != repo.sha:
            return self._error(404, "EntryNotFound", "Entry not found")
        body = repo.body(request.match_info["filename"])
        headers = self._file_headers(repo, body)
        if request.method == "HEAD":
            return web.Response(status=200, headers=headers)
        del headers["Content-Length"]
        if repo.trickle_s:
            return await self._trickle(request, body, repo.trickle_s, headers)
        return web.Response(status=200, body=body, headers=headers, content_type="application/json")

    # -- safetensors weights (LFS files behind a CDN that honours Range) ----------------------------

    def add_safetensors(self, repo_id: str, shards: dict[str, dict[str, tuple[str, list[int]]]]) -> None:
        """Give ``repo_id`` safetensors weights: shard file name -> {tensor name: (dtype, shape)}. One
        file named ``model.safetensors`` is a single-file repo; otherwise an index maps the tensors."""
        repo = self.repos[repo_id.lower()]
        weight_map: dict[str, str] = {}
        total = 0
        for filename, tensors in shards.items():
            header, size = safetensors_header(tensors)
            repo.blobs[filename] = header
            repo.lfs_sizes[filename] = len(header) + size
            repo.files.add(filename)
            weight_map.update(dict.fromkeys(tensors, filename))
            total += size
        if list(shards) != ["model.safetensors"]:
            index = {"metadata": {"total_size": total}, "weight_map": weight_map}
            repo.blobs[INDEX_FILE] = json.dumps(index).encode()
            repo.files.add(INDEX_FILE)

    def range_reads(self) -> int:
        """GETs of weight files at the CDN (every one a range read)."""
        return sum(1 for method, path in self.requests if method == "GET" and path.startswith(CDN_PREFIX))

    def _lfs_redirect(self, repo: FakeRepo, filename: str) -> web.Response:
        # The Hub's answer for an LFS file: a 302 to the CDN, the file's size and hash in X-Linked-*.
        etag = f'"{hashlib.sha256(repo.blobs[filename]).hexdigest()}"'
        headers = {
            "X-Repo-Commit": repo.sha,
            "X-Linked-Size": str(repo.lfs_sizes[filename]),
            "X-Linked-Etag": etag,
            "ETag": etag,
            "Location": f"{CDN_PREFIX}{repo.repo_id}/{repo.sha}/{filename}",
        }
        return web.Response(status=302, headers=headers)

    async def _lfs_file(self, request: web.Request) -> web.StreamResponse:
        repo = self._repo(request)
        filename = request.match_info["filename"]
        if repo is None or request.match_info["sha"] != repo.sha or filename not in repo.lfs_sizes:
            return self._error(404, "EntryNotFound", "Entry not found")
        size = repo.lfs_sizes[filename]
        headers = {"Accept-Ranges": "bytes", "ETag": f'"{hashlib.sha256(repo.blobs[filename]).hexdigest()}"'}
        if request.method == "HEAD":
            return web.Response(status=200, headers={**headers, "Content-Length": str(size)})
        wanted = request.headers.get("Range", "")
        match = re.fullmatch(r"bytes=(\d+)-(\d*)", wanted.strip())
        if match is None:  # the bot only ever asks for ranges; a whole weight file is not served
            self.whole_weight_reads += 1
            return self._error(400, None, "A range is required")
        start = int(match.group(1))
        end = min(int(match.group(2)) if match.group(2) else size - 1, size - 1)
        if start > end:
            return web.Response(status=416, headers={"Content-Range": f"bytes */{size}"})
        header = repo.blobs[filename]
        body = header[start : end + 1] + bytes(max(0, end + 1 - max(start, len(header))))
        headers["Content-Range"] = f"bytes {start}-{end}/{size}"
        return web.Response(status=206, body=body, headers=headers, content_type="application/octet-stream")

    async def _search(self, request: web.Request) -> web.Response:
        search = request.query.get("search", "").lower()
        limit = int(request.query.get("limit", "1000"))
        found = sorted(
            (repo for repo in self.repos.values() if search in repo.repo_id.lower()),
            key=lambda repo: -repo.downloads,
        )
        return web.json_response(
            [
                {
                    "_id": repo.sha[:24],
                    "id": repo.repo_id,
                    "modelId": repo.repo_id,
                    "likes": 0,
                    "downloads": repo.downloads,
                    "private": False,
                    "tags": ["transformers", "safetensors"],
                    "createdAt": "2026-01-01T00:00:00.000Z",
                }
                for repo in found[:limit]
            ]
        )


INDEX_FILE = "model.safetensors.index.json"
CDN_PREFIX = "/fake-cdn/"
# Bits per element of the safetensors dtypes the tests use (safetensors' README).
_DTYPE_BITS = {"F32": 32, "BF16": 16, "F16": 16, "I32": 32, "U8": 8, "I8": 8, "F8_E4M3": 8, "F8_E8M0": 8}


def safetensors_header(tensors: dict[str, tuple[str, list[int]]]) -> tuple[bytes, int]:
    """A safetensors file's first bytes (the 8-byte little-endian header length, then the JSON header,
    padded to 8 bytes as the format pads it) and the size of the data after them."""
    entries: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        size = -(-math.prod(shape) * _DTYPE_BITS[dtype] // 8)
        entries[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    header = json.dumps(entries).encode()
    header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header, offset


@contextmanager
def running_in_thread(hub: FakeHub) -> Iterator[FakeHub]:
    """The fake Hub served from a loop of its own thread, for code that asks it blocking (the CLI)."""
    loop = asyncio.new_event_loop()
    started = threading.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(hub.start())
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    started.wait(10)
    try:
        yield hub
    finally:
        asyncio.run_coroutine_threadsafe(hub.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def point_hub_client_at(
    hub: FakeHub, home: Path, monkeypatch: pytest.MonkeyPatch, *, token: str | None = None
) -> None:
    """HF_ENDPOINT and HF_HOME as an operator would set them: the fake, a fresh cache, online, and a
    token only when ``token`` is given (for the tests of code that runs in the test's own process)."""
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    if token is None:
        monkeypatch.delenv("HF_TOKEN", raising=False)
    else:
        monkeypatch.setenv("HF_TOKEN", token)
