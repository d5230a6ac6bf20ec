"""Field paths like ``claims[0].evidence_bindings[1].tool_name`` — the ``target`` of an error."""

from __future__ import annotations

from collections.abc import Sequence


def loc_to_path(loc: Sequence[int | str]) -> str:
    """Turn a pydantic error location into the spec's target notation."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path
