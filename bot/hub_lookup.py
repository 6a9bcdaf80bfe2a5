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

import contextvars
import json
import logging
import re
import struct
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

import httpx2
from huggingface_hub import (
    HfApi,
    get_session,
    hf_hub_download,
    hf_hub_url,
    hf_raise_for_status,
    scan_cache_dir,
)
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
from huggingface_hub.utils import build_hf_headers  # type: ignore[attr-defined]  # documented as public

from bot.estimate.hub import (
    ConfigProblem,
    HubFailure,
    HubModel,
    architecture_from_config,
    is_repo_id,
    plain_model_type,
    positive_int,
)
from bot.estimate.models import Architecture
from bot.estimate.tensors import CountedModel, TensorCount, count_tensors, hub_total, packing_of
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


def _download_bounded(
    repo: str, filename: str, revision: str | None, settings: HubSettings, max_bytes: int
) -> str | None:
    """The file's path in the cache, fetched if needed; None when it is over ``max_bytes``: a dry run
    checks its size first, so that no byte of an oversized file is downloaded."""
    common = {
        "repo_id": repo,
        "filename": filename,
        "revision": revision,
        "endpoint": settings.endpoint,
        "token": settings.token,
        "cache_dir": settings.cache_dir,
        "etag_timeout": settings.timeout_s,
    }
    info = hf_hub_download(**common, dry_run=True)  # type: ignore[call-overload]
    if isinstance(info, DryRunFileInfo) and (info.file_size or 0) > max_bytes:
        return None
    return str(hf_hub_download(**common))  # type: ignore[call-overload]


def _download_config(repo: str, revision: str | None, settings: HubSettings) -> str:
    """config.json's path in the cache; an oversized one is refused before any byte of it."""
    path = _download_bounded(repo, CONFIG_FILE, revision, settings, CONFIG_MAX_BYTES)
    if path is None:
        raise HubFailure("too_large", repo)
    return path


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


def _cached_model(repo: str, settings: HubSettings) -> tuple[dict[str, Any], HubModel] | None:
    found = _newest_cached_config(repo, settings)
    if found is None:
        return None
    try:
        return _combined(repo, found[0], None, found[1], cached_tensors(repo, found[1], settings))
    except HubFailure:
        return None


def cached_architecture(repo: str, settings: HubSettings) -> HubModel | None:
    """The architecture from the newest config.json in the disk cache (no request), if any: what
    offline mode and a rate-limited Hub answer with."""
    found = _cached_model(repo, settings)
    return None if found is None else found[1]


def fetch_architecture(repo: str, settings: HubSettings, deadline: float | None = None) -> HubModel:
    """The repo's architecture, from the Hub (or its disk cache); :class:`HubFailure` otherwise.
    ``deadline`` (``time.monotonic()``; default ``settings.timeout_s`` from now) bounds every request."""
    return fetch_model(repo, settings, deadline)[1]


def fetch_model(
    repo: str, settings: HubSettings, deadline: float | None = None
) -> tuple[dict[str, Any], HubModel]:
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
    with until(deadline):  # the headers' reads too; a late one leaves the config's count alone
        return _with_tensors(canonical, path, stored, info.sha, settings)


# --- the repo's own tensors: its safetensors headers -------------------------------------------------

SAFETENSORS_FILE = "model.safetensors"
SAFETENSORS_INDEX = "model.safetensors.index.json"
INDEX_MAX_BYTES = 32_000_000  # DeepSeek-V3's index, 91,000 tensors, is 9 MB
# The most shards read: the largest checkpoints have fewer (Llama 3.1 405B 191, DeepSeek-V3 163).
MAX_SHARDS = 256
FIRST_READ_BYTES = 100_000  # huggingface_hub's first read: 97 % of the Hub's headers fit (its comment)
HEADER_MAX_BYTES = 10_000_000  # one header: some 70,000 tensors; real ones are under 1 MB
HEADERS_BUDGET_BYTES = 64_000_000  # all of one repo's headers together
PARALLEL_HEADERS = 16  # header reads in flight for one repo (DeepSeek-V3: 163 shards, 11 rounds)
TENSORS_CACHE_MAX = 512
_SHARD_NAME = re.compile(r"[A-Za-z0-9_.-]{1,200}\.safetensors")
# What a repo's tensors said, by (repo, commit): a commit's files never change. None: no safetensors.
_tensors_cache: OrderedDict[tuple[str, str], TensorCount | None] = OrderedDict()
_tensors_lock = threading.Lock()


