"""compose.yaml's HTTP profile, read as YAML, against what README's "Run it over HTTP" says of it: no
Docker engine runs here or in CI, so the file is checked by reading it (and against the Compose
Specification's schema with check-jsonschema in .ci/run); its nginx server block itself runs in the
load test (tests/test_http_load.py, ``-m http_load``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from bot.runtime.settings import ENV_PREFIX, Settings

PROJECT = Path(__file__).resolve().parents[1]


def compose() -> dict[str, Any]:
    found: dict[str, Any] = yaml.safe_load((PROJECT / "compose.yaml").read_text(encoding="utf-8"))
    return found


def readme_section() -> str:
    text = (PROJECT / "README.md").read_text(encoding="utf-8")
    return text.split("## Run it over HTTP", 1)[1].split("\n## ", 1)[0]


def test_the_http_profile_is_what_the_readme_says() -> None:
    services, said = compose()["services"], readme_section()
    profiled = {name for name, service in services.items() if "http" in service.get("profiles", [])}
    assert profiled == {"vram-bot-http", "redis", "proxy"}
    assert "profiles" not in services["vram-bot"]  # plain `docker compose up -d`: the gateway bot alone
    assert "docker compose --profile http up -d proxy" in said
    replicas, proxy, redis = services["vram-bot-http"], services["proxy"], services["redis"]
    # N replicas of the image, listening where the proxy's upstream sends, checked on /healthz.
    assert replicas["image"] == services["vram-bot"]["image"]
    assert f"{replicas['deploy']['replicas']} replicas" in said.replace("three replicas", "3 replicas")
    assert replicas["command"] == ["vram-bot", "http", "--host", "0.0.0.0", "--port", "8080"]  # noqa: S104
    assert "/healthz" in " ".join(replicas["healthcheck"]["test"])
    nginx = compose()["configs"]["nginx_interactions"]["content"]
    assert "server vram-bot-http:8080;" in nginx
    # TLS at the proxy, with the certificates README names, mounted read-only from ./certs.
    assert proxy["image"].startswith("nginx:")
    assert proxy["ports"] == ["443:443"]
    (certs,) = [v for v in proxy["volumes"] if v["target"] == "/etc/nginx/certs"]
    assert (certs["source"], certs["read_only"]) == ("./certs", True)
    for name in ("fullchain.pem", "privkey.pem"):
        assert f"/etc/nginx/certs/{name}" in nginx
        assert f"./certs/{name}" in said
    assert re.search(r"listen 443 ssl;", nginx)
    # The replicas share the redis service as their Hub cache, by a URL the settings take.
    url = replicas["environment"]["VRAM_BOT_HUB_SHARED_CACHE_URL"]
    assert url.startswith(f"redis://redis:{redis['expose'][0]}/")
    assert Settings(hub_shared_cache_url=url).hub_shared_cache_url is not None
    assert "hub_shared_cache_url" in said


def test_every_setting_compose_sets_is_a_setting() -> None:
    for name, service in compose()["services"].items():
        for variable in service.get("environment", {}):
            if variable.startswith(ENV_PREFIX):
                assert variable.removeprefix(ENV_PREFIX).lower() in Settings.model_fields, (name, variable)
