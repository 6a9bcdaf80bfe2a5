"""Settings from a TOML file, and the token from the environment; both validated before start-up."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator

CONFIG_ENV = "VRAM_BOT_CONFIG"
TOKEN_ENV = "DISCORD_TOKEN"  # noqa: S105 (the variable's name, not a token)
DEFAULT_CONFIG = Path("config.toml")


class ConfigError(Exception):
    """A setting or the token is missing or wrong; the message is one line for the operator."""


class Settings(BaseModel):
    """Everything ``config.toml`` may hold; ``config.example.toml`` documents each key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    token_file: Path | None = None
    sync_commands: bool = True
    dev_guild_id: Annotated[int, Field(gt=0)] | None = None
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO"
    # Gateway sharding, to split the bot over several processes: each runs shard_ids of shard_count.
    shard_count: Annotated[int, Field(ge=1, le=65_536)] | None = None
    shard_ids: list[Annotated[int, Field(ge=0)]] | None = None
    # More discord.py extensions to load beside cogs.vram, e.g. your own cogs.
    extra_extensions: list[Annotated[str, Field(pattern=r"^[A-Za-z_][\w.]*$")]] = []
    # Only for tests and self-hosted proxies: where Discord's REST API and gateway are.
    api_base_url: str | None = None
    gateway_url: str | None = None

    # --- Hugging Face Hub lookups (model: owner/name; bot/runtime/hub_client.py) ---------------
    # Endpoint, token, cache and offline mode are huggingface_hub's own variables (HF_ENDPOINT,
    # HF_TOKEN, HF_HOME / HF_HUB_CACHE, HF_HUB_OFFLINE), so they work as for every other HF tool.
    hub_lookups: bool = True
    # Seconds one Hub request may take; a lookup (at most three requests) gives up after three times.
    hub_timeout_s: Annotated[float, Field(gt=0, le=60)] = 2.0

    @model_validator(mode="after")
    def _shards_in_range(self) -> Settings:
        if self.shard_ids is not None:
            if self.shard_count is None:
                raise ValueError("shard_ids needs shard_count")
            if not self.shard_ids or len(set(self.shard_ids)) != len(self.shard_ids):
                raise ValueError("shard_ids must list each shard once")
            if max(self.shard_ids) >= self.shard_count:
                raise ValueError(f"shard_ids must be below shard_count ({self.shard_count})")
        return self

    @property
    def sharded(self) -> bool:
        return self.shard_count is not None


def config_path(cli_path: Path | None, env: Mapping[str, str]) -> tuple[Path, bool]:
    """The file to read, and whether the operator named it (a named file must exist)."""
    if cli_path is not None:
        return cli_path, True
    if env.get(CONFIG_ENV):
        return Path(env[CONFIG_ENV]), True
    return DEFAULT_CONFIG, False


def load_settings(cli_path: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    path, named = config_path(cli_path, env)
    if not path.exists():
        if named:
            raise ConfigError(f"config file {path} does not exist")
        return Settings()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"bad setting in {path}: {problems}") from None


def load_token(settings: Settings, env: Mapping[str, str] | None = None) -> SecretStr:
    """The bot token from ``$DISCORD_TOKEN``, else from ``token_file``; never from the command line."""
    env = os.environ if env is None else env
    token = env.get(TOKEN_ENV, "").strip()
    if not token and settings.token_file is not None:
        try:
            token = settings.token_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"cannot read token_file {settings.token_file}: {exc.strerror}") from None
    if not token:
        raise ConfigError(
            f"no Discord token: set {TOKEN_ENV}, or token_file in the config "
            "(or try the offline preview: vram-bot estimate 7)"
        )
    return SecretStr(token)
