"""Red team 47: a comparison of two of the claim's own values that runs against them ("1923 MB，远
低于平时的约 690 MB", "dipped to 2.07 %, above its usual 2.81 %") reached CONFIRMED: each value is
on its line, and no check compared them. It contradicts the claim's own numbers; the comparison
the numbers bear out changes nothing, and a value right before the word is a difference ("5%
above baseline"), no level."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from tests.builders import rule_outcome

_FORMS = [
    ("The peak was {a} {u}, far {w} the usual {b} {u}.", {"up": "above", "down": "below"}),
    ("Right after recovery CPU briefly dipped to {a} {u}, {w} its usual {b} {u}.", {"up": "above", "down": "below"}),
    ("The span ({a} {u}) is far {w} the window p99 of {b} {u}.", {"up": "above", "down": "below"}),
    ("峰值约 {a} {u}，远{w}平时的约 {b} {u}。", {"up": "高于", "down": "低于"}),
    ("两次慢调用是 {a} {u}，都{w} {b} {u} 的超时。", {"up": "高于", "down": "低于"}),
]


def _outcome(claim: str, a: str, b: str, unit: str) -> tuple[str, str]:
    output = f"query_metrics service=svc metric=m\n2026-07-07T10:00:00Z {b}{unit}\n2026-07-07T10:01:00Z {a}{unit}"
    return rule_outcome("claim.stated_content", claim, output, output.splitlines()[2])


@given(
    st.sampled_from(_FORMS),
    st.integers(1, 99999),
    st.integers(1, 99999),
    st.sampled_from(["ms", "MB", "%"]),
)
def test_a_comparison_of_its_own_values_is_computed(
    form: tuple[str, dict[str, str]], x: int, y: int, unit: str
) -> None:
    assume(x != y)
    template, words = form
    a, b = f"{x / 100:g}", f"{y / 100:g}"
    right = words["up" if x > y else "down"]
    wrong = words["down" if x > y else "up"]
    kept = _outcome(template.format(a=a, b=b, u=unit, w=right), a, b, unit)
    assert "runs the other way" not in kept[1], kept
    outcome, reason = _outcome(template.format(a=a, b=b, u=unit, w=wrong), a, b, unit)
    assert outcome == "fail" and "runs the other way" in reason, reason


@given(st.integers(1, 50), st.integers(51, 99))
def test_a_value_right_before_the_word_is_a_difference(diff: int, level: int) -> None:
    claim = f"CPU ran {diff}% above its baseline of {level}%."
    assert "runs the other way" not in _outcome(claim, str(diff), str(level), "%")[1]