class _NotCountable(Exception):
    """The repo's safetensors cannot be counted (too many shards, a malformed index)."""


def _download_index(repo: str, revision: str | None, settings: HubSettings) -> str:
    """The index's path in the cache; an oversized one is refused before any byte of it."""
    path = _download_bounded(repo, SAFETENSORS_INDEX, revision, settings, INDEX_MAX_BYTES)
    if path is None:
        raise _NotCountable(f"{SAFETENSORS_INDEX} over {INDEX_MAX_BYTES} bytes")
    return path


def _shards(index_path: str) -> list[str]:
    try:
        index = json.loads(Path(index_path).read_bytes())
        names = set(index["weight_map"].values())
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
        raise _NotCountable("malformed index") from None
    if not names or not all(isinstance(n, str) and _SHARD_NAME.fullmatch(n) for n in names):
        raise _NotCountable("index names no plain shard files")
    if len(names) > MAX_SHARDS:
        raise _NotCountable(f"{len(names)} shards, over {MAX_SHARDS}")
    return sorted(names)


class _Budget:
    """The header bytes one repo may still cost, across its shards (read in parallel)."""

    def __init__(self, limit: int) -> None:
        self._left = limit
        self._lock = threading.Lock()

    def take(self, size: int) -> None:
        with self._lock:
            if size > self._left:
                raise _NotCountable(f"headers over {HEADERS_BUDGET_BYTES} bytes")
            self._left -= size


def _range(url: str, headers: dict[str, str], first: int, last: int, settings: HubSettings) -> bytes:
    """Bytes ``first`` to ``last`` of a file, and never more: a server that ignores the range (200
    with the whole file) is read no further than the range's length."""
    wanted = last - first + 1
    with get_session().stream(
        "GET", url, headers={**headers, "Range": f"bytes={first}-{last}"}, timeout=settings.timeout_s
    ) as response:
        if response.status_code >= 400:
            response.read()
            hf_raise_for_status(response)
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) >= wanted:
                break
    return bytes(body[:wanted])


def _header(
    repo: str, filename: str, revision: str | None, settings: HubSettings, budget: _Budget
) -> dict[str, tuple[str, list[int]]]:
    """One safetensors file's tensors (name -> dtype, shape) from its header: the 8-byte
    little-endian length, then that much JSON (the format: safetensors' README). As
    huggingface_hub's ``parse_safetensors_file_metadata`` reads it: the first 100 kB, which holds
    nearly every header, then the rest if it is longer; unlike it, with a bound on each header and on
    the repo's, so that no repo can make the bot download more than headers."""
    url = hf_hub_url(repo, filename, revision=revision, endpoint=settings.endpoint)
    headers = build_hf_headers(token=settings.token, headers=settings.headers or None)
    budget.take(FIRST_READ_BYTES)
    start = _range(url, headers, 0, FIRST_READ_BYTES - 1, settings)
    if len(start) < 8:
        raise _NotCountable(f"{filename} is not a safetensors file")
    (length,) = struct.unpack("<Q", start[:8])
    if length > HEADER_MAX_BYTES:
        raise _NotCountable(f"{filename}'s header is over {HEADER_MAX_BYTES} bytes")
    if length <= len(start) - 8:
        raw = start[8 : 8 + length]
    else:
        budget.take(length)
        raw = _range(url, headers, 8, length + 7, settings)
    try:
        entries = json.loads(raw)
        return {
            name: (str(entry["dtype"]), [int(size) for size in entry["shape"]])
            for name, entry in entries.items()
            if name != "__metadata__"
        }
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
        raise _NotCountable(f"{filename}'s header is not safetensors JSON") from None


