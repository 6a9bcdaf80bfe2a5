"""The bot's share of the Hugging Face cache on disk, bounded: at most ``max_repos`` repos, the least
recently used going first.

``huggingface_hub`` never deletes from its cache, and every repo the bot looks up leaves a folder
there (its ``config.json`` per commit, some 24 kB on disk with the folders around it: 4,000 repos made
95 MB). So each lookup marks its repo's folder as used (its mtime), and once the cache holds more than
``max_repos`` repos the least recently used go, down to nine tenths of the bound (so that one scan
of the cache serves many lookups). Only a repo whose files are all small (configs, never weights) is
ever removed: a cache shared with other Hugging Face tools keeps the models they downloaded.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)

REPO_PREFIX = "models--"  # huggingface_hub's folder of a model repo: models--{owner}--{name}
SMALL_FILE_MAX = 1_000_000  # what the bot downloads (config.json) is never bigger
LOCKS = ".locks"  # huggingface_hub's lock files, one folder per repo

_lock = threading.Lock()  # lookups run in several threads
_kept_anyway: dict[Path, int] = {}  # cache folder -> repos with weights found there by the last scan


def repo_folder_of(snapshot_file: Path) -> Path:
    """The repo's folder of a file in the cache (``models--o--n/snapshots/{commit}/config.json``)."""
    return snapshot_file.parents[2]


def mark_used(repo_folder: Path, max_repos: int) -> list[Path]:
    """Mark ``repo_folder`` as just used and keep the cache it is in within ``max_repos`` repos; the
    folders removed, oldest first."""
    with _lock:
        now = time.time_ns()  # not utime's default: the kernel's file clock ticks only every few ms
        os.utime(repo_folder, ns=(now, now))
        cache = repo_folder.parent
        repos = [e for e in os.scandir(cache) if e.name.startswith(REPO_PREFIX) and e.is_dir()]
        if len(repos) - _kept_anyway.get(cache, 0) <= max_repos:
            return []
        ages: list[tuple[int, Path]] = []
        for entry in repos:
            try:
                ages.append((entry.stat().st_mtime_ns, Path(entry.path)))
            except FileNotFoundError:  # removed meanwhile
                continue
        ages.sort()
        removable = [path for _, path in ages if path != repo_folder and _small_files_only(path)]
        _kept_anyway[cache] = len(ages) - len(removable) - 1  # this one's own too
        keep = max_repos - max_repos // 10 - 1  # the one just used is kept as well
        removed = removable[: max(len(removable) - keep, 0)]
        for path in removed:
            shutil.rmtree(path, ignore_errors=True)
            shutil.rmtree(cache / LOCKS / path.name, ignore_errors=True)
        if removed:
            log.info("Removed %d repo(s) from the Hub cache, least recently used first", len(removed))
        return removed


def _small_files_only(repo_folder: Path) -> bool:
    for folder, _, files in os.walk(repo_folder / "blobs"):
        for name in files:
            try:
                if os.stat(os.path.join(folder, name), follow_symlinks=False).st_size > SMALL_FILE_MAX:
                    return False
            except FileNotFoundError:
                continue
    return True
