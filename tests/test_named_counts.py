"""A count with the name of what it counts between ("541 ERR_TIMEOUT errors", "617
onStandStepChanged lines") is a fact as "541 errors" is (issue 27, deliverable 3: numbers belong to
their subject). Found by the red team: a digit swap or an off-by-one in such a count ("logged 541
ERR_TIMEOUT errors" for 451) reached the user as confirmed, the number being read as no fact at all.
Each property generates the names, nouns and wrong counts."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import assume, given
from hypothesis import strategies as st

from veridiag.text.entities import Corpus, computed, extract_entities

_UPPER = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=2, max_size=8)
#: Names as code writes them: an error code, a method in camel case, a metric or a host with a digit.
names = st.one_of(
    st.builds(lambda a, b: f"ERR_{a}_{b}", _UPPER, _UPPER),
    st.builds(lambda a, b: f"on{a.title()}{b.title()}", _UPPER, _UPPER),
    st.builds(lambda a, n: f"{a.lower()}_{n}", _UPPER, st.integers(1, 99)),
)
nouns = st.sampled_from(["errors", "lines", "requests", "warnings", "failures", "calls", "events", "retries"])
counts = st.integers(11, 99_999)


def _grounded(claim: str, output: str) -> bool:
    corpus = Corpus([output])
    entities = extract_entities(claim)
    return bool(entities) and all(corpus.contains(e) or computed(e, claim, corpus) for e in entities)


def _wrong(count: int, how: str) -> int:
    """An ordinary mistake in a count: a digit swap, one off, or another order of magnitude."""
    if how == "off":
        return count + 1
    if how == "magnitude":
        return count * 10
    digits = str(count)
    for i in range(len(digits) - 1):
        if digits[i] != digits[i + 1]:
            return int(digits[:i] + digits[i + 1] + digits[i] + digits[i + 2 :])
    return count + 1


@given(counts, names, nouns, st.sampled_from(["swap", "off", "magnitude"]))
def test_a_named_count_is_checked(count: int, name: str, noun: str, how: str) -> None:
    output = f"query_logs service=svc-a\nmatched {count} lines (ERROR {count})\n{name} seen"
    claim = f"The service logged {count} {name} {noun}."
    assert _grounded(claim, output), claim
    wrong = _wrong(count, how)
    assume(wrong != count and str(wrong) not in output)
    mistaken = f"The service logged {wrong} {name} {noun}."
    read = [e for e in extract_entities(mistaken) if e.kind == "quantity"]
    assert [e.value for e in read] == [Decimal(wrong)], mistaken
    assert not _grounded(mistaken, output), mistaken


@given(counts, st.sampled_from(["such", "close", "slow", "matching", "new"]), nouns)
def test_prose_between_a_number_and_its_noun_leaves_it_bare(count: int, word: str, noun: str) -> None:
    """ "15 such lines", "476 close lines across the templates": a word of prose between is no name,
    and the number stays what it was (a sum the claim may have computed is not read as a count)."""
    claim = f"The gateway logged {count} {word} {noun} across the templates."
    assert not [e for e in extract_entities(claim) if e.kind == "quantity" and noun in e.text], claim


@given(
    st.decimals(Decimal("0.1"), Decimal("99.9"), places=1),
    st.sampled_from(["Rows_examined", "Rows_sent", "Lines_read", "Requests_total"]),
    st.integers(2, 999_999),
)
def test_a_unit_word_in_the_next_fields_name_is_no_unit(seconds: Decimal, field: str, rows: int) -> None:
    """``Lock_time: 29.3 Rows_examined: 184302``: the field after the value starts with a count's
    noun glued to ``_``; the value is still the Lock_time's seconds."""
    output = f"mysql [Slow query] Query_time: 45.1 Lock_time: {seconds} {field}: {rows} UPDATE t_stock"
    assume(seconds != Decimal("45.1"))
    assert _grounded(f"The statement waited {seconds} s for the lock.", output)
