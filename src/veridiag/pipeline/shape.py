"""The answer's shape (issue 28): a first line that answers, a few key facts, gaps merged.

An answer reads on a phone: after the one-line scope, its first line answers the question with
its label (confirmed / inferred / cannot tell) in at most ~160 Chinese characters or ~30 English
words (``fits``); then at most ``MAX_KEY_FACTS`` allowed claims, ranked by what the question
asked (``key_facts``: what answers it, then the culprit's facts, causes and changes, the largest
symptoms; a series that stayed normal or a service without the lines asked for is no key fact);
then hypotheses, next steps and gaps — the gaps merged, one line per kind (``merge_gaps``:
"query_metrics returned no data for A, B, C between …" once, not once per metric; "gateway,
redis have no logs … (their logs cover …)", the words after the names agreeing with them,
``shape.yaml``). The full claim list stays in the answer document (``ask --json``, ``ask --all``).

Everything here is computed from the Composer input's own texts (no tool output); the composer
guard reads a composed answer with the same functions (``composer.answer_shape``).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache

from veridiag.agents.template import template_phrases
from veridiag.contracts.composer import AllowedClaim, ComposerInput
from veridiag.contracts.plan import Intent
from veridiag.text.normalize import ignorecase_key
from veridiag.text.wordfiles import AnyOf, Bilingual, Word, WordModel, bundled_words

#: A first line holds at most this many Chinese characters (two ASCII characters count one) …
MAX_FIRST_LINE_ZH = 160
#: … or this many English words.
MAX_FIRST_LINE_EN = 30
#: At most this many key facts follow the first line.
MAX_KEY_FACTS = 5

_LANGS = ("zh", "en")
#: A name-like token: a series, a setting, an identifier (``http_error_percent``, ``pool-size=50``).
_NAMES = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_=.][A-Za-z0-9]+)+")
_FACTOR = re.compile(r"×\s*(\d+(?:\.\d+)?)")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_OPEN = {"(": ")", "（": "）"}
#: The characters ``_asides`` reads (the others leave its stack as it is): found by one search,
#: not a loop over every character of every claim.
_BRACKETS = re.compile(r"[()（）]")
#: Where a clause ends: full-width punctuation, or ASCII punctuation before a space (not the
#: colon of 10:03 or the comma of 1,234).
_CLAUSE = re.compile(r"(?<=[，；：])|(?<=[,;:])(?=\s)")


def answer_body(answer: str, scope: str) -> str:
    """The answer after its scope line (the pipeline puts the scope first in every answer)."""
    body = answer.strip()
    return body[len(scope) :] if scope and body.startswith(scope) else body


def answer_lines(answer: str, scope: str) -> list[str]:
    """The answer's non-blank lines after its scope, stripped: the first is its first line, the
    one that answers (what the composer guard bounds, what a chat message and the Markdown open
    with)."""
    return [line.strip() for line in answer_body(answer, scope).splitlines() if line.strip()]


def line_size(line: str, lang: str) -> int:
    """How long a line reads: Chinese characters (a wide character one, a narrow one half) for
    ``zh``, words for ``en``."""
    if lang != "zh":  # a dash or a bullet is no word
        return sum(1 for word in line.split() if any(ch.isalnum() for ch in word))
    half = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line if ch not in "\n")
    return math.ceil(half / 2)


def fits(line: str, lang: str) -> bool:
    """The line is within the first line's bound for its language."""
    return line_size(line, lang) <= (MAX_FIRST_LINE_ZH if lang == "zh" else MAX_FIRST_LINE_EN)


def fit_line(prefix: str, sentences: Sequence[str], lang: str, *, keep: AnyOf | None = None) -> str:
    """``fit_sentences``' line."""
    return fit_sentences(prefix, sentences, lang, keep=keep)[0]


