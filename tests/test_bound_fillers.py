"""Red team 47: a bound with an article or a hedge between its word and its number ("stayed above
the 2 s mark", "never above about 1.2 ms") was read as no bound: flipped to the other side ("stayed
below the 2 s mark" of points at 2062 ms) it reached CONFIRMED. The words between are data
(bounds.yaml ``between``); the bound is computed over every point of the period either way."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from tests.builders import rule_outcome

_BETWEEN = ["the", "about", "roughly", "around", "the about"]


def _output(start: datetime, values: list[int]) -> str:
    lines = [f"{start + timedelta(minutes=i):%Y-%m-%dT%H:%M:%S}Z {v}ms" for i, v in enumerate(values)]
    return "query_metrics service=cart metric=latency_p99\n" + "\n".join(lines)


@given(
    st.integers(0, 1300),
    st.lists(st.integers(2050, 2900), min_size=3, max_size=8),
    st.sampled_from(_BETWEEN),
    st.sampled_from(["stayed {side} {between} 2 s mark", "stayed {side} {between} 2 s"]),
)
def test_a_bound_with_words_before_its_number_is_a_bound(
    minute: int, values: list[int], between: str, form: str
) -> None:
    start = datetime(2026, 7, 7, tzinfo=UTC) + timedelta(minutes=minute)
    output = _output(start, values)
    first, last = start, start + timedelta(minutes=len(values) - 1)
    words = between.replace("the about", "the")
    period = f"from {first:%H:%M} through {last:%H:%M}"
    excerpt = output.splitlines()[1]
    right = f"Its p99 {form.format(side='above', between=words)} {period}."
    assert rule_outcome("claim.stated_content", right, output, excerpt)[0] != "fail"
    wrong = f"Its p99 {form.format(side='below', between=words)} {period}."
    outcome, reason = rule_outcome("claim.stated_content", wrong, output, excerpt)
    assert outcome == "fail" and "bound is crossed" in reason, (wrong, reason)
