"""The anchored matcher finds what exhaustive search finds, where it matters."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from veridiag.gatekeeper.matching import AnchoredMatcher, BruteForceMatcher, SequenceMatcherBaseline

SERVICES = ["gateway", "order-service", "payment-service", "inventory-service"]
WORDS = ["timeout", "refused", "exhausted", "deadlock", "throttled", "rejected", "retry", "closed"]


def log(seed: int, lines: int = 800) -> str:
    rng = random.Random(seed)
    return "\n".join(
        f"2026-07-07T10:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z "
        f"{rng.choice(['INFO', 'WARN', 'ERROR'])} "
        f"{rng.choice(SERVICES)} order={rng.randint(10000, 99999)} request {rng.choice(WORDS)} "
        f"cost={rng.randint(5, 9000)}ms"
        for _ in range(lines)
    )


anchored, brute = AnchoredMatcher(), BruteForceMatcher()


@given(st.integers(0, 10_000), st.integers(0, 799), st.integers(20, 60))
def test_verbatim_excerpt_is_found_exactly(seed: int, line: int, length: int) -> None:
    source = log(seed)
    row = source.split("\n")[line]
    excerpt = row[21 : 21 + length].strip()
    found = anchored.locate(excerpt, source)
    assert found is not None and found.score == 1.0
    assert source[found.start : found.end] == excerpt


@given(st.integers(0, 10_000), st.integers(0, 799), st.sampled_from(WORDS))
def test_one_edited_word_is_found_at_its_line(seed: int, line: int, replacement: str) -> None:
    source = log(seed)
    row = source.split("\n")[line]
    excerpt = row[21:]
    for word in WORDS:
        if f" {word} " in excerpt and word != replacement:
            excerpt = excerpt.replace(f" {word} ", f" {replacement} ")
            break
    found = anchored.locate(excerpt, source)
    assert found is not None
    # Exhaustive search may prefer a look-alike line elsewhere; the anchored search must
    # find the line the excerpt was taken from, scored as a pass.
    assert found.score >= 0.75
    row_start = source.index(row)
    assert row_start <= found.start <= row_start + len(row)


@given(st.integers(0, 10_000))
def test_anchored_never_claims_more_than_exhaustive_search(seed: int) -> None:
    source = log(seed, 300)
    rng = random.Random(seed)
    excerpt = f"{rng.choice(SERVICES)} circuit breaker OPEN after {rng.randint(10, 90)} failures"
    found, reference = anchored.locate(excerpt, source), brute.locate(excerpt, source)
    assert found is not None and reference is not None
    assert found.score <= reference.score + 0.03


def test_empty_inputs() -> None:
    for matcher in (anchored, brute, SequenceMatcherBaseline()):
        assert matcher.locate("", "abc") is None
        assert matcher.locate("abc", "") is None


def test_baseline_agrees_on_verbatim_text() -> None:
    source = log(3, 200)
    excerpt = source.split("\n")[120][21:70]
    found = SequenceMatcherBaseline().locate(excerpt, source)
    assert found is not None and found.score == 1.0 and source[found.start : found.end] == excerpt
