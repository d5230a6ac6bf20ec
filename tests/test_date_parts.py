"""Red team 47: a year written with 年 and a month or day no date reads ("3 月 61 日") were checked by
nothing — the date reader takes up "7 月 15 日" and leaves the year, and a number before 年 月 日 号
was passed over as a date's part. A year the cited output does not write, or an impossible day or
month, makes the claim at most an inference; the output's own year changes nothing."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from tests.builders import rule_outcome


def _output(year: int, month: int, day: int) -> str:
    return f"query_metrics service=keyboard metric=key_interval\n{year:04d}-{month:02d}-{day:02d}T04:30:00Z 14.64s"


def _outcome(claim: str, year: int, month: int, day: int) -> tuple[str, str]:
    output = _output(year, month, day)
    return rule_outcome("claim.stated_content", claim, output, output.splitlines()[1])


_CLAIM = "按键间隔的最大值 14.64 秒出现在 {y} 年 {m} 月 {d} 日 04:30 UTC。"


@given(st.integers(2001, 2029), st.integers(1, 12), st.integers(1, 28), st.integers(1, 90))
def test_a_year_with_nian_is_the_outputs(year: int, month: int, day: int, shift: int) -> None:
    right = _CLAIM.format(y=year, m=month, d=day)
    assert "no form a check reads" not in _outcome(right, year, month, day)[1]
    wrong_year = year + shift if shift < 80 else int(str(year)[0] + str(year)[2] + str(year)[1] + str(year)[3])
    assume(wrong_year != year and str(wrong_year) not in {f"{month:02d}", f"{day:02d}"})
    outcome, reason = _outcome(_CLAIM.format(y=wrong_year, m=month, d=day), year, month, day)
    assert outcome == "warn" and f"'{wrong_year}'" in reason, reason


@given(st.integers(2001, 2029), st.integers(1, 12), st.integers(1, 28), st.sampled_from(["day", "month"]))
def test_an_impossible_day_or_month_is_no_date(year: int, month: int, day: int, which: str) -> None:
    """A digit swap that makes a day past 31 or a month past 12 ("16 日" → "61 日")."""
    swapped = int(f"{day:02d}"[::-1]) if which == "day" else int(f"{month:02d}"[::-1])
    assume(swapped > (31 if which == "day" else 12))
    claim = _CLAIM.format(y=year, m=swapped if which == "month" else month, d=swapped if which == "day" else day)
    outcome, reason = _outcome(claim, year, month, day)
    assume(str(swapped) not in _output(year, month, day))
    assert outcome == "warn" and f"'{swapped}'" in reason, reason
