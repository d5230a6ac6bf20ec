"""A claim is judged in its own reading (issue 27, deliverables 2 and 3): a value is checked at the
clock it is given at, a direction at the time it is given, an ordinal by date then clock, and an
absolute over what the claim's own numbers compute — each wrong variant still caught."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.test_stated_content import _outcome

# --- a value is the level at its clock, not a ratio, a reference or a span between two times ------


def _series(values: list[int], unit: str) -> str:
    points = "\n".join(f"2026-07-07T10:{i:02d}:00Z {v}{unit}" for i, v in enumerate(values))
    return f"query_metrics service=mysql metric=m\npoints:\n{points}"


#: What a claim may write beside the value at its clock, by the series' unit: a span between two
#: times ("about 90 seconds before the anomaly"), a ratio ("twelve times the usual 8"), a reference
#: ("against a usual 8 threads") — none of them a value at the clock.
_BESIDE = st.one_of(
    st.tuples(
        st.just("s"),
        st.sampled_from(
            [
                "about {d} seconds before the lock-wait anomaly began",
                "{d} seconds after the deploy",
                "lasting {d} seconds",
                "{d} 秒后告警触发",
                "持续了约 {d} 秒",
            ]
        ),
    ),
    st.tuples(
        st.just(" threads"),
        st.sampled_from(
            [
                "{n} times the usual {b}",
                "{n} times higher than the usual {b} threads",
                "against a usual {b} threads",
                "平时 {b} 个",
                "expected {b} threads",
            ]
        ),
    ),
)


@given(st.lists(st.integers(20, 60), min_size=3, max_size=8), st.data(), _BESIDE)
def test_a_value_is_the_level_at_its_clock(values: list[int], data: st.DataObject, beside: tuple[str, str]) -> None:
    """ "At 14:58:30 a job started …, about 90 seconds before the anomaly" was contradicted by the
    lock-wait series' 0.08 s at 14:58, "threads peaked at 96 at 15:18, twelve times the usual 8" by
    the point 96: the span or the ratio was read as the value at the clock. The level beside them
    is the one checked: a wrong one still contradicts."""
    unit, template = beside
    at = data.draw(st.integers(0, len(values) - 1))
    points = "\n".join(f"2026-07-07T10:{i:02d}:00Z {v}{unit}" for i, v in enumerate(values))
    output, line = (
        f"query_metrics service=mysql metric=m\npoints:\n{points}",
        f"2026-07-07T10:{at:02d}:00Z {values[at]}{unit}",
    )
    other = data.draw(st.integers(2, 19).filter(lambda n: n != values[at]))
    tail = template.format(d=other * 7, n=other, b=other)
    for level in ("", f"was {values[at]}", f"was {values[at]}{unit}"):
        _, reason = _outcome(f"At 10:{at:02d}:30 the job ran, it {level}, {tail}", output, line)
        assert not reason.startswith("contradicts"), reason
    outcome, reason = _outcome(f"At 10:{at:02d} it was {values[at] + 100}{unit}, {tail}", output, line)
    assert outcome == "fail" and "the cited series is" in reason, reason
