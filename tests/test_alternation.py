"""One pattern for a word list (``text/alternation.py``) finds what a boundary on each word
finds: the same matches, the same word first, in any case, for the bundled lists and for
generated ones (words beginning or ending with digits, marks, Chinese, or a character that
folds to a Latin letter)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from veridiag.text.alternation import whole_words
from veridiag.text.concepts import ConceptFile
from veridiag.text.units import UnitWords
from veridiag.text.when import WhenWords
from veridiag.text.wordfiles import bundled_words

#: How ``concepts``, ``units`` and ``when`` write their lists: (edge, boundary, blanks).
_KINDS = [("A-Za-z0-9", "A-Za-z0-9_", r"\s+"), ("A-Za-z", "A-Za-z", r"\s*"), ("A-Za-z", "A-Za-z", r"\s+")]
_CAMEL_HEAD = r"(?-i:(?<=[a-z0-9])(?=[A-Z]))"
_CAMEL_TAIL = r"(?-i:(?=[A-Z]))"


def _word_by_word(words: list[str], edge: str, boundary: str, blanks: str, camel: bool) -> str:
    """The reference: each word with its own boundaries."""
    before = f"(?:(?<![{boundary}])|{_CAMEL_HEAD})" if camel else f"(?<![{boundary}])"
    after = f"(?:(?![{boundary}])|{_CAMEL_TAIL})" if camel else f"(?![{boundary}])"
    parts = []
    for word in words:
        body = blanks.join(map(re.escape, word.split()))
        head = word[0].isascii() and re.fullmatch(f"[{edge}]", word[0]) is not None
        tail = word[-1].isascii() and re.fullmatch(f"[{edge}]", word[-1]) is not None
        parts.append((before if head else "") + body + (after if tail else ""))
    return "|".join(parts)


def _bundled() -> list[list[str]]:
    concepts = bundled_words("veridiag.text", "concepts.yaml", ConceptFile)
    units = bundled_words("veridiag.text", "units.yaml", UnitWords)
    when = bundled_words("veridiag.text", "when.yaml", WhenWords)
    lists = [concepts.negations, concepts.times_compared_by, concepts.percent_references, units.value_words]
    lists += [entry.words + entry.evidence for entry in concepts.concepts.values()]
    lists += [q.before for q in units.qualifiers.values()] + [when.around.before, when.around.after]
    return [sorted(set(words), key=len, reverse=True) for words in lists if words]


_BUNDLED = _bundled()
_GLUE = [" ", "", "_", "x", "Q", "7", "-", "%", "，", "中", "\n", "ſ", "K", "İ", "ı"]
_GENERATED_WORD = st.text(st.sampled_from("abkKsS9_%-中文ſKİı "), min_size=1, max_size=6).map(str.strip).filter(bool)


def _text(data: st.DataObject, words: list[str]) -> str:
    pieces = data.draw(
        st.lists(
            st.tuples(
                st.sampled_from(words), st.sampled_from(["lower", "upper", "title", "camel"]), st.sampled_from(_GLUE)
            ),
            min_size=1,
            max_size=5,
        )
    )
    return data.draw(st.sampled_from(_GLUE)) + "".join(_written(word, case) + glue for word, case, glue in pieces)


def _written(word: str, case: str) -> str:
    if case == "upper":
        return word.upper()
    if case == "title":
        return word.title()
    return word.title().replace(" ", "") if case == "camel" else word


def _same(words: list[str], text: str, kind: tuple[str, str, str], camel: bool, flags: int) -> None:
    edge, boundary, blanks = kind
    ours = re.compile(whole_words(words, edge=edge, boundary=boundary, blanks=blanks, camel=camel), flags)
    reference = re.compile(_word_by_word(words, edge, boundary, blanks, camel), flags)
    found = [(m.span(), m.group()) for m in ours.finditer(text)]
    assert found == [(m.span(), m.group()) for m in reference.finditer(text)], (words, text)


@given(st.sampled_from(_BUNDLED), st.sampled_from(_KINDS), st.booleans(), st.booleans(), st.data())
def test_a_bundled_list_is_found_as_word_by_word(
    words: list[str], kind: tuple[str, str, str], camel: bool, ignore_case: bool, data: st.DataObject
) -> None:
    _same(words, _text(data, words), kind, camel, re.IGNORECASE if ignore_case else 0)


@given(
    st.lists(_GENERATED_WORD, min_size=1, max_size=12, unique=True),
    st.sampled_from(_KINDS),
    st.booleans(),
    st.booleans(),
    st.data(),
)
def test_a_generated_list_is_found_as_word_by_word(
    words: list[str], kind: tuple[str, str, str], camel: bool, ignore_case: bool, data: st.DataObject
) -> None:
    ordered = sorted(words, key=len, reverse=True)
    _same(ordered, _text(data, ordered), kind, camel, re.IGNORECASE if ignore_case else 0)
