"""The anchored matcher finds what exhaustive search finds, where it matters."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from veridiag.gatekeeper.matching import MAX_FUZZY_CHARS, AnchoredMatcher, BruteForceMatcher, SequenceMatcherBaseline

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


@given(st.integers(0, 10_000), st.integers(1, 400))
def test_an_excerpt_holding_a_whole_short_output_is_scored_by_what_the_output_holds(seed: int, extra: int) -> None:
    """``partial_ratio`` slides the shorter string along the longer: an excerpt made of a whole
    short output plus invented text once scored 1.0 ("verbatim") against that output. It may
    score at most the share of the excerpt the output holds."""
    source = log(seed, 1)
    invented = (";the database cluster went down" * 14)[:extra].rstrip()
    excerpt = source + invented
    for matcher in (anchored, brute):
        found = matcher.locate(excerpt, source)
        assert found is not None
        assert found.score <= len(source) / len(excerpt) + 1e-9, invented


def test_a_huge_excerpt_against_a_small_text_is_refused_without_aligning() -> None:
    """A 100 KB excerpt (a model's, or a planted line quoted) against a 4 KB text took 28 s."""
    found = anchored.locate("HUGE " + "B" * 100_000, log(1, 40))
    assert found is not None and found.score == 0.0


def test_an_excerpt_over_the_fuzzy_limit_is_verbatim_or_not_found() -> None:
    """Aligning a 100 KB excerpt costs its length times the window's (6 s a window): one that
    long is found verbatim, or scores 0 — never aligned, never credited."""
    source = log(2, 200) + "\nHUGE " + "B" * (MAX_FUZZY_CHARS + 10) + "\n" + log(3, 200)
    verbatim = "HUGE " + "B" * (MAX_FUZZY_CHARS + 10)
    found = anchored.locate(verbatim, source)
    assert found is not None and found.score == 1.0
    edited = "HUGE " + "B" * MAX_FUZZY_CHARS + "C" * 10
    found = anchored.locate(edited, source)
    assert found is not None and found.score == 0.0
