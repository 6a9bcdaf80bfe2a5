"""Where and how the bot asks the Hugging Face Hub: its settings, free of ``huggingface_hub`` itself.

Kept apart from :mod:`bot.hub_lookup` so that the bot can read its settings at start-up without
importing ``huggingface_hub`` and its HTTP stack (about a tenth of a second): the lookup module is
imported on the first lookup, in the thread that runs it (:mod:`bot.runtime.hub_client`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class HubSettings:
    """Where and how to ask the Hub. ``None`` leaves the choice to huggingface_hub (its environment
    variables and defaults), which is what a deployment wants; tests pass a loopback endpoint and a
    cache folder of their own."""

    endpoint: str | None = None
    token: str | None = None
    cache_dir: Path | None = None
    # One lookup's deadline, all its requests together (bot.hub_deadline): long enough for a slow Hub
    # once the bot has deferred its reply (Discord then waits 15 minutes for the edit).
    timeout_s: float = 10.0
    offline: bool | None = None  # None: HF_HUB_OFFLINE, as huggingface_hub reads it
    headers: dict[str, str] = field(default_factory=dict)
    # The most repos the bot keeps in the disk cache (bot.hub_cache), the least recently used going
    # first; None keeps them all (the CLI, whose cache is its user's).
    cache_max_repos: int | None = None

    @property
    def is_offline(self) -> bool:
        if self.offline is not None:
            return self.offline
        from huggingface_hub import constants  # only where a lookup is about to happen

        return constants.is_offline_mode()


_TRUE = ("1", "ON", "YES", "TRUE")


def hub_settings_from_env(
    env: Mapping[str, str], timeout_s: float = HubSettings.timeout_s, cache_max_repos: int | None = None
) -> HubSettings:
    """Settings from huggingface_hub's variables, read now rather than when it was imported (it reads
    HF_ENDPOINT and the cache folder once, at import): HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE and the
    cache (HF_HUB_CACHE, else HF_HOME/hub). Unset ones stay None, which is huggingface_hub's default."""
    cache = env.get("HF_HUB_CACHE") or (str(Path(env["HF_HOME"]) / "hub") if env.get("HF_HOME") else None)
    offline = env.get("HF_HUB_OFFLINE")
    return HubSettings(
        endpoint=(env.get("HF_ENDPOINT") or "").rstrip("/") or None,
        token=env.get("HF_TOKEN") or None,
        cache_dir=Path(cache) if cache else None,
        timeout_s=timeout_s,
        cache_max_repos=cache_max_repos,
        offline=None if offline is None else offline.upper() in _TRUE,
    )
