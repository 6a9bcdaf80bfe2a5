"""The interaction webhook: fill in or remove the original response, send a follow-up.

Discord authorises these by the interaction's token in the path, so no bot token is needed
(https://discord.com/developers/docs/interactions/receiving-and-responding, "Followup Messages"). The
token stays out of every log line: a failure is logged by the interaction's id and the status.
"""

from __future__ import annotations

import logging
from typing import Any

import aiohttp
import orjson

log = logging.getLogger(__name__)

DISCORD_API = "https://discord.com/api/v10"


def body_of(data: dict[str, Any], files: dict[str, bytes]) -> aiohttp.FormData | bytes:
    """JSON, or with files, multipart as Discord takes a message with files: ``payload_json`` and one
    ``files[n]`` part per file."""
    if not files:
        return orjson.dumps(data)
    form = aiohttp.FormData(quote_fields=False)
    form.add_field("payload_json", orjson.dumps(data).decode(), content_type="application/json")
    for index, (name, content) in enumerate(files.items()):
        form.add_field(f"files[{index}]", content, filename=name, content_type="application/octet-stream")
    return form


class DiscordWebhook:
    """Calls Discord's interaction webhook routes; ``api_base`` for a proxy or the tests' fake."""

    def __init__(self, api_base: str | None = None, timeout_s: float = 10.0) -> None:
        self.api_base = (api_base or DISCORD_API).rstrip("/")
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    def _url(self, interaction: dict[str, Any], tail: str = "") -> str:
        return (
            f"{self.api_base}/webhooks/{interaction.get('application_id')}/{interaction.get('token')}{tail}"
        )

    async def _call(
        self,
        method: str,
        interaction: dict[str, Any],
        tail: str,
        data: dict[str, Any] | None = None,
        files: dict[str, bytes] | None = None,
    ) -> None:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=self._timeout)
        body = None if data is None else body_of(data, files or {})
        headers = {"Content-Type": "application/json"} if isinstance(body, bytes) else {}
        try:
            async with self._session.request(
                method, self._url(interaction, tail), data=body, headers=headers
            ) as r:
                if r.status >= 400:
                    log.warning(
                        "Discord refused %s for interaction %s: HTTP %d",
                        method,
                        str(interaction.get("id"))[:30],
                        r.status,
                    )
        except (aiohttp.ClientError, TimeoutError) as exc:
            # Only the exception's type: its text may hold the URL, which holds the token.
            log.warning(
                "Could not reach Discord's webhook for interaction %s: %s",
                str(interaction.get("id"))[:30],
                type(exc).__name__,
            )

    async def edit_original(
        self, interaction: dict[str, Any], data: dict[str, Any], files: dict[str, bytes]
    ) -> None:
        await self._call("PATCH", interaction, "/messages/@original", data, files)

    async def delete_original(self, interaction: dict[str, Any]) -> None:
        await self._call("DELETE", interaction, "/messages/@original")

    async def followup(self, interaction: dict[str, Any], data: dict[str, Any]) -> None:
        await self._call("POST", interaction, "", data)