def fit_sentences(prefix: str, sentences: Sequence[str], lang: str, *, keep: AnyOf | None = None) -> tuple[str, int]:
    """``prefix`` and as many of ``sentences`` (in order, the first always) as fit the bound; a
    sentence that does not fit whole may come without its asides in parentheses — never one that
    ``keep`` matches (a label: a hypothesis never loses "not confirmed"). When the first alone is
    too long, its asides go, the last first, then its last clauses, cut with "…". Every fact
    left is one the sentences held. With how many of the sentences it holds."""
    if not sentences:
        return prefix.strip(), 0
    sentences = [re.sub(r"\s*\n\s*", " ", sentence) for sentence in sentences]  # one line
    joiner = "" if lang == "zh" else " "
    chosen = [sentences[0]]
    for sentence in sentences[1:]:
        for candidate in (sentence, _without_asides(sentence, lang, keep)):
            if fits(prefix + joiner.join([*chosen, candidate]), lang):
                chosen.append(candidate)
                break
        else:
            break
    line = prefix + joiner.join(chosen)
    for start, end in reversed(_asides(line)):
        if fits(line, lang):
            break
        if keep is None or not keep.search(line[start:end]):
            line = _cut(line, start, end, lang)
    if fits(line, lang):
        return line, len(chosen)
    # cut at the end of a clause, the text before it kept as written
    ends = [m.start() for m in _CLAUSE.finditer(line)]
    while ends and not fits(line + "…", lang):
        line = line[: ends.pop()]
    line = line.rstrip("，,；;：: ") + "…"
    while not fits(line, lang):  # one clause alone too long: whole words off its end
        words = line[:-1].rsplit(" ", 1)
        line = (words[0] if len(words) > 1 else line[: max(1, len(line) - 10)]).rstrip("，,；;：: ") + "…"
    return line, len(chosen)


def _without_asides(sentence: str, lang: str, keep: AnyOf | None) -> str:
    for start, end in reversed(_asides(sentence)):
        if keep is None or not keep.search(sentence[start:end]):
            sentence = _cut(sentence, start, end, lang)
    return sentence


def _cut(text: str, start: int, end: int, lang: str) -> str:
    return text[:start] + text[end:] if lang == "zh" else text[:start].rstrip() + text[end:]


def _asides(text: str) -> list[tuple[int, int]]:
    """The outermost parenthesised spans of ``text`` (ASCII or full width, nested allowed)."""
    spans: list[tuple[int, int]] = []
    stack: list[tuple[int, str]] = []
    for bracket in _BRACKETS.finditer(text):
        index, ch = bracket.start(), bracket.group()
        if ch in _OPEN:
            stack.append((index, _OPEN[ch]))
        elif stack and ch == stack[-1][1]:
            start, _ = stack.pop()
            if not stack:
                spans.append((start, index + 1))
    return spans


@dataclass(frozen=True)
class Ranking:
    """What the key facts are ranked by."""

    intent: Intent | None
    services: Sequence[str]
    quiet: AnyOf
    #: Ids and codes the question names (an order id): a claim naming one comes early.
    asked: Sequence[str] = ()
    #: The services the question names: that one of them stayed quiet is a key fact.
    named: Sequence[str] = ()


def answer_line(answer: str, scope: str) -> str:
    """The line that answers: the first one after the scope — what a list, a page header or a
    chat header shows of the answer."""
    return next(iter(answer_lines(answer, scope)), "")


def stated_by(first_line: str, claim: AllowedClaim) -> bool:
    """``claim`` is stated on the first line, whole or without its asides in parentheses."""
    return _stated_in(_plain(first_line), claim)


def _stated_in(stated: str, claim: AllowedClaim) -> bool:
    """``stated_by`` given the first line as compared (``_plain``): read once for all the claims."""
    text = claim.claim_text
    forms = {_plain(text)}
    if _asides(text):  # without asides, the text is its own form in every language
        forms |= {_plain(_without_asides(text, lang, None)) for lang in _LANGS}
    return any(p and p in stated for p in forms)


