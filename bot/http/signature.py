"""Discord's signature on an interaction: Ed25519 over the timestamp followed by the raw body.

Discord signs with the application's key and sends ``X-Signature-Ed25519`` (hex) and
``X-Signature-Timestamp`` (Unix seconds); an endpoint must refuse a request whose signature does not
verify with 401 (https://discord.com/developers/docs/interactions/overview, "Setting Up an Endpoint").
A timestamp outside ``window_s`` of this machine's clock is refused too, so that a recorded request
cannot be replayed later.
"""

from __future__ import annotations

import math

from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

SIGNATURE_HEADER = "X-Signature-Ed25519"
TIMESTAMP_HEADER = "X-Signature-Timestamp"
_SIGNATURE_HEX_DIGITS = 128  # 64 bytes


class Verifier:
    """Checks interactions against the application's public key (32 bytes)."""

    def __init__(self, public_key: bytes, window_s: float) -> None:
        self._key = VerifyKey(public_key)
        self.window_s = window_s

    def __repr__(self) -> str:  # the key stays out of every log line and repr
        return f"Verifier(window_s={self.window_s})"

    def problem(self, signature: str | None, timestamp: str | None, body: bytes, now: float) -> str | None:
        """Why the request is refused, or None when it is Discord's and fresh."""
        if not signature or not timestamp:
            return "no signature"
        try:
            sent_at = float(timestamp)
        except ValueError:
            return "unreadable timestamp"
        if not math.isfinite(sent_at) or abs(now - sent_at) > self.window_s:
            return "timestamp outside the window"
        if len(signature) != _SIGNATURE_HEX_DIGITS:
            return "bad signature"
        try:
            self._key.verify(timestamp.encode() + body, bytes.fromhex(signature))
        except (BadSignatureError, ValueError, UnicodeEncodeError):
            return "bad signature"
        return None
