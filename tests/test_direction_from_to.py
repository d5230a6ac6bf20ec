"""A direction is judged by its from–to values wherever a clock stands between them, each value in
its own unit (issue 27, deliverable 3: a direction against the claim's own numbers contradicts it).
Found by the red team: "Redis p99 latency fell from 0.9 ms at 12:10 to a peak of 35.64 ms" reached
CONFIRMED — the clock hid the from–to phrase."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.builders import rule_outcome


def _outcome(text: str, output: str) -> tuple[str, str]:
    return rule_outcome("claim.stated_content", text, output, output.splitlines()[1])


_UP, _DOWN = ["rose", "jumped", "climbed", "increased"], ["fell", "dropped", "decreased", "declined"]


@given(
    st.integers(100, 999),
    st.sampled_from([("ms", 1), ("s", 1000)]),
    st.integers(2, 9),
    st.booleans(),
    st.data(),
)
def test_a_direction_is_judged_by_its_from_to_values_past_their_clocks(
    ms: int, unit: tuple[str, int], times: int, rising: bool, data: st.DataObject
) -> None:
    """ "fell from 0.9 ms at 12:10 to a peak of 35.64 ms": a clock between a from–to's values is no
    value of it, and each value is read in its own unit ("from 186 ms (1:04 AM) to 1.8 s"). Found by
    the red team: a flipped direction past a clock reached CONFIRMED."""
    first, second = ms, ms * times  # in milliseconds: second > first
    spelled, factor = unit
    if rising is False:
        first, second = second, first
    written = f"{second / factor:g} {spelled}"
    clock = data.draw(st.sampled_from(["at {c}", "({c})", "at {c} UTC"]))
    word = data.draw(st.sampled_from(_UP if rising else _DOWN))
    wrong = data.draw(st.sampled_from(_DOWN if rising else _UP))
    at1, at2 = clock.format(c="10:04"), clock.format(c="10:05")
    output = "query_metrics service=svc-a metric=p99\n2026-07-07T10:04:00Z p99 sample\n"
    right = f"svc-a p99 {word} from {first} ms {at1} to {written} {at2}."
    mistaken = f"svc-a p99 {wrong} from {first} ms {at1} to {written} {at2}."
    assert not _outcome(right, output)[1].startswith("contradicts"), right
    outcome, reason = _outcome(mistaken, output)
    assert outcome == "fail" and "runs against its own numbers" in reason, (mistaken, reason)
