"""What a claim says beyond its exact facts: overgeneralisation, an interpretation of what
happened, a direction, an evaluation, a hedge — each a *concept* with zh and en words
(``concepts.yaml``). A claim's concept is stated by evidence holding a word of the same
concept, in either language: "所有请求都超时" states ``all`` and ``timeout``; a log line
"ERR_TIMEOUT request timeout" states ``timeout`` but not ``all``.

Concepts instead of phrases: a checker that chased each wording ("所有…都", "every Full GC")
missed the next one; a closed vocabulary per concept, compared across the claim and its
evidence, holds for wordings nobody listed as long as one of their words is a concept word.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from itertools import pairwise
from typing import Literal

from pydantic import Field

from veridiag.text.alternation import whole_words
from veridiag.text.memo import kept
from veridiag.text.normalize import ignorecase_key, reader_text
from veridiag.text.wordfiles import Word, WordModel, bundled_words

ConceptKind = Literal["absolute", "state", "direction", "evaluative", "usual", "calm", "ordinal"]


class ConceptWords(WordModel):
    kind: ConceptKind
    words: list[Word] = Field(default_factory=list)
    #: Words that state the concept in evidence only (``up`` in "anomaly 1: … up").
    evidence: list[Word] = Field(default_factory=list)


class ConceptFile(WordModel):
    negations: list[Word] = Field(default_factory=list)
    #: Negations that are numbers ("0 errors"): a value, not a denial, right before an absolute
    #: ("stayed at 0 the whole time").
    zeros: list[Word] = Field(default_factory=list)
    absences: list[Word] = Field(default_factory=list)
    absence_counts: list[Word] = Field(default_factory=list)
    #: A field's value that states nothing is there ("errors: null", "errors=[]").
    empty_values: list[Word] = Field(default_factory=list)
    #: After a concept word, these state its absence ("error-free", "timeoutless").
    absence_suffixes: list[Word] = Field(default_factory=list)
    clause_absences: list[Word] = Field(default_factory=list)
    contrasts: list[Word] = Field(default_factory=list)
    #: Words that end a negation's reach in a claim ("no retry and failed").
    negation_breaks: list[Word] = Field(default_factory=list)
    #: A word right before a negation that makes it its own phrase's ("with no retry failed").
    negation_phrases: list[Word] = Field(default_factory=list)
    #: Words such a phrase's negation reaches across ("with no new errors").
    negation_quantifiers: list[Word] = Field(default_factory=list)
    #: Words that scope a claim's denial to a later time ("回滚后没有再出现错误", "no longer fails").
    denial_scopes: list[Word] = Field(default_factory=list)
    not_words: list[Word] = Field(default_factory=list)
    factor_words: list[Word] = Field(default_factory=list)
    calm_words: list[Word] = Field(default_factory=list)
    recovery_words: list[Word] = Field(default_factory=list)
    order_words: dict[Word, Literal["later", "earlier"]] = Field(default_factory=dict)
    order_relative: list[Word] = Field(default_factory=list)
    distributive: list[Word] = Field(default_factory=list)
    times_words: list[Word] = Field(default_factory=list)
    #: Numbers written as words before ``times_words`` ("five times higher").
    number_words: dict[Word, Decimal] = Field(default_factory=dict)
    function_words: list[Word] = Field(default_factory=list)
    times_compared_by: list[Word] = Field(default_factory=list)
    percent_relations: dict[Word, int] = Field(default_factory=dict)
    percent_references: list[Word] = Field(default_factory=list)
    enumerations: list[Word] = Field(default_factory=list)
    interval_words: list[Word] = Field(default_factory=list)
    period_words: list[Word] = Field(default_factory=list)
    ratio_words: dict[Word, Decimal] = Field(default_factory=dict)
    concepts: dict[Word, ConceptWords] = Field(min_length=1)


@dataclass(frozen=True, slots=True)
class ConceptHit:
    """One concept word in a text, and where."""

    concept: str
    kind: ConceptKind
    word: str
    start: int
    end: int


def _alternation(words: Iterable[str], *, camel: bool = False) -> str:
    """Whole words, longest first; ``camel``: a camel-case name's parts are words too. A phrase
    stays within its line: "seasonal: no" ending one line and "anomaly 1: … up" starting the
    next said "no anomaly" — a calm output, of one that lists an anomaly."""
    ordered = sorted(set(words), key=len, reverse=True)
    return whole_words(ordered, edge="A-Za-z0-9", boundary="A-Za-z0-9_", blanks=r"[^\S\n]+", camel=camel)


#: Evidence names its series and fields with underscores (``mysql_lock_wait_p99_seconds``,
#: ``error_rate``, ``Query_time``): read as words, they state their concepts.
_NAME_JOINERS = str.maketrans("_", " ")
#: A field's name ends where its value starts: "errors: …", "timeouts=…", "错误：…" (read as ":"),
#: after the rest of a name the word starts ("error_count=", "错误数：", "http_errors_total{…} 0"),
#: a JSON key's closing quote ('"errors": 0') or a mark ("=>"); a blank alone ("error_count 0"), or
#: a name of two words ("error rate 0%"), holds a value only when it is a zero or empty.
_FIELD_VALUE = re.compile(
    r"[\w.-]*(?P<spaced>[^\S\n]+[A-Za-z]+)?(?:\{[^}\n]*\})?[\"']?"
    r"(?:[^\S\n]*(?:=>|[:=|])[^\S\n]*|(?P<blank>[^\S\n]+))"
)
#: A zero value: "0", "0.0%", "0 ms" — not "0.5%".
_ZERO = re.compile(r"[+-]?0+(?:\.0+)?(?![\d.])")
#: What ends a clause, for a negation's reach.
_CLAUSE_ENDS = ("，", ",", "；", ";", "。", ". ", "!", "！", "?", "？", "\n")

#: What ends a sentence: a denial's time ("after the rollback, no errors") may open it.
_SENTENCE_ENDS = ("；", ";", "。", ". ", "!", "！", "?", "？", "\n")


def sentence(text: str, start: int, end: int) -> tuple[int, int]:
    """Where the sentence holding ``text[start:end]`` starts and ends."""
    first = max(text.rfind(mark, 0, start) for mark in _SENTENCE_ENDS) + 1
    ends = [at for mark in _SENTENCE_ENDS if (at := text.find(mark, end)) >= 0]
    return first, min(ends, default=len(text))


def _clause_start(text: str, at: int) -> int:
    """Where the clause holding ``text[at]`` starts; a list in brackets ("(deploys, configs or
    restarts)") belongs to the clause the bracket opens in."""
    opened = max(text.rfind("(", 0, at), text.rfind("（", 0, at))
    closed = max(text.rfind(")", 0, at), text.rfind("）", 0, at))
    limit = opened if opened > closed else at
    return max(text.rfind(mark, 0, limit) for mark in _CLAUSE_ENDS) + 1