def _headers(
    repo: str, revision: str | None, settings: HubSettings
) -> list[dict[str, tuple[str, list[int]]]]:
    """Every shard's tensors from the headers alone: ``model.safetensors``, or the shards
    ``model.safetensors.index.json`` names, at most PARALLEL_HEADERS at a time (one range request a
    header, two for one over 100 kB)."""
    budget = _Budget(HEADERS_BUDGET_BYTES)
    try:
        return [_header(repo, SAFETENSORS_FILE, revision, settings, budget)]
    except EntryNotFoundError:
        pass
    shards = _shards(_download_index(repo, revision, settings))
    # Each read runs in a copy of this thread's context, so that the lookup's deadline (a context
    # variable, bot.hub_deadline) bounds it too.
    contexts = [contextvars.copy_context() for _ in shards]
    with ThreadPoolExecutor(max_workers=min(PARALLEL_HEADERS, len(shards))) as pool:
        return list(
            pool.map(
                lambda context, shard: context.run(_header, repo, shard, revision, settings, budget),
                contexts,
                shards,
            )
        )


def _text_part(config: dict[str, Any]) -> dict[str, Any]:
    """The language model's fields: a multimodal config's ``text_config``, else the config itself
    (whatever the family: these repos need no declaration)."""
    inner = config.get("text_config")
    return inner if isinstance(inner, dict) else config


def _layers(config: dict[str, Any]) -> int | None:
    """The decoder's layer count, past which numbered layers are multi-token prediction."""
    return positive_int(_text_part(config).get("num_hidden_layers"))


def fetch_tensors(
    repo: str, revision: str | None, config: dict[str, Any], settings: HubSettings
) -> TensorCount | None:
    """The exact count of the repo's tensors at ``revision``, unpacked by the config's
    ``quantization_config``; None where the repo has no safetensors or they cannot be read (the
    answer then rests on the config alone). Kept per commit in memory and beside the Hugging Face
    cache on disk, so a repo's headers are read once a commit."""
    key = (repo.lower(), revision) if revision else None
    with _tensors_lock:
        if key is not None and key in _tensors_cache:
            return _tensors_cache[key]
    if revision is not None:
        kept = _kept_tensors(repo, revision, settings)
        if kept is not None:
            _remember(repo, revision, kept)
            return kept
    try:
        shards = _headers(repo, revision, settings)
        packing, bits = packing_of(config)
        tensors = ((name, dtype, shape) for shard in shards for name, (dtype, shape) in shard.items())
        found: TensorCount | None = count_tensors(
            tensors, packing=packing, bits=bits, layers=_layers(config), shards=len(shards)
        )
    except EntryNotFoundError:  # neither file: no safetensors weights (a lasting answer)
        found = None
    except (_NotCountable, ValueError) as exc:
        log.info("The safetensors of %s cannot be counted: %s", repo, exc)
        found = None
    except (HfHubHTTPError, httpx2.HTTPError, OSError) as exc:  # a passing fault: asked again next time
        log.info("Reading the safetensors headers of %s failed: %s", repo, exc)
        return None
    if revision is not None:
        _remember(repo, revision, found)
        if found is not None:
            _keep_tensors(repo, revision, found, settings)
    return found


def _remember(repo: str, revision: str, found: TensorCount | None) -> None:
    with _tensors_lock:
        _tensors_cache[repo.lower(), revision] = found
        while len(_tensors_cache) > TENSORS_CACHE_MAX:
            _tensors_cache.popitem(last=False)


# On disk, one small JSON file a repo and commit beside huggingface_hub's own cache (which keeps
# files of repos, not what we make of them): restarts and offline mode keep the counts.
TENSORS_FOLDER = "vram-bot-tensors"
_COMMIT = re.compile(r"[0-9a-f]{40}")


def _tensors_path(repo: str, revision: str, settings: HubSettings) -> Path | None:
    if not _COMMIT.fullmatch(revision) or not is_repo_id(repo):  # never a path from odd input
        return None
    from huggingface_hub import constants

    root = Path(settings.cache_dir) if settings.cache_dir is not None else Path(constants.HF_HUB_CACHE)
    return root / TENSORS_FOLDER / repo.lower().replace("/", "--") / f"{revision}.json"


