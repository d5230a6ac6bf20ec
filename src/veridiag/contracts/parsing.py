"""Parse-only hook: raw Executor text → JSON object + parse status (docs/spec §10.4, §13.1.1).

This says whether the text *is* a JSON object, nothing about the schema — that is the
Gatekeeper's job, so there is one place and one vocabulary for contract errors.

It never raises: models emit fences, prose, BOMs, truncated or doubled objects, and
adversarial input can be huge or deeply nested. Ambiguity fails closed — two objects in
one answer are ``malformed``, not "pick one".
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from veridiag.contracts.json import JsonObject, JsonValue
from veridiag.contracts.sanitize import clean_json, is_clean

ParseState = Literal["valid", "missing", "malformed"]

#: Larger raw outputs are refused rather than parsed (a model answer is kilobytes).
MAX_RAW_CHARS = 2_000_000
#: Deeper nesting is refused before ``json`` would hit the recursion limit.
MAX_DEPTH = 200

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n(.*?)(?:```|\Z)", re.DOTALL)
_STRUCTURAL = re.compile(r'[{}"]')
_STRING_TAIL = re.compile(r'(?:[^"\\]|\\.)*"', re.DOTALL)
_LOOKS_LIKE_JSON = re.compile(r"[\"']\s*:")


class ParseStatus(BaseModel):
    """``executor_output_parse_status`` as it enters the Verifier payload and the audit."""

    status: ParseState
    detail: str


@dataclass(frozen=True)
class ParsedOutput:
    status: ParseStatus
    #: The object found, not yet read against any contract.
    value: JsonObject | None

    @property
    def ok(self) -> bool:
        return self.status.status == "valid"


class _JsonRejectedError(ValueError):
    """JSON that ``json`` would accept but the contract does not (NaN, duplicate keys)."""


def _reject_constant(name: str) -> JsonValue:
    raise _JsonRejectedError(f"non-standard JSON constant {name}")


def _unique_keys(pairs: list[tuple[str, JsonValue]]) -> JsonObject:
    obj: JsonObject = {}
    for key, value in pairs:
        if key in obj:
            raise _JsonRejectedError(f"duplicate key {key!r}")
        obj[key] = value
    return obj


def _loads(text: str) -> JsonValue:
    value: JsonValue = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    return value


def read_json(text: str) -> JsonValue:
    """``text`` as one JSON value, read as strictly as an Executor document is: NaN and
    Infinity, a duplicate key, and nesting past what ``json`` can recurse are a ``ValueError``
    saying so — never a ``RecursionError`` (tool arguments a model or a command line writes)."""
    try:
        value = _loads(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(_describe(exc)) from None
    if too_deep(value):  # what ``json`` read, a store, a validator or a copy may still not recurse through
        raise ValueError(f"nesting too deep (more than {MAX_DEPTH} levels)")
    return value


def too_deep(value: object) -> bool:
    """Whether ``value`` nests dicts and lists deeper than ``MAX_DEPTH`` (read without recursion)."""
    levels: list[tuple[object, int]] = [(value, 1)]
    while levels:
        item, depth = levels.pop()
        if isinstance(item, Mapping | list | tuple):
            if depth > MAX_DEPTH:
                return True
            levels.extend((inner, depth + 1) for inner in (item.values() if isinstance(item, Mapping) else item))
    return False


def _result(status: ParseState, detail: str, value: JsonObject | None = None) -> ParsedOutput:
    return ParsedOutput(ParseStatus(status=status, detail=detail), value)


def _describe(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    if isinstance(exc, RecursionError):
        return "nesting too deep"
    return str(exc)


def _decode(raw: str | bytes | None) -> str | ParsedOutput:
    if raw is None:
        return _result("missing", "no executor output")
    if isinstance(raw, bytes | bytearray):
        try:
            return bytes(raw).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            return _result("malformed", f"output is not valid UTF-8 (byte {exc.start})")
    if not isinstance(raw, str):
        return _result("malformed", f"output is a {type(raw).__name__}, not text")
    return raw


@dataclass
class _Region:
    """A top-level ``{...}`` span found by brace matching; ``end`` is None if never closed."""

    start: int
    end: int | None
    too_deep: bool = False


def _object_regions(text: str) -> list[_Region]:
    """Top-level brace-balanced regions, string-aware inside braces, prose ignored outside."""
    regions: list[_Region] = []
    pos = text.find("{")
    while pos != -1:
        start, depth, max_depth, cursor = pos, 0, 0, pos
        closed_at: int | None = None
        while True:
            match = _STRUCTURAL.search(text, cursor)
            if match is None:
                break
            char = match.group()
            if char == '"':
                tail = _STRING_TAIL.match(text, match.end())
                if tail is None:
                    break
                cursor = tail.end()
                continue
            depth += 1 if char == "{" else -1
            max_depth = max(max_depth, depth)
            cursor = match.end()
            if depth == 0:
                closed_at = cursor
                break
        regions.append(_Region(start, closed_at, max_depth > MAX_DEPTH))
        if closed_at is None:
            break
        pos = text.find("{", closed_at)
    return regions


def _extract_object(text: str) -> ParsedOutput:
    """Find exactly one JSON object in ``text`` (which may carry prose around it)."""
    try:
        whole = _loads(text)
    except (ValueError, RecursionError):
        whole = None
    else:
        if isinstance(whole, dict):
            return _result("valid", "parsed executor output as a JSON object", whole)
        return _result("malformed", f"top-level JSON value is {type(whole).__name__}, expected an object")

    found: list[JsonObject] = []
    failures: list[str] = []
    for region in _object_regions(text):
        if region.too_deep:
            failures.append(f"object at offset {region.start}: nesting deeper than {MAX_DEPTH}")
            continue
        if region.end is None:
            if _LOOKS_LIKE_JSON.search(text, region.start):
                failures.append(f"object at offset {region.start} is never closed (truncated output?)")
            continue
        chunk = text[region.start : region.end]
        try:
            value = _loads(chunk)
        except (ValueError, RecursionError) as exc:
            if _LOOKS_LIKE_JSON.search(chunk) or len(chunk) == len(text):
                failures.append(f"object at offset {region.start}: {_describe(exc)}")
            continue
        if isinstance(value, dict):  # a brace-balanced region is an object whenever it parses
            found.append(value)

    if len(found) == 1 and not failures:
        return _result("valid", "extracted one JSON object from surrounding text", found[0])
    if len(found) > 1:
        return _result("malformed", f"found {len(found)} JSON objects, expected exactly one")
    if failures:
        return _result("malformed", "; ".join(failures[:3]))
    if text.lstrip().startswith("["):
        return _result("malformed", "output looks like a JSON array but does not parse")
    return _result("missing", "no JSON object in output")


def parse_executor_output(raw: str | bytes | None) -> ParsedOutput:
    """Classify raw Executor text as ``valid`` / ``missing`` / ``malformed``; never raises.

    Every role's reply (and an MCP client's document) is read here, so the object found is
    sanitised here (``contracts/sanitize.py``): a bidi override or lone surrogate written as a
    JSON escape reaches no check and no person."""
    parsed = _parse(raw)
    if parsed.value is None:
        return parsed
    if is_clean(parsed.value):  # the parser's own fresh object: nothing to copy it for
        return parsed
    cleaned = clean_json(parsed.value)
    return ParsedOutput(parsed.status, cleaned if isinstance(cleaned, dict) else parsed.value)


def _parse(raw: str | bytes | None) -> ParsedOutput:
    try:
        decoded = _decode(raw)
        if isinstance(decoded, ParsedOutput):
            return decoded
        text = decoded.strip()
        while text.startswith("\ufeff"):  # a byte-order mark, possibly after stray whitespace
            text = text[1:].strip()
        if not text:
            return _result("missing", "executor output is empty")
        if len(text) > MAX_RAW_CHARS:
            return _result("malformed", f"output is {len(text)} characters, above the {MAX_RAW_CHARS} limit")
        fenced = [body for _lang, body in _FENCE.findall(text) if "{" in body]
        if len(fenced) > 1:
            parsed = [_extract_object(body.strip()) for body in fenced]
            valid = [p for p in parsed if p.ok]
            if len(valid) == 1:
                return valid[0]
            return _result("malformed", f"{len(fenced)} fenced code blocks, {len(valid)} parse as JSON objects")
        if fenced:
            return _extract_object(fenced[0].strip())
        return _extract_object(text)
    except Exception as exc:  # pragma: no cover - last line of defence, must stay unreachable
        return _result("malformed", f"parser error: {type(exc).__name__}")