def key_facts(claims: Sequence[AllowedClaim], first_line: str, ranking: Ranking) -> list[str]:
    """The ids of at most ``MAX_KEY_FACTS`` claims to list after ``first_line``: what it already
    states is not repeated; what answers the question first, then what names the question's ids
    or terms, then the services it names, then what the first line names (a series, a setting),
    then the culprit's facts (the service the answer names first), causes and changes before
    symptoms, larger symptoms first; a normal series or a quiet service only when it answers or
    the question names it, and after what moved; one series' recurrences once."""
    culprit = _culprit(claims, ranking)
    # the series, settings and terms the first line names (hikaricp_connections_active, pool-size=50)
    named = {t for t in _NAMES.findall(first_line)}
    order = {"root_cause": 0, "change": 1, "symptom": 2, "observation": 3}
    if ranking.intent is not None and ranking.intent.kind == "change":
        order = {"change": 0, "root_cause": 1, "symptom": 2, "observation": 3}
    ranked = []
    stated = _plain(first_line)
    for index, claim in enumerate(claims):
        text = claim.claim_text
        if _stated_in(stated, claim):
            continue
        if (
            ranking.quiet.search(text)
            and not claim.answers
            and not any(_names(text, s) for s in ranking.named)
            and not any(a in text for a in ranking.asked)
        ):
            continue
        factor = _factor(text)
        ranked.append(
            (
                (
                    0 if claim.answers else 1,
                    1 if ranking.quiet.search(text) else 0,  # a named service's quiet: after what moved
                    0 if any(a in text for a in ranking.asked) else 1,
                    0 if any(_names(text, s) for s in ranking.named) else 1,
                    0 if named & set(_NAMES.findall(text)) else 1,
                    0 if culprit is not None and _names(text, culprit) else 1,
                    order.get(claim.claim_type, 4),
                    -(factor or Decimal(0)),
                    index,
                ),
                claim,
            )
        )
    chosen: dict[str, AllowedClaim] = {}
    for _, claim in sorted(ranked, key=lambda item: item[0]):
        chosen.setdefault(_NUMBER.sub("#", claim.claim_text), claim)
    return [claim.claim_id for claim in list(chosen.values())[:MAX_KEY_FACTS]]


def _culprit(claims: Sequence[AllowedClaim], ranking: Ranking) -> str | None:
    """The service the answer is about: the first one named by what answers the question, else by
    a root cause, else the one the question asks about."""
    leading = [c for c in claims if c.answers] + [c for c in claims if c.claim_type == "root_cause"]
    for claim in leading:
        if (named := first_service(claim.claim_text, ranking.services)) is not None:
            return named
    if ranking.intent is not None and ranking.intent.about:
        return ranking.intent.about
    return None


def first_service(text: str, services: Sequence[str]) -> str | None:
    """The service ``text`` names first (the longer name where two start together)."""
    found = [(text.find(s), -len(s), s) for s in services if _names(text, s)]
    return min(found)[2] if found else None


def _names(text: str, service: str) -> bool:
    if service not in text:  # no pattern to compile for a name the text lacks
        return False
    return re.search(rf"(?<![A-Za-z0-9_-]){re.escape(service)}(?![A-Za-z0-9_])", text) is not None


_BLANK_RUN = re.compile(r"\s+")


def _plain(text: str) -> str:
    return _BLANK_RUN.sub(" ", text).strip().rstrip("。.;；").strip()


def _factor(text: str) -> Decimal | None:
    found = [Decimal(m.group(1)) for m in _FACTOR.finditer(text)]
    return max(found) if found else None


# --- gaps -------------------------------------------------------------------------------------

#: A gap line's tokens: a name-like run (letters, digits and the joiners a name, time, path or
#: argument uses), a space run, or one other character.
_TOKEN = re.compile(r"[A-Za-z0-9_.\-/:+']+|\s+|.", re.S)
_NAMELIKE = re.compile(r"[0-9_\-./:]")


@dataclass(frozen=True)
class GapGroup:
    """Gaps of one kind: the same words but for names, numbers and times. ``line`` states them all."""

    line: str
    members: tuple[str, ...]


