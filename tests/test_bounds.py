"""``text/bounds.py``: the held-on look-up, led by its words' first characters, finds what the
plain word list finds."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from veridiag.text.bounds import _patterns, claimed_bound, keeps_on

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
