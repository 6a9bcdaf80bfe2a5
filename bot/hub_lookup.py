"""Look a Hugging Face repo up: its ``config.json`` and stored parameter count, through ``huggingface_hub``.

Blocking and free of Discord, so the CLI calls it directly and the bot runs it in a thread
(:mod:`bot.runtime.hub_client`). It reads the config and the model's metadata only: never weights,
never remote code. ``HF_ENDPOINT``, ``HF_TOKEN`` and ``HF_HUB_OFFLINE`` work as ``huggingface_hub``
reads them; :class:`HubSettings` can name an endpoint, token or cache folder instead (tests, proxies).

The Hub costs one round trip per revision: ``model_info`` gives the current commit, and
``hf_hub_download`` at that commit finds ``config.json`` in the Hugging Face cache on disk (one
snapshot per commit) without asking the Hub again.

A lookup has one deadline for all its requests (:mod:`bot.hub_deadline`), and every error
``huggingface_hub``, ``httpx2`` or ``json`` raises becomes a :class:`HubFailure`, so neither the bot
nor the CLI ever shows a traceback for what the Hub (or a repo's config) did.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any, cast

import httpx2
from huggingface_hub import HfApi, hf_hub_download, scan_cache_dir
from huggingface_hub.errors import (
    CacheNotFound,
    DisabledRepoError,
    EntryNotFoundError,
    FileMetadataError,
    GatedRepoError,
    HfHubHTTPError,
    HFValidationError,
    LocalEntryNotFoundError,
    OfflineModeIsEnabled,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.file_download import DryRunFileInfo
from huggingface_hub.hf_api import ExpandModelProperty_T

from bot.estimate.hub import ConfigProblem, HubFailure, architecture_from_config, is_repo_id
from bot.estimate.models import Architecture
from bot.hub_cache import mark_used, repo_folder_of
from bot.hub_deadline import Abandoned, until
from bot.hub_settings import HubSettings

log = logging.getLogger(__name__)

CONFIG_FILE = "config.json"
CONFIG_MAX_BYTES = 1_000_000  # real configs are a few kB; a bigger one is not a model config
# What model_info asks for: the stored count and the commit (which keys the cached config.json).
EXPAND: list[ExpandModelProperty_T] = ["safetensors", "sha"]


def _read_config(path: str, repo: str) -> object:
    file = Path(path)
    try:
        if file.stat().st_size > CONFIG_MAX_BYTES:
            raise HubFailure("too_large", repo)
        data = file.read_bytes()
    except OSError as exc:  # the cache folder: the operator's to fix, so it is logged
        log.warning("Could not read %s from the Hub cache: %s", path, exc)
        raise HubFailure("unavailable", repo) from None
    try:
        return json.loads(data)
    # ValueError: not JSON (UnicodeDecodeError is one); RecursionError: nested deeper than Python's
    # stack (100,000 lists in a few hundred kB).
    except (ValueError, RecursionError):
        raise HubFailure("malformed", repo) from None


def _download_config(repo: str, revision: str | None, settings: HubSettings) -> str:
    """config.json's path in the cache, fetched if needed; a dry run first checks its size, so an
    oversized file is refused before any byte of it is downloaded."""
    common = {
        "repo_id": repo,
        "filename": CONFIG_FILE,
        "revision": revision,
        "endpoint": settings.endpoint,
        "token": settings.token,
        "cache_dir": settings.cache_dir,
        "etag_timeout": settings.timeout_s,
    }
    info = hf_hub_download(**common, dry_run=True)  # type: ignore[call-overload]
    if isinstance(info, DryRunFileInfo) and (info.file_size or 0) > CONFIG_MAX_BYTES:
        raise HubFailure("too_large", repo)
    path = hf_hub_download(**common)  # type: ignore[call-overload]
    return str(path)


def _from_config(
    repo: str, path: str, stored: int | None, revision: str | None
) -> tuple[dict[str, Any], Architecture]:
    """The config.json at ``path`` and its architecture (a config the counter takes is a dict)."""
    config = _read_config(path, repo)
    try:
        found = architecture_from_config(repo, config, stored_params=stored, revision=revision)
    except ConfigProblem as problem:
        raise HubFailure(problem.kind, repo, problem.fields) from None
    return cast(dict[str, Any], config), found  # architecture_from_config refuses a non-dict


def _newest_cached_config(repo: str, settings: HubSettings) -> tuple[str, str] | None:
    """(path, commit) of the newest config.json of ``repo`` in the disk cache. The bot downloads at a
    commit (which writes no ``refs/main``), so the snapshots are scanned rather than the ref read."""
    try:
        cache = scan_cache_dir(settings.cache_dir)
    except (CacheNotFound, OSError, ValueError):  # ValueError: the cache folder is a file
        return None
    found = [
        (revision.last_modified, str(file.file_path), revision.commit_hash)
        for cached in cache.repos
        if cached.repo_type == "model" and cached.repo_id.lower() == repo.lower()
        for revision in cached.revisions
        for file in revision.files
        if file.file_name == CONFIG_FILE
    ]
    return max(found)[1:] if found else None


def _cached_model(repo: str, settings: HubSettings) -> tuple[dict[str, Any], Architecture] | None:
    found = _newest_cached_config(repo, settings)
    if found is None:
        return None
    try:
        return _from_config(repo, found[0], None, found[1])
    except HubFailure:
        return None


def cached_architecture(repo: str, settings: HubSettings) -> Architecture | None:
    """The architecture from the newest config.json in the disk cache (no request), if any: what
    offline mode and a rate-limited Hub answer with."""
    found = _cached_model(repo, settings)
    return None if found is None else found[1]


def fetch_architecture(repo: str, settings: HubSettings, deadline: float | None = None) -> Architecture:
    """The repo's architecture, from the Hub (or its disk cache); :class:`HubFailure` otherwise.
    ``deadline`` (``time.monotonic()``; default ``settings.timeout_s`` from now) bounds every request."""
    return fetch_model(repo, settings, deadline)[1]


def fetch_model(
    repo: str, settings: HubSettings, deadline: float | None = None
) -> tuple[dict[str, Any], Architecture]:
    """The repo's ``config.json`` and its architecture, as :func:`fetch_architecture` reads them
    (``vram-bot measure`` builds the model from the config itself)."""
    if settings.is_offline:
        cached = _cached_model(repo, settings)
        if cached is None:
            raise HubFailure("offline", repo)
        return cached
    api = HfApi(endpoint=settings.endpoint, token=settings.token, headers=settings.headers or None)
    deadline = time.monotonic() + settings.timeout_s if deadline is None else deadline
    try:
        with until(deadline):
            info = api.model_info(repo, expand=EXPAND, timeout=settings.timeout_s)
            stored = info.safetensors.total if info.safetensors is not None else None
            canonical = info.id if isinstance(info.id, str) and is_repo_id(info.id) else repo
            path = _download_config(canonical, info.sha, settings)
    # Narrower classes first: GatedRepoError is a RepositoryNotFoundError, DisabledRepoError and
    # RemoteEntryNotFoundError are HfHubHTTPErrors, LocalEntryNotFoundError is an EntryNotFoundError
    # and an OSError, and HfHubHTTPError, FileMetadataError and OfflineModeIsEnabled are OSErrors.
    except HubFailure:  # ours (an oversized config.json)
        raise
    except GatedRepoError:
        raise HubFailure("gated", repo) from None
    except (RepositoryNotFoundError, RevisionNotFoundError, DisabledRepoError, HFValidationError):
        raise HubFailure("not_found", repo) from None  # HFValidationError: an ID the Hub refuses
    except LocalEntryNotFoundError:  # the file's HEAD failed (timeout, 5xx) and it is not cached
        raise HubFailure("unavailable", repo) from None
    except EntryNotFoundError:
        raise HubFailure("no_config", repo) from None
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else 0
        raise HubFailure("rate_limited" if status == 429 else "unavailable", repo) from None
    except Abandoned as exc:  # past the deadline, or a status huggingface_hub would sleep on
        raise HubFailure("rate_limited" if exc.status == 429 else "unavailable", repo) from None
    except OfflineModeIsEnabled:
        raise HubFailure("offline", repo) from None
    except (httpx2.HTTPError, FileMetadataError):  # refused, timeouts, the deadline, DNS; no ETag
        raise HubFailure("unavailable", repo) from None
    except OSError as exc:  # the cache folder: the operator's to fix, so it is logged
        log.warning(
            "Hub lookup of %s failed on the local cache (set HF_HOME to a writable folder): %s", repo, exc
        )
        raise HubFailure("unavailable", repo) from None
    except Exception:  # anything else is an answer of the Hub's that huggingface_hub could not read
        log.warning("Hub lookup of %s failed on an unexpected answer", repo, exc_info=True)
        raise HubFailure("unavailable", repo) from None
    if settings.cache_max_repos is not None:
        try:
            mark_used(repo_folder_of(Path(path)), settings.cache_max_repos)
        except OSError as exc:  # the lookup succeeded; only the cache's bound is not kept this time
            log.warning("Could not keep the Hub cache within %d repos: %s", settings.cache_max_repos, exc)
    return _from_config(canonical, path, stored, info.sha)
