"""HMAC signatures of webhook deliveries, for senders that sign (checked in constant time).

- PagerDuty v3: ``X-PagerDuty-Signature: v1=<hex HMAC-SHA256 of the body>``, several
  comma-separated while a secret is being rotated; any one may match.
- Grafana alerting: ``X-Grafana-Alerting-Signature: <hex HMAC-SHA256>`` of the body, or of
  ``<timestamp>:<body>`` when it also sends ``X-Grafana-Alerting-Signature-Timestamp``.
"""

from __future__ import annotations

import hashlib
import hmac

#: Longest signature header read (a rotation carries a few; anything longer is not one).
_MAX_HEADER = 1024


def _mac(secret: str, message: bytes) -> str:
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def pagerduty_signed(body: bytes, header: str, secret: str) -> bool:
    expected = _mac(secret, body)
    signatures = [part.strip() for part in header[:_MAX_HEADER].split(",")]
    return any(
        hmac.compare_digest(value.strip().lower().encode(), expected.encode())
        for version, _, value in (s.partition("=") for s in signatures)
        if version == "v1"
    )


def grafana_signed(body: bytes, header: str, secret: str, timestamp: str | None = None) -> bool:
    message = f"{timestamp}:".encode() + body if timestamp else body
    return hmac.compare_digest(header[:_MAX_HEADER].strip().lower().encode(), _mac(secret, message).encode())