def _keep_tensors(repo: str, revision: str, found: TensorCount, settings: HubSettings) -> None:
    path = _tensors_path(repo, revision, settings)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        partial.write_text(found.model_dump_json(), encoding="utf-8")
        partial.replace(path)  # whole or not at all, should two processes write it at once
    except OSError as exc:
        log.info("Could not keep the tensor count of %s on disk: %s", repo, exc)


def _kept_tensors(repo: str, revision: str, settings: HubSettings) -> TensorCount | None:
    path = _tensors_path(repo, revision, settings)
    if path is None or not path.is_file():
        return None
    try:
        return TensorCount.model_validate_json(path.read_bytes())
    except (OSError, ValueError):  # unreadable or from another version: read the headers again
        return None


def forget_tensors() -> None:
    """Empty the per-commit memory of tensor counts (tests; the disk keeps its files)."""
    with _tensors_lock:
        _tensors_cache.clear()


def cached_tensors(repo: str, revision: str, settings: HubSettings) -> TensorCount | None:
    """What :func:`fetch_tensors` found for ``repo`` at ``revision``, from memory or disk (no request)."""
    with _tensors_lock:
        if (repo.lower(), revision) in _tensors_cache:
            return _tensors_cache[repo.lower(), revision]
    return _kept_tensors(repo, revision, settings)


def _counted_only(
    repo: str, config: dict[str, Any], revision: str | None, tensors: TensorCount
) -> CountedModel:
    """A repo whose family no declaration knows, by its tensors' count."""
    family = plain_model_type(config.get("model_type"))
    context = positive_int(_text_part(config).get("max_position_embeddings"))
    return CountedModel(
        name=repo,
        hub_id=repo,
        hub_revision=revision,
        model_type=family or None,  # never a list's or an object's repr in an answer
        context_length=context if context is not None and context <= 100_000_000 else None,
        tensors=tensors,
    )


# A config whose family the counter cannot take (no declaration of it, or not a decoder it counts),
# but whose tensors still give N exactly.
_COUNTED_BY_TENSORS = frozenset({"unknown_architecture", "not_a_decoder", "undeclared_family"})


def _combined(
    repo: str, path: str, stored: int | None, revision: str | None, tensors: TensorCount | None
) -> tuple[dict[str, Any], HubModel]:
    """The config's architecture with its tensors' count (N), or the tensors' count alone where no
    declaration knows the family; the config alone where the tensors were not read."""
    if tensors is None:
        return _counted_by_hub_total(repo, path, stored, revision)
    try:
        # The stored count is not needed: the tensors say what the repo holds, unpacked.
        config, found = _from_config(repo, path, None, revision)
    except HubFailure as failure:
        if failure.kind not in _COUNTED_BY_TENSORS:
            raise
        config = cast(dict[str, Any], _read_config(path, repo))  # a dict, or _from_config said malformed
        return config, _counted_only(repo, config, revision, tensors)
    return config, found.model_copy(update={"tensors": tensors})


def _counted_by_hub_total(
    repo: str, path: str, stored: int | None, revision: str | None
) -> tuple[dict[str, Any], HubModel]:
    """The config's architecture; where no declaration knows its family, the Hub's stored total of
    an unpacked checkpoint (exact, without parts) rather than a refusal."""
    try:
        return _from_config(repo, path, stored, revision)
    except HubFailure as failure:
        config = _read_config(path, repo)
        if failure.kind not in _COUNTED_BY_TENSORS or not stored or not isinstance(config, dict):
            raise
        if packing_of(config)[0] is not None:  # packed: the Hub's total counts packed elements
            raise
        return config, _counted_only(repo, config, revision, hub_total(stored))


def _with_tensors(
    repo: str, path: str, stored: int | None, revision: str | None, settings: HubSettings
) -> tuple[dict[str, Any], HubModel]:
    config = _read_config(path, repo)
    tensors = fetch_tensors(repo, revision, config, settings) if isinstance(config, dict) else None
    return _combined(repo, path, stored, revision, tensors)
