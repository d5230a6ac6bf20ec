"""A call's readings are remembered within the call only, and each call has its own."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from veridiag.text.memo import readings, remembered
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