_ASCII_WORD = re.compile(r"[A-Za-z0-9_]+")


class _WordIndex:
    """The claim words of every concept, found without one big alternation: Python's regex
    engine tries each of ~300 alternatives at every position (0.25 ms per claim, measured;
    a dictionary of first words plus ``str.find`` of the Chinese words is ~20× less).
    Latin words match whole words case-insensitively, a phrase's words across any blanks;
    Chinese words anywhere. Where hits overlap the earlier, then the longer, wins.

    Chinese words are kept by their first character: only those whose first character the text
    holds are searched (a claim holds a few of the ~110 words' first characters; searching each
    word was ~60 % of a look-up, measured). A word's hits are found in the same order as before
    (two hits tie in the sort below only when they are the same word, listed under two names,
    and such twins share a first character and keep their listed order)."""

    def __init__(self, groups: Iterable[tuple[str, Iterable[str]]]) -> None:
        self._latin: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        self._chinese: dict[str, list[tuple[str, str]]] = {}
        for name, words in groups:
            for word in words:
                if word.isascii():
                    parts = tuple(word.lower().split())
                    self._latin.setdefault(parts[0], []).append((parts, name))
                else:
                    self._chinese.setdefault(word[0], []).append((word, name))
        for phrases in self._latin.values():
            phrases.sort(key=lambda phrase: len(phrase[0]), reverse=True)
        self._firsts = frozenset(self._chinese)

    def find(self, text: str) -> list[tuple[int, int, str]]:
        found: list[tuple[int, int, str]] = []
        latin = self._latin
        # most texts hold no listed word's first word: told by one set test on the words alone,
        # before a match object is made for each (~2 µs of a claim's look-up, measured)
        if latin.keys().isdisjoint([word.lower() for word in _ASCII_WORD.findall(text)]):
            tokens: list[re.Match[str]] = []
        else:
            tokens = list(_ASCII_WORD.finditer(text))
        folded = [token.group().lower() for token in tokens]
        for index, first in enumerate(folded):
            for parts, name in latin.get(first, ()):
                last = index + len(parts) - 1
                if (
                    last < len(tokens)
                    and tuple(folded[index : last + 1]) == parts
                    and _blank_between(text, tokens[index : last + 1])
                ):
                    found.append((tokens[index].start(), tokens[last].end(), name))
                    break
        if not text.isascii():
            chinese = self._chinese
            # the text's characters looked up, not a set made of every listed first character
            for first in self._firsts.intersection(text):
                for word, name in chinese[first]:
                    at = text.find(word)
                    while at >= 0:
                        found.append((at, at + len(word), name))
                        at = text.find(word, at + 1)
        found.sort(key=lambda hit: (hit[0], hit[0] - hit[1]))
        kept: list[tuple[int, int, str]] = []
        for hit in found:
            if not kept or hit[0] >= kept[-1][1]:
                kept.append(hit)
        return kept


