"""What ships: the package data a plain install needs, and a Dockerfile that keeps secrets out."""

from __future__ import annotations

import tomllib
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


def test_every_data_file_is_in_the_package_data() -> None:
    pyproject = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = {
        path
        for package, patterns in pyproject["tool"]["setuptools"]["package-data"].items()
        for pattern in patterns
        for path in (PROJECT / package.replace(".", "/")).glob(pattern)
    }
    data = {path for path in (PROJECT / "bot" / "data").rglob("*") if path.is_file()}
    assert data
    assert data - shipped == set(), "a plain `pip install .` would leave these out"


def test_the_image_runs_as_a_non_root_user_and_copies_no_secrets() -> None:
    lines = [line.strip() for line in (PROJECT / "Dockerfile").read_text(encoding="utf-8").splitlines()]
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users
    assert users[-1] not in ("root", "0")
    # From the build context only (COPY --from copies between stages).
    copied = [
        word
        for line in lines
        if line.startswith("COPY ") and "--from=" not in line
        for word in line.split()[1:-1]
    ]
    assert set(copied) <= {
        "pyproject.toml",
        "README.md",
        "bot",
        "cogs",
        "requirements.lock",
        "requirements-build.lock",
    }
    assert not any(line.startswith(("ENV DISCORD_TOKEN", "ARG DISCORD_TOKEN")) for line in lines)
    ignored = (PROJECT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    assert {"config.toml", ".env", ".env.*"} <= set(ignored)
