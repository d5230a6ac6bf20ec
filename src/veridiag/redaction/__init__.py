"""Secrets never leave the boundary where text enters: tool outputs, alert payloads, questions,
MCP calls and recorded fixture outputs all pass through one ``Redactor``.

``engine`` holds the rules and the redactor; ``keys`` decides which key names a secret
(normalised spellings against ``vocabulary.yaml``); ``values`` decodes what a line encodes (URL
escapes, JSON escapes, invisible and look-alike characters, base64 values) with the way back
to the stored characters.
"""

from __future__ import annotations

from veridiag.redaction.engine import (
    MARKER_PATTERN,
    Redaction,
    Redactor,
    SessionRedactor,
    build_redactor,
    default_redactor,
)

__all__ = [
    "MARKER_PATTERN",
    "Redaction",
    "Redactor",
    "SessionRedactor",
    "build_redactor",
    "default_redactor",
    "redact",
]


def redact(text: str) -> str:
    """``text`` through the built-in rules (the same as every default boundary)."""
    return default_redactor().redact(text)
