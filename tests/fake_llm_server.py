"""A local OpenAI-compatible chat-completions server for end-to-end tests of the real client path
(openai SDK over HTTP, tool calls and all). Each role is a script: request body → (status, body).

It also speaks Anthropic's Messages API (``POST /v1/messages``) and Gemini's
``models/{model}:generateContent`` by translation: the request is turned into the
chat-completions shape the scripts read, their reply back into the provider's — so one script
drives all three wire formats."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = tuple[int, dict[str, Any]]
Script = Callable[[dict[str, Any]], Reply]

ROLE_MARKERS = {
    "planner": "veridiag 的 Planner",
    "executor": "veridiag 的 Executor",
    "verifier": "veridiag 的 Verifier",
    "composer": "Answer Composer",
}


def completion(
    content: str | None = None, tool_calls: list[dict[str, Any]] | None = None, finish_reason: str | None = None
) -> Reply:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
            }
            for i, call in enumerate(tool_calls)
        ]
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_780_000_000,
        "model": "fake-model",
        "choices": [
            {"index": 0, "message": message, "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop")}
        ],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
    }
    return 200, body


def role_of(request: dict[str, Any]) -> str:
    text = json.dumps(request.get("messages", []), ensure_ascii=False)
    return next((role for role, marker in ROLE_MARKERS.items() if marker in text), "unknown")


def tool_results(request: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in request.get("messages", []) if m.get("role") == "tool"]


class FakeOpenAI:
    def __init__(self, scripts: dict[str, Script]) -> None:
        self.scripts = scripts
        self.requests: list[tuple[str, dict[str, Any], dict[str, str]]] = []
        self.url = ""

    def handle(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        role = role_of(body)
        self.requests.append((role, body, headers))
        script = self.scripts.get(role)
        if script is None:
            return 500, {"error": {"message": f"no script for role {role}", "type": "server_error"}}
        return script(body)


@contextmanager
def serve(fake: FakeOpenAI) -> Iterator[FakeOpenAI]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            headers = {k.lower(): v for k, v in self.headers.items()}
            if self.path.endswith("/chat/completions"):
                status, reply = fake.handle(body, headers)
            elif self.path.endswith("/v1/messages"):
                status, reply = _to_anthropic(*fake.handle(_from_anthropic(body), headers))
            elif self.path.endswith(":generateContent"):
                status, reply = _to_gemini(*fake.handle(_from_gemini(body), headers))
            else:
                status, reply = 404, {"error": {"message": "not found"}}
            data = json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"  # Anthropic's SDK wants it without /v1
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if isinstance(block, dict))


def _from_anthropic(body: dict[str, Any]) -> dict[str, Any]:
    """A Messages request in chat-completions shape: system first, tool results as ``tool``."""
    messages: list[dict[str, Any]] = []
    if body.get("system"):
        messages.append({"role": "system", "content": _text(body["system"])})
    for message in body.get("messages", []):
        blocks = message["content"] if isinstance(message["content"], list) else [message["content"]]
        for block in blocks:
            if isinstance(block, str) or block.get("type") == "text":
                messages.append(
                    {"role": message["role"], "content": _text([block] if isinstance(block, dict) else block)}
                )
            elif block.get("type") == "tool_result":
                messages.append({"role": "tool", "content": _text(block.get("content", ""))})
            elif block.get("type") == "tool_use":
                call = {
                    "type": "function",
                    "function": {"name": block["name"], "arguments": json.dumps(block["input"])},
                }
                messages.append({"role": "assistant", "tool_calls": [call]})
    tools = [{"type": "function", "function": {"name": tool["name"]}} for tool in body.get("tools", [])]
    return {"model": body.get("model"), "messages": messages, "tools": tools}


_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens", "content_filter": "refusal"}


def _to_anthropic(status: int, reply: dict[str, Any]) -> Reply:
    """A chat-completions reply (or error) as a Messages reply."""
    if status != 200:
        kind = "overloaded_error" if status in (503, 529) else "api_error"
        return status, {"type": "error", "error": {"type": kind, "message": str(reply.get("error", reply))}}
    choice = reply["choices"][0]
    message = choice["message"]
    content: list[dict[str, Any]] = []
    if message.get("content"):
        content.append({"type": "text", "text": message["content"]})
    for call in message.get("tool_calls") or []:
        arguments = json.loads(call["function"]["arguments"])
        content.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"], "input": arguments})
    usage = reply.get("usage", {})
    return 200, {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": reply.get("model", "fake-model"),
        "content": content,
        "stop_reason": _STOP.get(choice.get("finish_reason") or "stop", "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": usage.get("prompt_tokens", 0), "output_tokens": usage.get("completion_tokens", 0)},
    }


def _from_gemini(body: dict[str, Any]) -> dict[str, Any]:
    """A generateContent request in chat-completions shape."""
    messages: list[dict[str, Any]] = []
    if body.get("systemInstruction"):
        messages.append({"role": "system", "content": _text(body["systemInstruction"].get("parts", []))})
    for content in body.get("contents", []):
        role = "assistant" if content.get("role") == "model" else "user"
        for part in content.get("parts", []):
            if "text" in part:
                messages.append({"role": role, "content": part["text"]})
            elif "functionResponse" in part:
                response = part["functionResponse"].get("response", {})
                strings = [v for v in response.values() if isinstance(v, str)] if isinstance(response, dict) else []
                messages.append({"role": "tool", "content": strings[0] if strings else json.dumps(response)})
            elif "functionCall" in part:
                call = part["functionCall"]
                function = {"name": call["name"], "arguments": json.dumps(call.get("args", {}))}
                messages.append({"role": "assistant", "tool_calls": [{"type": "function", "function": function}]})
    declared = [d for tool in body.get("tools", []) for d in tool.get("functionDeclarations", [])]
    tools = [{"type": "function", "function": {"name": d["name"]}} for d in declared]
    return {"model": None, "messages": messages, "tools": tools}


_FINISH = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY"}


def _to_gemini(status: int, reply: dict[str, Any]) -> Reply:
    """A chat-completions reply (or error) as a generateContent reply."""
    if status != 200:
        state = "UNAVAILABLE" if status == 503 else "INTERNAL"
        return status, {"error": {"code": status, "message": str(reply.get("error", reply)), "status": state}}
    choice = reply["choices"][0]
    message = choice["message"]
    parts: list[dict[str, Any]] = []
    if message.get("content"):
        parts.append({"text": message["content"]})
    for call in message.get("tool_calls") or []:
        parts.append(
            {"functionCall": {"name": call["function"]["name"], "args": json.loads(call["function"]["arguments"])}}
        )
    usage = reply.get("usage", {})
    return 200, {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts},
                "finishReason": _FINISH.get(choice.get("finish_reason") or "stop", "STOP"),
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": usage.get("prompt_tokens", 0),
            "candidatesTokenCount": usage.get("completion_tokens", 0),
            "totalTokenCount": usage.get("total_tokens", 0),
        },
        "modelVersion": reply.get("model", "fake-model"),
    }
