"""A fake Hugging Face Hub on loopback: the HTTP and JSON of exactly the calls the bot makes.

- ``GET /api/models/{owner}/{name}?expand=safetensors&expand=sha`` (``HfApi.model_info``): the repo's
  ``_id``, ``id`` and the expanded fields only, as the Hub answers an ``expand`` query.
- ``HEAD``/``GET /{owner}/{name}/resolve/{revision}/config.json`` (``hf_hub_download``): a 307 to
  ``/api/resolve-cache/models/...`` with ``X-Repo-Commit`` and ``ETag``, as the Hub redirects a
  regular (non-LFS) file; the redirect target serves the bytes with the same headers.
- ``GET /api/models?search=...&sort=downloads&limit=N`` (``HfApi.list_models``): the matching repos,
  most downloaded first.
Errors as the Hub sends them: ``401`` + ``X-Error-Code: RepoNotFound`` for a missing repo, ``401``
(no token) or ``403`` (a token without access) + ``X-Error-Code: GatedRepo`` for a gated file,
``404`` + ``X-Error-Code: EntryNotFound`` for a missing file, ``429`` with ``RateLimit`` headers.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
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

    def body(self) -> bytes:
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

    async def _model_info(self, request: web.Request) -> web.Response:
        repo = self._repo(request)
        if repo is None:
            return self._error(401, "RepoNotFound", "Repository not found")
        expand = request.query.getall("expand", [])
        body: dict[str, Any] = {"_id": repo.sha[:24], "id": repo.repo_id}
        if "sha" in expand:
            body["sha"] = repo.sha
        if "safetensors" in expand and repo.stored_params is not None:
            body["safetensors"] = {"parameters": {"BF16": repo.stored_params}, "total": repo.stored_params}
        if "gated" in expand:
            body["gated"] = "manual" if repo.gated else False
        return web.json_response(body)

    def _file_headers(self, repo: FakeRepo, body: bytes) -> dict[str, str]:
        etag = hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest()  # noqa: S324 (git's blob id)
        return {"X-Repo-Commit": repo.sha, "ETag": f'"{etag}"', "Content-Length": str(len(body))}

    async def _resolve(self, request: web.Request) -> web.StreamResponse:
        repo = self._repo(request)
        if repo is None:
            return self._error(401, "RepoNotFound", "Repository not found")
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
        headers = self._file_headers(repo, repo.body())
        headers["Location"] = f"/api/resolve-cache/models/{repo.repo_id}/{repo.sha}/{filename}"
        del headers["Content-Length"]
        return web.Response(status=307, headers=headers)

    async def _file(self, request: web.Request) -> web.StreamResponse:
        repo = self._repo(request)
        if repo is None or request.match_info["sha"] != repo.sha:
            return self._error(404, "EntryNotFound", "Entry not found")
        body = repo.body()
        headers = self._file_headers(repo, body)
        if request.method == "HEAD":
            return web.Response(status=200, headers=headers)
        del headers["Content-Length"]
        return web.Response(status=200, body=body, headers=headers, content_type="application/json")

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
