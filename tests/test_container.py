"""The Dockerfile and compose.yaml, read as text: no Docker engine here, so their key properties are
checked by reading them (hadolint lints the Dockerfile in CI)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from bot import __version__

PROJECT = Path(__file__).resolve().parents[1]


def instructions() -> list[str]:
    """The Dockerfile's instructions, continuation lines joined and comments dropped."""
    text = (PROJECT / "Dockerfile").read_text(encoding="utf-8")
    text = re.sub(
        r"\\\n\s*", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    )
    return [line.strip() for line in text.splitlines() if line.strip()]


def compose_lines() -> list[str]:
    text = (PROJECT / "compose.yaml").read_text(encoding="utf-8")
    return [line.split(" #")[0].rstrip() for line in text.splitlines() if not line.lstrip().startswith("#")]


def test_the_image_is_multi_stage_and_ships_only_the_venv() -> None:
    lines = instructions()
    stages = [line for line in lines if line.startswith("FROM ")]
    assert len(stages) == 2
    assert stages[0].endswith(" AS build")
    final = lines[lines.index(stages[1]) :]
    # The runtime stage copies nothing from the build context: only the venv from the build stage,
    # so no build/, *.egg-info or sources ship.
    assert [line for line in final if line.startswith(("COPY", "ADD"))] == [
        "COPY --from=build /opt/vram-bot /opt/vram-bot"
    ]


def test_dependencies_are_installed_from_the_lock_with_hashes() -> None:
    installs = [line for line in instructions() if "pip install" in line]
    assert any("--require-hashes" in line and "-r requirements.lock" in line for line in installs)
    lock = (PROJECT / "requirements.lock").read_text(encoding="utf-8")
    pinned = re.findall(r"^([a-z0-9-]+)==\S+ \\$", lock, flags=re.MULTILINE)
    assert {"discord-py", "orjson", "pydantic", "pydantic-settings"} <= set(pinned)
    # Every requirement carries at least one hash (pip refuses the whole file otherwise).
    blocks = re.split(r"\n(?=[a-z0-9-]+==)", lock.split("\n\n", 1)[-1].strip())
    assert all("--hash=sha256:" in block for block in blocks if "==" in block)


def test_the_image_is_healthchecked_labelled_and_not_root() -> None:
    lines = instructions()
    (healthcheck,) = [line for line in lines if line.startswith("HEALTHCHECK ")]
    assert healthcheck.endswith('CMD ["vram-bot", "health"]')
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users[-1] not in ("root", "0")
    # The OCI version label, the compose image tag and the package say what `vram-bot --version` says.
    assert f"ARG VERSION={__version__}" in lines
    assert f"    image: vram-bot:{__version__}" in compose_lines()
    project = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["version"] == __version__
    assert any('org.opencontainers.image.version="${VERSION}"' in line for line in lines)
    assert any("VRAM_BOT_STATUS_FILE=" in line for line in lines if line.startswith("ENV "))


def test_compose_restarts_on_failure_but_not_for_ever_and_mounts_the_config_read_only() -> None:
    lines = compose_lines()
    assert "    restart: on-failure:5" in lines  # not "always": exit 2 would loop
    assert "    env_file: .env" in lines
    mount = lines[lines.index("        target: /app/config.toml") - 2 :][:6]
    assert mount[0].endswith("- type: bind")
    assert "        read_only: true" in mount
    assert "          create_host_path: false" in lines


def test_the_lock_pins_every_dependency_within_pyproject_s_ranges() -> None:
    """A dependency added or re-ranged in pyproject.toml without regenerating the lock fails here."""
    project = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    lock = (PROJECT / "requirements.lock").read_text(encoding="utf-8")
    pinned = dict(re.findall(r"^([a-z0-9-]+)==(\S+) \\$", lock, flags=re.MULTILINE))
    for line in project["dependencies"]:
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{name} is not in requirements.lock: regenerate it (see README, Docker)"
        assert requirement.specifier.contains(pinned[name]), f"{name}=={pinned[name]} is outside {line}"
