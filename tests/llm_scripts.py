"""pydantic-ai FunctionModel scripts shared by the LLM-engine and browser tests."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo

Script = Callable[[list[ModelMessage], AgentInfo], ModelResponse]


def _returns(messages: list[ModelMessage]) -> list[str]:
    return [
        part.content
        for message in messages
        for part in getattr(message, "parts", [])
        if isinstance(part, ToolReturnPart) and isinstance(part.content, str)
    ]


def _first_log_line(tool_output: str) -> tuple[int, str]:
    """(invocation id, a verbatim ERROR line) from a delimited tool output."""
    found = re.search(r'invocation_id="(\d+)"', tool_output)
    assert found, tool_output[:200]
    line = next(line for line in tool_output.splitlines() if "ERROR" in line)
    return int(found.group(1)), line.strip()


def evidence(claims: list[dict[str, Any]], **extra: Any) -> str:
    return json.dumps({"answer_version": "executor_evidence_v2", "claims": claims, **extra}, ensure_ascii=False)


def claim(claim_id: str, text: str, invocation: int, excerpt: str, claim_type: str = "symptom") -> dict[str, Any]:
    return {
        "claim_id": claim_id,
        "claim_type": claim_type,
        "claim_text": text,
        "support_level": "direct",
        "evidence_bindings": [
            {
                "source_type": "tool_trace",
                "tool_name": "query_logs",
                "source_invocation_ids": [invocation],
                "evidence_excerpt": excerpt,
            }
        ],
    }


def executor_script(final: Callable[[int, str], str]) -> Script:
    """Calls query_logs, repeats the same call once (the guard refuses it), then answers."""

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        assert {t.name for t in info.function_tools} == {
            "query_logs",
            "query_metrics",
            "query_changes",
            "lookup_knowledge",
            "rank_suspects",
            "query_traces",
        }
        returns = _returns(messages)
        args = {
            "service": "payment-service",
            "level": "ERROR",
            "start": "2026-07-07T09:50:00Z",
            "end": "2026-07-07T10:30:00Z",
            "limit": 5,
        }
        if len(returns) < 2:
            return ModelResponse(parts=[ToolCallPart("query_logs", args)])
        invocation, line = _first_log_line(returns[0])
        return ModelResponse(parts=[TextPart(final(invocation, line))])

    return script
