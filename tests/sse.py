"""Server-Sent Events read as a client reads them, for the streaming endpoints' tests."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass
class Event:
    id: int | None
    stage: str
    data: dict[str, Any]


def read_events(lines: Iterable[str]) -> Iterator[Event]:
    """Events as they arrive (``id``, ``event``, ``data`` lines; a blank line ends one)."""
    fields: dict[str, str] = {}
    for line in lines:
        if line:
            name, _, value = line.partition(": ")
            fields[name] = value
            continue
        if fields:
            event_id = fields.get("id")
            yield Event(int(event_id) if event_id else None, fields["event"], json.loads(fields["data"]))
            fields = {}
