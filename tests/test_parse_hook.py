"""Parse-only hook (docs/spec §10.4, §13.1.1): valid / missing / malformed, never an exception."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from veridiag.contracts import parse_executor_output
from veridiag.contracts.sanitize import clean_json

OBJ = '{"answer_version": "executor_evidence_v2", "claims": []}'


@pytest.mark.parametrize(
    "raw",
    [
        OBJ,
        f"```json\n{OBJ}\n```",
        f"```\n{OBJ}\n```",
        f"Here is the evidence:\n```json\n{OBJ}\n```\nLet me know.",
        f"\ufeff{OBJ}",
        f"以下是结构化输出：{OBJ} 以上。",
        f"I counted {{count}} errors. {OBJ}",
        f"```json\n{OBJ}",  # unterminated fence
        OBJ.encode("utf-8-sig"),
    ],
)
def test_valid(raw: str | bytes) -> None:
    parsed = parse_executor_output(raw)
    assert parsed.status.status == "valid", parsed.status
    assert parsed.value == json.loads(OBJ)


@pytest.mark.parametrize(
    "raw", [None, "", "   \n", "\ufeff", "The payment failed because of a timeout.", "无法确定原因"]
)
def test_missing(raw: str | None) -> None:
    assert parse_executor_output(raw).status.status == "missing"


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        ('{"claims": [', "never closed"),
        (f"{OBJ}\n{OBJ}", "2 JSON objects"),
        ('[{"claim_id": 1}]', "expected an object"),
        ('"just a string"', "expected an object"),
        ('{"score": NaN}', "NaN"),
        ('{"claims": 1, "claims": 2}', "duplicate key"),
        ("{'single': 'quotes'}", ""),
        (b"\xff\xfe{}", "not valid UTF-8"),
        (f"```json\n{OBJ}\n```\n```json\n{OBJ}\n```", "2 fenced code blocks"),
    ],
)
def test_malformed(raw: str | bytes, detail: str) -> None:
    parsed = parse_executor_output(raw)
    assert parsed.status.status == "malformed", parsed.status
    assert detail in parsed.status.detail
    assert parsed.value is None


def test_deep_nesting_is_refused_without_recursion_error() -> None:
    for raw in ('{"a":' * 5000 + "1" + "}" * 5000, "[" * 100_000, '{"a": ' + "[" * 50_000):
        parsed = parse_executor_output(raw)
        assert parsed.status.status == "malformed"


def test_huge_output_is_refused_quickly() -> None:
    raw = '{"claims": ["' + "x" * 3_000_000 + '"]}'
    started = time.process_time()  # this process's CPU: other test workers do not count
    parsed = parse_executor_output(raw)
    assert parsed.status.status == "malformed" and "limit" in parsed.status.detail
    assert time.process_time() - started < 1.0


def _best_parse_seconds(raw: str) -> float:
    timings = []
    for _ in range(3):
        started = time.perf_counter()
        assert parse_executor_output(raw).status.status == "valid"
        timings.append(time.perf_counter() - started)
    return min(timings)


def test_many_braces_in_prose_stay_linear() -> None:
    """Eight times the braces may cost about eight times as long, never the 64× of a parser that
    rescans the rest of the text at each brace. A ratio in one run, best of three each, so a busy
    machine slows both sizes alike (a wall-clock bound failed under CI-like load)."""
    small = _best_parse_seconds("{x} " * 5_000 + OBJ)
    large = _best_parse_seconds("{x} " * 40_000 + OBJ)
    assert large / small < 24, (small, large)


def test_schema_invalid_object_is_still_parse_valid() -> None:
    assert parse_executor_output('{"diagnosis_summary": "x"}').status.status == "valid"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@given(
    st.dictionaries(st.text(max_size=10), json_values, max_size=6),
    st.sampled_from(["", "prose: ", "```json\n"]),
)
def test_any_json_object_round_trips(obj: dict[str, Any], prefix: str) -> None:
    raw = prefix + json.dumps(obj, ensure_ascii=False) + ("\n```" if prefix.startswith("```") else "")
    parsed = parse_executor_output(raw)
    assert parsed.status.status == "valid", (raw, parsed.status)
    assert parsed.value == clean_json(obj)  # as read: no control, bidi or lone surrogate (test_sanitize.py)


@given(st.text() | st.binary())
def test_arbitrary_input_never_raises(raw: str | bytes) -> None:
    parsed = parse_executor_output(raw)
    assert parsed.status.status in {"valid", "missing", "malformed"}
    assert parsed.status.detail
    assert (parsed.value is not None) == (parsed.status.status == "valid")
    if parsed.value is not None:
        assert isinstance(parsed.value, dict)
