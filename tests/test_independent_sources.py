"""A root cause needs independent observations (issue 27 D4): one record counted twice is one.

Strategies generate one log record read by several queries — other search words, another limit,
a window a second wider, the record listed as a line or as a pattern's example, among other
lines in any order — and a root cause citing each query for that record rests on one
observation, whatever the number of calls. Two different records stay two.
"""

from __future__ import annotations

from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.builders import SESSION, binding, claim, invocation, v2
from veridiag.contracts import InMemoryInvocations
from veridiag.gatekeeper import Gatekeeper

_WORDS = st.sampled_from(["handshake", "acquirer", "certificate", "upstream", "refused", "gateway", "ledger", "quota"])
_CODES = st.from_regex(r"ERR_[A-Z]{3,8}_[A-Z]{3,6}", fullmatch=True)


@st.composite
def _record(draw: st.DrawFn) -> str:
    minute, second = draw(st.integers(0, 59)), draw(st.integers(0, 59))
    words = " ".join(draw(st.lists(_WORDS, min_size=2, max_size=5)))
    thread = draw(st.integers(1, 200))
    return (
        f"2026-07-07T10:{minute:02d}:{second:02d}.000Z ERROR payment-service [exec-{thread}] "
        f"c.s.pay.Gateway - {words} failed ({draw(_CODES)})"
    )


def _output(record: str, query: str, noise: list[str], as_example: bool, at: int) -> str:
    lines = list(noise)
    lines.insert(min(at, len(lines)), f"  e.g. {record}" if as_example else record)
    return "\n".join([f"query_logs service=payment-service query={query!r}", "lines:", *lines])


_NOISE = st.lists(
    st.builds(
        "2026-07-07T09:{:02d}:{:02d}.000Z INFO  payment-service [cron] c.s.pay.Job - {} done".format,
        st.integers(0, 59),
        st.integers(0, 59),
        _WORDS,
    ),
    max_size=4,
)


def _cause(invocations: list[Any], excerpt: str) -> dict[str, Any]:
    return claim(
        text=f"The payment failures were caused by {excerpt}.",
        claim_type="root_cause",
        support_level="indirect",
        bindings=[binding([i.id], excerpt) for i in invocations],
    )


def _support(store: InMemoryInvocations, cause: dict[str, Any]) -> list[str]:
    report = Gatekeeper().validate(v2([cause]), session_id=SESSION, invocations=store)
    return [c.outcome for t in report.claim_traces for c in t.checks if c.rule_id == "claim.root_cause_support"]


@settings(max_examples=60, deadline=None)
@given(
    record=_record(),
    queries=st.lists(
        st.tuples(_WORDS, st.integers(1, 50), st.integers(0, 30), st.booleans(), _NOISE, st.integers(0, 4)),
        min_size=2,
        max_size=4,
        unique_by=lambda q: (q[0], q[1], q[2]),
    ),
    whole=st.booleans(),
)
def test_one_record_read_by_several_queries_is_one_observation(
    record: str, queries: list[tuple[str, int, int, bool, list[str], int]], whole: bool
) -> None:
    invocations = [
        invocation(
            700 + n,
            output=_output(record, word, noise, example, at),
            arguments={"service": "payment-service", "query": word, "limit": limit, "start": f"10:00:{shift:02d}"},
        )
        for n, (word, limit, shift, example, noise, at) in enumerate(queries)
    ]
    excerpt = record if whole else record.split(" - ", 1)[1]
    assert _support(InMemoryInvocations(invocations), _cause(invocations, excerpt)) == ["warn"]


@settings(max_examples=30, deadline=None)
@given(first=_record(), second=_record())
def test_two_records_from_two_queries_are_two_observations(first: str, second: str) -> None:
    assume(first.split(" - ", 1)[1] != second.split(" - ", 1)[1])
    store = InMemoryInvocations(
        [
            invocation(801, output=_output(first, "a", [], False, 0), arguments={"query": "a"}),
            invocation(802, output=_output(second, "b", [], False, 0), arguments={"query": "b"}),
        ]
    )
    cause = claim(
        text="The payment failures were caused by the gateway.",
        claim_type="root_cause",
        support_level="indirect",
        bindings=[binding([801], first.split(" - ", 1)[1]), binding([802], second.split(" - ", 1)[1])],
    )
    assert _support(store, cause) == ["pass"]
