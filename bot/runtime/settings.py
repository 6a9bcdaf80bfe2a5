"""Settings from a TOML file and ``VRAM_BOT_*`` environment variables; the token from the environment.

Everything is validated before start-up, and every mistake is reported in one line of our own words
that names the key and says how to fix it (pydantic's wording is written for developers, not
operators).
"""

from __future__ import annotations

import difflib
import importlib.util
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

CONFIG_ENV = "VRAM_BOT_CONFIG"
TOKEN_ENV = "DISCORD_TOKEN"  # noqa: S105 (the variable's name, not a token)
PUBLIC_KEY_ENV = "DISCORD_PUBLIC_KEY"
ENV_PREFIX = "VRAM_BOT_"
DEFAULT_CONFIG = Path("config.toml")

SECRET_KEYS = ("public_key", "hub_shared_cache_url")  # settings whose value no message shows
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class ConfigError(Exception):
    """A setting or the token is missing or wrong; the message is one line for the operator."""


class Settings(BaseSettings):
    """Everything ``config.toml`` may hold; ``config.example.toml`` documents each key.

    Each ``description`` is what the operator reads when the value is wrong, so it says what is
    expected rather than what the field is.
    """

    # env_prefix: every key is also VRAM_BOT_<KEY> in the environment (case-insensitive, as shells
    # and compose files spell them either way). extra="forbid": a misspelt key is an error, not
    # silently ignored.
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, case_sensitive=False, extra="forbid", frozen=True, validate_default=True
    )

    token_file: Annotated[Path | None, Field(description="a path to a file holding the bot token")] = None
    sync_commands: Annotated[bool, Field(description="true or false")] = True
    dev_guild_id: Annotated[
        int | None, Field(gt=0, description="a Discord server ID: a positive whole number")
    ] = None
    log_level: Annotated[
        Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"],
        Field(description="one of debug, info, warning, error or critical (any case)"),
    ] = "INFO"
    log_format: Annotated[
        Literal["text", "json"],
        Field(description='"text" (one plain line per record) or "json" (one JSON object per line)'),
    ] = "text"
    # Gateway sharding, to split the bot over several processes: each runs shard_ids of shard_count.
    shard_count: Annotated[
        int | None, Field(ge=1, le=65_536, description="the total number of shards, 1 to 65536")
    ] = None
    shard_ids: Annotated[
        list[Annotated[int, Field(ge=0)]] | None,
        Field(description="a list of shard numbers for this process, e.g. [0] (as JSON in the environment)"),
    ] = None
    # More discord.py extensions to load beside cogs.vram, e.g. your own cogs.
    extra_extensions: Annotated[
        list[Annotated[str, Field(pattern=r"^[A-Za-z_][\w.]*$")]],
        Field(description='a list of importable module names, e.g. ["mycogs.status"]'),
    ] = []
    # Start-up retries: None keeps trying, since a bot that gives up during a Discord outage needs a
    # person to start it again; a number is for operators whose supervisor should take over instead.
    startup_retry_s: Annotated[
        float | None, Field(gt=0, description="a number of seconds above 0 (leave it out to retry forever)")
    ] = None
    # The longest wait between two retries: short enough that the bot is back soon after Discord.
    retry_max_delay_s: Annotated[
        float, Field(gt=0, le=3600, description="a number of seconds above 0, up to 3600")
    ] = 60.0
    # Health: the file the bot rewrites every status_interval_s, read by `vram-bot health`.
    status_file: Annotated[
        Path | None, Field(description="a writable path, e.g. /tmp/vram-bot/status.json")
    ] = None
    status_interval_s: Annotated[
        float, Field(gt=0, le=3600, description="a number of seconds above 0, up to 3600")
    ] = 15.0
    # --- Interactions over HTTP (`vram-bot http`; bot/http/) -----------------------------------------
    # "gateway" runs the discord.py client; "http" serves Discord's Interactions Endpoint URL instead.
    mode: Annotated[Literal["gateway", "http"], Field(description='"gateway" or "http"')] = "gateway"
    # The application's public key (Developer Portal, General Information), which signs interactions.
    # $DISCORD_PUBLIC_KEY wins; it is kept as a secret so that no log line or repr shows it.
    public_key: Annotated[
        SecretStr | None, Field(description="the 64 hex digits of the application's public key")
    ] = None
    http_host: Annotated[str, Field(min_length=1, description="an address to listen on, e.g. 0.0.0.0")] = (
        "127.0.0.1"
    )
    http_port: Annotated[int, Field(ge=0, le=65_535, description="a port number, 0 to 65535")] = 8080
    # How far an interaction's signed timestamp may be from this machine's clock: older ones are
    # refused as replays (Discord sends each within a second of signing it).
    signature_window_s: Annotated[
        float, Field(gt=0, le=3600, description="a number of seconds above 0, up to 3600")
    ] = 300.0
    # The largest request body taken: interactions are a few kB, a component's carries its message.
    http_max_body_bytes: Annotated[
        int, Field(ge=1024, le=64 * 1024 * 1024, description="a number of bytes, 1024 to 67108864")
    ] = 1024 * 1024
    # How long a stop waits for the interactions being answered (a deferred Hub answer included).
    http_shutdown_s: Annotated[
        float, Field(gt=0, le=600, description="a number of seconds above 0, up to 600")
    ] = 15.0

    # Only for tests and self-hosted proxies: where Discord's REST API and gateway are.
    api_base_url: Annotated[str | None, Field(description="a URL such as http://127.0.0.1:8080/api/v10")] = (
        None
    )
    gateway_url: Annotated[str | None, Field(description="a URL such as ws://127.0.0.1:8080/gateway")] = None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The environment beats the file (init_settings holds the file's keys): `docker run -e` or a
        # compose `environment:` entry is the operator's last word, as twelve-factor apps expect.
        # No .env or secrets-dir source: the token has its own rules (load_token).
        return env_settings, init_settings

    @field_validator("log_level", mode="before")
    @classmethod
    def _any_case(cls, value: object) -> object:
        # `log_level = "debug"` is how most tools spell it; accept it rather than lecture.
        return value.strip().upper() if isinstance(value, str) else value

    # --- Hugging Face Hub lookups (model: owner/name; bot/runtime/hub_client.py) ---------------
    # Endpoint, token, cache and offline mode are huggingface_hub's own variables (HF_ENDPOINT,
    # HF_TOKEN, HF_HOME / HF_HUB_CACHE, HF_HUB_OFFLINE), so they work as for every other HF tool.
    hub_lookups: bool = True
    # Seconds one Hub lookup may take in all (its requests and any wait for a free lookup thread).
    hub_timeout_s: Annotated[float, Field(gt=0, le=60)] = 10.0
    # The most repos kept in the Hugging Face cache on disk, the least recently used going first.
    hub_cache_max_repos: Annotated[int, Field(ge=1, le=1_000_000)] = 2000
    # A Redis the replicas share Hub answers through (bot/hub_shared_cache.py), so that a new repo
    # costs one Hub lookup for the fleet; None: each replica's own caches. A secret, as the URL may
    # hold Redis's password.
    hub_shared_cache_url: Annotated[
        SecretStr | None,
        Field(
            description="a Redis URL such as redis://redis:6379/0 (rediss:// for TLS, unix:// for a socket), "
            "with the redis extra installed (pip install 'vram-bot[redis]')"
        ),
    ] = None

    @model_validator(mode="after")
    def _shards_in_range(self) -> Settings:
        if self.shard_ids is not None:
            if self.shard_count is None:
                raise ValueError(
                    "shard_ids is set but shard_count is not: add shard_count = <total number of shards>, "
                    "the same in every process"
                )
            if not self.shard_ids or len(set(self.shard_ids)) != len(self.shard_ids):
                raise ValueError("shard_ids must list each shard once, e.g. shard_ids = [0]")
            if max(self.shard_ids) >= self.shard_count:
                raise ValueError(
                    f"shard_ids must be below shard_count ({self.shard_count}): shards count from 0"
                )
        return self

    @field_validator("public_key", mode="after")
    @classmethod
    def _a_public_key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not is_public_key(value.get_secret_value()):
            # The value stays out of the message: describe_errors shows only what is expected.
            raise ValueError("not 64 hex digits")
        return value

    @field_validator("hub_shared_cache_url", mode="after")
    @classmethod
    def _a_redis_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None:  # the usual case: nothing to import for it (the bot's start)
            return None
        from urllib.parse import urlsplit

        from bot.hub_shared_cache import SCHEMES

        if urlsplit(value.get_secret_value()).scheme not in SCHEMES:
            raise ValueError("not a redis://, rediss:// or unix:// URL")
        if importlib.util.find_spec("redis") is None:  # found without importing it
            raise ValueError("the redis package is not installed")
        return value

    @property
    def sharded(self) -> bool:
        return self.shard_count is not None

    @property
    def status_max_age_s(self) -> float:
        # Three missed writes before "unhealthy": one slow write under load is not an outage.
        return 3 * self.status_interval_s


def config_path(cli_path: Path | None, env: Mapping[str, str]) -> tuple[Path, bool]:
    """The file to read, and whether the operator named it (a named file must exist)."""
    if cli_path is not None:
        return cli_path, True
    if env.get(CONFIG_ENV):
        return Path(env[CONFIG_ENV]), True
    return DEFAULT_CONFIG, False


def load_settings(cli_path: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """The file's settings, overridden by ``VRAM_BOT_*`` variables.

    ``env`` chooses the config file (``VRAM_BOT_CONFIG``); the per-key overrides are read by
    pydantic-settings from the process environment.
    """
    env = os.environ if env is None else env
    path, named = config_path(cli_path, env)
    data: dict[str, Any] = {}
    if path.is_dir():
        # What Docker leaves when a bind-mounted config.toml was missing on the host.
        raise ConfigError(f"config file {path} is a folder, not a file: mount or create the file itself")
    if path.exists():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read config file {path}: {exc}") from None
    elif named:
        raise ConfigError(f"config file {path} does not exist")
    check_keys(data, path)
    try:
        return Settings(**data)
    except ValidationError as exc:
        raise ConfigError(f"bad setting in {path}: {describe_errors(exc, data)}") from None


def check_keys(data: Mapping[str, object], path: Path) -> None:
    """Name unknown keys ourselves: pydantic's "Extra inputs are not permitted" says neither why nor what."""
    if "token" in data:
        raise ConfigError(
            f"{path}: the token is never read from the config file: remove the token key and set "
            f"{TOKEN_ENV}, or put the token alone in a file and name it with token_file"
        )
    unknown = [key for key in data if key not in Settings.model_fields]
    if unknown:
        hints = []
        for key in unknown:
            close = difflib.get_close_matches(key, Settings.model_fields, n=1)
            hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise ConfigError(
            f"{path}: unknown setting {', '.join(hints)}; valid keys are {', '.join(Settings.model_fields)}"
        )


def describe_errors(exc: ValidationError, data: Mapping[str, object]) -> str:
    """One clause per problem: where the value came from, the key, the value, what is expected."""
    problems = []
    for error in exc.errors():
        key = str(error["loc"][0]) if error["loc"] else None
        if key is None or key not in Settings.model_fields:
            # A rule across keys (the model validator): its message is already ours.
            cause = (error.get("ctx") or {}).get("error")
            problems.append(str(cause) if cause is not None else error["msg"])
            continue
        variable = ENV_PREFIX + key.upper()
        source = variable if env_has(variable) else key
        expected = Settings.model_fields[key].description
        item = "".join(f"[{part}]" for part in error["loc"][1:])  # which entry of a list
        shown = "…" if key in SECRET_KEYS else repr(error["input"])
        problems.append(f"{source}{item} = {shown} is not valid: use {expected}")
    return "; ".join(dict.fromkeys(problems))  # a list field can fail once per item: say it once


def env_has(variable: str) -> bool:
    return any(name.upper() == variable for name in os.environ)


def is_public_key(value: str) -> bool:
    """Whether ``value`` reads as an Ed25519 public key: 32 bytes as 64 hex digits."""
    return len(value) == 64 and all(c in "0123456789abcdefABCDEF" for c in value)


def load_public_key(settings: Settings, env: Mapping[str, str] | None = None) -> bytes:
    """The application's public key from ``$DISCORD_PUBLIC_KEY``, else the ``public_key`` setting."""
    env = os.environ if env is None else env
    value = env.get(PUBLIC_KEY_ENV, "").strip()
    if value and not is_public_key(value):
        raise ConfigError(
            f"{PUBLIC_KEY_ENV} is not valid: use the 64 hex digits of the application's public key"
        )
    if not value and settings.public_key is not None:
        value = settings.public_key.get_secret_value()
    if not value:
        raise ConfigError(
            f"no public key: set {PUBLIC_KEY_ENV}, or public_key in the config (Developer Portal, "
            "General Information, Public Key)"
        )
    return bytes.fromhex(value)


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
                f"token_file {settings.token_file} is empty: write the bot token into it, or set {TOKEN_ENV}"
            )
    if not token:
        raise ConfigError(
            f"no Discord token: set {TOKEN_ENV}, or token_file in the config "
            "(or try the offline preview: vram-bot estimate 7)"
        )
    return SecretStr(token)
