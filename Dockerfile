# vram-bot image: no token and no config inside. Pass the token at run time (an env file, -e
# DISCORD_TOKEN, or a mounted secret named by VRAM_BOT_TOKEN_FILE) and mount a config if you need one.
# compose.yaml shows the whole set-up.

# The same interpreter as development and CI (Python 3.11), where requirements.lock was resolved.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --- build stage: resolve nothing, install exactly the locked, hash-checked wheels into a venv ---
FROM ${PYTHON_IMAGE} AS build

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1

WORKDIR /src
COPY requirements.lock requirements-build.lock ./
# --require-hashes: every dependency, and the setuptools that builds our package, must match the
# lock's sha256, so a rebuild gets the same bytes or fails.
RUN python -m venv /opt/vram-bot \
    && /opt/vram-bot/bin/pip install --no-cache-dir --require-hashes --no-deps -r requirements.lock \
    && python -m venv /opt/build \
    && /opt/build/bin/pip install --no-cache-dir --require-hashes --no-deps -r requirements-build.lock

COPY pyproject.toml README.md ./
COPY bot ./bot
COPY cogs ./cogs
# Our own code, from the build context: --no-deps (all pinned above) and no build isolation (it
# would fetch an unpinned setuptools). build/ and *.egg-info stay in this stage, never shipped.
RUN /opt/build/bin/python -m pip wheel --no-cache-dir --no-deps --no-build-isolation --wheel-dir /wheels . \
    && /opt/vram-bot/bin/pip install --no-cache-dir --no-deps /wheels/*.whl

# --- runtime stage: the interpreter and the venv, nothing else from the build ---
FROM ${PYTHON_IMAGE}

ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="vram-bot" \
      org.opencontainers.image.description="Discord bot that estimates the GPU memory to fully fine-tune an LLM" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="MIT"

ENV PATH="/opt/vram-bot/bin:${PATH}" \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    VRAM_BOT_STATUS_FILE=/tmp/vram-bot/status.json

RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin vram
COPY --from=build /opt/vram-bot /opt/vram-bot

# ./config.toml in /app is read when present: bind-mount one read-only (see compose.yaml, or
# docker run --mount type=bind,source="$PWD/config.toml",target=/app/config.toml,readonly).
WORKDIR /app
USER 10001

# Healthy = the gateway is connected and the status file the bot rewrites every 15 s is fresh.
# start-period: the first login, command sync and READY, with a retry or two.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 CMD ["vram-bot", "health"]

CMD ["vram-bot"]
