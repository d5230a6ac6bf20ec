"""Red team 47: "it was up to 0.3 s" after a verb is a level reached from below — a direction,
judged against the series — not the bound "up to 5 retries" (at most). Read as a bound, a flipped
"was down to" reached CONFIRMED on a falling series."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import assume, given
from hypothesis import strategies as st

from tests.builders import rule_outcome


def _outcome(claim: str, first: float, second: float, at: datetime) -> tuple[str, str]:
    points = [(at - timedelta(minutes=n), first) for n in (3, 2, 1)] + [(at, second)]
    output = "query_metrics service=ts-seat-service metric=latency_p90\n" + "\n".join(
        f"{t:%Y-%m-%dT%H:%M:%S}Z {v}s" for t, v in points
    )
    return rule_outcome("claim.stated_content", claim, output, "\n".join(output.splitlines()[-2:]))


@given(
    st.integers(60, 1400),
    st.integers(10, 90).map(lambda n: n / 10),
    st.integers(1, 9).map(lambda n: n / 10),
    st.sampled_from(["was", "is", "were"]),
)
def test_up_to_after_a_verb_is_a_rise(minute: int, high: float, low: float, verb: str) -> None:
    at = datetime(2026, 7, 7, tzinfo=UTC) + timedelta(minutes=minute)
    assume(high != low)
    clock = f"{at:%H:%M:%S}"
    falling = f"One minute later, at {clock}, it {verb} up to {low} s."
    outcome, reason = _outcome(falling, high, low, at)
    assert outcome == "fail" and "up" in reason, reason
    rising = f"One minute later, at {clock}, it {verb} up to {high} s."
    assert _outcome(rising, low, high, at)[0] == "pass"