def gap_groups(gaps: Sequence[str], services: Sequence[str], lang: str) -> list[GapGroup]:
    """``gaps`` (in order, repeats dropped) grouped by kind: lines that differ only in name-like
    tokens (a service, a metric, an argument's value, a time) are one kind, stated on one line —
    the names where they differ listed (``template.yaml`` ``list_sep`` of ``lang``), a difference
    the listed names already tell (a reason repeating them) shortened to "…" (the full lines stay
    in the answer document's ``missing_info``), the words after a list of names agreeing with
    them (``agree``)."""
    list_sep = template_phrases()["zh" if lang == "zh" else "en"]["list_sep"]
    known = set(services)
    groups: dict[tuple[str, ...], list[list[str]]] = {}
    texts: dict[tuple[str, ...], list[str]] = {}
    for gap in dict.fromkeys(g.strip() for g in gaps if g.strip()):
        tokens = _TOKEN.findall(gap)
        skeleton = tuple("\0" if _NAMELIKE.search(t) or t in known else t for t in tokens)
        groups.setdefault(skeleton, []).append(tokens)
        texts.setdefault(skeleton, []).append(gap)
    merged = []
    for skeleton, members in groups.items():
        if len(members) == 1:
            merged.append(GapGroup(texts[skeleton][0], tuple(texts[skeleton])))
            continue
        differing = [i for i in range(len(skeleton)) if len({tokens[i] for tokens in members}) > 1]
        first = members[0][:]
        listed: list[int] = []
        for position in differing:
            if listed and _follows(members, listed, position):  # payment-service/cpu_percent after both
                first[position] = "…"
            else:
                first[position] = list_sep.join(dict.fromkeys(tokens[position] for tokens in members))
                listed.append(position)
        # the first list of names is what the line is about: what follows it agrees with them
        subject = next((p for p in listed if not any(t[p][:1].isdigit() for t in members)), None)
        line = "".join(first)
        if subject is not None:
            before, after = "".join(first[: subject + 1]), "".join(first[subject + 1 :])
            line = before + agree(after, lang, subject=not "".join(first[:subject]).strip())
        merged.append(GapGroup(line, tuple(texts[skeleton])))
    return merged


class _Forms(WordModel):
    verbs: dict[Word, Word]
    pronouns: dict[Word, Word]


class _ShapeWords(WordModel):
    agreement: Bilingual[_Forms]


@lru_cache(maxsize=1)
def _shape_words() -> _ShapeWords:
    """``shape.yaml``, read once."""
    return bundled_words("veridiag.pipeline", "shape.yaml", _ShapeWords)


def _forms_pattern(forms: Iterable[str]) -> re.Pattern[str] | None:
    """The forms as whole words (longest first): not inside another word — a Chinese form not
    right after a Han character, an English one not between letters."""
    spelled = [
        rf"(?<!\w){re.escape(form)}" + (r"(?!\w)" if form[-1].isascii() and form[-1].isalnum() else "")
        for form in sorted(forms, key=len, reverse=True)
    ]
    return re.compile("|".join(spelled), re.IGNORECASE) if spelled else None


def agree(text: str, lang: str, *, subject: bool) -> str:
    """``text`` — the words after a list of several names — agreeing with them (``shape.yaml``):
    every pronoun in the plural, and, when the list is the line's ``subject``, its first verb."""
    forms = _shape_words().agreement["zh" if lang == "zh" else "en"]

    def plural(table: dict[str, str]) -> Callable[[re.Match[str]], str]:
        lowered = {k.lower(): v for k, v in table.items()}

        def replace(match: re.Match[str]) -> str:
            found = match.group(0)
            form = lowered[ignorecase_key(found)]
            return form[:1].upper() + form[1:] if found[:1].isupper() else form

        return replace

    verbs = _forms_pattern(forms.verbs) if subject else None
    if verbs is not None:
        text = verbs.sub(plural(forms.verbs), text, count=1)
    pronouns = _forms_pattern(forms.pronouns)
    return pronouns.sub(plural(forms.pronouns), text) if pronouns is not None else text


def _follows(members: Sequence[list[str]], listed: Sequence[int], position: int) -> bool:
    """The token at ``position`` is told by those at the ``listed`` positions (the same names
    again, as in a reason repeating the arguments)."""
    seen: dict[tuple[str, ...], str] = {}
    for tokens in members:
        key = tuple(tokens[i] for i in listed)
        if seen.setdefault(key, tokens[position]) != tokens[position]:
            return False
    return True


def merge_gaps(gaps: Sequence[str], services: Sequence[str], lang: str) -> list[str]:
    """One line per kind of gap (``gap_groups``)."""
    return [group.line for group in gap_groups(gaps, services, lang)]


def with_shape(composer_input: ComposerInput, ranking: Ranking) -> ComposerInput:
    """The input with its key facts ranked after its headline and its gaps merged, one line per
    kind — what the template lists and the composer guard holds a composed answer to."""
    return composer_input.model_copy(
        update={
            "key_facts": key_facts(composer_input.allowed_claims, composer_input.headline, ranking),
            "gap_lines": merge_gaps(composer_input.missing_info, ranking.services, composer_input.lang),
        }
    )
