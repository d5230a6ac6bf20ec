"""What every command shares: consoles, settings, one-line errors with exit status 2."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer
from rich.console import Console
from rich.text import Text

from veridiag.config import Settings, load_settings

# Messages are never hard-wrapped (soft_wrap: a piped path or id stays on one line) and text is
# never read as rich markup: style comes from Text objects and style=, never from the message.
out = Console(soft_wrap=True, markup=False, highlight=False)
err = Console(stderr=True, soft_wrap=True, markup=False, highlight=False)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` to stderr and return the Exit to raise."""
    err.print(Text("error:", style="bold red"), message)
    return typer.Exit(code)


def settings() -> Settings:
    try:
        return load_settings()
    except Exception as exc:  # invalid env/yaml values: say which
        raise fail(f"invalid configuration: {exc}") from None


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")
