"""Red team 47: a duration glued in two or three units ("41m19s", "1h02m", "2h 5m") is read by no
fact reader as one (its "m" reads as millicores): a claim writing one its cited output does not
write is at most an inference; one copied as written changes nothing."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from tests.builders import rule_outcome

_FORMS = ["{a}m{b}s", "{a}m {b}s", "{a}h{b:02d}m", "{a}h {b}m", "{a}h{b:02d}m{c:02d}s"]


def _output(written: str) -> str:
    return (
        "query_logs service=mail-dispatcher\n"
        f'{{"ts":"2026-10-14T08:21:30Z","level":"INFO","msg":"campaign c-5512 finished, elapsed {written}"}}'
    )


def _outcome(claim: str, written: str) -> tuple[str, str]:
    output = _output(written)
    return rule_outcome("claim.stated_content", claim, output, output.splitlines()[1])


@given(
    st.sampled_from(_FORMS),
    st.tuples(st.integers(1, 99), st.integers(1, 59), st.integers(1, 59)),
    st.sampled_from(["a", "b", "c"]),
    st.integers(1, 9),
    st.sampled_from(["The campaign's reported elapsed time was {d}.", "campaign c-5512 耗时 {d}。"]),
)
def test_a_compound_duration_is_stated_as_written(
    form: str, parts: tuple[int, int, int], part: str, delta: int, sentence: str
) -> None:
    a, b, c = parts
    written = form.format(a=a, b=b, c=c)
    kept = _outcome(sentence.format(d=written), written)
    assert "written nowhere" not in kept[1], kept
    values = {"a": a, "b": b, "c": c, part: {"a": a, "b": b, "c": c}[part] + delta}
    assume(part != "c" or "{c" in form)
    assume(values[part] < 60 or part == "a")
    wrong = form.format(**values)
    assume(wrong != written)
    outcome, reason = _outcome(sentence.format(d=wrong), written)
    assert outcome != "pass" and "written nowhere" in reason, (wrong, written, reason)
