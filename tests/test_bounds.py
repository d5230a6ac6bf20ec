"""``text/bounds.py``: the held-on look-up, led by its words' first characters, finds what the
plain word list finds."""

from __future__ import annotations

import re

from hypothesis import assume, given
from hypothesis import strategies as st

from tests.builders import SESSION, binding, claim, invocation, v2
from veridiag.contracts import InMemoryInvocations
from veridiag.gatekeeper import Gatekeeper
from veridiag.text.bounds import BoundWords, _patterns, claimed_bound, has_bound_word, keeps_on, threshold_kept
from veridiag.text.wordfiles import bundled_words

_WORDS = _patterns()[2].held_on
_PLAIN = re.compile("|".join(re.escape(w) for w in sorted(_WORDS, key=len, reverse=True)), re.IGNORECASE)


def _cased(word: str, flips: list[bool]) -> str:
    return "".join(c.upper() if flip else c for c, flip in zip(word, flips + [False] * len(word), strict=False))


@given(
    st.lists(
        st.one_of(
            st.builds(_cased, st.sampled_from(_WORDS), st.lists(st.booleans(), max_size=9)),
            st.text(alphabet="abcdefghkrsty KSſ维持保稳定在一直 .,:", max_size=12),
        ),
        max_size=6,
    )
)
def test_the_led_pattern_finds_the_same_first_word_as_the_plain_list(parts: list[str]) -> None:
    text = "".join(parts)
    led, plain = _patterns()[3].search(text), _PLAIN.search(text)
    assert (led and (led.span(), led.group())) == (plain and (plain.span(), plain.group()))


_THRESHOLD_WORDS = [
    w for name in ("above_before", "below_before", "above_after", "below_after") for w in getattr(_patterns()[2], name)
]


#: The letters ``re.IGNORECASE`` matches to an ASCII one: a word may be written with them.
_BLIND = {"i": "\u0130\u0131", "s": "\u017f", "k": "\u212a"}


def _blind(word: str, pick: int) -> str:
    """``word`` with each of its i, s and k written as a letter that matches it case-blind."""
    return "".join(_BLIND[c][pick % len(_BLIND[c])] if c in _BLIND else c for c in word)


_FILLER = st.text(alphabet="abeghiklmnorstuvwİıſK高超以下上之没有 .,:0123456789%", max_size=12)


@given(
    st.lists(
        st.one_of(
            st.tuples(
                st.sampled_from(["", "never ", "none ", "从未", "没有"]),
                st.one_of(
                    st.builds(_cased, st.sampled_from(_THRESHOLD_WORDS), st.lists(st.booleans(), max_size=12)),
                    st.builds(
                        _blind,
                        st.sampled_from([w for w in _THRESHOLD_WORDS if set(w) & set(_BLIND)]),
                        st.integers(0, 1),
                    ),
                ),
                st.sampled_from([" 5 ms", "80%", " 2 秒", "12.5s", " 300"]),
            ).map("".join),
            _FILLER,
        ),
        max_size=4,
    )
)
def test_a_text_without_a_bound_word_is_not_tried_and_reads_as_before(parts: list[str]) -> None:
    """The guard on the bound words (case-blind, İ ı ſ K included) only spares the two patterns'
    search: whatever the text, the bound read is the one they find."""
    text = "".join(parts)
    before, after = _patterns()[0], _patterns()[1]
    found = before.search(text) or after.search(text)
    assert has_bound_word(text) or found is None


def test_a_held_level_is_found_in_either_language() -> None:
    assert keeps_on("CPU STAYED under 80% all afternoon")
    assert keeps_on("延迟一直维持在 2 秒以上")
    assert not keeps_on("CPU peaked at 95% at 10:05")


_BOUND_WORDS = _patterns()[2]


@given(
    st.sampled_from(
        [*(("above", w) for w in _BOUND_WORDS.above_before), *(("below", w) for w in _BOUND_WORDS.below_before)]
    ),
    st.sampled_from(_BOUND_WORDS.turned_by),
    st.integers(1, 999),
    st.sampled_from(["ms", "%", "s", " 毫秒"]),
    st.sampled_from(["", "readings ", "of them "]),
)
def test_a_negation_before_a_bound_turns_its_side(
    side_word: tuple[str, str], turn: str, value: int, unit: str, between: str
) -> None:
    """ "none above 5 ms", "never over 80%", "没有一个高于 5ms": the series kept to the other side of
    the number, the number itself allowed."""
    side, word = side_word
    bound = claimed_bound(f"there were a dozen small readings, {turn} {between}{word} {value}{unit}")
    assert bound is not None and bound.side == ("below" if side == "above" else "above"), (turn, word, bound)
    assert bound.inclusive