def _blank_between(text: str, tokens: list[re.Match[str]]) -> bool:
    return all(not text[a.end() : b.start()].strip() and a.end() < b.start() for a, b in pairwise(tokens))


class Concepts:
    """The concept vocabulary compiled: one pattern for claims, one per concept for evidence
    (compiled on its first use)."""

    def __init__(self, file: ConceptFile) -> None:
        self.kinds = {name: entry.kind for name, entry in file.concepts.items()}
        self._words = _WordIndex((name, entry.words) for name, entry in file.concepts.items())
        self._ratio_words = _WordIndex((str(value), [word]) for word, value in file.ratio_words.items())
        # one scan for all of them, longest first (a compound inside a longer one is blanked with it)
        self._not_word_pattern = re.compile(
            "|".join(re.escape(w) for w in sorted(set(file.not_words), key=len, reverse=True)) or "(?!)"
        )
        self._distributive = frozenset(file.distributive)
        self._relations = {word.lower(): offset for word, offset in file.percent_relations.items()}
        references = _alternation(file.percent_references) or "(?!)"
        self._percent = re.compile(
            rf"(?P<value>\d+(?:\.\d+)?)\s*%\s+(?P<relation>{_alternation(file.percent_relations) or '(?!)'})"
            rf"\s+(?:the\s+|its\s+)?(?:{references})"
            # not a value compared with ("比期望的 46.17% 高出约 15.9 个百分点": the expected value itself)
            rf"|(?<![比较与和跟])(?<![比较与和跟]\s)(?:{references})的\s*(?P<of>\d+(?:\.\d+)?)\s*%"
            rf"|比\s*(?:{references})\s*(?P<way>高|低)(?:了|出)?\s*(?P<by>\d+(?:\.\d+)?)\s*%"
            rf"|(?P<way2>高出|低于)\s*(?:{references})\s*(?P<by2>\d+(?:\.\d+)?)\s*%",
            re.IGNORECASE,
        )
        self.function_words = frozenset(w.lower() for w in file.function_words)
        usual = [w for entry in file.concepts.values() if entry.kind == "usual" for w in entry.words]
        self._reference = re.compile(
            rf"(?:{_alternation([*file.percent_references, *usual]) or '(?!)'})[^\d\n,，;；。]{{0,8}}$", re.IGNORECASE
        )
        self._times_hint = re.compile("|".join(map(re.escape, file.times_words)) or "(?!)", re.IGNORECASE)
        self._numbers = {word.lower(): value for word, value in file.number_words.items()}
        self._spelled_count = re.compile(
            rf"(?:{_alternation(file.number_words) or '(?!)'})\s+(?P<word>[A-Za-z]+)", re.IGNORECASE
        )
        spelled = "|" + _alternation(file.number_words) if file.number_words else ""
        self._times = re.compile(
            rf"(?<![\w.])(?P<value>\d+(?:\.\d+)?{spelled})\s*(?:{_alternation(file.times_words) or '(?!)'})"
            rf"(?P<after>\s+(?:{_alternation(file.times_compared_by) or '(?!)'}))?",
            re.IGNORECASE,
        )
        self._factor_words = tuple(word.lower() for word in file.factor_words)
        self._calm = re.compile(_alternation(file.calm_words) or "(?!)", re.IGNORECASE)
        self._order_later = {word.lower(): way == "later" for word, way in file.order_words.items()}
        self._order = re.compile(_alternation(list(file.order_words)) or "(?!)", re.IGNORECASE)
        relative = _alternation(file.order_relative) or "(?!)"
        self._relative_after = re.compile(rf"[\s(（]*(?:{relative}|\d)", re.IGNORECASE)
        self._relative_before = re.compile(rf"(?:{relative}|\d)[\s)）]*$", re.IGNORECASE)
        self._factor = re.compile(
            rf"(?<![\w])(?:{_alternation(file.factor_words) or '(?!)'})\s+(?P<value>\d+(?:\.\d+)?{spelled})(?![\w.])",
            re.IGNORECASE,
        )
        self._enumerations = tuple(file.enumerations)
        self._intervals = re.compile(_alternation(file.interval_words) or "(?!)", re.IGNORECASE)
        self._recovered = re.compile(_alternation(file.recovery_words) or "(?!)", re.IGNORECASE)
        #: The first word of each, as ``ignorecase_key`` reads it: a text whose key holds none says
        #: no recovery (the pattern, whole words tried case-blind at every character, was ~8 µs a
        #: claim; most claims say none).
        self._recovery_heads = tuple(sorted({ignorecase_key(w.split()[0]) for w in file.recovery_words if w.split()}))
        self._periods = re.compile(_alternation(file.period_words) or "(?!)", re.IGNORECASE)
        self._clause_denied = re.compile(_alternation(file.clause_absences) or "(?!)", re.IGNORECASE)
        self._contrast = re.compile(_alternation(file.contrasts) or "(?!)", re.IGNORECASE)
        self._negation_break = re.compile(_alternation(file.negation_breaks) or "(?!)", re.IGNORECASE)
        self._negation_phrase = re.compile(rf"(?:{_alternation(file.negation_phrases) or '(?!)'})\s*$", re.IGNORECASE)
        self._quantifiers = re.compile(
            rf"(?:\s*(?:{_alternation(file.negation_quantifiers) or '(?!)'}))*\s*$", re.IGNORECASE
        )
        #: A negation word as written, the longest first ("未发现" rather than its "未").
        self._negation_word = re.compile(
            _alternation([*file.negations, *file.clause_absences]) or "(?!)", re.IGNORECASE
        )
        self._denial_scope = re.compile(_alternation(file.denial_scopes) or "(?!)", re.IGNORECASE)
        #: A negation ending right before a hit, up to two words or four characters back.
        # (a "0" of a number, "127.0.0.1" or "0.5", is no negation)
        negation = rf"(?<![\d.])(?:{_alternation(file.negations)})(?!\.\d)"
        self._denied = re.compile(rf"{negation}(?:\s*[\w-]+){{0,2}}?\s*$|{negation}.{{0,3}}$", re.IGNORECASE)
        words = [w for w in file.negations if w not in file.zeros]
        not_a_number = rf"(?<![\d.])(?:{_alternation(words) or '(?!)'})(?!\.\d)"
        self._denied_right = re.compile(rf"{not_a_number}[^\S\n]*$", re.IGNORECASE)
        self._denied_after = re.compile(rf"\s*(?:{_alternation(file.absences) or '(?!)'})", re.IGNORECASE)
        self._absence_counts = frozenset(file.absence_counts)
        self._free_of = re.compile(
            rf"[^\S\n]?(?:{'|'.join(map(re.escape, file.absence_suffixes)) or '(?!)'})(?!\w)", re.IGNORECASE
        )
        self._empty_value = re.compile(
            rf"[\"']?(?:{_ZERO.pattern}|(?:{_alternation(file.empty_values) or '(?!)'})(?![\w\[{{]))", re.IGNORECASE
        )
        self._negation = re.compile(_alternation(file.negations) or "(?!)", re.IGNORECASE)
        #: Each concept's evidence words; compiled on the first ``states`` of the concept (a
        #: session asks about a few of them).
        self._evidence_words = {
            name: [w.translate(_NAME_JOINERS) for w in (*entry.words, *entry.evidence)]
            for name, entry in file.concepts.items()
            if entry.words or entry.evidence
        }
        self._evidence: dict[str, re.Pattern[str]] = {}

    def in_claim(self, text: str, own: str | None = None) -> list[ConceptHit]:
        """The concept words ``text`` (read as a reader sees it) claims, in order: a word right
        after a negation ("no ERROR lines", "没有超时"), or after an absence word earlier in its
        clause ("没有任何变更（发布、重启）"), is denied, not claimed; a word inside a compound
        that is not it (平均) is no word. ``own``: the text with what it quotes blanked
        (``text/quotes.own_words``, same positions): words there are the evidence's, while a
        quoted negation still denies the claim's words after it."""
        hits = [hit for hit, denied in self._read_claim(text) if not denied]
        return hits if own is None else owned(hits, own)

    def read_claim(self, text: str) -> tuple[list[ConceptHit], list[ConceptHit]]:
        """``in_claim(text)`` and ``denied_in_claim(text)``, the claim's words read once."""
        found = self._read_claim(text)
        return [hit for hit, denied in found if not denied], self._denials(text, found)

    def denied_in_claim(self, text: str) -> list[ConceptHit]:
        """The interpretations (``state`` concepts) ``text`` denies for its own time: "订单123没有失败",
        "no timeout occurred". A denial scoped to a later time ("回滚后没有再出现错误", "no longer
        fails", "after the rollback, no errors") is not one of them: lines before that time may state
        what it denies."""
        return self._denials(text, self._read_claim(text))

    def _denials(self, text: str, found: list[tuple[ConceptHit, bool]]) -> list[ConceptHit]:
        denied = []
        read = ""
        for hit, is_denied in found:
            if not is_denied or hit.kind != "state":
                continue
            read = read or self._without_not_words(reader_text(text))
            if self._denial_scope.search(read, sentence(read, hit.start, hit.end)[0], hit.start) is None:
                denied.append(hit)
        return denied

    def _read_claim(self, text: str) -> list[tuple[ConceptHit, bool]]:
        """Every concept word of ``text`` and whether a negation denies it."""
        read = self._without_not_words(reader_text(text))
        hits = []
        for start, end, name in self._words.find(read):
            hit = ConceptHit(name, self.kinds[name], read[start:end], start, end)
            # an absolute is denied by a negation right before it alone ("not all", "没有都"): "with
            # no cache always above 5 ms" claims always
            absolute = self.kinds[name] == "absolute"
            denied = (self._denied_right if absolute else self._denied).search(read, max(0, start - 24), start)
            if self._reaches(read, denied, start):
                hits.append((hit, True))
                continue
            clause = _clause_start(read, start)
            if self._contrast.search(read, clause, start) is not None:
                hits.append((hit, True))  # set aside by a contrast ("rather than …", "而不是 …")
                continue
            denied = (
                None
                if absolute
                else max(self._clause_denied.finditer(read, clause, start), key=lambda m: m.start(), default=None)
            )
            hits.append((hit, self._reaches(read, denied, start)))
        return hits

    def _denied_at(self, read: str, at: int) -> bool:
        """Does a negation before the word at ``at`` reach it?"""
        return self._reaches(read, self._denied.search(read, max(0, at - 24), at), at)

    def _reaches(self, read: str, negation: re.Match[str] | None, at: int) -> bool:
        """Does ``negation`` reach the word at ``at``: no break ("and", "就") between them, and,
        for a negation inside a phrase of its own ("with no retry", "由于没有重试", "after no
        response"), nothing but quantifiers ("any", "任何") between? "had no retry and failed",
        "order 123 with no retry failed" claim a failure; "no request failed" denies one."""
        if negation is None or self._negation_break.search(read, negation.start(), at) is not None:
            return False
        if self._negation_phrase.search(read, max(0, negation.start() - 12), negation.start()) is None:
            return True
        word = self._negation_word.match(read, negation.start())
        return word is not None and self._quantifiers.fullmatch(read, word.end(), at) is not None

    def ratio_words(self, text: str) -> list[tuple[str, Decimal]]:
        """Ratios written as words ("一半", "doubled"), each with its value."""
        read = self._without_not_words(reader_text(text))
        return [(read[start:end], Decimal(value)) for start, end, value in self._ratio_words.find(read)]

    def reference_before(self, read: str, at: int) -> bool:
        """Is the value starting at ``read[at]`` the reference a claim compares with ("the usual 8",
        "平时约 0.46 秒", "expected 193ms"), not a level it states at its time?"""
        return self._reference.search(read, max(0, at - 24), at) is not None

    def percent_ratios(self, text: str) -> list[tuple[str, Decimal]]:
        """Percentages of a reference value, each as the ratio it states ("350% of expected": 3.5)."""
        found = []
        for match in self._percent.finditer(reader_text(text)):
            if match.group("value"):
                offset = self._relations.get(" ".join(match.group("relation").lower().split()), 0)
                share = Decimal(match.group("value")) / 100
            elif match.group("of"):
                offset, share = 0, Decimal(match.group("of")) / 100
            else:
                way = match.group("way") or ("高" if match.group("way2") == "高出" else "低")
                offset, share = (1 if way == "高" else -1), Decimal(match.group("by") or match.group("by2")) / 100
            found.append((match.group().strip(), share if offset == 0 else 1 + offset * share))
        return found

    def times_ratios(self, text: str) -> list[tuple[str, Decimal]]:
        """ "N times" that compares ("4 times higher", "went up 4 times"), with N; a count
        ("failed 5 times") is none."""
        read = reader_text(text)
        if not self._times_hint.search(read):
            return []  # most claims: no "times" word, no compounds to blank (~18 µs a claim, measured)
        read = self._without_not_words(read)
        matches = list(self._times.finditer(read))
        if not matches:
            return []
        found = []
        directions = [hit for hit in self.in_claim(read) if hit.kind == "direction"]
        for match in matches:
            before = read[max(0, match.start() - 24) : match.start()].rstrip()
            after_direction = any(before.endswith(hit.word) for hit in directions if hit.end <= match.start())
            if match.group("after") or after_direction:
                value = match.group("value")
                found.append((match.group().strip(), self._numbers.get(value.lower()) or Decimal(value)))
        return found

    def factor_ratios(self, text: str) -> list[tuple[str, Decimal]]:
        """ "By a factor of three", "a factor of 36": the ratio with its value."""
        folded = text.lower()
        if not any(word in folded for word in self._factor_words):
            return []  # most claims: read no further
        read = reader_text(text)
        return [
            (m.group().strip(), self._numbers.get(m.group("value").lower()) or Decimal(m.group("value")))
            for m in self._factor.finditer(read)
        ]

    def _without_not_words(self, read: str) -> str:
        """``read`` with the compounds that hold a concept word but are not it blanked (same length),
        in one scan (a loop of substring tests, one a compound, cost ~0.4 M instructions a bench
        check at 70 compounds, measured)."""
        # once per check for each text (``kept``): a claim's words and its ratio words read it alike
        return kept(
            "not_words",
            (self._not_word_pattern.pattern, read),
            lambda: self._not_word_pattern.sub(lambda m: " " * len(m.group()), read),
        )

    def enumerated(self, text: str, hit: ConceptHit) -> bool:
        """Does the distributive ``hit`` ("都") spread over things its clause names one by one
        ("前后…都", "A 和 B 都")? Each of them is then a fact of its own, not "all"."""
        if hit.word not in self._distributive:
            return False
        before = text[_clause_start(text, hit.start) : hit.start]
        return any(word in before for word in self._enumerations)

    def order_words(self, text: str) -> list[tuple[int, int, bool]]:
        """The words of ``text`` ordering two events, each with its span and whether it says the
        subject came later ("after", "之后") or earlier ("before", "之前")."""
        folded = text.lower()
        if not any(word in folded for word in self._order_later):
            return []  # most claims: no such word, no scan
        return [(m.start(), m.end(), self._order_later[m.group().lower()]) for m in self._order.finditer(text)]

    def orders_events(self, text: str) -> list[tuple[int, int]]:
        """The order words of ``text`` that order two events: not beside a period, a count or a
        previous value (``order_relative``: "the hour before", "之前一小时", "之前是 2gb", "30 秒之后")."""
        return [
            (start, end)
            for start, end, _later in self.order_words(text)
            if not self._relative_after.match(text, end) and not self._relative_before.search(text, 0, start)
        ]

    def spelled_count(self, clause: str) -> bool:
        """Does ``clause`` count things with a number written as a word ("all twelve points")?"""
        return any(
            (word := m.group("word")) is not None and word.lower() not in self.function_words
            for m in self._spelled_count.finditer(clause)
        )

    def calm_always(self, own: str, evidence: str) -> bool:
        """Is an *always* of ``own`` about being calm ("normal the whole time", "一直正常"), and
        does ``evidence`` say its whole window is ("anomalies: none in the window")?"""
        return self._calm.search(own) is not None and self.states("calm", evidence)

    def says_recovered(self, text: str) -> bool:
        """Does ``text`` say something came back to normal ("恢复正常", "back to normal")?"""
        return self._may_recover(text) and self._recovered.search(text) is not None

    def recoveries(self, text: str) -> list[tuple[int, int]]:
        """Where ``text`` says something came back to normal."""
        return [found.span() for found in self._recovered.finditer(text)] if self._may_recover(text) else []

    def _may_recover(self, text: str) -> bool:
        """Does ``text`` hold the head of a recovery word (a substring test before the pattern)?"""
        key = ignorecase_key(text)
        return any(head in key for head in self._recovery_heads)

    def names_intervals(self, clause: str) -> bool:
        """Does ``clause`` speak of the intervals between times ("间隔都是 30 分钟", "30 minutes apart")?"""
        return self._intervals.search(clause) is not None

    def names_periods(self, clause: str) -> bool:
        """Does ``clause`` speak of periods or their coincidence ("时间完全重合", "identical periods")?"""
        return self._periods.search(clause) is not None

    def denies_after(self, text: str, end: int) -> bool:
        """Does an absence word follow right after ``text[:end]`` ("都没有重启")? The absolute
        then states a count of zero ("none of them restarted"), which the counts check."""
        return self._denied_after.match(text, end) is not None

    def absence_counted(self, text: str, hit: ConceptHit, evidence: str) -> bool:
        """Is ``hit`` an absolute right before an absence that states a count of zero? After an
        absolute over things ("都没有重启": none of them restarted) it is, checked by the counts;
        after one over time ("一直没有恢复": it never recovered) only when the quoted lines state an
        absence themselves (``absence_counts`` in concepts.yaml)."""
        if not self.denies_after(text, hit.end):
            return False
        return hit.concept in self._absence_counts or self._negation.search(reader_text(evidence)) is not None

    def states(self, concept: str, evidence: str) -> bool:
        """Does ``evidence`` hold a word of ``concept`` that it does not deny? A word right after a
        negation ("no error count", "没有超时") states its absence; a field's name states nothing
        when its value is none ("errors: no span states a status", "timeouts=0", "错误：无"): a
        field with a value does ("errors: 12 of 340"). A negation reaches as in a claim: "retried
        with no backoff and failed", "with no retry failed" state a failure."""
        return any(not denied for denied in self._occurrences(concept, evidence))

    def denies(self, concept: str, evidence: str) -> bool:
        """Does ``evidence`` hold a word of ``concept`` it denies ("0 restarts", "restarts: 0", "no
        errors", "error-free")? A claim's denial of the concept then agrees with a line of it."""
        return any(self._occurrences(concept, evidence))

    def _occurrences(self, concept: str, evidence: str) -> Iterator[bool]:
        """For each word of ``concept`` in ``evidence``, in order: whether the evidence denies it."""
        pattern = self._evidence_pattern(concept)
        if pattern is None:
            return
        named = reader_text(evidence)
        read = named.translate(_NAME_JOINERS)
        for match in pattern.finditer(read):
            yield (
                self._denied_at(read, match.start())
                or self._free_of.match(read, match.end()) is not None
                or self._empty_field(named, match.end(), level=match.group().isupper())
            )

    def _empty_field(self, named: str, end: int, *, level: bool = False) -> bool:
        """Is the word ending at ``end`` (of ``named``: names with their underscores) a field's
        name ("errors:", "error_rate=", '"errors":') whose value states an absence (a negation
        first, a zero, or an empty value: "null", "[]")? A ``level`` ("ERROR: no route to host")
        opens a log message: its negation is the message's, only an empty value empties it."""
        field = _FIELD_VALUE.match(named, end)
        if field is None:
            return False
        at = field.end()
        return self._empty_value.match(named, at) is not None or (
            not level
            and field.group("blank") is None
            and field.group("spaced") is None
            and self._denied_after.match(named, at) is not None
        )

    def _evidence_pattern(self, concept: str) -> re.Pattern[str] | None:
        pattern = self._evidence.get(concept)
        if pattern is None and concept in self._evidence_words:
            pattern = self._evidence[concept] = re.compile(
                _alternation(self._evidence_words[concept], camel=True), re.IGNORECASE
            )
        return pattern


def owned(hits: list[ConceptHit], own: str) -> list[ConceptHit]:
    """``in_claim(text)``'s hits that ``in_claim(text, own)`` gives: those not blanked in ``own``
    (quoted from the evidence: the evidence's words). Whether a word is denied does not depend on
    ``own``, so a caller reading one claim both ways finds its words once."""
    return [hit for hit in hits if own[hit.start : hit.end].strip()]


@lru_cache(maxsize=1)
def concepts() -> Concepts:
    """The bundled ``text/concepts.yaml``, compiled once."""
    return Concepts(bundled_words("veridiag.text", "concepts.yaml", ConceptFile))
