"""A call's readings and lexings are remembered within the call only, and each call has its own."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.builders import counted_lexings
from veridiag.text.entities import TextFacts
from veridiag.text.memo import kept, readings, remembered
from veridiag.text.normalize import reader_text


def counting() -> tuple[list[str], Callable[[str], str]]:
    seen: list[str] = []

    def read(text: str) -> str:
        seen.append(text)
        return text.upper()

    return seen, read


def test_a_reading_is_worked_out_once_inside_readings_and_every_time_outside() -> None:
    seen, read = counting()
    assert remembered("upper", "abc", read) == remembered("upper", "abc", read) == "ABC"
    assert seen == ["abc", "abc"]
    seen.clear()
    with readings():
        for _ in range(3):
            assert remembered("upper", "abc", read) == "ABC"
        assert remembered("other kind", "abc", read) == "ABC"
    assert seen == ["abc", "abc"]
    seen.clear()
    remembered("upper", "abc", read)
    assert seen == ["abc"]  # nothing outlives the block


def test_concurrent_calls_never_share_a_memo() -> None:
    def one(text: str) -> list[str]:
        seen, read = counting()
        with readings():
            for _ in range(50):
                remembered("upper", text, read)
        return seen

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(one, ["a", "a", "b", "b"])) == [["a"], ["a"], ["b"], ["b"]]


def test_reader_text_reads_alike_inside_and_outside() -> None:
    text = "ＥＲＲ_ＴＩＭＥＯＵＴ 三百条 5\u200b300ms"
    with readings():
        inside = [reader_text(text), reader_text(text)]
    assert inside == [reader_text(text)] * 2


def test_a_block_inside_another_is_part_of_it() -> None:
    """A diagnosis opens one block for its run; its Gatekeeper check opens one again: the check
    reads from the run's memo, and ending it ends nothing."""
    seen, read = counting()
    with readings():
        remembered("upper", "abc", read)
        with readings():
            remembered("upper", "abc", read)
            remembered("upper", "def", read)
        remembered("upper", "def", read)
        assert seen == ["abc", "def"]
    remembered("upper", "abc", read)
    assert seen == ["abc", "def", "abc"]  # nothing outlives the outer block


def test_kept_work_is_done_once_per_block_for_each_kind_and_key() -> None:
    done: list[object] = []

    def work(key: object) -> Callable[[], tuple[object, ...]]:
        def run() -> tuple[object, ...]:
            done.append(key)
            return (key,)

        return run

    with readings():
        assert kept("x", ("a", frozenset()), work("a")) == kept("x", ("a", frozenset()), work("a")) == ("a",)
        kept("y", ("a", frozenset()), work("a"))
        kept("x", ("a", frozenset({"s"})), work("a s"))
    assert done == ["a", "a", "a s"]
    kept("x", ("a", frozenset()), work("a"))
    assert done == ["a", "a", "a s", "a"]


#: Words some of which are services to one reader and plain words or hosts to another.
_WORDS = st.sampled_from(
    ["gateway", "dn228", "web-01", "order-service", "ERR_TIMEOUT", "5300ms", "订单123", "at", "的"]
)


@given(st.lists(_WORDS, min_size=1, max_size=8), st.lists(_WORDS, max_size=3), st.lists(_WORDS, max_size=2))
def test_a_lexing_remembered_in_a_block_answers_as_a_fresh_one(
    words: list[str], services: list[str], ignored: list[str]
) -> None:
    """Inside a block a text is lexed once for each set of services, whoever asks and whatever
    tokens they ignore: every answer is the one a fresh lexing gives outside."""
    text = " ".join(words)
    fresh = [
        TextFacts(text, services, ignored).entities(),
        TextFacts(text).entities(),
        TextFacts(text, services).entities(ignored_too=True),
    ]
    with readings():
        for _ in range(2):
            inside = [
                TextFacts(text, services, ignored).entities(),
                TextFacts(text).entities(),
                TextFacts(text, services).entities(ignored_too=True),
            ]
            assert inside == fresh


def test_a_text_is_lexed_once_per_block_for_its_services(monkeypatch: pytest.MonkeyPatch) -> None:
    lexed = counted_lexings(monkeypatch)
    text = "订单123 在 gateway 上等待 5300ms"
    with readings():
        for ignore in ((), ("5300ms",)):
            TextFacts(text, ["gateway"], ignore).entities()
            TextFacts(text, ignore=ignore).entities()
    assert sorted(services for _, services in lexed) == [frozenset(), frozenset({"gateway"})]
