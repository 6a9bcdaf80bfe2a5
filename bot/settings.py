"""Settings from a TOML file, and the token from the environment; both validated before start-up."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

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
    # Only for tests and self-hosted proxies: where Discord's REST API and gateway are.
    api_base_url: str | None = None
    gateway_url: str | None = None


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
