"""A number no check reads is no confirmed fact (issue 27, deliverable 3). Found by the red team:
a wrong number written in a form the fact reader does not take up — scientific notation
("4.38e2ms"), a Chinese numeral outside a unit ("六百一十七 lines", "返回 五百四十"), a number before a
word that is no unit ("the 440 response"), a day no date reads ("Jan 82") — was checked by nothing
and reached the user as confirmed. Such a number the cited output does not write makes the claim
at most an inference; one the output writes, or one another check reads (a quantity with its
unit, a multiple, a date, a clock), changes nothing. The properties generate the numbers, their
spellings and the mistakes."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from tests.builders import rule_outcome

_DIGITS = "零一二三四五六七八九"


def _zh(n: int) -> str:
    """A Chinese numeral below a thousand, with a place in it (n ≥ 10)."""
    hundreds, rest = divmod(n, 100)
    tens, ones = divmod(rest, 10)
    out = f"{_DIGITS[hundreds]}百" if hundreds else ""
    if tens:
        out += ("" if tens == 1 and not hundreds else _DIGITS[tens]) + "十"
    elif hundreds and ones:
        out += "零"
    return out + (_DIGITS[ones] if ones else "")


def _outcome(text: str, output: str) -> tuple[str, str]:
    return rule_outcome("claim.stated_content", text, output, output.splitlines()[1])


def _output(count: int, ms: int) -> str:
    return (
        "query_logs service=svc-a level=ERROR\n"
        f"2026-07-07T10:00:00.157Z ERROR svc-a [exec-1] c.s.Client - ERR_UPSTREAM_TIMEOUT matched={count} cost={ms}ms"
    )


def _unread(reason: str) -> bool:
    return "no form a check reads" in reason


def _swap(n: int) -> int:
    digits = str(n)
    for i in range(len(digits) - 1):
        if digits[i] != digits[i + 1] and not (i == 0 and digits[i + 1] == "0"):
            return int(digits[:i] + digits[i + 1] + digits[i] + digits[i + 2 :])
    return n + 1


counts = st.integers(11, 999)
millis = st.integers(1000, 9999)


@given(counts, millis, st.sampled_from(["sci", "zh", "before_word"]))
def test_a_wrong_number_in_an_unread_form_is_no_confirmed_fact(count: int, ms: int, form: str) -> None:
    wrong = _swap(count)
    assume(wrong != count and wrong not in (ms,) and str(wrong) not in _output(count, ms))
    written = {
        "sci": f"{wrong / 100:.2f}e2",
        "zh": _zh(wrong) if wrong < 1000 else f"{wrong / 100:.2f}e2",
        "before_word": str(wrong),
    }[form]
    text = {
        "sci": f"svc-a 的 ERR_UPSTREAM_TIMEOUT 共 {written} 次匹配。",
        "zh": f"svc-a 的 ERR_UPSTREAM_TIMEOUT 匹配数是 {written}。",
        "before_word": f"The {written} matched ERR_UPSTREAM_TIMEOUT response took {ms}ms.",
    }[form]
    outcome, reason = _outcome(text, _output(count, ms))
    assert outcome != "pass" and _unread(reason), (text, reason)


@given(counts, millis, st.sampled_from(["digits", "zh", "before_word"]))
def test_the_output_s_own_number_in_any_form_is_no_unread_number(count: int, ms: int, form: str) -> None:
    written = {"digits": str(count), "zh": _zh(count), "before_word": str(count)}[form]
    text = {
        "digits": f"svc-a 的 ERR_UPSTREAM_TIMEOUT 匹配数是 {written}。",
        "zh": f"svc-a 的 ERR_UPSTREAM_TIMEOUT 匹配数是 {written}。",
        "before_word": f"The {written} matched ERR_UPSTREAM_TIMEOUT response took {ms}ms.",
    }[form]
    reason = _outcome(text, _output(count, ms))[1]
    assert not _unread(reason), (text, reason)


@given(
    st.integers(2, 400),
    st.sampled_from(["{n} 倍", "{n}x", "{n} times the usual", "{n} ms", "{n}%", "{n} 点", "{n} May", "{n} 多分钟"]),
)
def test_a_number_another_check_reads_is_left_to_it(n: int, shape: str) -> None:
    """A multiple (the ratio checks), a quantity with its unit (the exact-fact checks), a clock's or
    a date's part: not judged as an unread number, whatever its value."""
    assume(shape != "{n} May" or n <= 31)
    text = f"svc-a reached {shape.format(n=n)} during the window."
    reason = _outcome(text, _output(7, 5213))[1]
    assert not _unread(reason), (text, reason)
