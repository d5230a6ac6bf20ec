"""``veridiag mcp`` over stdio, with lone surrogate escapes repaired before the SDK reads a line.

The SDK parses each stdin line with pydantic, which refuses ``"\\ud800"`` as invalid JSON: the
message is dropped and the client waits for an answer that never comes. Each line passes
through ``repair_json_surrogates`` first (U+FFFD in place of the lone half), so the call is
answered; its strings are sanitised again where the pipeline reads them.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterable, AsyncIterator
from io import TextIOWrapper
from typing import Any, cast

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

from veridiag.contracts.sanitize import repair_json_surrogates


class RepairedLines:
    """The lines of ``lines`` with lone surrogate escapes repaired."""

    def __init__(self, lines: AsyncIterable[str]) -> None:
        self._lines = lines

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._lines:
            yield repair_json_surrogates(line)


async def serve_stdio(server: MCPServer) -> None:
    """Serve ``server`` over this process's stdin and stdout (the SDK's transport, own stdin)."""
    text = TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    stdin = cast("anyio.AsyncFile[str]", RepairedLines(anyio.wrap_file(text)))
    lowlevel: Any = server._lowlevel_server  # the SDK's own run_stdio_async does the same
    async with stdio_server(stdin=stdin) as (read_stream, write_stream):
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


def run_stdio(server: MCPServer) -> None:
    anyio.run(serve_stdio, server)