@given(
    st.lists(st.integers(1, 900), min_size=2, max_size=8),
    st.integers(1, 1000),
    st.sampled_from(["none above {t}ms", "never above {t}ms", "一直低于 {t}ms", "none of them over {t} ms"]),
    st.booleans(),
)
def test_a_bounds_threshold_need_not_be_in_the_output_only_when_every_point_keeps_it(
    values: list[int], threshold: int, phrase: str, twelve_hour: bool
) -> None:
    """ "Between 4:11 pm and 4:18 pm the readings were small, none above 5 ms": 5 ms is no
    reading; the series in that period keeps it or not. Kept: every check passes (the offline
    verifier finds it too); crossed: the claim is not confirmed."""
    assume(all(v != threshold for v in values) and (11 + len(values) - 1) % 5 != 0)  # no rounded end
    lines = [f"2026-07-07T16:{11 + i:02d}:00Z {v}ms" for i, v in enumerate(values)]
    output = "query_metrics service=api metric=latency_ms\n" + "\n".join(lines)
    first, last = (
        ("4:11 pm", f"4:{11 + len(values) - 1:02d} pm") if twelve_hour else ("16:11", f"16:{10 + len(values):02d}")
    )
    text = f"Between {first} and {last} the readings were small, {phrase.format(t=threshold)}."
    store = InMemoryInvocations([invocation(394, output=output)])
    report = Gatekeeper().validate(
        v2([claim(text=text, bindings=[binding([394], lines[0]), binding([394], lines[-1])])]),
        session_id=SESSION,
        invocations=store,
    )
    checks = [c for t in report.claim_traces for c in t.checks]
    kept = all(v <= threshold for v in values)
    if kept:
        assert all(c.outcome == "pass" for c in checks), (text, [(c.rule_id, c.reason) for c in checks])
    else:  # a point above it: no confirmation (the bound is crossed)
        assert any(c.outcome == "fail" for c in checks), (text, [(c.rule_id, c.reason) for c in checks])
    assert threshold_kept(f"{threshold}ms", text, [output]) is kept


@given(
    st.lists(st.integers(11, 900), min_size=3, max_size=10),
    st.integers(0, 8),
    st.sampled_from(
        [
            "After the spike the CPU stayed above {t} m for the rest of the window.",
            "此后一直高于 {t} m",
            "From then on it stayed above {t} m.",
        ]
    ),
)
def test_a_bound_for_the_rest_of_the_window_is_every_point_from_the_quoted_one(
    values: list[int], start: int, phrase: str
) -> None:
    """ "After the spike the CPU stayed above 10 m for the rest of the window" quoting the point
    at 06:39 (10.83 m): every point from there to the series' end keeps it, or the claim is
    contradicted — not only the point it quotes."""
    start = min(start, len(values) - 2)
    threshold = 10
    lines = [f"2022-08-22T06:{30 + i:02d}:20Z {v / 10} m" for i, v in enumerate(values)]
    output = "query_metrics service=productcatalogservice metric=cpu\npoints:\n" + "\n".join(lines)
    assume(values[start] / 10 > threshold)
    text = phrase.format(t=threshold)
    store = InMemoryInvocations([invocation(631, output=output)])
    report = Gatekeeper().validate(
        v2([claim(text=text, bindings=[binding([631], lines[start])])]), session_id=SESSION, invocations=store
    )
    reasons = [c.reason for t in report.claim_traces for c in t.checks if c.rule_id == "claim.stated_content"]
    kept = all(v / 10 > threshold for v in values[start:])
    assert any("bound is crossed" in r for r in reasons) is not kept, (text, values[start:], reasons)


@given(
    value=st.integers(1, 500),
    subject=st.sampled_from(["node's ambient", "single request", "pod's memory"]),
    verb=st.sampled_from(["exceeded", "above", "over"]),
)
def test_a_negation_three_words_back_turns_the_bound(value: int, subject: str, verb: str) -> None:
    """ "No node's ambient ever exceeded 30" was read as *above* 30: a claim kept by a series over 30
    and contradicted by one under it. Three words back, the negation turns it; further back in
    its clause its side is unsure (no bound); in another clause it is another's."""
    turned = claimed_bound(f"No {subject} ever {verb} {value}.")
    assert turned is not None and turned.side == "below" and turned.value == value
    assert claimed_bound(f"No request to the checkout api {subject} ever {verb} {value}.") is None
    other = claimed_bound(f"No retries, and then the {subject} {verb} {value}.")
    assert other is not None and other.side == "above"


@given(
    word=st.sampled_from(["node-3", "annotation", "nodes", "economy", "Nothingness"]),
    bound=st.sampled_from(["stayed above 5 ms", "above 5 ms", "was over 5 ms"]),
)
def test_a_negation_is_a_whole_word(word: str, bound: str) -> None:
    """The "no" of "annotation" or "node-3" turned the bound after it: "annotation above 5 ms" read
    as *below* 5 ms."""
    found = claimed_bound(f"{word} latency {bound}")
    assert found is not None and found.side == "above" and not found.turned, (word, found)


@given(
    st.sampled_from(sorted(bundled_words("veridiag.text", "bounds.yaml", BoundWords).changes)),
    st.sampled_from(["超过", "高于", "低于", "不超过", "more than", "over", "under", "at least"]),
    st.integers(1, 99),
    st.sampled_from(["CPU 仍有 427.52m，一分钟后降到 3.64m，{c}{b} {n}%。", "It is still falling: a {c} of {b} {n}%."]),
)
def test_a_bound_on_a_change_is_no_bound_on_the_level(change: str, word: str, number: int, form: str) -> None:
    """ "降幅超过 99%" bounds how much the series fell, not what it reads: no bound of its level to
    check against its last point. Without the change's noun the bound is the level's."""
    assert claimed_bound(form.format(c=change, b=word, n=number)) is None, (change, word)
    assert claimed_bound(form.format(c="", b=word, n=number).replace("a  of ", "")) is not None, word
