# vram-bot image: no token and no config inside. Pass the token at run time
# (-e DISCORD_TOKEN or a mounted secret with token_file) and mount a config if you need one.
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

COPY pyproject.toml README.md ./
COPY bot ./bot
COPY cogs ./cogs
RUN pip install --no-cache-dir . \
    && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin vram

# ./config.toml in /app is read when present: mount one with -v "$PWD/config.toml:/app/config.toml:ro".
USER 10001

CMD ["vram-bot"]
