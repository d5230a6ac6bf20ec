"""What every role returns: raw text (parsed by the pipeline, never trusted), usage, engine."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class RoleReply:
    text: str | None
    engine: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
